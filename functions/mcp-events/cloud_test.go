package handler_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/shared/devkit/localappwrite"
)

// freePlan is a stack whose stand-in, in the Cloud profile, allows the Free plan's 2 webhooks per project.
func freePlan(t *testing.T) *stack {
	return newStackWith(t, func(o *localappwrite.Options) { o.WebhookLimit = 0 })
}

// TestExpiredCleanedBeforeCreate: the caller's expired subscriptions are deleted before the next create in the
// project, so on Free (2 webhooks) two lapsed subscriptions never end the user's events; list_subscriptions
// shows what is left. In the Cloud profile Appwrite returns no authPassword: the label is what cleanup and
// the listing read.
func TestExpiredCleanedBeforeCreate(t *testing.T) {
	st := freePlan(t)
	// Short grants, so that the moved clock stays within the receiver's 5-minute timestamp tolerance.
	st.env["MCP_EVENTS_TTL_MIN"] = "1m"
	url := st.instance(st.server(handler.Options{Now: st.clock.Now}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	cb := st.recv.url("/lapsed")
	for _, p := range []map[string]any{
		subParams("tablesdb.row.created", rowArgs(), cb, secret, 60000),
		subParams("storage.file.created", map[string]any{"project_id": projectID, "bucket_id": bucketID}, cb, secret, 60000),
	} {
		if r := rpc(t, url, tok, "events/subscribe", p); r.Error != nil {
			t.Fatalf("subscribe: %s", r.Raw)
		}
	}
	st.clock.Advance(2 * time.Minute)
	r := rpc(t, url, tok, "events/subscribe", subParams("users.user.created", map[string]any{"project_id": projectID}, cb, secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe after both lapsed: %s", r.Raw)
	}
	hooks := st.webhooks(projectID)
	if len(hooks) != 1 || hooks[0]["$id"] != r.Result["id"] {
		t.Fatalf("webhooks after the cleanup: %d", len(hooks))
	}
	cs := connect(t, url, tok, "2025-11-25")
	subs := structured(t, callTool(t, cs, "list_subscriptions", map[string]any{"project_id": projectID}))["subscriptions"].([]any)
	if len(subs) != 1 || subs[0].(map[string]any)["event"] != "users.user.created" || subs[0].(map[string]any)["expired"] != false {
		t.Fatalf("list_subscriptions: %v", subs)
	}
}

// TestPlanLimit: at the plan's webhook limit a new subscription is ResourceExhausted with data.limit
// "webhooks" and data.max, and says what to do; refreshing a subscription that exists still works. The
// open-source server has no plans.
func TestPlanLimit(t *testing.T) {
	st := freePlan(t)
	url := st.instance(st.server(handler.Options{Now: st.clock.Now}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	cb := st.recv.url("/full")
	first := subParams("tablesdb.row.created", rowArgs(), cb, secret, nil)
	for _, p := range []map[string]any{first, subParams("tablesdb.row.deleted", rowArgs(), cb, secret, nil)} {
		if r := rpc(t, url, tok, "events/subscribe", p); r.Error != nil {
			t.Fatalf("subscribe: %s", r.Raw)
		}
	}
	third := subParams("users.user.created", map[string]any{"project_id": projectID}, cb, secret, nil)
	r := rpc(t, url, tok, "events/subscribe", third)
	if !cloud() {
		if r.Error != nil {
			t.Fatalf("open source has no plan limit: %s", r.Raw)
		}
		return
	}
	if r.Status != http.StatusOK || r.Error == nil || r.Error.Code != -32013 || r.Error.Data["limit"] != "webhooks" || r.Error.Data["max"] != float64(2) ||
		!strings.Contains(r.Error.Message, "unsubscribe from another event") || !strings.Contains(r.Error.Message, "upgrade") {
		t.Fatalf("at the limit: %d %s", r.Status, r.Raw)
	}
	if n := len(st.webhooks(projectID)); n != 2 {
		t.Fatalf("webhooks: %d", n)
	}
	// A refresh updates in place: the plan does not count it again.
	st.clock.Advance(time.Minute)
	if r := rpc(t, url, tok, "events/subscribe", first); r.Error != nil {
		t.Fatalf("refresh at the limit: %s", r.Raw)
	}
	// SEP-3415 numbering: -32025.
	st.env["MCP_EVENTS_ERROR_CODES"] = "sep"
	sep := st.instance(st.server(handler.Options{Now: st.clock.Now}))
	if r := rpc(t, sep, tok, "events/subscribe", third); r.Error == nil || r.Error.Code != -32025 || r.Error.Data["limit"] != "webhooks" {
		t.Fatalf("sep codes: %s", r.Raw)
	}
}

// TestAppwrite2xAccepted: the version gate accepts Appwrite 2.x releases (2.0.0 of 2026-08-31, 2.1.0, 2.2.0).
func TestAppwrite2xAccepted(t *testing.T) {
	for _, v := range []string{"2.0.0", "2.2.0"} {
		t.Run(v, func(t *testing.T) {
			st := newStackWith(t, func(o *localappwrite.Options) { o.Version = v })
			url := st.instance(st.server(handler.Options{}))
			secret := newSecret()
			st.recv.accept(secret)
			r := rpc(t, url, st.token(userID, allScopes), "events/subscribe", subParams("users.user.created", map[string]any{"project_id": projectID}, st.recv.url("/v2"), secret, nil))
			if r.Error != nil {
				t.Fatalf("Appwrite %s: %s", v, r.Raw)
			}
		})
	}
}
