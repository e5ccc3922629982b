package handler_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"appwrite-agent/functions/mcp-events/mcpserver"
	"appwrite-agent/functions/mcp-events/subscriptions"
	"appwrite-agent/shared/appwritesig"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/seal"
)

func TestHealthStillServed(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(mcpserver.Options{}))
	resp, err := http.Get(url + "/health")
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("health: %d", resp.StatusCode)
	}
}

func TestEventsListFilteredByTokenScope(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(mcpserver.Options{}))
	names := func(scopes []string) []string {
		r := rpc(t, url, st.token(userID, scopes), "events/list", map[string]any{})
		if r.Error != nil {
			t.Fatalf("events/list: %s", r.Raw)
		}
		if r.Result["resultType"] != "complete" {
			t.Fatalf("resultType: %s", r.Raw)
		}
		var out []string
		for _, e := range r.Result["events"].([]any) {
			ev := e.(map[string]any)
			if d := ev["delivery"].([]any); len(d) != 1 || d[0] != "webhook" {
				t.Fatalf("delivery: %v", d)
			}
			out = append(out, ev["name"].(string))
		}
		return out
	}
	if got := strings.Join(names(allScopes), ","); got != "tablesdb.row.created,tablesdb.row.updated,tablesdb.row.deleted,storage.file.created,users.user.created,functions.execution.failed,functions.deployment.completed,sites.deployment.completed" {
		t.Fatalf("all scopes: %s", got)
	}
	if got := strings.Join(names([]string{"project:webhooks.read", "project:webhooks.write", "project:users.read"}), ","); got != "users.user.created" {
		t.Fatalf("users only: %s", got)
	}
	// project:all grants every project scope (Appwrite Cloud's consent offers it).
	if got := strings.Join(names([]string{"openid", "project:all"}), ","); got != "tablesdb.row.created,tablesdb.row.updated,tablesdb.row.deleted,storage.file.created,users.user.created,functions.execution.failed,functions.deployment.completed,sites.deployment.completed" {
		t.Fatalf("project:all: %s", got)
	}
	// Bare names are API-key scopes, which no Appwrite access token carries: they grant nothing.
	if r := rpc(t, url, st.token(userID, []string{"webhooks.read", "webhooks.write", "users.read", "all"}), "events/list", map[string]any{}); r.Status != http.StatusForbidden || r.Error == nil || r.Error.Code != -32012 {
		t.Fatalf("bare scope names: %d %s", r.Status, r.Raw)
	}
	// A token that can use no event is asked to step up (HTTP 403, insufficient_scope), not shown an
	// empty list.
	r := rpc(t, url, st.token(userID, []string{"project:tables.read", "project:rows.read", "project:users.read"}), "events/list", map[string]any{})
	chal := r.Header.Get("WWW-Authenticate")
	if r.Status != http.StatusForbidden || r.Error == nil || r.Error.Code != -32012 ||
		!strings.HasPrefix(chal, `Bearer error="insufficient_scope", scope="project:webhooks.read project:webhooks.write `) ||
		!strings.Contains(chal, `resource_metadata="`+publicURL+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("without webhook scopes: %d %q %s", r.Status, chal, r.Raw)
	}
}

