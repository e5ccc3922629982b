package subscriptions_test

import (
	"context"
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
	"appwrite-agent/functions/mcp-events/subscriptions"
	"appwrite-agent/shared/appwritesig"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/seal"
)

// TestAppwriteDeliversTheEnvelope proves the contract with the webhook-ingress: Appwrite POSTs a matching
// event to <ingress>/appwrite/webhooks/{id} with the envelope as Basic auth and a signature made with the
// derived secret.
func TestAppwriteDeliversTheEnvelope(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	// A callback URL long enough to spread the envelope over authUsername, authPassword and the URL.
	cb := st.Recv.URL("/hooks/" + strings.Repeat("c", 200))
	r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe: %s", r.Raw)
	}
	id := r.Result["id"].(string)
	st.CreateRow("other", "not watched") // a non-matching change: no delivery
	st.CreateRow(eventstest.TableID, "printer on fire")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	eventstest.Must(t, st.LA.Flush(ctx))
	reqs, bodies := st.Ingress.Requests()
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
	ring, _ := seal.ParseKeyring(st.Env["SEAL_KEYS"])
	sealer, _ := seal.NewSealer(ring, seal.Budget{})
	sub, err := sealer.Open(id, req.Header.Get("X-Appwrite-Webhook-Project-Id"), seal.Fields{Username: user, Password: pass, URLTail: tail},
		eventstest.Targets(strings.Split(req.Header.Get("X-Appwrite-Webhook-Events"), ","))...)
	if err != nil || sub.Event != "tablesdb.row.created" || sub.CallbackURL != cb || sub.Expired(time.Now()) {
		t.Fatalf("envelope: %v %+v", err, sub)
	}
	keys, _ := appwritesig.ParseKeys(st.Env["APPWRITE_WEBHOOK_SECRET_KEYS"])
	whURL := st.Ingress.Srv.URL + req.URL.Path
	if !keys.Verify(id, whURL, bodies[0], req.Header.Get("X-Appwrite-Webhook-Signature")) {
		t.Fatal("X-Appwrite-Webhook-Signature does not verify with the derived secret")
	}
}

// TestManagedWebhookURLsHaveNoPercent: Appwrite 1.9.6 and earlier sign rawurldecode(url) + body, HEAD signs
// the stored url: a managed URL holding a "%" would verify on one and not the other. Every URL this server
// creates, for every catalog event and callback URLs full of escapes, is %-free.
func TestManagedWebhookURLsHaveNoPercent(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	args := map[string]map[string]any{
		eventcatalog.ArgDatabase: {eventcatalog.ArgDatabase: eventstest.DatabaseID, eventcatalog.ArgTable: eventstest.TableID},
		eventcatalog.ArgBucket:   {eventcatalog.ArgBucket: eventstest.BucketID},
		eventcatalog.ArgFunction: {eventcatalog.ArgFunction: eventstest.FunctionID},
		eventcatalog.ArgSite:     {eventcatalog.ArgSite: eventstest.SiteID},
	}
	made := 0
	for _, ev := range eventcatalog.All() {
		a := map[string]any{"project_id": eventstest.ProjectID}
		for _, name := range ev.Args {
			for k, v := range args[name] {
				a[k] = v
			}
			if name == eventcatalog.ArgTable {
				a[eventcatalog.ArgDatabase] = eventstest.DatabaseID
			}
		}
		for _, path := range []string{"/plain", "/with%20space?q=%2F%25&x=%E2%9C%93", "/" + strings.Repeat("%41", 20)} {
			r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams(ev.Name, a, st.Recv.URL(path), secret, nil))
			if r.Error != nil {
				t.Fatalf("%s %s: %s", ev.Name, path, r.Raw)
			}
			made++
		}
	}
	hooks := st.Webhooks(eventstest.ProjectID)
	if len(hooks) != made {
		t.Fatalf("%d webhooks for %d subscriptions", len(hooks), made)
	}
	for _, h := range hooks {
		u, _ := h["url"].(string)
		if u == "" || strings.Contains(u, "%") {
			t.Errorf("managed webhook url %q", u)
		}
	}
}
