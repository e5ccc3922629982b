package handler_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/shared/devkit/fakesentry"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/faultreport"
)

func reporter(t *testing.T, fake *fakesentry.Server) *faultreport.Reporter {
	t.Helper()
	r, err := faultreport.New(faultreport.Options{DSN: fake.DSN, Function: "mcp-events"})
	must(t, err)
	return r
}

// TestSentryReportsServerFaultsOnly: with a DSN, Appwrite failing during a subscribe and during a tool
// call reaches Sentry (the fake checks the envelope) with the function, event, project, outcome and reason
// tags and no token or secret; a caller's bad input, a missing scope and a subscriber's failing endpoint
// send nothing.
func TestSentryReportsServerFaultsOnly(t *testing.T) {
	st := newStack(t)
	fake := fakesentry.New()
	defer fake.Close()
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)

	// Not server faults, on a working stack.
	healthy := st.instance(st.server(handler.Options{Faults: reporter(t, fake)}))
	rpc(t, healthy, tok, "events/subscribe", subParams("row.exploded", rowArgs(), st.recv.url("/a"), secret, nil))
	rpc(t, healthy, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), "https://localhost./a", secret, nil))
	rpc(t, healthy, st.token(userID, []string{"project:webhooks.read"}), "events/subscribe", subParams("tablesdb.row.created", rowArgs(), st.recv.url("/a"), secret, nil))
	st.recv.setMode("500")
	if r := rpc(t, healthy, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), st.recv.url("/failing"), secret, nil)); r.Error == nil || r.Error.Code != -32015 {
		t.Fatalf("subscriber failure: %s", r.Raw)
	}
	st.recv.setMode("answer")
	callTool(t, connect(t, healthy, tok, "2025-11-25"), "get_user", map[string]any{"project_id": projectID, "user_id": "ghost"})
	if n := len(fake.Events()); n != 0 {
		t.Fatalf("bad input or a subscriber's failure was reported: %+v", fake.Events())
	}

	// Appwrite failing: server faults.
	st.appwriteDown()
	broken := st.instance(st.server(handler.Options{Faults: reporter(t, fake)}))
	if r := rpc(t, broken, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), st.recv.url("/b"), secret, nil)); r.Error == nil || r.Error.Code != -32603 {
		t.Fatalf("subscribe with Appwrite down: %s", r.Raw)
	}
	callTool(t, connect(t, broken, tok, "2026-07-28"), "get_execution", map[string]any{"project_id": projectID, "function_id": fnID, "execution_id": "e1"})

	evs := fake.Events()
	if len(evs) != 2 || len(fake.Problems()) != 0 {
		t.Fatalf("events %+v, problems %v", evs, fake.Problems())
	}
	for i, want := range []map[string]string{
		{"function": "mcp-events", "operation": "events/subscribe", "event": "tablesdb.row.created", "project_id": projectID, "outcome": "error", "reason": "appwrite_503"},
		{"function": "mcp-events", "operation": "tools/call get_execution", "project_id": projectID, "outcome": "unavailable", "reason": "appwrite_503"},
	} {
		for k, v := range want {
			if evs[i].Tags[k] != v {
				t.Errorf("report %d: tag %s = %q, want %q (%v)", i, k, evs[i].Tags[k], v, evs[i].Tags)
			}
		}
		for _, secret := range []string{tok, tok[:40], secret, secret[6:], "whsec_"} {
			if strings.Contains(evs[i].Raw, secret) {
				t.Errorf("report %d carries a secret: %s", i, evs[i].Raw)
			}
		}
	}
}

// TestSentryFromTheEnvironment: handler.FromEnv (what Main builds once per process) reads SENTRY_DSN; a
// configuration that does not work is reported once (tag reason not_configured), however many requests
// come, and each is answered with the JSON 503. Without SENTRY_DSN nothing is sent.
func TestSentryFromTheEnvironment(t *testing.T) {
	st := newStack(t)
	fake := fakesentry.New()
	defer fake.Close()
	for k, v := range st.env {
		t.Setenv(k, v)
	}
	t.Setenv("MCP_EVENTS_OAUTH_ISSUER", "")
	ts := httptest.NewServer(localruntime.New(handler.FromEnv(), localruntime.Options{LogDir: t.TempDir()}))
	defer ts.Close()
	status, _, _, _ := post(t, "POST", ts.URL, "x", `{}`, nil)
	if status != http.StatusServiceUnavailable || len(fake.Events()) != 0 {
		t.Fatalf("without SENTRY_DSN: %d, %d reports", status, len(fake.Events()))
	}
	t.Setenv("SENTRY_DSN", fake.DSN)
	ts = httptest.NewServer(localruntime.New(handler.FromEnv(), localruntime.Options{LogDir: t.TempDir()}))
	defer ts.Close()
	for i := 0; i < 3; i++ {
		if status, _, _, raw := post(t, "POST", ts.URL, "x", `{}`, nil); status != http.StatusServiceUnavailable {
			t.Fatalf("misconfigured: %d %s", status, raw)
		}
	}
	evs := fake.Events()
	if len(evs) != 1 || evs[0].Tags["reason"] != "not_configured" || evs[0].Tags["function"] != "mcp-events" ||
		!strings.Contains(evs[0].Message, "MCP_EVENTS_OAUTH_ISSUER: required") {
		t.Fatalf("reports: %+v", evs)
	}
}