// TestSubscribeRefreshRotateUnsubscribe is the main flow, raw JSON-RPC as ChatGPT sends it.
func TestSubscribeRefreshRotateUnsubscribe(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(mcpserver.Options{Now: st.clock.Now}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	cb := st.recv.url("/hooks/client123")

	before := st.clock.Now()
	r := rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), cb, secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe: %s", r.Raw)
	}
	id, _ := r.Result["id"].(string)
	if !strings.HasPrefix(id, subscriptions.IDPrefix) || len(id) != subscriptions.IDLength {
		t.Fatalf("id %q", id)
	}
	if r.Result["resultType"] != "complete" || r.Result["truncated"] != false {
		t.Fatalf("result: %s", r.Raw)
	}
	if c, ok := r.Result["cursor"]; !ok || c != nil {
		t.Fatalf("cursor must be present and null: %s", r.Raw)
	}
	rb1 := mustTime(t, r.Result["refreshBefore"])
	// No ttlMs: the default grant (an hour), and refreshBefore a tenth of it (6 minutes) before the expiry.
	if d := rb1.Sub(before); d < 53*time.Minute || d > 55*time.Minute {
		t.Fatalf("default TTL: refreshBefore %v after start", d)
	}
	got := st.recv.received()
	if len(got) != 1 || !got[0].Verified || got[0].SubscriptionID != id || !strings.HasPrefix(got[0].WebhookID, "msg_verification_") {
		t.Fatalf("challenge: %+v", got)
	}
	var ch map[string]string
	_ = json.Unmarshal(got[0].Body, &ch)
	if ch["type"] != "verification" || len(ch["challenge"]) < 16 {
		t.Fatalf("challenge body: %s", got[0].Body)
	}

	// The webhook is the subscription.
	hooks := st.webhooks(projectID)
	if len(hooks) != 1 {
		t.Fatalf("webhooks: %v", hooks)
	}
	wh := hooks[0]
	if wh["$id"] != id || wh["url"] != st.ingress.srv.URL+"/appwrite/webhooks/"+id {
		t.Fatalf("webhook: %v", wh)
	}
	if ev := fmt.Sprint(wh["events"]); ev != "[databases.main.tables.support_tickets.rows.*.create]" {
		t.Fatalf("events: %s", ev)
	}
	if wh["security"] != true && wh["tls"] != true {
		t.Fatalf("tls: %v", wh)
	}
	// The name is the label: event, expiry (what cleanup reads when Appwrite returns no authPassword) and
	// the authenticated tag.
	if name := wh["name"].(string); !strings.HasPrefix(name, "MCP events | tablesdb.row.created | until "+rb1.Add(6*time.Minute).Format("2006-01-02T15:04:05Z")+" | ") || len(name) > 128 {
		t.Fatalf("name %q", name)
	}
	sub := openEnvelope(t, st, wh)
	if sub.CallbackURL != cb || sub.Event != "tablesdb.row.created" || !sub.Args.Equal(map[string]string{"database_id": dbID, "table_id": tableID}) || sub.VerifiedAt.IsZero() {
		t.Fatalf("envelope: %+v", sub)
	}

	// Refresh a minute later: same id, one webhook, no second challenge, TTL re-granted.
	st.clock.Advance(time.Minute)
	r = rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), cb, secret, nil))
	if r.Error != nil || r.Result["id"] != id {
		t.Fatalf("refresh: %s", r.Raw)
	}
	if rb2 := mustTime(t, r.Result["refreshBefore"]); !rb2.After(rb1) {
		t.Fatalf("refresh did not re-grant: %v then %v", rb1, rb2)
	}
	if n := len(st.recv.received()); n != 1 {
		t.Fatalf("refresh re-verified the callback: %d requests", n)
	}
	if n := len(st.webhooks(projectID)); n != 1 {
		t.Fatalf("refresh made %d webhooks", n)
	}

	// Rotation: a new secret keeps the id and the old secret for the grace window.
	secret2 := newSecret()
	st.recv.accept(secret2)
	r = rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), cb, secret2, nil))
	if r.Error != nil || r.Result["id"] != id {
		t.Fatalf("rotate: %s", r.Raw)
	}
	sub2 := openEnvelope(t, st, st.webhooks(projectID)[0])
	rot, _ := r.Result["_meta"].(map[string]any)[subscriptions.MetaRotation].(map[string]any)
	if cloud() {
		// Appwrite Cloud never returns authPassword: the previous secret cannot be read back to be kept, and the
		// answer says so; the new secret signs alone.
		if string(sub2.Secret) == string(sub.Secret) || len(sub2.PrevSecret) != 0 || rot["previousSecretKept"] != false {
			t.Fatalf("rotation on Cloud: %s", r.Raw)
		}
		if n := len(st.recv.received()); n != 1 {
			t.Fatalf("a rotation re-verified the callback: %d requests", n)
		}
	} else {
		if string(sub2.Secret) == string(sub.Secret) || string(sub2.PrevSecret) != string(sub.Secret) || rot["previousSecretKept"] != true {
			t.Fatalf("rotation: secret not replaced or old one not kept: %s", r.Raw)
		}
		if d := sub2.PrevSecretUntil.Sub(st.clock.Now()); d < 9*time.Minute || d > 11*time.Minute {
			t.Fatalf("grace window %v", d)
		}
		if len(sub2.SigningSecrets(st.clock.Now())) != 2 {
			t.Fatal("both secrets must sign during the grace window")
		}
	}

	// TTL: clamped, never an error.
	for _, c := range []struct {
		ttl  any
		want time.Duration
	}{{1, 5 * time.Minute}, {int64(90 * 24 * time.Hour / time.Millisecond), 24 * time.Hour}, {7200000, 2 * time.Hour}, {"null", 24 * time.Hour}} {
		p := subParams("tablesdb.row.created", rowArgs(), cb, secret2, c.ttl)
		if c.ttl == "null" {
			p["ttlMs"] = nil
		}
		// The grant is made between start and end (however long the call takes on a loaded machine), and
		// refreshBefore keeps whole seconds (rounded down).
		start := st.clock.Now()
		r = rpc(t, url, tok, "events/subscribe", p)
		end := st.clock.Now()
		if r.Error != nil {
			t.Fatalf("ttl %v: %s", c.ttl, r.Raw)
		}
		if rb := mustTime(t, r.Result["refreshBefore"]); rb.Before(start.Add(c.want-c.want/10).Truncate(time.Second)) || rb.After(end.Add(c.want-c.want/10)) {
			t.Fatalf("ttl %v: refreshBefore %v, want %v after a moment in [%v, %v]", c.ttl, rb, c.want, start, end)
		}
	}

	// A different argument set is a different subscription.
	r = rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.updated", rowArgs(), cb, secret2, nil))
	if r.Error != nil || r.Result["id"] == id {
		t.Fatalf("tablesdb.row.updated: %s", r.Raw)
	}
	id2 := r.Result["id"].(string)

	// Unsubscribe removes the managed webhook; the second time there is nothing to remove, and the answer is
	// the same empty result (idempotent, as OpenAI's guide and appwrite/mcp answer).
	unsub := map[string]any{"name": "tablesdb.row.created", "arguments": rowArgs(), "delivery": map[string]any{"url": cb}}
	r = rpc(t, url, tok, "events/unsubscribe", unsub)
	if r.Error != nil || r.Result["resultType"] != "complete" {
		t.Fatalf("unsubscribe: %s", r.Raw)
	}
	for _, h := range st.webhooks(projectID) {
		if h["$id"] == id {
			t.Fatal("webhook still there after unsubscribe")
		}
	}
	before2 := len(st.webhooks(projectID))
	r = rpc(t, url, tok, "events/unsubscribe", unsub)
	if r.Error != nil || string(r.Raw) == "" || len(r.Result) != 1 || r.Result["resultType"] != "complete" || len(st.webhooks(projectID)) != before2 {
		t.Fatalf("second unsubscribe: %s", r.Raw)
	}
	r = rpc(t, url, tok, "events/unsubscribe", map[string]any{"name": "tablesdb.row.updated", "arguments": rowArgs(), "delivery": map[string]any{"url": cb}})
	if r.Error != nil {
		t.Fatalf("unsubscribe %s: %s", id2, r.Raw)
	}
}

func mustTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("refreshBefore %v: %v", v, err)
	}
	return ts
}

func str(m map[string]any, a, b string) string {
	if v, ok := m[a].(string); ok && v != "" {
		return v
	}
	v, _ := m[b].(string)
	return v
}

func openEnvelope(t *testing.T, st *stack, wh map[string]any) seal.Subscription {
	t.Helper()
	ring, err := seal.ParseKeyring(st.env["SEAL_KEYS"])
	must(t, err)
	s, err := seal.NewSealer(ring, seal.Budget{})
	must(t, err)
	id := wh["$id"].(string)
	var events []string
	for _, e := range wh["events"].([]any) {
		events = append(events, e.(string))
	}
	f := seal.Fields{Username: str(wh, "authUsername", "httpUser"), Password: str(wh, "authPassword", "httpPass"), URLTail: subscriptions.URLTail(wh["url"].(string), id)}
	sub, err := s.Open(id, projectID, f, targets(events)...)
	must(t, err)
	return sub
}

// targets are what an envelope may be bound to, read from Appwrite events as the ingress does.
func targets(events []string) []seal.Target {
	var out []seal.Target
	for _, b := range eventcatalog.Bindings(events) {
		out = append(out, seal.Target{Event: b.Event, Args: seal.ArgsOf(b.Args)})
	}
	return out
}

