package localappwrite

import (
	"net/http"
	"testing"

	"github.com/appwrite/sdk-for-go/tablesdb"
)

// TestCloudProfileWebhooks: in the Cloud profile no route returns authPassword (create, get, list, update,
// secret update, in both field spellings), the secret comes back only from create and the secret update, and
// Appwrite still sends the password with every delivery.
func TestCloudProfileWebhooks(t *testing.T) {
	f := newFixture(t, Options{Profile: ProfileCloud, WebhookLimit: -1})
	seedRowsTable(t, f)
	rec := newRecorder(t)
	created := createHook(t, f, "cloud-1", rec.ts.URL, []string{"databases.*.tables.*.rows.*.create"},
		map[string]any{"authUsername": "user", "authPassword": "the-password", "secret": "the-webhook-secret"})
	if created["authPassword"] != "" || created["authUsername"] != "user" || created["secret"] != "the-webhook-secret" {
		t.Fatalf("create: %v", created)
	}
	if got := webhookState(t, f, "cloud-1"); got["authPassword"] != "" || got["secret"] != "" || got["authUsername"] != "user" {
		t.Fatalf("get: %v", got)
	}
	legacy, err := callJSON(t, f.sdk(f.key), "GET", "/webhooks", nil) // format 1.8.0: httpPass
	if err != nil {
		t.Fatal(err)
	}
	if w := legacy["webhooks"].([]any)[0].(map[string]any); w["httpPass"] != "" || w["httpUser"] != "user" {
		t.Fatalf("legacy list: %v", w)
	}
	c := f.sdk(f.key)
	c.AddHeader("X-Appwrite-Response-Format", "1.9.1")
	upd, err := callJSON(t, c, "PUT", "/webhooks/cloud-1", map[string]any{"name": "n", "url": rec.ts.URL, "events": []string{"databases.*.tables.*.rows.*.create"},
		"authUsername": "user", "authPassword": "the-password"})
	if err != nil || upd["authPassword"] != "" || upd["secret"] != "" {
		t.Fatalf("update: %v %v", upd, err)
	}
	rot, err := callJSON(t, c, "PATCH", "/webhooks/cloud-1/secret", map[string]any{"secret": "the-webhook-secret"})
	if err != nil || rot["authPassword"] != "" || rot["secret"] != "the-webhook-secret" {
		t.Fatalf("secret update: %v %v", rot, err)
	}
	if _, err := tablesdb.New(f.sdk(f.key)).CreateRow("db1", "t1", "unique()", map[string]any{"title": "x"}); err != nil {
		t.Fatal(err)
	}
	f.flush(t)
	got := rec.all()
	if len(got) != 1 {
		t.Fatalf("deliveries: %d", len(got))
	}
	if user, pass, ok := (&http.Request{Header: got[0].Header}).BasicAuth(); !ok || user != "user" || pass != "the-password" {
		t.Fatalf("delivery Basic auth: %q %q %v", user, pass, ok)
	}
}

// TestCloudProfileWebhookLimit: Free allows 2 webhooks per project; the third create, and a create with an
// existing id at the limit, answer 403 additional_resource_not_allowed (the plan is checked before the
// duplicate id). A deleted webhook frees its slot; the open-source profile has no limit.
func TestCloudProfileWebhookLimit(t *testing.T) {
	f := newFixture(t, Options{Profile: ProfileCloud})
	c := f.sdk(f.key)
	for _, id := range []string{"w1", "w2"} {
		if _, err := callJSON(t, c, "POST", "/webhooks", webhookParams(id)); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	const msg = "The maximum number of webhooks allowed for the selected plan has been reached. Upgrade to increase the limit."
	_, err := callJSON(t, c, "POST", "/webhooks", webhookParams("w3"))
	wantAPIError(t, err, 403, ErrAdditionalResourceNotAllowed, msg)
	_, err = callJSON(t, c, "POST", "/webhooks", webhookParams("w1"))
	wantAPIError(t, err, 403, ErrAdditionalResourceNotAllowed, msg)
	if _, err := c.Call("DELETE", "/webhooks/w2", map[string]any{"content-type": "application/json"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := callJSON(t, c, "POST", "/webhooks", webhookParams("w3")); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
	// Below the limit, a duplicate id is the usual 409.
	start := newFixture(t, Options{Profile: ProfileCloud, WebhookLimit: 50})
	sc := start.sdk(start.key)
	if _, err := callJSON(t, sc, "POST", "/webhooks", webhookParams("w1")); err != nil {
		t.Fatal(err)
	}
	_, err = callJSON(t, sc, "POST", "/webhooks", webhookParams("w1"))
	wantErr(t, err, 409, ErrWebhookAlreadyExists)

	oss := newFixture(t, Options{})
	oc := oss.sdk(oss.key)
	for _, id := range []string{"w1", "w2", "w3"} {
		p := webhookParams(id)
		p["authUsername"], p["authPassword"] = "u", "p-"+id
		if _, err := callJSON(t, oc, "POST", "/webhooks", p); err != nil {
			t.Fatalf("open source %s: %v", id, err)
		}
	}
	if got, err := callJSON(t, oc, "GET", "/webhooks/w1", nil); err != nil || got["httpPass"] != "p-w1" {
		t.Fatalf("open source get: %v %v", got, err)
	}
}
