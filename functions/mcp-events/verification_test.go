package handler_test

import (
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/shared/devkit/testclock"
)

// challenges counts the verification envelopes the receiver got.
func challenges(r *receiver) int {
	n := 0
	for _, got := range r.received() {
		if strings.HasPrefix(got.WebhookID, "msg_verification_") {
			n++
		}
	}
	return n
}

// TestVerificationPerPrincipalAndURL: a principal that verified a URL in a project is not challenged again
// for that URL with another event or other arguments (its existing webhook is the proof, on any instance);
// another principal, another URL, another project or a lapsed subscription is challenged.
func TestVerificationPerPrincipalAndURL(t *testing.T) {
	st := newStack(t)
	must(t, st.la.AddMember(projectID, "user-2"))
	clk := testclock.Wall() // the servers' clock; the stand-in keeps st.clock.Now
	a := st.instance(st.server(handler.Options{Now: clk.Now}))
	b := st.instance(st.server(handler.Options{Now: clk.Now}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	cb := st.recv.url("/shared")
	sub := func(url, tok, event string, args map[string]any, cb string) {
		t.Helper()
		if r := rpc(t, url, tok, "events/subscribe", subParams(event, args, cb, secret, nil)); r.Error != nil {
			t.Fatalf("%s: %s", event, r.Raw)
		}
	}

	sub(a, tok, "tablesdb.row.created", rowArgs(), cb)
	if n := challenges(st.recv); n != 1 {
		t.Fatalf("first subscribe: %d challenges", n)
	}
	// Same principal and URL: another event, other arguments, another instance. No challenge.
	sub(b, tok, "tablesdb.row.deleted", rowArgs(), cb)
	sub(a, tok, "tablesdb.row.created", map[string]any{"project_id": projectID, "database_id": dbID, "table_id": "other"}, cb)
	sub(b, tok, "users.user.created", map[string]any{"project_id": projectID}, cb)
	if n := challenges(st.recv); n != 1 {
		t.Fatalf("the same (principal, URL) was challenged again: %d challenges", n)
	}
	// Another URL: challenged.
	sub(a, tok, "users.user.created", map[string]any{"project_id": projectID}, st.recv.url("/other"))
	if n := challenges(st.recv); n != 2 {
		t.Fatalf("another URL: %d challenges, want 2", n)
	}
	// Another principal, same URL: its own proof is needed.
	sub(a, st.token("user-2", allScopes), "users.user.created", map[string]any{"project_id": projectID}, cb)
	if n := challenges(st.recv); n != 3 {
		t.Fatalf("another principal: %d challenges, want 3", n)
	}
	// Without any proving subscription left (unsubscribed), the URL is challenged again.
	for _, u := range []struct {
		event string
		args  map[string]any
	}{
		{"tablesdb.row.created", rowArgs()}, {"tablesdb.row.deleted", rowArgs()}, {"users.user.created", map[string]any{"project_id": projectID}},
		{"tablesdb.row.created", map[string]any{"project_id": projectID, "database_id": dbID, "table_id": "other"}},
	} {
		if r := rpc(t, a, tok, "events/unsubscribe", map[string]any{"name": u.event, "arguments": u.args, "delivery": map[string]any{"url": cb}}); r.Error != nil {
			t.Fatalf("unsubscribe %s: %s", u.event, r.Raw)
		}
	}
	sub(b, tok, "storage.file.created", map[string]any{"project_id": projectID, "bucket_id": bucketID}, cb)
	if n := challenges(st.recv); n != 4 {
		t.Fatalf("after every proof was removed: %d challenges, want 4", n)
	}
	for _, got := range st.recv.received() {
		if !got.Verified {
			t.Fatalf("a request the receiver could not verify: %+v", got)
		}
	}
}

// TestChallengeRateLimit: one instance sends at most MCP_EVENTS_CHALLENGE_RATE challenges to one host per
// minute; beyond, events/subscribe answers ResourceExhausted without contacting the host, until the window
// slides (injected clock).
func TestChallengeRateLimit(t *testing.T) {
	st := newStack(t)
	st.env["MCP_EVENTS_CHALLENGE_RATE"] = "2"
	clk := testclock.Wall() // the servers' clock; the stand-in keeps st.clock.Now
	url := st.instance(st.server(handler.Options{Now: clk.Now}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	args := map[string]any{"project_id": projectID}
	for i, path := range []string{"/r1", "/r2"} {
		if r := rpc(t, url, tok, "events/subscribe", subParams("users.user.created", args, st.recv.url(path), secret, nil)); r.Error != nil {
			t.Fatalf("challenge %d: %s", i+1, r.Raw)
		}
	}
	r := rpc(t, url, tok, "events/subscribe", subParams("users.user.created", args, st.recv.url("/r3"), secret, nil))
	if r.Error == nil || r.Error.Code != -32013 || r.Error.Data["resource"] != "verificationChallenges" ||
		r.Error.Data["limit"] != float64(2) || !strings.Contains(r.Error.Message, "too many verification challenges to 127.0.0.1") {
		t.Fatalf("third challenge within the minute: %s", r.Raw)
	}
	if n := challenges(st.recv); n != 2 {
		t.Fatalf("the limited subscribe reached the host: %d challenges", n)
	}
	// Refreshing an existing subscription sends no challenge, so the limit does not apply to it.
	if r := rpc(t, url, tok, "events/subscribe", subParams("users.user.created", args, st.recv.url("/r1"), secret, nil)); r.Error != nil {
		t.Fatalf("refresh under the limit: %s", r.Raw)
	}
	// Another instance counts on its own.
	other := st.instance(st.server(handler.Options{Now: clk.Now}))
	if r := rpc(t, other, tok, "events/subscribe", subParams("users.user.created", args, st.recv.url("/r4"), secret, nil)); r.Error != nil {
		t.Fatalf("another instance: %s", r.Raw)
	}
	clk.Advance(time.Minute)
	if r := rpc(t, url, tok, "events/subscribe", subParams("users.user.created", args, st.recv.url("/r3"), secret, nil)); r.Error != nil {
		t.Fatalf("after the window: %s", r.Raw)
	}
	if n := len(st.webhooks(projectID)); n != 4 {
		t.Fatalf("%d webhooks, want 4", n)
	}
}
