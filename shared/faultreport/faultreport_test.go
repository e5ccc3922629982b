package faultreport_test

import (
	"strings"
	"testing"

	"appwrite-agent/shared/devkit/fakesentry"
	"appwrite-agent/shared/faultreport"
)

// TestReportReachesSentryWithTagsAndNoSecrets: a fault arrives at the DSN as one envelope with the tags,
// before Report returns, and with every secret-looking part of the detail redacted.
func TestReportReachesSentryWithTagsAndNoSecrets(t *testing.T) {
	fake := fakesentry.New()
	defer fake.Close()
	r, err := faultreport.New(faultreport.Options{DSN: fake.DSN, Function: "mcp-events", Environment: "test", Release: "dep-1"})
	if err != nil {
		t.Fatal(err)
	}
	const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmU"
	const whsec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	r.Report(faultreport.Fault{
		Event: "row.created", ProjectID: "proj1", Outcome: "error", Reason: "appwrite_503", Operation: "events/subscribe",
		Detail: "Appwrite failed for Bearer " + jwt + " to https://user:pw@hooks.example/cb?token=abc with " + whsec +
			" key standard_0123456789abcdef and " + strings.Repeat("A", 40),
	})
	evs := fake.Events() // Report is synchronous: the event has arrived
	if len(evs) != 1 || len(fake.Problems()) != 0 {
		t.Fatalf("events %d, problems %v", len(evs), fake.Problems())
	}
	ev := evs[0]
	want := map[string]string{"function": "mcp-events", "event": "row.created", "project_id": "proj1", "outcome": "error", "reason": "appwrite_503", "operation": "events/subscribe"}
	for k, v := range want {
		if ev.Tags[k] != v {
			t.Errorf("tag %s = %q, want %q", k, ev.Tags[k], v)
		}
	}
	if ev.Level != "error" || !strings.HasPrefix(ev.Message, "mcp-events: error in events/subscribe (appwrite_503): Appwrite failed") {
		t.Errorf("event: level %q message %q", ev.Level, ev.Message)
	}
	for _, secret := range []string{jwt[:20], "MfKQ9r8GKYqrTwjUPD8IL", "user:pw", "token=abc", "standard_0123", strings.Repeat("A", 40)} {
		if strings.Contains(ev.Raw, secret) {
			t.Errorf("the envelope carries %q:\n%s", secret, ev.Raw)
		}
	}
}

// TestOptionsFromEnv: the DSN and the environment are read trimmed, with the function and release given.
func TestOptionsFromEnv(t *testing.T) {
	env := map[string]string{faultreport.EnvDSN: " https://k@sentry.example/1\n", faultreport.EnvEnvironment: " staging "}
	got := faultreport.OptionsFromEnv(func(k string) string { return env[k] }, "mcp-events", "dep1")
	want := faultreport.Options{DSN: "https://k@sentry.example/1", Function: "mcp-events", Environment: "staging", Release: "dep1"}
	if got != want {
		t.Fatalf("OptionsFromEnv = %+v, want %+v", got, want)
	}
}

// TestNoDSNNoReporter: without SENTRY_DSN there is no reporter, and a nil reporter does nothing.
func TestNoDSNNoReporter(t *testing.T) {
	r, err := faultreport.New(faultreport.OptionsFromEnv(func(string) string { return "" }, "webhook-ingress", ""))
	if err != nil || r != nil || r.Enabled() {
		t.Fatalf("%v %v", r, err)
	}
	r.Report(faultreport.Fault{Outcome: "error"})
	r.Flush()
	if _, err := faultreport.New(faultreport.Options{DSN: "not a dsn", Function: "x"}); err == nil {
		t.Fatal("a malformed DSN was accepted")
	}
}
