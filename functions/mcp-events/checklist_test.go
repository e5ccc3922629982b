package handler_test

import (
	"encoding/base64"
	"maps"
	"slices"
	"strings"
	"testing"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
	"appwrite-agent/shared/eventcatalog"
)

// TestInvalidRequestsTouchNothing: appwrite/mcp's list of malformed subscriptions (tests/e2e/
// test_events_subscribe.py, "invalid requests are refused before anything is sent"), each refused with
// -32602 before Appwrite or the callback is contacted: the arguments (unknown, missing project, not an
// object, an id that would widen the webhook's event pattern or is not an Appwrite id, in every id argument
// of every event, a status outside its choices), the delivery (absent, its URL absent, not https, without a
// host, not a URL, private, the metadata address, with credentials, too long to seal), the secret (absent,
// not a string, empty, without or with a changed prefix, not base64, 23 or 65 bytes) and ttlMs and maxAgeMs
// that are not numbers (or below zero for maxAgeMs). An unknown event is NotFound, another delivery mode
// Unsupported; events/unsubscribe refuses the same way. Where this server decides otherwise, docs/events.md
// §11 says why: a negative ttlMs is clamped (TestTTLExtremes), and a project id may hold a '.'.
func TestInvalidRequestsTouchNothing(t *testing.T) {
	st := eventstest.NewStack(t)
	proxy := st.ProxyAppwrite(t, nil)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	cb := st.Recv.URL("/checklist")
	key := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	base := eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil)
	with := func(change func(p map[string]any)) map[string]any {
		p := maps.Clone(base)
		p["delivery"] = maps.Clone(base["delivery"].(map[string]any))
		p["arguments"] = maps.Clone(base["arguments"].(map[string]any))
		change(p)
		return p
	}
	delivery := func(k string, v any) map[string]any {
		return with(func(p map[string]any) { p["delivery"].(map[string]any)[k] = v })
	}
	noDelivery := func(k string) map[string]any {
		return with(func(p map[string]any) { delete(p["delivery"].(map[string]any), k) })
	}
	invalid := map[string]map[string]any{
		"unknown argument":        with(func(p map[string]any) { p["arguments"].(map[string]any)["extra"] = "x" }),
		"no project":              with(func(p map[string]any) { delete(p["arguments"].(map[string]any), "project_id") }),
		"arguments not an object": with(func(p map[string]any) { p["arguments"] = []string{"main"} }),
		"no delivery":             with(func(p map[string]any) { p["delivery"] = nil }),
		"no url":                  noDelivery("url"),
		"http url":                delivery("url", strings.Replace(cb, "https://", "http://", 1)),
		"ftp url":                 delivery("url", "ftp://hooks.example.com/"),
		"file url":                delivery("url", "file:///etc/passwd"),
		"url without host":        delivery("url", "https:///path"),
		"not a url":               delivery("url", "not a url"),
		"private url":             delivery("url", "https://10.0.0.7/hooks"),
		"metadata url":            delivery("url", "https://169.254.169.254/latest"),
		"credentials in url":      delivery("url", strings.Replace(cb, "https://", "https://u:p@", 1)),
		"no secret":               noDelivery("secret"),
		"secret not a string":     delivery("secret", 42),
		"empty secret":            delivery("secret", ""),
		"bare prefix":             delivery("secret", "whsec_"),
		"secret without prefix":   delivery("secret", key),
		"uppercase prefix":        delivery("secret", "WHSEC_"+key),
		"space after prefix":      delivery("secret", "whsec_ "+key),
		"secret not base64":       delivery("secret", "whsec_not*base64!"),
		"secret bad padding":      delivery("secret", "whsec_"+key[:len(key)-1]),
		"secret of 23 bytes":      delivery("secret", "whsec_"+base64.StdEncoding.EncodeToString(make([]byte, 23))),
		"secret of 65 bytes":      delivery("secret", "whsec_"+base64.StdEncoding.EncodeToString(make([]byte, 65))),
		"envelope too large":      delivery("url", cb+"?pad="+strings.Repeat("a", 2000)),
		"ttl not a number":        with(func(p map[string]any) { p["ttlMs"] = "1h" }),
		"maxAge not a number":     with(func(p map[string]any) { p["maxAgeMs"] = "1h" }),
		"maxAge negative":         with(func(p map[string]any) { p["maxAgeMs"] = -5 }),
		"deployment status outside its choices": eventstest.SubParams("functions.deployment.completed",
			map[string]any{"project_id": eventstest.ProjectID, "function_id": eventstest.FunctionID, "status": "building"}, cb, secret, nil),
	}
	// Ids that would widen an Appwrite event pattern, or are not ids, in every id argument of every event.
	ids := map[string]string{"database_id": eventstest.DatabaseID, "table_id": eventstest.TableID, "bucket_id": eventstest.BucketID, "function_id": eventstest.FunctionID, "site_id": eventstest.SiteID}
	for _, e := range eventcatalog.All() {
		full := map[string]any{"project_id": eventstest.ProjectID}
		for _, a := range e.Args {
			full[a] = ids[a]
		}
		for _, a := range e.RequiredArgs() {
			for _, bad := range []string{"*", "a*", "a.b", "fn1.executions", "", "-lead", "_lead", "a b", strings.Repeat("a", 37)} {
				if a == "project_id" && strings.Contains(bad, ".") {
					continue // a project id may hold a '.': it is not part of the event strings (docs/events.md §11)
				}
				args := maps.Clone(full)
				args[a] = bad
				invalid[e.Name+" "+a+"="+bad] = eventstest.SubParams(e.Name, args, cb, secret, nil)
			}
		}
	}
	appwriteCalls := func() int { return len(proxy.Calls()) }
	for _, name := range slices.Sorted(maps.Keys(invalid)) {
		t.Run(name, func(t *testing.T) {
			before := appwriteCalls()
			r := eventstest.RPC(t, url, tok, "events/subscribe", invalid[name])
			if r.Error == nil || r.Error.Code != -32602 {
				t.Fatalf("want -32602, got %s", r.Raw)
			}
			if n := appwriteCalls() - before; n != 0 {
				t.Fatalf("refused after %d calls to Appwrite", n)
			}
		})
	}
	for _, c := range []struct {
		name, method string
		params       map[string]any
		code         int
	}{
		{"unknown event", "events/subscribe", with(func(p map[string]any) { p["name"] = "tablesdb.row.exploded" }), -32011},
		{"unsubscribe an unknown event", "events/unsubscribe", map[string]any{"name": "nope", "arguments": eventstest.RowArgs(), "delivery": map[string]any{"url": cb}}, -32011},
		{"unsubscribe with a wildcard", "events/unsubscribe", map[string]any{"name": "tablesdb.row.created",
			"arguments": map[string]any{"project_id": eventstest.ProjectID, "database_id": eventstest.DatabaseID, "table_id": "*"}, "delivery": map[string]any{"url": cb}}, -32602},
		{"poll delivery", "events/subscribe", delivery("mode", "poll"), -32014},
		{"push delivery", "events/subscribe", delivery("mode", "push"), -32014},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := eventstest.RPC(t, url, tok, c.method, c.params); r.Error == nil || r.Error.Code != c.code {
				t.Fatalf("want %d, got %s", c.code, r.Raw)
			}
		})
	}
	calls := proxy.Calls()
	if len(calls) != 0 {
		t.Fatalf("refused requests reached Appwrite: %v", calls)
	}
	if n := len(st.Recv.Received()); n != 0 {
		t.Fatalf("refused requests contacted the callback %d times", n)
	}
}

