package localappwrite

import (
	"net/http"
	"testing"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/functions"
)

// TestRuntimesList: GET /v1/functions/runtimes is scope "public": guests have it, an API key does not
// (roles.php ROLE_KEYS), whatever its scopes. _APP_FUNCTIONS_RUNTIMES (Options.FunctionsRuntimes) filters the
// list, and a create with a runtime it does not list is 404 function_runtime_unsupported.
func TestRuntimesList(t *testing.T) {
	f := newFixture(t, Options{FunctionsRuntimes: []string{"node-22"}})
	_, err := functions.New(f.sdk(f.key)).ListRuntimes()
	wantAPIError(t, err, 401, ErrGeneralUnauthorizedScope, `app.proj1@service.localhost (role: applications) missing scopes (["public"])`)

	guest := functions.New(appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(f.ts.URL+"/v1"), appwrite.WithProject(testProject)))
	list, err := guest.ListRuntimes()
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != 1 || list.Runtimes[0].Id != "node-22" || list.Runtimes[0].Key != "node" || list.Runtimes[0].Image != "openruntimes/node:v5-22" {
		t.Fatalf("runtimes %+v", list)
	}
	_, err = functions.New(f.sdk(f.key)).Create("fn", "Function", "go-1.26")
	wantAPIError(t, err, 404, ErrFunctionRuntimeUnsupported, `Runtime "go-1.26" is not supported`)
	_, err = functions.New(f.sdk(f.key)).Create("fn", "Function", "cobol-1")
	wantAPIError(t, err, 400, ErrGeneralArgumentInvalid, "Invalid `runtime` param: "+runtimeDescription())

	// Without the allowlist every runtime of the catalog is listed, go-1.26 among them.
	all := newFixture(t, Options{})
	code, body := all.rawCall(t, http.MethodGet, "/functions/runtimes", nil, map[string]string{"X-Appwrite-Key": ""})
	if code != 200 || body["total"] != float64(len(runtimeCatalog)) {
		t.Fatalf("all runtimes: %d %v", code, body)
	}
}

// TestScopeCheckedBeforeParams: Appwrite checks a route's scope in the api init hook, before the route's params
// are validated (utopia-php/http 2.0.0-rc9 Http.php:624-646), so a write with no params is a harmless probe of
// a key's scopes: 401 naming the scope when the key lacks it, the param error when it has it; an unknown key is
// a guest.
func TestScopeCheckedBeforeParams(t *testing.T) {
	f := newFixture(t, Options{})
	readOnly, err := f.s.CreateKey(testProject, []string{"functions.read"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key    string
		status int
		typ    string
		msg    string
	}{
		{readOnly, 401, ErrGeneralUnauthorizedScope, `app.proj1@service.localhost (role: applications) missing scopes (["functions.write"])`},
		{f.key, 400, ErrGeneralArgumentInvalid, `Param "functionId" is not optional.`},
		{"standard_unknown", 401, ErrGeneralUnauthorizedScope, `User (role: guests) missing scopes (["functions.write"])`},
	} {
		code, body := f.rawCall(t, http.MethodPost, "/functions", map[string]any{}, map[string]string{"X-Appwrite-Key": c.key})
		if code != c.status || body["type"] != c.typ || body["message"] != c.msg {
			t.Errorf("key %.20s: %d %v, want %d %s %q", c.key, code, body, c.status, c.typ, c.msg)
		}
	}
	if len(f.s.projects[testProject].functions) != 0 {
		t.Fatal("a probe created a function")
	}
}