// TestAppwriteDeliversTheEnvelope proves the contract with the webhook-ingress: Appwrite POSTs a matching
// event to <ingress>/appwrite/webhooks/{id} with the envelope as Basic auth and a signature made with the
// derived secret.
func TestAppwriteDeliversTheEnvelope(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(mcpserver.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	// A callback URL long enough to spread the envelope over authUsername, authPassword and the URL.
	cb := st.recv.url("/hooks/" + strings.Repeat("c", 200))
	r := rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), cb, secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe: %s", r.Raw)
	}
	id := r.Result["id"].(string)
	st.createRow("other", "not watched") // a non-matching change: no delivery
	st.createRow(tableID, "printer on fire")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must(t, st.la.Flush(ctx))
	reqs, bodies := st.ingress.requests()
	if len(reqs) != 1 {
		t.Fatalf("deliveries: %d", len(reqs))
	}
	req := reqs[0]
	tail := subscriptions.URLTail(req.URL.Path, id)
	if tail == "" || req.URL.Path != "/appwrite/webhooks/"+id+"/"+tail || req.Header.Get("X-Appwrite-Webhook-Id") != id || strings.Contains(req.URL.Path, "%") {
		t.Fatalf("delivery path %s id %s", req.URL.Path, req.Header.Get("X-Appwrite-Webhook-Id"))
	}
	user, pass, ok := req.BasicAuth()
	if !ok {
		t.Fatal("no Basic auth")
	}
	ring, _ := seal.ParseKeyring(st.env["SEAL_KEYS"])
	sealer, _ := seal.NewSealer(ring, seal.Budget{})
	sub, err := sealer.Open(id, req.Header.Get("X-Appwrite-Webhook-Project-Id"), seal.Fields{Username: user, Password: pass, URLTail: tail},
		targets(strings.Split(req.Header.Get("X-Appwrite-Webhook-Events"), ","))...)
	if err != nil || sub.Event != "tablesdb.row.created" || sub.CallbackURL != cb || sub.Expired(time.Now()) {
		t.Fatalf("envelope: %v %+v", err, sub)
	}
	keys, _ := appwritesig.ParseKeys(st.env["APPWRITE_WEBHOOK_SECRET_KEYS"])
	whURL := st.ingress.srv.URL + req.URL.Path
	if !keys.Verify(id, whURL, bodies[0], req.Header.Get("X-Appwrite-Webhook-Signature")) {
		t.Fatal("X-Appwrite-Webhook-Signature does not verify with the derived secret")
	}
}

// TestExecutionFailedWebhook: the functions.execution.failed webhook is narrowed to the function's executions, so a
// failing execution reaches the ingress.
func TestExecutionFailedWebhook(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(mcpserver.Options{}))
	secret := newSecret()
	st.recv.accept(secret)
	r := rpc(t, url, st.token(userID, allScopes), "events/subscribe",
		subParams("functions.execution.failed", map[string]any{"project_id": projectID, "function_id": fnID}, st.recv.url("/ex"), secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe: %s", r.Raw)
	}
	hooks := st.webhooks(projectID)
	if len(hooks) != 1 || fmt.Sprint(hooks[0]["events"]) != "[functions.worker.executions.*.create functions.worker.executions.*.update]" {
		t.Fatalf("webhook: %v", hooks)
	}
	st.execute()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must(t, st.la.Flush(ctx))
	reqs, bodies := st.ingress.requests()
	if len(reqs) == 0 {
		t.Fatal("no delivery for the failed execution")
	}
	var ex map[string]any
	must(t, json.Unmarshal(bodies[0], &ex))
	if ex["status"] != "failed" || !strings.Contains(reqs[0].Header.Get("X-Appwrite-Webhook-Events"), "functions.worker.executions.") {
		t.Fatalf("delivery: %v %s", reqs[0].Header, bodies[0])
	}
}

