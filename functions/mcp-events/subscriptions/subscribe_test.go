package subscriptions_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
	"appwrite-agent/functions/mcp-events/subscriptions"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/seal"
)

// TestRefusalNamesTheURLAndItsMaximum: a subscription that does not fit is refused with -32602 naming
// delivery.url and the exact maximum for this request; that maximum subscribes, one byte more does not.
func TestRefusalNamesTheURLAndItsMaximum(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)

	r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), eventstest.URLOf(st, 700), secret, nil))
	if r.Error == nil || r.Error.Code != -32602 || r.Error.Data["field"] != "delivery.url" {
		t.Fatalf("700 bytes: %s", r.Raw)
	}
	most := int(r.Error.Data["maxLength"].(float64))
	want := fmt.Sprintf("callback URL is 700 bytes; at most %d fit with a 32-byte secret (a 24-byte secret leaves room for %d)", most, most+8)
	if !strings.Contains(r.Error.Message, want) || strings.Contains(r.Error.Message, "shorten arguments") {
		t.Fatalf("message %q, want it to contain %q", r.Error.Message, want)
	}
	r = eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), eventstest.URLOf(st, most+1), secret, nil))
	if r.Error == nil || !strings.Contains(r.Error.Message, fmt.Sprintf("callback URL is %d bytes; at most %d fit", most+1, most)) {
		t.Fatalf("%d bytes: %s", most+1, r.Raw)
	}
	r = eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), eventstest.URLOf(st, most), secret, nil))
	if r.Error != nil {
		t.Fatalf("the announced maximum %d does not subscribe: %s", most, r.Raw)
	}
	wh := st.Webhooks(eventstest.ProjectID)[0]
	if u := wh["url"].(string); len(u) > seal.AppwriteColumn || strings.Contains(u, "%") || subscriptions.URLTail(u, wh["$id"].(string)) == "" {
		t.Fatalf("webhook url %q (%d characters)", u, len(u))
	}
	if sub := eventstest.OpenEnvelope(t, st, wh); len(sub.CallbackURL) != most {
		t.Fatalf("sealed callback URL %d bytes", len(sub.CallbackURL))
	}
	t.Logf("stand-in ingress %q: longest callback URL %d bytes with a 32-byte secret", st.Ingress.Srv.URL, most)
}

// TestRotationGraceNeverDroppedSilently: a rotation keeps the old secret when both fit and says so;
// when both do not fit, the old secret is not kept and the answer says that, and why.
func TestRotationGraceNeverDroppedSilently(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	s1, s2, s3 := eventstest.NewSecret(), eventstest.NewSecret(), eventstest.NewSecret()
	st.Recv.Accept(s1)
	st.Recv.Accept(s2)
	st.Recv.Accept(s3)
	r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), eventstest.URLOf(st, 700), s1, nil))
	most := int(r.Error.Data["maxLength"].(float64)) // with one 32-byte secret

	// Short URL: both secrets fit.
	short := eventstest.URLOf(st, 120)
	if r = eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), short, s1, nil)); r.Error != nil {
		t.Fatalf("%s", r.Raw)
	}
	if _, ok := r.Result["_meta"]; ok {
		t.Fatalf("no rotation, yet _meta: %s", r.Raw)
	}
	r = eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), short, s2, nil))
	rot, _ := r.Result["_meta"].(map[string]any)[subscriptions.MetaRotation].(map[string]any)
	if eventstest.Cloud() {
		// Appwrite Cloud returns no authPassword, where the previous secret is sealed: it cannot be kept, and
		// the answer says so (docs/events.md "Rotation").
		reason, _ := rot["reason"].(string)
		if r.Error != nil || rot["previousSecretKept"] != false || !strings.Contains(reason, "does not return") {
			t.Fatalf("rotation on Cloud: %s", r.Raw)
		}
		return
	}
	if r.Error != nil || rot["previousSecretKept"] != true || rot["previousSecretUntil"] == nil {
		t.Fatalf("rotation with room: %s", r.Raw)
	}

	// The longest URL that fits one secret: a rotation cannot keep both, and the answer says so.
	long := eventstest.URLOf(st, most)
	if r = eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), long, s1, nil)); r.Error != nil {
		t.Fatalf("%s", r.Raw)
	}
	r = eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), long, s3, nil))
	if r.Error != nil {
		t.Fatalf("rotation without room: %s", r.Raw)
	}
	rot, _ = r.Result["_meta"].(map[string]any)[subscriptions.MetaRotation].(map[string]any)
	reason, _ := rot["reason"].(string)
	if rot["previousSecretKept"] != false || !strings.Contains(reason, "previous secret was not kept") ||
		!strings.Contains(reason, fmt.Sprintf("callback URL is %d bytes", most)) {
		t.Fatalf("rotation without room: %s", r.Raw)
	}
	for _, wh := range st.Webhooks(eventstest.ProjectID) {
		if sub := eventstest.OpenEnvelope(t, st, wh); sub.CallbackURL == long && len(sub.PrevSecret) != 0 {
			t.Fatal("the envelope kept a previous secret the answer said was dropped")
		}
	}
}

