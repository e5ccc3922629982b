package handler_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"appwrite-agent/functions/mcp-events/mcpserver"
	"appwrite-agent/functions/mcp-events/subscriptions"
	"appwrite-agent/shared/seal"
)

// urlOf returns a callback URL on the receiver exactly n bytes long.
func urlOf(st *stack, n int) string {
	base := st.recv.url("/hooks/")
	return base + strings.Repeat("u", n-len(base))
}

// TestRefusalNamesTheURLAndItsMaximum: a subscription that does not fit is refused with -32602 naming
// delivery.url and the exact maximum for this request; that maximum subscribes, one byte more does not.
func TestRefusalNamesTheURLAndItsMaximum(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(mcpserver.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)

	r := rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), urlOf(st, 700), secret, nil))
	if r.Error == nil || r.Error.Code != -32602 || r.Error.Data["field"] != "delivery.url" {
		t.Fatalf("700 bytes: %s", r.Raw)
	}
	most := int(r.Error.Data["maxLength"].(float64))
	want := fmt.Sprintf("callback URL is 700 bytes; at most %d fit with a 32-byte secret (a 24-byte secret leaves room for %d)", most, most+8)
	if !strings.Contains(r.Error.Message, want) || strings.Contains(r.Error.Message, "shorten arguments") {
		t.Fatalf("message %q, want it to contain %q", r.Error.Message, want)
	}
	r = rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), urlOf(st, most+1), secret, nil))
	if r.Error == nil || !strings.Contains(r.Error.Message, fmt.Sprintf("callback URL is %d bytes; at most %d fit", most+1, most)) {
		t.Fatalf("%d bytes: %s", most+1, r.Raw)
	}
	r = rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), urlOf(st, most), secret, nil))
	if r.Error != nil {
		t.Fatalf("the announced maximum %d does not subscribe: %s", most, r.Raw)
	}
	wh := st.webhooks(projectID)[0]
	if u := wh["url"].(string); len(u) > seal.AppwriteColumn || strings.Contains(u, "%") || subscriptions.URLTail(u, wh["$id"].(string)) == "" {
		t.Fatalf("webhook url %q (%d characters)", u, len(u))
	}
	if sub := openEnvelope(t, st, wh); len(sub.CallbackURL) != most {
		t.Fatalf("sealed callback URL %d bytes", len(sub.CallbackURL))
	}
	t.Logf("stand-in ingress %q: longest callback URL %d bytes with a 32-byte secret", st.ingress.srv.URL, most)
}

// TestRotationGraceNeverDroppedSilently: a rotation keeps the old secret when both fit and says so;
// when both do not fit, the old secret is not kept and the answer says that, and why.
func TestRotationGraceNeverDroppedSilently(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(mcpserver.Options{}))
	tok := st.token(userID, allScopes)
	s1, s2, s3 := newSecret(), newSecret(), newSecret()
	st.recv.accept(s1)
	st.recv.accept(s2)
	st.recv.accept(s3)
	r := rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), urlOf(st, 700), s1, nil))
	most := int(r.Error.Data["maxLength"].(float64)) // with one 32-byte secret

	// Short URL: both secrets fit.
	short := urlOf(st, 120)
	if r = rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), short, s1, nil)); r.Error != nil {
		t.Fatalf("%s", r.Raw)
	}
	if _, ok := r.Result["_meta"]; ok {
		t.Fatalf("no rotation, yet _meta: %s", r.Raw)
	}
	r = rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), short, s2, nil))
	rot, _ := r.Result["_meta"].(map[string]any)[subscriptions.MetaRotation].(map[string]any)
	if cloud() {
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
	long := urlOf(st, most)
	if r = rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), long, s1, nil)); r.Error != nil {
		t.Fatalf("%s", r.Raw)
	}
	r = rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), long, s3, nil))
	if r.Error != nil {
		t.Fatalf("rotation without room: %s", r.Raw)
	}
	rot, _ = r.Result["_meta"].(map[string]any)[subscriptions.MetaRotation].(map[string]any)
	reason, _ := rot["reason"].(string)
	if rot["previousSecretKept"] != false || !strings.Contains(reason, "previous secret was not kept") ||
		!strings.Contains(reason, fmt.Sprintf("callback URL is %d bytes", most)) {
		t.Fatalf("rotation without room: %s", r.Raw)
	}
	for _, wh := range st.webhooks(projectID) {
		if sub := openEnvelope(t, st, wh); sub.CallbackURL == long && len(sub.PrevSecret) != 0 {
			t.Fatal("the envelope kept a previous secret the answer said was dropped")
		}
	}
}

// TestURLBudgetIsConfigurable: MCP_EVENTS_SEAL_URL_BUDGET=0 keeps webhook URLs bare (and the maximum
// shrinks accordingly); a budget beyond what Appwrite's url column leaves refuses to start; a malformed one
// too.
func TestURLBudgetIsConfigurable(t *testing.T) {
	st := newStack(t)
	st.env["MCP_EVENTS_SEAL_URL_BUDGET"] = "0"
	url := st.instance(st.server(mcpserver.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	r := rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), urlOf(st, 700), secret, nil))
	most := int(r.Error.Data["maxLength"].(float64))
	if r = rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), urlOf(st, most), secret, nil)); r.Error != nil {
		t.Fatalf("%s", r.Raw)
	}
	wh := st.webhooks(projectID)[0]
	if wh["url"] != st.ingress.srv.URL+"/appwrite/webhooks/"+wh["$id"].(string) {
		t.Fatalf("URL budget 0, yet the url carries sealed data: %v", wh["url"])
	}
	if most > 270 {
		t.Fatalf("without the URL the maximum is %d bytes", most)
	}
	for _, v := range []string{"200", "-1", "x"} {
		st.env["MCP_EVENTS_SEAL_URL_BUDGET"] = v
		if _, err := mcpserver.New(st.getenv, mcpserver.Options{}); err == nil || !strings.Contains(err.Error(), "URL") && !strings.Contains(err.Error(), "MCP_EVENTS_SEAL_URL_BUDGET") {
			t.Errorf("budget %s: %v", v, err)
		}
	}
}

// TestEnvelopeExpiryIsTheEndOfTheGrant: the envelope's Expiry (what the ingress stops delivering at) is the
// end of the grant, to the second, not refreshBefore: refreshBefore is a tenth of the grant earlier, so a
// client refreshing at refreshBefore still has deliveries meanwhile.
func TestEnvelopeExpiryIsTheEndOfTheGrant(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(mcpserver.Options{Now: st.clock.Now}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	before := st.clock.Now()
	r := rpc(t, url, tok, "events/subscribe", subParams("users.user.created", map[string]any{"project_id": projectID}, st.recv.url("/expiry"), secret, 3600000))
	after := st.clock.Now()
	if r.Error != nil {
		t.Fatalf("%s", r.Raw)
	}
	sub := openEnvelope(t, st, st.webhooks(projectID)[0])
	rb := mustTime(t, r.Result["refreshBefore"])
	if !sub.Expiry.Equal(rb.Add(6 * time.Minute)) {
		t.Fatalf("envelope expiry %v, refreshBefore %v: want refreshBefore + 6m (a tenth of 1h)", sub.Expiry, rb)
	}
	if sub.Expiry.Before(before.Add(time.Hour).Truncate(time.Second)) || sub.Expiry.After(after.Add(time.Hour)) {
		t.Fatalf("envelope expiry %v, want the end of a 1h grant made in [%v, %v]", sub.Expiry, before, after)
	}
}