func TestSubscribeErrors(t *testing.T) {
	st := newStack(t)
	st.env["MCP_EVENTS_SEAL_PASSWORD_BUDGET"] = "" // defaults
	url := st.instance(st.server(mcpserver.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	cb := st.recv.url("/h")
	short := "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 16))
	long := st.recv.url("/" + strings.Repeat("a", 400))
	cases := []struct {
		name   string
		token  string
		params map[string]any
		code   int
		data   map[string]any
		msg    string
	}{
		{"unknown event", tok, subParams("row.exploded", rowArgs(), cb, secret, nil), -32011, map[string]any{"kind": "event"}, "unknown event"},
		{"bad secret prefix", tok, subParams("tablesdb.row.created", rowArgs(), cb, "secret_abc", nil), -32602, map[string]any{"field": "delivery.secret"}, "whsec_"},
		{"secret too short", tok, subParams("tablesdb.row.created", rowArgs(), cb, short, nil), -32602, map[string]any{"field": "delivery.secret"}, "24 to 64"},
		{"http url", tok, subParams("tablesdb.row.created", rowArgs(), strings.Replace(cb, "https:", "http:", 1), secret, nil), -32602, map[string]any{"field": "delivery.url"}, "https"},
		{"private url", tok, subParams("tablesdb.row.created", rowArgs(), "https://10.1.2.3/hook", secret, nil), -32602, map[string]any{"field": "delivery.url"}, "not allowed"},
		{"link-local url", tok, subParams("tablesdb.row.created", rowArgs(), "https://169.254.169.254/latest", secret, nil), -32602, map[string]any{"field": "delivery.url"}, "not allowed"},
		{"oversize envelope", tok, subParams("tablesdb.row.created", rowArgs(), long, secret, nil), -32602, map[string]any{"field": "delivery.url"}, "does not fit"},
		{"missing argument", tok, subParams("tablesdb.row.created", map[string]any{"project_id": projectID, "database_id": dbID}, cb, secret, nil), -32602, map[string]any{"field": "arguments"}, "arguments.table_id: required"},
		{"unknown argument", tok, subParams("users.user.created", map[string]any{"project_id": projectID, "table_id": "x"}, cb, secret, nil), -32602, map[string]any{"field": "arguments"}, "unknown argument"},
		{"argument not an id", tok, subParams("tablesdb.row.created", map[string]any{"project_id": projectID, "database_id": dbID, "table_id": "../x"}, cb, secret, nil), -32602, map[string]any{"field": "arguments"}, "Appwrite id"},
		{"argument wrong type", tok, subParams("tablesdb.row.created", map[string]any{"project_id": projectID, "database_id": dbID, "table_id": 7}, cb, secret, nil), -32602, map[string]any{"field": "arguments"}, "must be a string"},
		{"push delivery", tok, map[string]any{"name": "tablesdb.row.created", "arguments": rowArgs(), "delivery": map[string]any{"mode": "push"}}, -32014, map[string]any{"feature": "deliveryMode", "value": "push"}, "only webhook"},
		{"wrong project (not a member)", tok, subParams("tablesdb.row.created", map[string]any{"project_id": otherProj, "database_id": dbID, "table_id": tableID}, cb, secret, nil), -32012, nil, "refused access"},
		{"unknown project", tok, subParams("tablesdb.row.created", map[string]any{"project_id": "nope", "database_id": dbID, "table_id": tableID}, cb, secret, nil), -32011, map[string]any{"kind": "project"}, "not found"},
		{"unknown table", tok, subParams("tablesdb.row.created", map[string]any{"project_id": projectID, "database_id": dbID, "table_id": "nope"}, cb, secret, nil), -32011, map[string]any{"kind": "table"}, "not found"},
		{"unknown function", tok, subParams("functions.execution.failed", map[string]any{"project_id": projectID, "function_id": "nope"}, cb, secret, nil), -32011, map[string]any{"kind": "function"}, "not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rpc(t, url, c.token, "events/subscribe", c.params)
			if r.Error == nil {
				t.Fatalf("no error: %s", r.Raw)
			}
			if r.Error.Code != c.code || !strings.Contains(r.Error.Message, c.msg) {
				t.Fatalf("got %d %q, want %d containing %q", r.Error.Code, r.Error.Message, c.code, c.msg)
			}
			for k, v := range c.data {
				if r.Error.Data[k] != v {
					t.Fatalf("data.%s = %v, want %v (%s)", k, r.Error.Data[k], v, r.Raw)
				}
			}
		})
	}
	if n := len(st.recv.received()); n != 0 {
		t.Fatalf("a refused subscription contacted the callback %d times", n)
	}
	if n := len(st.webhooks(projectID)); n != 0 {
		t.Fatalf("a refused subscription left %d webhooks", n)
	}
}

func TestCallbackEndpointReasons(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(mcpserver.Options{}))
	// The hanging callback is the one case decided by the challenge timeout: its own server waits 1 s (the
	// others answer at once, and a loaded machine must not turn them into timeouts).
	generous := st.env["MCP_EVENTS_CHALLENGE_TIMEOUT"]
	st.env["MCP_EVENTS_CHALLENGE_TIMEOUT"] = "1s"
	hangURL := st.instance(st.server(mcpserver.Options{}))
	st.env["MCP_EVENTS_CHALLENGE_TIMEOUT"] = generous
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	closedURL := "https://" + closed.Addr().String() + "/h"
	closed.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer plain.Close()
	plainURL := strings.Replace(plain.URL, "http:", "https:", 1) + "/h"

	for _, c := range []struct {
		mode, url, reason string
	}{
		{"wrong", "", "challenge_failed"},
		{"404", "", "http_4xx"},
		{"500", "", "http_5xx"},
		// A redirect is the answer, never followed, even to an endpoint that would answer the challenge.
		{"307", "", "http_4xx"},
		{"hang", "", "timeout"},
		{"answer", closedURL, "connection_refused"},
		{"answer", plainURL, "tls_error"},
	} {
		t.Run(c.mode+" "+c.reason, func(t *testing.T) {
			st.recv.setMode(c.mode)
			cb := c.url
			if cb == "" {
				cb = st.recv.url("/" + c.mode)
			}
			u := url
			if c.mode == "hang" {
				u = hangURL
			}
			r := rpc(t, u, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), cb, secret, nil))
			if r.Error == nil || r.Error.Code != -32015 || r.Error.Data["reason"] != c.reason {
				t.Fatalf("got %s", r.Raw)
			}
			// What the endpoint answered never surfaces: only the reason.
			if !strings.HasPrefix(r.Error.Message, "callback verification failed: ") || strings.Contains(r.Error.Message, "not-the-challenge") ||
				strings.Contains(r.Error.Message, "boom") || strings.Contains(r.Error.Message, "no\n") {
				t.Fatalf("message %q", r.Error.Message)
			}
		})
	}
	for _, got := range st.recv.received() {
		if got.Path == "/redirected" {
			t.Fatal("the challenge followed a redirect")
		}
	}
	st.recv.setMode("answer")
	if n := len(st.webhooks(projectID)); n != 0 {
		t.Fatalf("failed verifications left %d webhooks", n)
	}
	// Once answered, the same subscription succeeds.
	r := rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), st.recv.url("/wrong"), secret, nil))
	if r.Error != nil {
		t.Fatalf("answered: %s", r.Raw)
	}
}