// TestEnvelopeExpiryIsTheEndOfTheGrant: the envelope's Expiry (what the ingress stops delivering at) is the
// end of the grant, to the second, not refreshBefore: refreshBefore is a tenth of the grant earlier, so a
// client refreshing at refreshBefore still has deliveries meanwhile.
func TestEnvelopeExpiryIsTheEndOfTheGrant(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{Now: st.Clock.Now}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	before := st.Clock.Now()
	r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("users.user.created", map[string]any{"project_id": eventstest.ProjectID}, st.Recv.URL("/expiry"), secret, 3600000))
	after := st.Clock.Now()
	if r.Error != nil {
		t.Fatalf("%s", r.Raw)
	}
	sub := eventstest.OpenEnvelope(t, st, st.Webhooks(eventstest.ProjectID)[0])
	rb := eventstest.MustTime(t, r.Result["refreshBefore"])
	if !sub.Expiry.Equal(rb.Add(6 * time.Minute)) {
		t.Fatalf("envelope expiry %v, refreshBefore %v: want refreshBefore + 6m (a tenth of 1h)", sub.Expiry, rb)
	}
	if sub.Expiry.Before(before.Add(time.Hour).Truncate(time.Second)) || sub.Expiry.After(after.Add(time.Hour)) {
		t.Fatalf("envelope expiry %v, want the end of a 1h grant made in [%v, %v]", sub.Expiry, before, after)
	}
}

// freePlan is a stack whose stand-in, in the Cloud profile, allows the Free plan's 2 webhooks per project.
func freePlan(t *testing.T) *eventstest.Stack {
	return eventstest.NewStackWith(t, func(o *localappwrite.Options) { o.WebhookLimit = 0 })
}

