package handler_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/shared/devkit/localruntime"
)

// TestMainReadsTheEnvironment runs handler.FromEnv (what Main builds once per process), as the runtime does,
// configured only by environment variables: another configuration makes another function, and a broken one
// answers a clean JSON 503 while /health keeps working.
func TestMainReadsTheEnvironment(t *testing.T) {
	st := newStack(t)
	for k, v := range st.env {
		t.Setenv(k, v)
	}
	serve := func() *httptest.Server {
		ts := httptest.NewServer(localruntime.New(handler.FromEnv(), localruntime.Options{LogDir: t.TempDir()}))
		t.Cleanup(ts.Close)
		return ts
	}
	ts := serve()
	tok := st.token(userID, allScopes)

	r := rpc(t, ts.URL, tok, "events/list", map[string]any{})
	if r.Error != nil || len(r.Result["events"].([]any)) != 8 {
		t.Fatalf("events on: %s", r.Raw)
	}
	t.Setenv("MCP_EVENTS_ENABLED", "false")
	ts = serve()
	r = rpc(t, ts.URL, tok, "events/list", map[string]any{})
	if r.Error == nil || r.Error.Code != -32601 {
		t.Fatalf("events off after a configuration change: %s", r.Raw)
	}
	t.Setenv("MCP_EVENTS_OAUTH_ISSUER", "")
	ts = serve()
	resp, err := http.Post(ts.URL+"/mcp", "application/json", nil)
	must(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var body map[string]string
	if resp.StatusCode != http.StatusServiceUnavailable || json.Unmarshal(b, &body) != nil || body["error"] != "misconfigured" {
		t.Fatalf("misconfigured: %d %s", resp.StatusCode, b)
	}
	resp, err = http.Get(ts.URL + "/health")
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health: %d", resp.StatusCode)
	}
	resp, err = http.Get(ts.URL + "/nope")
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown path: %d", resp.StatusCode)
	}
}