// TestEventsListRefusesAForeignCursor: the MCP spec's pagination says a cursor the server did not issue is
// invalid params; events/list lists every event in one page and issues none, so any cursor is refused
// (appwrite/mcp answers the same), while null and no params at all list the catalog.
func TestEventsListRefusesAForeignCursor(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	if r := eventstest.RPC(t, url, tok, "events/list", map[string]any{"cursor": "abc"}); r.Error == nil || r.Error.Code != -32602 || r.Error.Data["field"] != "cursor" {
		t.Fatalf("a foreign cursor: %s", r.Raw)
	}
	for _, params := range []map[string]any{nil, {"cursor": nil}} {
		if r := eventstest.RPC(t, url, tok, "events/list", params); r.Error != nil || len(r.Result["events"].([]any)) != len(eventcatalog.All()) {
			t.Fatalf("params %v: %s", params, r.Raw)
		}
	}
}

// TestAnotherUsersUnsubscribeTouchesNothing: a subscription's id is a keyed hash over its principal, URL,
// event and arguments, so another member of the project unsubscribing the same event and URL names another
// id: the answer is the empty result, and the first user's webhook stays (appwrite/mcp asks the same).
func TestAnotherUsersUnsubscribeTouchesNothing(t *testing.T) {
	st := eventstest.NewStack(t)
	eventstest.Must(t, st.LA.AddMember(eventstest.ProjectID, "user-2"))
	url := st.Instance(st.Server(handler.Options{}))
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	cb := st.Recv.URL("/shared")
	r := eventstest.RPC(t, url, st.Token(eventstest.UserID, eventstest.AllScopes), "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil))
	if r.Error != nil {
		t.Fatal(string(r.Raw))
	}
	id := r.Result["id"].(string)
	target := map[string]any{"name": "tablesdb.row.created", "arguments": eventstest.RowArgs(), "delivery": map[string]any{"url": cb}}
	if r := eventstest.RPC(t, url, st.Token("user-2", eventstest.AllScopes), "events/unsubscribe", target); r.Error != nil || r.Result["resultType"] != "complete" || len(r.Result) != 1 {
		t.Fatalf("another user's unsubscribe: %s", r.Raw)
	}
	hooks := st.Webhooks(eventstest.ProjectID)
	if len(hooks) != 1 || hooks[0]["$id"] != id {
		t.Fatalf("webhooks after another user's unsubscribe: %v", hooks)
	}
}

// TestAppwriteFailuresLeaveNothing: Appwrite failing (its 503) on the read that authorizes a subscription or
// on the webhook's create is an internal error (-32603) that leaves no webhook and sends no challenge for a
// subscription that cannot be made; a failing list of the project's webhooks (read only to clean up and to
// find a verification to reuse) does not stop the subscription (appwrite/mcp answers -32603 there too:
// docs/events.md §11, S29).
func TestAppwriteFailuresLeaveNothing(t *testing.T) {
	st := eventstest.NewStack(t)
	proxy := st.ProxyAppwrite(t, nil)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	for _, c := range []struct {
		name       string
		fail       func(method, path string) bool
		code       int // 0: subscribed
		challenged bool
	}{
		{"the table read", func(m, p string) bool { return m == "GET" && strings.HasPrefix(p, "/v1/tablesdb/") }, -32603, false},
		{"the webhook create", func(m, p string) bool { return m == "POST" && p == "/v1/webhooks" }, -32603, true},
		{"the webhook list", func(m, p string) bool { return m == "GET" && p == "/v1/webhooks" }, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			proxy.Fail(c.fail)
			cb := st.Recv.URL("/" + strings.ReplaceAll(c.name, " ", "-"))
			before := len(st.Recv.Received())
			r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil))
			proxy.Fail(nil)
			switch {
			case c.code == 0 && r.Error != nil:
				t.Fatalf("want a subscription, got %s", r.Raw)
			case c.code != 0 && (r.Error == nil || r.Error.Code != c.code):
				t.Fatalf("want %d, got %s", c.code, r.Raw)
			}
			if challenged := len(st.Recv.Received()) > before; challenged != c.challenged {
				t.Fatalf("challenged: %v", challenged)
			}
			if n := len(st.Webhooks(eventstest.ProjectID)); (c.code == 0) != (n == 1) {
				t.Fatalf("%d webhooks left", n)
			}
			if c.code == 0 {
				if r := eventstest.RPC(t, url, tok, "events/unsubscribe", map[string]any{"name": "tablesdb.row.created", "arguments": eventstest.RowArgs(), "delivery": map[string]any{"url": cb}}); r.Error != nil {
					t.Fatal(string(r.Raw))
				}
			}
		})
	}
}