// TestExpiredCleanedBeforeCreate: the caller's expired subscriptions are deleted before the next create in the
// project, so on Free (2 webhooks) two lapsed subscriptions never end the user's events; list_subscriptions
// shows what is left. In the Cloud profile Appwrite returns no authPassword: the label is what cleanup and
// the listing read.
func TestExpiredCleanedBeforeCreate(t *testing.T) {
	st := freePlan(t)
	// Short grants, so that the moved clock stays within the receiver's 5-minute timestamp tolerance.
	st.Env["MCP_EVENTS_TTL_MIN"] = "1m"
	url := st.Instance(st.Server(handler.Options{Now: st.Clock.Now}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	cb := st.Recv.URL("/lapsed")
	for _, p := range []map[string]any{
		eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, 60000),
		eventstest.SubParams("storage.file.created", map[string]any{"project_id": eventstest.ProjectID, "bucket_id": eventstest.BucketID}, cb, secret, 60000),
	} {
		if r := eventstest.RPC(t, url, tok, "events/subscribe", p); r.Error != nil {
			t.Fatalf("subscribe: %s", r.Raw)
		}
	}
	st.Clock.Advance(2 * time.Minute)
	r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("users.user.created", map[string]any{"project_id": eventstest.ProjectID}, cb, secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe after both lapsed: %s", r.Raw)
	}
	hooks := st.Webhooks(eventstest.ProjectID)
	if len(hooks) != 1 || hooks[0]["$id"] != r.Result["id"] {
		t.Fatalf("webhooks after the cleanup: %d", len(hooks))
	}
	cs := eventstest.Connect(t, url, tok, "2025-11-25")
	subs := eventstest.Structured(t, eventstest.CallTool(t, cs, "list_subscriptions", map[string]any{"project_id": eventstest.ProjectID}))["subscriptions"].([]any)
	if len(subs) != 1 || subs[0].(map[string]any)["event"] != "users.user.created" || subs[0].(map[string]any)["expired"] != false {
		t.Fatalf("list_subscriptions: %v", subs)
	}
}

// TestPlanLimit: at the plan's webhook limit a new subscription is ResourceExhausted with data.limit
// "webhooks" and data.max, and says what to do; refreshing a subscription that exists still works. The
// open-source server has no plans.
func TestPlanLimit(t *testing.T) {
	st := freePlan(t)
	url := st.Instance(st.Server(handler.Options{Now: st.Clock.Now}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	cb := st.Recv.URL("/full")
	first := eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil)
	for _, p := range []map[string]any{first, eventstest.SubParams("tablesdb.row.deleted", eventstest.RowArgs(), cb, secret, nil)} {
		if r := eventstest.RPC(t, url, tok, "events/subscribe", p); r.Error != nil {
			t.Fatalf("subscribe: %s", r.Raw)
		}
	}
	third := eventstest.SubParams("users.user.created", map[string]any{"project_id": eventstest.ProjectID}, cb, secret, nil)
	r := eventstest.RPC(t, url, tok, "events/subscribe", third)
	if !eventstest.Cloud() {
		if r.Error != nil {
			t.Fatalf("open source has no plan limit: %s", r.Raw)
		}
		return
	}
	if r.Status != http.StatusOK || r.Error == nil || r.Error.Code != -32013 || r.Error.Data["limit"] != "webhooks" || r.Error.Data["max"] != float64(2) ||
		!strings.Contains(r.Error.Message, "unsubscribe from another event") || !strings.Contains(r.Error.Message, "upgrade") {
		t.Fatalf("at the limit: %d %s", r.Status, r.Raw)
	}
	if n := len(st.Webhooks(eventstest.ProjectID)); n != 2 {
		t.Fatalf("webhooks: %d", n)
	}
	// A refresh updates in place: the plan does not count it again.
	st.Clock.Advance(time.Minute)
	if r := eventstest.RPC(t, url, tok, "events/subscribe", first); r.Error != nil {
		t.Fatalf("refresh at the limit: %s", r.Raw)
	}
	// SEP-3415 numbering: -32025.
	st.Env["MCP_EVENTS_ERROR_CODES"] = "sep"
	sep := st.Instance(st.Server(handler.Options{Now: st.Clock.Now}))
	if r := eventstest.RPC(t, sep, tok, "events/subscribe", third); r.Error == nil || r.Error.Code != -32025 || r.Error.Data["limit"] != "webhooks" {
		t.Fatalf("sep codes: %s", r.Raw)
	}
}

// TestAbsentCursorIsNull: SEP-3415 "Absent means null": a subscribe (and a refresh) without a cursor field is
// the same subscription as with "cursor": null, answered with cursor null.
func TestAbsentCursorIsNull(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	withNull := eventstest.SubParams("users.user.created", map[string]any{"project_id": eventstest.ProjectID}, st.Recv.URL("/cursor"), secret, nil)
	absent := eventstest.SubParams("users.user.created", map[string]any{"project_id": eventstest.ProjectID}, st.Recv.URL("/cursor"), secret, nil)
	delete(absent, "cursor")
	var ids []any
	for i, p := range []map[string]any{absent, withNull, absent} {
		r := eventstest.RPC(t, url, tok, "events/subscribe", p)
		if r.Error != nil {
			t.Fatalf("subscribe %d: %s", i, r.Raw)
		}
		if c, has := r.Result["cursor"]; !has || c != nil || r.Result["truncated"] != false {
			t.Fatalf("subscribe %d: %s", i, r.Raw)
		}
		ids = append(ids, r.Result["id"])
	}
	if ids[0] != ids[1] || ids[1] != ids[2] || len(st.Webhooks(eventstest.ProjectID)) != 1 {
		t.Fatalf("ids %v, %d webhooks: absent and null cursors made different subscriptions", ids, len(st.Webhooks(eventstest.ProjectID)))
	}
}

// TestSubscribeRefreshRotateUnsubscribe is the main flow, raw JSON-RPC as ChatGPT sends it.
func TestSubscribeRefreshRotateUnsubscribe(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{Now: st.Clock.Now}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	cb := st.Recv.URL("/hooks/client123")

	before := st.Clock.Now()
	r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil))
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
	rb1 := eventstest.MustTime(t, r.Result["refreshBefore"])
	// No ttlMs: the default grant (an hour), and refreshBefore a tenth of it (6 minutes) before the expiry.
	if d := rb1.Sub(before); d < 53*time.Minute || d > 55*time.Minute {
		t.Fatalf("default TTL: refreshBefore %v after start", d)
	}
	got := st.Recv.Received()
	if len(got) != 1 || !got[0].Verified || got[0].SubscriptionID != id || !strings.HasPrefix(got[0].WebhookID, "msg_verification_") {
		t.Fatalf("challenge: %+v", got)
	}
	var ch map[string]string
	_ = json.Unmarshal(got[0].Body, &ch)
	if ch["type"] != "verification" || len(ch["challenge"]) < 16 {
		t.Fatalf("challenge body: %s", got[0].Body)
	}

	// The webhook is the subscription.
	hooks := st.Webhooks(eventstest.ProjectID)
	if len(hooks) != 1 {
		t.Fatalf("webhooks: %v", hooks)
	}
	wh := hooks[0]
	if wh["$id"] != id || wh["url"] != st.Ingress.Srv.URL+"/appwrite/webhooks/"+id {
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
	sub := eventstest.OpenEnvelope(t, st, wh)
	if sub.CallbackURL != cb || sub.Event != "tablesdb.row.created" || !sub.Args.Equal(map[string]string{"database_id": eventstest.DatabaseID, "table_id": eventstest.TableID}) || sub.VerifiedAt.IsZero() {
		t.Fatalf("envelope: %+v", sub)
	}

	// Refresh a minute later: same id, one webhook, no second challenge, TTL re-granted.
	st.Clock.Advance(time.Minute)
	r = eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil))
	if r.Error != nil || r.Result["id"] != id {
		t.Fatalf("refresh: %s", r.Raw)
	}
	if rb2 := eventstest.MustTime(t, r.Result["refreshBefore"]); !rb2.After(rb1) {
		t.Fatalf("refresh did not re-grant: %v then %v", rb1, rb2)
	}
	if n := len(st.Recv.Received()); n != 1 {
		t.Fatalf("refresh re-verified the callback: %d requests", n)
	}
	if n := len(st.Webhooks(eventstest.ProjectID)); n != 1 {
		t.Fatalf("refresh made %d webhooks", n)
	}

	// Rotation: a new secret keeps the id and the old secret for the grace window.
	secret2 := eventstest.NewSecret()
	st.Recv.Accept(secret2)
	r = eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret2, nil))
	if r.Error != nil || r.Result["id"] != id {
		t.Fatalf("rotate: %s", r.Raw)
	}
	sub2 := eventstest.OpenEnvelope(t, st, st.Webhooks(eventstest.ProjectID)[0])
	rot, _ := r.Result["_meta"].(map[string]any)[subscriptions.MetaRotation].(map[string]any)
	if eventstest.Cloud() {
		// Appwrite Cloud never returns authPassword: the previous secret cannot be read back to be kept, and the
		// answer says so; the new secret signs alone.
		if string(sub2.Secret) == string(sub.Secret) || len(sub2.PrevSecret) != 0 || rot["previousSecretKept"] != false {
			t.Fatalf("rotation on Cloud: %s", r.Raw)
		}
		if n := len(st.Recv.Received()); n != 1 {
			t.Fatalf("a rotation re-verified the callback: %d requests", n)
		}
	} else {
		if string(sub2.Secret) == string(sub.Secret) || string(sub2.PrevSecret) != string(sub.Secret) || rot["previousSecretKept"] != true {
			t.Fatalf("rotation: secret not replaced or old one not kept: %s", r.Raw)
		}
		if d := sub2.PrevSecretUntil.Sub(st.Clock.Now()); d < 9*time.Minute || d > 11*time.Minute {
			t.Fatalf("grace window %v", d)
		}
		if len(sub2.SigningSecrets(st.Clock.Now())) != 2 {
			t.Fatal("both secrets must sign during the grace window")
		}
	}

	// TTL: clamped, never an error.
	for _, c := range []struct {
		ttl  any
		want time.Duration
	}{{1, 5 * time.Minute}, {int64(90 * 24 * time.Hour / time.Millisecond), 24 * time.Hour}, {7200000, 2 * time.Hour}, {"null", 24 * time.Hour}} {
		p := eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret2, c.ttl)
		if c.ttl == "null" {
			p["ttlMs"] = nil
		}
		// The grant is made between start and end (however long the call takes on a loaded machine), and
		// refreshBefore keeps whole seconds (rounded down).
		start := st.Clock.Now()
		r = eventstest.RPC(t, url, tok, "events/subscribe", p)
		end := st.Clock.Now()
		if r.Error != nil {
			t.Fatalf("ttl %v: %s", c.ttl, r.Raw)
		}
		if rb := eventstest.MustTime(t, r.Result["refreshBefore"]); rb.Before(start.Add(c.want-c.want/10).Truncate(time.Second)) || rb.After(end.Add(c.want-c.want/10)) {
			t.Fatalf("ttl %v: refreshBefore %v, want %v after a moment in [%v, %v]", c.ttl, rb, c.want, start, end)
		}
	}

	// A different argument set is a different subscription.
	r = eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.updated", eventstest.RowArgs(), cb, secret2, nil))
	if r.Error != nil || r.Result["id"] == id {
		t.Fatalf("tablesdb.row.updated: %s", r.Raw)
	}
	id2 := r.Result["id"].(string)

	// Unsubscribe removes the managed webhook; the second time there is nothing to remove, and the answer is
	// the same empty result (idempotent, as OpenAI's guide and appwrite/mcp answer).
	unsub := map[string]any{"name": "tablesdb.row.created", "arguments": eventstest.RowArgs(), "delivery": map[string]any{"url": cb}}
	r = eventstest.RPC(t, url, tok, "events/unsubscribe", unsub)
	if r.Error != nil || r.Result["resultType"] != "complete" {
		t.Fatalf("unsubscribe: %s", r.Raw)
	}
	for _, h := range st.Webhooks(eventstest.ProjectID) {
		if h["$id"] == id {
			t.Fatal("webhook still there after unsubscribe")
		}
	}
	before2 := len(st.Webhooks(eventstest.ProjectID))
	r = eventstest.RPC(t, url, tok, "events/unsubscribe", unsub)
	if r.Error != nil || string(r.Raw) == "" || len(r.Result) != 1 || r.Result["resultType"] != "complete" || len(st.Webhooks(eventstest.ProjectID)) != before2 {
		t.Fatalf("second unsubscribe: %s", r.Raw)
	}
	r = eventstest.RPC(t, url, tok, "events/unsubscribe", map[string]any{"name": "tablesdb.row.updated", "arguments": eventstest.RowArgs(), "delivery": map[string]any{"url": cb}})
	if r.Error != nil {
		t.Fatalf("unsubscribe %s: %s", id2, r.Raw)
	}
}

