package handler_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
	"appwrite-agent/shared/devkit/fakesentry"
	"appwrite-agent/shared/devkit/fnhttptest"
	"appwrite-agent/shared/devkit/localruntime"
)

// TestMain runs every test once per stand-in profile (eventstest.Main).
func TestMain(m *testing.M) { eventstest.Main(m) }

func TestHealthStillServed(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	resp, err := http.Get(url + "/health")
	eventstest.Must(t, err)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("health: %d", resp.StatusCode)
	}
}

func TestHealthAndUnknownPath(t *testing.T) { fnhttptest.CheckHealthAndNotFound(t, handler.Main) }

// TestMainReadsTheEnvironment runs handler.FromEnv (what Main builds once per process), as the runtime does,
// configured only by environment variables: another configuration makes another function, and a broken one
// answers a clean JSON 503 while /health keeps working.
func TestMainReadsTheEnvironment(t *testing.T) {
	st := eventstest.NewStack(t)
	for k, v := range st.Env {
		t.Setenv(k, v)
	}
	serve := func() *httptest.Server {
		ts := httptest.NewServer(localruntime.New(handler.FromEnv(), localruntime.Options{LogDir: t.TempDir()}))
		t.Cleanup(ts.Close)
		return ts
	}
	ts := serve()
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)

	r := eventstest.RPC(t, ts.URL, tok, "events/list", map[string]any{})
	if r.Error != nil || len(r.Result["events"].([]any)) != 8 {
		t.Fatalf("events on: %s", r.Raw)
	}
	t.Setenv("MCP_EVENTS_ENABLED", "false")
	ts = serve()
	r = eventstest.RPC(t, ts.URL, tok, "events/list", map[string]any{})
	if r.Error == nil || r.Error.Code != -32601 {
		t.Fatalf("events off after a configuration change: %s", r.Raw)
	}
	t.Setenv("MCP_EVENTS_OAUTH_ISSUER", "")
	ts = serve()
	resp, err := http.Post(ts.URL+"/mcp", "application/json", nil)
	eventstest.Must(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var body map[string]string
	if resp.StatusCode != http.StatusServiceUnavailable || json.Unmarshal(b, &body) != nil || body["error"] != "misconfigured" {
		t.Fatalf("misconfigured: %d %s", resp.StatusCode, b)
	}
	resp, err = http.Get(ts.URL + "/health")
	eventstest.Must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health: %d", resp.StatusCode)
	}
	resp, err = http.Get(ts.URL + "/nope")
	eventstest.Must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown path: %d", resp.StatusCode)
	}
}

// TestSentryFromTheEnvironment: handler.FromEnv (what Main builds once per process) reads SENTRY_DSN; a
// configuration that does not work is reported once (tag reason not_configured), however many requests
// come, and each is answered with the JSON 503. Without SENTRY_DSN nothing is sent.
func TestSentryFromTheEnvironment(t *testing.T) {
	st := eventstest.NewStack(t)
	fake := fakesentry.New()
	defer fake.Close()
	for k, v := range st.Env {
		t.Setenv(k, v)
	}
	t.Setenv("MCP_EVENTS_OAUTH_ISSUER", "")
	ts := httptest.NewServer(localruntime.New(handler.FromEnv(), localruntime.Options{LogDir: t.TempDir()}))
	defer ts.Close()
	status, _, _, _ := eventstest.Post(t, "POST", ts.URL, "x", `{}`, nil)
	if status != http.StatusServiceUnavailable || len(fake.Events()) != 0 {
		t.Fatalf("without SENTRY_DSN: %d, %d reports", status, len(fake.Events()))
	}
	t.Setenv("SENTRY_DSN", fake.DSN)
	ts = httptest.NewServer(localruntime.New(handler.FromEnv(), localruntime.Options{LogDir: t.TempDir()}))
	defer ts.Close()
	for i := 0; i < 3; i++ {
		if status, _, _, raw := eventstest.Post(t, "POST", ts.URL, "x", `{}`, nil); status != http.StatusServiceUnavailable {
			t.Fatalf("misconfigured: %d %s", status, raw)
		}
	}
	evs := fake.Events()
	if len(evs) != 1 || evs[0].Tags["reason"] != "not_configured" || evs[0].Tags["function"] != "mcp-events" ||
		!strings.Contains(evs[0].Message, "MCP_EVENTS_OAUTH_ISSUER: required") {
		t.Fatalf("reports: %+v", evs)
	}
}