func TestAuthentication(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(mcpserver.Options{}))

	r := rpc(t, url, "", "events/list", map[string]any{})
	if r.Status != 401 {
		t.Fatalf("no token: %d", r.Status)
	}
	chal := r.Header.Get("WWW-Authenticate")
	if !strings.HasPrefix(chal, "Bearer ") || !strings.Contains(chal, `resource_metadata="`+publicURL+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("challenge %q", chal)
	}
	if strings.Contains(chal, "error=") {
		t.Fatalf("a request without credentials got an error code (RFC 6750 §3.1): %q", chal)
	}
	var body map[string]string
	_ = json.Unmarshal(r.Raw, &body)
	if body["error"] != "unauthorized" {
		t.Fatalf("401 body %s", r.Raw)
	}

	// Expired: minted two hours ago with a one-hour lifetime.
	st.clock.Advance(-2 * time.Hour)
	expired, err := st.la.MintToken(userID, publicURL+"/mcp", allScopes, time.Hour)
	st.clock.Advance(2 * time.Hour)
	must(t, err)
	wrongAud, err := st.la.MintToken(userID, "https://other.example/mcp", allScopes, time.Hour)
	must(t, err)
	for _, c := range []struct{ name, token, desc string }{
		{"expired", expired, "token expired"},
		{"wrong audience", wrongAud, "audience"},
		{"garbage", "not-a-jwt", "malformed"},
	} {
		r := rpc(t, url, c.token, "events/list", map[string]any{})
		if r.Status != 401 || !strings.Contains(r.Header.Get("WWW-Authenticate"), c.desc) {
			t.Fatalf("%s: %d %q", c.name, r.Status, r.Header.Get("WWW-Authenticate"))
		}
	}

	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(url + path)
		must(t, err)
		var meta map[string]any
		must(t, json.NewDecoder(resp.Body).Decode(&meta))
		resp.Body.Close()
		want := publicURL // exactly the URL the client uses: no slash added (RFC 9728 §3.3)
		if strings.HasSuffix(path, "/mcp") {
			want = publicURL + "/mcp"
		}
		if meta["resource"] != want || fmt.Sprint(meta["authorization_servers"]) != "["+st.la.Issuer()+"]" {
			t.Fatalf("%s: %v", path, meta)
		}
	}
}

