package handler_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	handler "appwrite-agent/functions/mcp-events"
)

// TestCloudScopeNames: the protected-resource metadata advertises what the authorization server publishes in
// its discovery document (Appwrite Cloud's project:<scope> names), the 401 challenge asks for the Cloud
// names of what the events need, and MCP_EVENTS_OAUTH_SCOPES, when set, is advertised instead.
func TestCloudScopeNames(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))

	getJSON := func(u string) map[string]any {
		t.Helper()
		resp, err := http.Get(u)
		must(t, err)
		defer resp.Body.Close()
		var m map[string]any
		must(t, json.NewDecoder(resp.Body).Decode(&m))
		return m
	}
	published := getJSON(st.la.Issuer() + "/.well-known/openid-configuration")["scopes_supported"].([]any)
	if !slices.Contains(published, any("project:webhooks.write")) || !slices.Contains(published, any("project:all")) || slices.Contains(published, any("webhooks.write")) {
		t.Fatalf("the stand-in's discovery does not publish Cloud's names: %v", published)
	}
	meta := getJSON(url + "/.well-known/oauth-protected-resource/mcp")
	if got, _ := json.Marshal(meta["scopes_supported"]); string(got) != mustJSON(t, published) {
		t.Fatalf("scopes_supported %s, want the authorization server's %s", got, mustJSON(t, published))
	}
	r := rpc(t, url, "", "events/list", map[string]any{})
	chal := r.Header.Get("WWW-Authenticate")
	want := `scope="project:webhooks.read project:webhooks.write project:tables.read project:rows.read project:buckets.read project:files.read project:users.read project:functions.read project:executions.read project:sites.read"`
	if r.Status != http.StatusUnauthorized || !strings.Contains(chal, want) {
		t.Fatalf("401 challenge %d %q", r.Status, chal)
	}

	// A token with exactly the names the challenge asked for can use every event.
	asked := strings.Fields(strings.TrimSuffix(strings.SplitN(chal, `scope="`, 2)[1], `"`))
	lr := rpc(t, url, st.token(userID, asked), "events/list", map[string]any{})
	if lr.Error != nil || len(lr.Result["events"].([]any)) != 8 {
		t.Fatalf("events/list with the challenged scopes: %s", lr.Raw)
	}

	// Configured scopes win over discovery.
	st.env["MCP_EVENTS_OAUTH_SCOPES"] = "project:all"
	configured := st.instance(st.server(handler.Options{}))
	if got := getJSON(configured + "/.well-known/oauth-protected-resource")["scopes_supported"]; mustJSON(t, got) != `["project:all"]` {
		t.Fatalf("configured scopes_supported: %v", got)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return string(b)
}