// TestRenamedWebhookIsRewritten: a webhook that holds a subscription's id but was renamed in the Console (its
// label gone) is rewritten by the next subscribe of that subscription, label included: the id is a keyed hash
// over the principal, the URL, the event and the arguments, so only this caller's own subscription can have
// it (appwrite/mcp refuses such a subscribe instead: docs/events.md §11, S36).
func TestRenamedWebhookIsRewritten(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	params := eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), st.Recv.URL("/renamed"), secret, nil)
	r := eventstest.RPC(t, url, tok, "events/subscribe", params)
	if r.Error != nil {
		t.Fatal(string(r.Raw))
	}
	id := r.Result["id"].(string)
	hook := st.Webhooks(eventstest.ProjectID)[0]
	renamed := map[string]any{"name": "Renamed by a person", "url": hook["url"], "events": hook["events"], "enabled": true, "tls": true, "security": true}
	if status, body := st.APIKeyCall("PUT", "/webhooks/"+id, renamed); status != 200 {
		t.Fatalf("rename: %d %v", status, body)
	}
	if r := eventstest.RPC(t, url, tok, "events/subscribe", params); r.Error != nil || r.Result["id"] != id {
		t.Fatalf("subscribe after the rename: %s", r.Raw)
	}
	hooks := st.Webhooks(eventstest.ProjectID)
	if len(hooks) != 1 || !strings.HasPrefix(hooks[0]["name"].(string), "MCP events | tablesdb.row.created | until ") {
		t.Fatalf("webhooks after the second subscribe: %v", hooks)
	}
}
