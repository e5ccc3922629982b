package subscriptions_test

import (
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
	"appwrite-agent/shared/devkit/testclock"
)

// TestChallengeRateLimit: one instance sends at most MCP_EVENTS_CHALLENGE_RATE challenges to one host per
// minute; beyond, events/subscribe answers ResourceExhausted without contacting the host, until the window
// slides (injected clock).
func TestChallengeRateLimit(t *testing.T) {
	st := eventstest.NewStack(t)
	st.Env["MCP_EVENTS_CHALLENGE_RATE"] = "2"
	clk := testclock.Wall() // the servers' clock; the stand-in keeps st.clock.Now
	url := st.Instance(st.Server(handler.Options{Now: clk.Now}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	args := map[string]any{"project_id": eventstest.ProjectID}
	for i, path := range []string{"/r1", "/r2"} {
		if r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("users.user.created", args, st.Recv.URL(path), secret, nil)); r.Error != nil {
			t.Fatalf("challenge %d: %s", i+1, r.Raw)
		}
	}
	r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("users.user.created", args, st.Recv.URL("/r3"), secret, nil))
	if r.Error == nil || r.Error.Code != -32013 || r.Error.Data["resource"] != "verificationChallenges" ||
		r.Error.Data["limit"] != float64(2) || !strings.Contains(r.Error.Message, "too many verification challenges to 127.0.0.1") {
		t.Fatalf("third challenge within the minute: %s", r.Raw)
	}
	if n := eventstest.Challenges(st.Recv); n != 2 {
		t.Fatalf("the limited subscribe reached the host: %d challenges", n)
	}
	// Refreshing an existing subscription sends no challenge, so the limit does not apply to it.
	if r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("users.user.created", args, st.Recv.URL("/r1"), secret, nil)); r.Error != nil {
		t.Fatalf("refresh under the limit: %s", r.Raw)
	}
	// Another instance counts on its own.
	other := st.Instance(st.Server(handler.Options{Now: clk.Now}))
	if r := eventstest.RPC(t, other, tok, "events/subscribe", eventstest.SubParams("users.user.created", args, st.Recv.URL("/r4"), secret, nil)); r.Error != nil {
		t.Fatalf("another instance: %s", r.Raw)
	}
	clk.Advance(time.Minute)
	if r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("users.user.created", args, st.Recv.URL("/r3"), secret, nil)); r.Error != nil {
		t.Fatalf("after the window: %s", r.Raw)
	}
	if n := len(st.Webhooks(eventstest.ProjectID)); n != 4 {
		t.Fatalf("%d webhooks, want 4", n)
	}
}
