package subscriptions_test

import (
	"testing"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
	"appwrite-agent/shared/devkit/testclock"
)

// TestVerificationPerPrincipalAndURL: a principal that verified a URL in a project is not challenged again
// for that URL with another event or other arguments (its existing webhook is the proof, on any instance);
// another principal, another URL, another project or a lapsed subscription is challenged.
func TestVerificationPerPrincipalAndURL(t *testing.T) {
	st := eventstest.NewStack(t)
	eventstest.Must(t, st.LA.AddMember(eventstest.ProjectID, "user-2"))
	clk := testclock.Wall() // the servers' clock; the stand-in keeps st.clock.Now
	a := st.Instance(st.Server(handler.Options{Now: clk.Now}))
	b := st.Instance(st.Server(handler.Options{Now: clk.Now}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	cb := st.Recv.URL("/shared")
	sub := func(url, tok, event string, args map[string]any, cb string) {
		t.Helper()
		if r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams(event, args, cb, secret, nil)); r.Error != nil {
			t.Fatalf("%s: %s", event, r.Raw)
		}
	}

	sub(a, tok, "tablesdb.row.created", eventstest.RowArgs(), cb)
	if n := eventstest.Challenges(st.Recv); n != 1 {
		t.Fatalf("first subscribe: %d challenges", n)
	}
	// Same principal and URL: another event, other arguments, another instance. No challenge.
	sub(b, tok, "tablesdb.row.deleted", eventstest.RowArgs(), cb)
	sub(a, tok, "tablesdb.row.created", map[string]any{"project_id": eventstest.ProjectID, "database_id": eventstest.DatabaseID, "table_id": "other"}, cb)
	sub(b, tok, "users.user.created", map[string]any{"project_id": eventstest.ProjectID}, cb)
	if n := eventstest.Challenges(st.Recv); n != 1 {
		t.Fatalf("the same (principal, URL) was challenged again: %d challenges", n)
	}
	// Another URL: challenged.
	sub(a, tok, "users.user.created", map[string]any{"project_id": eventstest.ProjectID}, st.Recv.URL("/other"))
	if n := eventstest.Challenges(st.Recv); n != 2 {
		t.Fatalf("another URL: %d challenges, want 2", n)
	}
	// Another principal, same URL: its own proof is needed.
	sub(a, st.Token("user-2", eventstest.AllScopes), "users.user.created", map[string]any{"project_id": eventstest.ProjectID}, cb)
	if n := eventstest.Challenges(st.Recv); n != 3 {
		t.Fatalf("another principal: %d challenges, want 3", n)
	}
	// Without any proving subscription left (unsubscribed), the URL is challenged again.
	for _, u := range []struct {
		event string
		args  map[string]any
	}{
		{"tablesdb.row.created", eventstest.RowArgs()}, {"tablesdb.row.deleted", eventstest.RowArgs()}, {"users.user.created", map[string]any{"project_id": eventstest.ProjectID}},
		{"tablesdb.row.created", map[string]any{"project_id": eventstest.ProjectID, "database_id": eventstest.DatabaseID, "table_id": "other"}},
	} {
		if r := eventstest.RPC(t, a, tok, "events/unsubscribe", map[string]any{"name": u.event, "arguments": u.args, "delivery": map[string]any{"url": cb}}); r.Error != nil {
			t.Fatalf("unsubscribe %s: %s", u.event, r.Raw)
		}
	}
	sub(b, tok, "storage.file.created", map[string]any{"project_id": eventstest.ProjectID, "bucket_id": eventstest.BucketID}, cb)
	if n := eventstest.Challenges(st.Recv); n != 4 {
		t.Fatalf("after every proof was removed: %d challenges, want 4", n)
	}
	for _, got := range st.Recv.Received() {
		if !got.Verified {
			t.Fatalf("a request the receiver could not verify: %+v", got)
		}
	}
}