// TestTwoInstancesAndRestart: two instances with the same configuration serve one client alternately, and
// an instance built after the subscribe (a restart) refreshes it unchanged.
func TestTwoInstancesAndRestart(t *testing.T) {
	st := newStack(t)
	a := st.instance(st.server(mcpserver.Options{}))
	b := st.instance(st.server(mcpserver.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	cb := st.recv.url("/alt")
	p := subParams("storage.file.created", map[string]any{"project_id": projectID, "bucket_id": bucketID}, cb, secret, nil)

	r1 := rpc(t, a, tok, "events/subscribe", p)
	r2 := rpc(t, b, tok, "events/subscribe", p)
	if r1.Error != nil || r2.Error != nil || r1.Result["id"] != r2.Result["id"] {
		t.Fatalf("alternate: %s / %s", r1.Raw, r2.Raw)
	}
	restarted := st.instance(st.server(mcpserver.Options{}))
	r3 := rpc(t, restarted, tok, "events/subscribe", p)
	if r3.Error != nil || r3.Result["id"] != r1.Result["id"] {
		t.Fatalf("after restart: %s", r3.Raw)
	}
	if n := len(st.recv.received()); n != 1 {
		t.Fatalf("callback verified %d times across instances", n)
	}
	if n := len(st.webhooks(projectID)); n != 1 {
		t.Fatalf("%d webhooks", n)
	}
	r4 := rpc(t, b, tok, "events/unsubscribe", map[string]any{"name": "storage.file.created", "arguments": p["arguments"], "delivery": map[string]any{"url": cb}})
	if r4.Error != nil {
		t.Fatalf("unsubscribe on the other instance: %s", r4.Raw)
	}
}

func TestEventsOffByFlag(t *testing.T) {
	st := newStack(t)
	st.env["MCP_EVENTS_ENABLED"] = "false"
	url := st.instance(st.server(mcpserver.Options{}))
	tok := st.token(userID, allScopes)
	for _, m := range []string{"events/list", "events/subscribe", "events/unsubscribe"} {
		r := rpc(t, url, tok, m, map[string]any{})
		if r.Error == nil || r.Error.Code != -32601 {
			t.Fatalf("%s with events off: %s", m, r.Raw)
		}
	}
	r := rpc(t, url, tok, "initialize", map[string]any{"protocolVersion": "2025-11-25", "clientInfo": map[string]any{"name": "t", "version": "1"}, "capabilities": map[string]any{}})
	caps := r.Result["capabilities"].(map[string]any)
	if _, ok := caps["events"]; ok {
		t.Fatalf("events advertised while off: %s", r.Raw)
	}
	if _, ok := caps["extensions"]; ok {
		t.Fatalf("extension advertised while off: %s", r.Raw)
	}
}

func TestSEPErrorNumbering(t *testing.T) {
	st := newStack(t)
	st.env["MCP_EVENTS_ERROR_CODES"] = "sep"
	url := st.instance(st.server(mcpserver.Options{}))
	r := rpc(t, url, st.token(userID, allScopes), "events/subscribe", subParams("nope", rowArgs(), st.recv.url("/h"), newSecret(), nil))
	if r.Error == nil || r.Error.Code != -32023 {
		t.Fatalf("%s", r.Raw)
	}
}

// TestAppwrite500OnWebhookWriteIsExplained: Appwrite answers 500 general_unknown when a webhook field does not
// fit its column after encryption (appwrite#14293, unfixed). The envelope budget normally keeps that from
// happening; raised past what Appwrite stores, the subscribe answers a JSON-RPC error that says what Appwrite
// answered and what it means.
func TestAppwrite500OnWebhookWriteIsExplained(t *testing.T) {
	st := newStack(t)
	st.env["MCP_EVENTS_SEAL_PASSWORD_BUDGET"] = "300"
	url := st.instance(st.server(mcpserver.Options{}))
	secret := newSecret()
	st.recv.accept(secret)
	cb := st.recv.url("/" + strings.Repeat("p", 250))
	r := rpc(t, url, st.token(userID, allScopes), "events/subscribe", subParams("tablesdb.row.created", rowArgs(), cb, secret, nil))
	if r.Error == nil || r.Error.Code != -32603 || r.Error.Data["appwriteStatus"] != float64(500) ||
		r.Error.Data["appwriteType"] != "general_unknown" || r.Error.Data["operation"] != "webhook create" ||
		!strings.Contains(r.Error.Message, "255-character column") || !strings.Contains(r.Error.Message, "MCP_EVENTS_SEAL_PASSWORD_BUDGET") {
		t.Fatalf("%s", r.Raw)
	}
	if n := len(st.webhooks(projectID)); n != 0 {
		t.Fatalf("%d webhooks after a refused create", n)
	}
}

// TestExpiredSubscriptionsAreCleanedUp: acting in a project deletes managed webhooks whose envelopes
// expired.
func TestExpiredSubscriptionsAreCleanedUp(t *testing.T) {
	st := newStack(t)
	st.env["MCP_EVENTS_TTL_MIN"] = "1s"
	url := st.instance(st.server(mcpserver.Options{Now: st.clock.Now}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	r := rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.deleted", rowArgs(), st.recv.url("/old"), secret, 1000))
	if r.Error != nil {
		t.Fatalf("%s", r.Raw)
	}
	old := r.Result["id"]
	st.clock.Advance(5 * time.Second) // the one-second subscription has expired
	r = rpc(t, url, tok, "events/subscribe", subParams("users.user.created", map[string]any{"project_id": projectID}, st.recv.url("/new"), secret, nil))
	if r.Error != nil {
		t.Fatalf("%s", r.Raw)
	}
	hooks := st.webhooks(projectID)
	if len(hooks) != 1 || hooks[0]["$id"] == old {
		t.Fatalf("expired webhook not cleaned up: %v", hooks)
	}
}

// TestCountersAreLogged: every subscribe and unsubscribe writes an mcp_events_subscriptions_total line.
func TestCountersAreLogged(t *testing.T) {
	st := newStack(t)
	logs := make(chan string, 16)
	srv := st.server(mcpserver.Options{})
	ts := httptest.NewServer(localruntime.New(handlerNew(srv), localruntime.Options{
		LogDir: t.TempDir(), OnLog: func(_, l, _ string) { logs <- l },
	}))
	defer ts.Close()
	tok := st.token(userID, allScopes)
	rpc(t, ts.URL, tok, "events/subscribe", subParams("row.exploded", rowArgs(), st.recv.url("/h"), newSecret(), nil))
	select {
	case l := <-logs:
		if !strings.Contains(l, `{"metric":"mcp_events_subscriptions_total","event":"unknown","op":"subscribe","outcome":"not_found","inc":1}`) {
			t.Fatalf("logs: %s", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no log")
	}
}
