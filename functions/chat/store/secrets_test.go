package store

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/seal"

	"github.com/appwrite/sdk-for-go/models"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

const (
	oldKeys = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
	// newKeys is oldKeys rotated: a new primary, the old key still listed.
	newKeys = "k2:ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8,k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
)

// secretsStore is a store over a fresh stand-in, with keys (nil: none), and the row reader of a database
// export (any API key with rows.read).
func secretsStore(t *testing.T, keys string) (*Store, func(table, id string) map[string]any) {
	t.Helper()
	aw := localappwrite.New(localappwrite.Options{Logf: t.Logf})
	srv := httptest.NewServer(aw)
	aw.SetBaseURL(srv.URL)
	t.Cleanup(func() { srv.Close(); _ = aw.Close() })
	if err := aw.SeedProject(localappwrite.ProjectSpec{ID: "p"}); err != nil {
		t.Fatal(err)
	}
	key, err := aw.CreateKey("p", []string{"databases.read", "databases.write", "tables.read", "tables.write", "rows.read", "rows.write"})
	if err != nil {
		t.Fatal(err)
	}
	var ring *seal.Keyring
	if keys != "" {
		if ring, err = seal.ParseKeyring(keys); err != nil {
			t.Fatal(err)
		}
	}
	client := awclient.New(srv.URL+"/v1", "p", &http.Client{Timeout: 10 * time.Second}, 0)
	st := New(client, key, "chat", ring)
	if err := st.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	row := func(table, id string) map[string]any {
		t.Helper()
		r, err := rowCall(context.Background(), client, key, func(db *tablesdb.TablesDB) (*models.Row, error) { return db.GetRow("chat", table, id) })
		if err != nil {
			t.Fatal(err)
		}
		return r.Data
	}
	return st, row
}

// TestSecretsAreSealedAtRest: the API key and the MCP tokens and client registration are stored sealed
// (an export of the rows shows none of them), open again for a turn, still open after the keys rotate, and
// do not open in another user's row.
func TestSecretsAreSealedAtRest(t *testing.T) {
	st, row := secretsStore(t, oldKeys)
	ctx := context.Background()
	if err := st.PutSettings(ctx, "alice", AgentSettings{Model: "gpt-4.1", NewAPIKey: "sk-alice-secret"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutMCPConnection(ctx, "alice", MCPConnection{ID: "aw", Name: "Appwrite", URL: "https://mcp.example.com/mcp",
		Tokens: json.RawMessage(`{"access_token":"at-alice","refresh_token":"rt-alice"}`), ClientInfo: json.RawMessage(`{"client_id":"c1","client_secret":"cs-alice"}`)}); err != nil {
		t.Fatal(err)
	}
	settings, conn := row(Settings, "alice"), row(MCPConnections, derivedID("c", "alice", "aw"))
	export, _ := json.Marshal([]any{settings, conn})
	for _, secret := range []string{"sk-alice-secret", "at-alice", "rt-alice", "cs-alice"} {
		if strings.Contains(string(export), secret) {
			t.Errorf("the stored rows show %q:\n%s", secret, export)
		}
	}
	if !strings.HasPrefix(settings["api_key"].(string), sealedPrefix) || !strings.HasPrefix(conn["tokens"].(string), sealedPrefix) {
		t.Fatalf("not sealed: %v %v", settings["api_key"], conn["tokens"])
	}
	a, err := st.Settings(ctx, "alice")
	if err != nil || !a.HasAPIKey || a.NewAPIKey != "" {
		t.Fatalf("settings %+v %v", a, err)
	}
	if k, err := st.APIKey("alice", a); err != nil || k != "sk-alice-secret" {
		t.Fatalf("opening the key: %q %v", k, err)
	}
	conns, err := st.MCPConnections(ctx, "alice")
	if err != nil || len(conns) != 1 || !conns[0].Connected || conns[0].Tokens != nil {
		t.Fatalf("listed %+v %v", conns, err)
	}
	tokens, info, err := st.OpenMCP("alice", conns[0])
	if err != nil || string(tokens) != `{"access_token":"at-alice","refresh_token":"rt-alice"}` || !strings.Contains(string(info), "cs-alice") {
		t.Fatalf("opening the tokens: %s %s %v", tokens, info, err)
	}
	// Refreshed tokens are sealed too.
	if err := st.UpdateMCPTokens(ctx, "alice", "aw", json.RawMessage(`{"access_token":"at-2"}`), nil); err != nil {
		t.Fatal(err)
	}
	if c := row(MCPConnections, derivedID("c", "alice", "aw")); strings.Contains(c["tokens"].(string), "at-2") {
		t.Fatalf("refreshed tokens stored in the clear: %v", c["tokens"])
	}
	// Rotation: a new primary key; what the old one sealed still opens, and the next write uses the new one.
	rotated, err := seal.ParseKeyring(newKeys)
	if err != nil {
		t.Fatal(err)
	}
	st.secrets = rotated
	a, _ = st.Settings(ctx, "alice")
	if k, err := st.APIKey("alice", a); err != nil || k != "sk-alice-secret" {
		t.Fatalf("after the rotation: %q %v", k, err)
	}
	// Another user's row holding alice's sealed key (a writer with rows.write copied it): it does not open.
	moved := a
	if k, err := st.APIKey("bob", moved); !errors.Is(err, seal.ErrOpen) || k != "" {
		t.Fatalf("alice's sealed key opened for bob: %q %v", k, err)
	}
}

// TestAKeyStoredInTheClearIsReadThenSealedOnItsNextWrite: rows written before secrets were sealed still
// work, and are sealed on their next write; without keys chat refuses to store a secret.
func TestAKeyStoredInTheClearIsReadThenSealedOnItsNextWrite(t *testing.T) {
	st, row := secretsStore(t, oldKeys)
	ctx := context.Background()
	if _, err := st.create(ctx, Settings, "alice", map[string]any{"user_id": "alice", "model": "m", "base_url": "", "api_key": "sk-plain"}, []string{}); err != nil {
		t.Fatal(err)
	}
	a, err := st.Settings(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if k, err := st.APIKey("alice", a); err != nil || k != "sk-plain" {
		t.Fatalf("a key stored in the clear: %q %v", k, err)
	}
	a.Model = "m2" // a write that does not touch the key
	if err := st.PutSettings(ctx, "alice", a); err != nil {
		t.Fatal(err)
	}
	if v := row(Settings, "alice")["api_key"].(string); !strings.HasPrefix(v, sealedPrefix) {
		t.Fatalf("the key is still in the clear after the next write: %q", v)
	}
	a, _ = st.Settings(ctx, "alice")
	if k, _ := st.APIKey("alice", a); k != "sk-plain" {
		t.Fatalf("after sealing: %q", k)
	}
	if err := st.PutSettings(ctx, "alice", AgentSettings{Model: "m2", ClearAPIKey: true}); err != nil {
		t.Fatal(err)
	}
	if a, _ := st.Settings(ctx, "alice"); a.HasAPIKey {
		t.Fatal("the key was not cleared")
	}

	none, _ := secretsStore(t, "")
	if err := none.PutSettings(ctx, "bob", AgentSettings{NewAPIKey: "sk-bob"}); !errors.Is(err, ErrNoSealKeys) {
		t.Fatalf("storing a key without sealing keys: %v", err)
	}
	if err := none.PutSettings(ctx, "bob", AgentSettings{Model: "m"}); err != nil {
		t.Fatalf("settings without a secret need no keys: %v", err)
	}
}