// TestExecutionFailedWebhook: the functions.execution.failed webhook is narrowed to the function's executions, so a
// failing execution reaches the ingress.
func TestExecutionFailedWebhook(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	r := eventstest.RPC(t, url, st.Token(eventstest.UserID, eventstest.AllScopes), "events/subscribe",
		eventstest.SubParams("functions.execution.failed", map[string]any{"project_id": eventstest.ProjectID, "function_id": eventstest.FunctionID}, st.Recv.URL("/ex"), secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe: %s", r.Raw)
	}
	hooks := st.Webhooks(eventstest.ProjectID)
	if len(hooks) != 1 || fmt.Sprint(hooks[0]["events"]) != "[functions.worker.executions.*.create functions.worker.executions.*.update]" {
		t.Fatalf("webhook: %v", hooks)
	}
	st.Execute()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	eventstest.Must(t, st.LA.Flush(ctx))
	reqs, bodies := st.Ingress.Requests()
	if len(reqs) == 0 {
		t.Fatal("no delivery for the failed execution")
	}
	var ex map[string]any
	eventstest.Must(t, json.Unmarshal(bodies[0], &ex))
	if ex["status"] != "failed" || !strings.Contains(reqs[0].Header.Get("X-Appwrite-Webhook-Events"), "functions.worker.executions.") {
		t.Fatalf("delivery: %v %s", reqs[0].Header, bodies[0])
	}
}

func TestSubscribeErrors(t *testing.T) {
	st := eventstest.NewStack(t)
	st.Env["MCP_EVENTS_SEAL_PASSWORD_BUDGET"] = "" // defaults
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	cb := st.Recv.URL("/h")
	short := "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 16))
	long := st.Recv.URL("/" + strings.Repeat("a", 400))
	cases := []struct {
		name   string
		token  string
		params map[string]any
		code   int
		data   map[string]any
		msg    string
	}{
		{"unknown event", tok, eventstest.SubParams("row.exploded", eventstest.RowArgs(), cb, secret, nil), -32011, map[string]any{"kind": "event"}, "unknown event"},
		{"bad secret prefix", tok, eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, "secret_abc", nil), -32602, map[string]any{"field": "delivery.secret"}, "whsec_"},
		{"secret too short", tok, eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, short, nil), -32602, map[string]any{"field": "delivery.secret"}, "24 to 64"},
		{"http url", tok, eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), strings.Replace(cb, "https:", "http:", 1), secret, nil), -32602, map[string]any{"field": "delivery.url"}, "https"},
		{"private url", tok, eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), "https://10.1.2.3/hook", secret, nil), -32602, map[string]any{"field": "delivery.url"}, "not allowed"},
		{"link-local url", tok, eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), "https://169.254.169.254/latest", secret, nil), -32602, map[string]any{"field": "delivery.url"}, "not allowed"},
		{"oversize envelope", tok, eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), long, secret, nil), -32602, map[string]any{"field": "delivery.url"}, "does not fit"},
		{"missing argument", tok, eventstest.SubParams("tablesdb.row.created", map[string]any{"project_id": eventstest.ProjectID, "database_id": eventstest.DatabaseID}, cb, secret, nil), -32602, map[string]any{"field": "arguments"}, "arguments.table_id: required"},
		{"unknown argument", tok, eventstest.SubParams("users.user.created", map[string]any{"project_id": eventstest.ProjectID, "table_id": "x"}, cb, secret, nil), -32602, map[string]any{"field": "arguments"}, "unknown argument"},
		{"argument not an id", tok, eventstest.SubParams("tablesdb.row.created", map[string]any{"project_id": eventstest.ProjectID, "database_id": eventstest.DatabaseID, "table_id": "../x"}, cb, secret, nil), -32602, map[string]any{"field": "arguments"}, "Appwrite id"},
		{"argument wrong type", tok, eventstest.SubParams("tablesdb.row.created", map[string]any{"project_id": eventstest.ProjectID, "database_id": eventstest.DatabaseID, "table_id": 7}, cb, secret, nil), -32602, map[string]any{"field": "arguments"}, "must be a string"},
		{"push delivery", tok, map[string]any{"name": "tablesdb.row.created", "arguments": eventstest.RowArgs(), "delivery": map[string]any{"mode": "push"}}, -32014, map[string]any{"feature": "deliveryMode", "value": "push"}, "only webhook"},
		{"wrong project (not a member)", tok, eventstest.SubParams("tablesdb.row.created", map[string]any{"project_id": eventstest.OtherProject, "database_id": eventstest.DatabaseID, "table_id": eventstest.TableID}, cb, secret, nil), -32012, nil, "refused access"},
		{"unknown project", tok, eventstest.SubParams("tablesdb.row.created", map[string]any{"project_id": "nope", "database_id": eventstest.DatabaseID, "table_id": eventstest.TableID}, cb, secret, nil), -32011, map[string]any{"kind": "project"}, "not found"},
		{"unknown table", tok, eventstest.SubParams("tablesdb.row.created", map[string]any{"project_id": eventstest.ProjectID, "database_id": eventstest.DatabaseID, "table_id": "nope"}, cb, secret, nil), -32011, map[string]any{"kind": "table"}, "not found"},
		{"unknown function", tok, eventstest.SubParams("functions.execution.failed", map[string]any{"project_id": eventstest.ProjectID, "function_id": "nope"}, cb, secret, nil), -32011, map[string]any{"kind": "function"}, "not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := eventstest.RPC(t, url, c.token, "events/subscribe", c.params)
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
	if n := len(st.Recv.Received()); n != 0 {
		t.Fatalf("a refused subscription contacted the callback %d times", n)
	}
	if n := len(st.Webhooks(eventstest.ProjectID)); n != 0 {
		t.Fatalf("a refused subscription left %d webhooks", n)
	}
}

