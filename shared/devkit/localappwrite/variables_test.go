package localappwrite

import (
	"testing"

	"github.com/appwrite/sdk-for-go/functions"
)

// TestVariablesThroughSDK: SDK v1.0.0 (response format 1.8.0, which gets variableId "unique()" from request
// filter V25) creates, lists, reads, updates and deletes a function's variables; secret ones (the default)
// are never read back; every change leaves the function not live; the runtime environment holds them.
func TestVariablesThroughSDK(t *testing.T) {
	f := newFixture(t, Options{})
	fs := functions.New(f.sdk(f.key))
	if _, err := fs.Create("fn", "Function", "go-1.26", fs.WithCreateEntrypoint("main.go")); err != nil {
		t.Fatal(err)
	}
	if fn, _ := fs.Get("fn"); !fn.Live {
		t.Fatalf("a new function is not live: %+v", fn)
	}
	secret, err := fs.CreateVariable("fn", "SEAL_KEYS", "k1:abc")
	if err != nil {
		t.Fatal(err)
	}
	if !secret.Secret || secret.Value != "" || secret.ResourceId != "fn" || secret.ResourceType != "function" || len(secret.Id) != 20 {
		t.Fatalf("a variable created without secret is secret, its value unread: %+v", secret)
	}
	plain, err := fs.CreateVariable("fn", "LLM_MODEL", "gpt-4o-mini", fs.WithCreateVariableSecret(false))
	if err != nil {
		t.Fatal(err)
	}
	if plain.Secret || plain.Value != "gpt-4o-mini" {
		t.Fatalf("plain %+v", plain)
	}
	if fn, _ := fs.Get("fn"); fn.Live || len(fn.Vars) != 2 {
		t.Fatalf("after two variables: %+v", fn)
	}
	_, err = fs.CreateVariable("fn", "LLM_MODEL", "other")
	wantErr(t, err, 409, ErrVariableAlreadyExists)
	_, err = fs.CreateVariable("nope", "K", "v")
	wantErr(t, err, 404, ErrFunctionNotFound)

	list, err := fs.ListVariables("fn")
	if err != nil || list.Total != 2 || list.Variables[0].Key != "SEAL_KEYS" || list.Variables[0].Value != "" || list.Variables[1].Value != "gpt-4o-mini" {
		t.Fatalf("list %+v %v", list, err)
	}
	got, err := fs.GetVariable("fn", secret.Id)
	if err != nil || got.Value != "" || !got.Secret {
		t.Fatalf("get %+v %v", got, err)
	}
	_, err = fs.GetVariable("fn", "nope")
	wantErr(t, err, 404, ErrVariableNotFound)

	// A secret stays secret; its value can be replaced.
	_, err = fs.UpdateVariable("fn", secret.Id, "SEAL_KEYS", fs.WithUpdateVariableSecret(false))
	wantErr(t, err, 400, ErrVariableCannotUnsetSecret)
	if _, err := fs.UpdateVariable("fn", secret.Id, "SEAL_KEYS", fs.WithUpdateVariableValue("k2:def,k1:abc")); err != nil {
		t.Fatal(err)
	}
	_, err = fs.UpdateVariable("fn", plain.Id, "SEAL_KEYS")
	wantErr(t, err, 409, ErrVariableAlreadyExists)
	env, err := f.s.Variables(testProject, "fn")
	if err != nil || env["SEAL_KEYS"] != "k2:def,k1:abc" || env["LLM_MODEL"] != "gpt-4o-mini" {
		t.Fatalf("variables as the runtime sees them: %v %v", env, err)
	}
	if keys, _ := f.s.SecretVariables(testProject, "fn"); len(keys) != 1 || keys[0] != "SEAL_KEYS" {
		t.Fatalf("secret keys %v", keys)
	}
	if _, err := fs.DeleteVariable("fn", plain.Id); err != nil {
		t.Fatal(err)
	}
	_, err = fs.DeleteVariable("fn", plain.Id)
	wantErr(t, err, 404, ErrVariableNotFound)

	// The current format declares variableId as required (Variables/Create.php:62, 1.9.5 and 1.9.6); an
	// update with nothing to change is refused (Update.php:100-102).
	code, body := f.rawCall(t, "POST", "/functions/fn/variables", map[string]any{"key": "K", "value": "v"}, nil)
	if code != 400 || body["message"] != `Param "variableId" is not optional.` {
		t.Fatalf("no variableId: %d %v", code, body)
	}
	code, body = f.rawCall(t, "POST", "/functions/fn/variables", map[string]any{"variableId": "own-id", "key": "K", "value": ""}, nil)
	if code != 201 || body["$id"] != "own-id" || body["value"] != nil || body["secret"] != true {
		t.Fatalf("with variableId: %d %v", code, body)
	}
	code, body = f.rawCall(t, "POST", "/functions/fn/variables", map[string]any{"variableId": "own-id", "key": "K2", "value": "v"}, nil)
	if code != 409 || body["type"] != ErrVariableAlreadyExists {
		t.Fatalf("a taken variableId: %d %v", code, body)
	}
	code, body = f.rawCall(t, "PUT", "/functions/fn/variables/own-id", map[string]any{}, nil)
	if code != 400 || body["type"] != ErrGeneralArgumentInvalid {
		t.Fatalf("an empty update: %d %v", code, body)
	}
}