// TestAppwrite500OnWebhookWriteIsExplained: Appwrite answers 500 general_unknown when a webhook field does not
// fit its column after encryption (appwrite#14293, unfixed). The envelope budget normally keeps that from
// happening; raised past what Appwrite stores, the subscribe answers a JSON-RPC error that says what Appwrite
// answered and what it means.
func TestAppwrite500OnWebhookWriteIsExplained(t *testing.T) {
	st := eventstest.NewStack(t)
	st.Env["MCP_EVENTS_SEAL_PASSWORD_BUDGET"] = "300"
	url := st.Instance(st.Server(handler.Options{}))
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	cb := st.Recv.URL("/" + strings.Repeat("p", 250))
	r := eventstest.RPC(t, url, st.Token(eventstest.UserID, eventstest.AllScopes), "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil))
	if r.Error == nil || r.Error.Code != -32603 || r.Error.Data["appwriteStatus"] != float64(500) ||
		r.Error.Data["appwriteType"] != "general_unknown" || r.Error.Data["operation"] != "webhook create" ||
		!strings.Contains(r.Error.Message, "255-character column") || !strings.Contains(r.Error.Message, "MCP_EVENTS_SEAL_PASSWORD_BUDGET") {
		t.Fatalf("%s", r.Raw)
	}
	if n := len(st.Webhooks(eventstest.ProjectID)); n != 0 {
		t.Fatalf("%d webhooks after a refused create", n)
	}
}

// TestConflictRecoveryOnStrictAppwrite: when another replica creates the webhook between this one's read and
// create, Appwrite answers 409 and the subscribe updates the webhook and PATCHes the derived secret.
func TestConflictRecoveryOnStrictAppwrite(t *testing.T) {
	st := eventstest.NewStack(t)
	var once sync.Once
	proxy := st.ProxyAppwrite(t, func(r *http.Request, body []byte) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/webhooks" {
			return
		}
		once.Do(func() {
			var p map[string]any
			_ = json.Unmarshal(body, &p)
			// The other replica's webhook, with a secret this one did not derive.
			status, out := st.APIKeyCall("POST", "/webhooks", map[string]any{
				"webhookId": p["webhookId"], "url": p["url"], "name": "other replica", "events": p["events"],
				"secret": "another-replicas-secret",
			})
			if status != http.StatusCreated {
				t.Errorf("other replica's create: %d %v", status, out)
			}
		})
	})
	url := st.Instance(st.Server(handler.Options{}))
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	r := eventstest.RPC(t, url, st.Token(eventstest.UserID, eventstest.AllScopes), "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), st.Recv.URL("/race"), secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe after a 409: %s", r.Raw)
	}
	id := r.Result["id"].(string)
	if proxy.Count("POST /v1/webhooks") != 1 || proxy.Count("PUT /v1/webhooks/"+id) != 1 || proxy.Count("PATCH /v1/webhooks/"+id+"/secret") != 1 {
		t.Fatalf("409 recovery calls: %v", proxy.Calls())
	}
	hooks := st.Webhooks(eventstest.ProjectID)
	if len(hooks) != 1 || strings.Contains(fmt.Sprint(hooks[0]["name"]), "other replica") {
		t.Fatalf("webhook not taken over: %v", hooks)
	}
	if !st.LastDeliveryVerifies(id) {
		t.Fatal("after the 409 recovery the webhook does not sign with the derived secret")
	}
}
