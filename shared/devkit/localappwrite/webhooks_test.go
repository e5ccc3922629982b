package localappwrite

import (
	"strings"
	"testing"
)

func webhookParams(id string) map[string]any {
	return map[string]any{
		"webhookId": id,
		"url":       "https://hooks.example.test/appwrite/webhooks/" + id,
		"name":      "rows of t1",
		"events":    []string{"databases.db1.tables.t1.rows.*.create"},
	}
}

// The SDK sends X-Appwrite-Response-Format: 1.8.0, so webhooks come back with the pre-1.9.1 names.
func TestWebhooksLegacyFormatThroughSDK(t *testing.T) {
	f := newFixture(t, Options{})
	c := f.sdk(f.key)

	p := webhookParams("sub-1")
	p["authUsername"] = "user"
	p["authPassword"] = "pass"
	p["tls"] = true
	created, err := callJSON(t, c, "POST", "/webhooks", p)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"security", "httpUser", "httpPass", "signatureKey"} {
		if _, ok := created[k]; !ok {
			t.Errorf("legacy create lacks %q: %v", k, created)
		}
	}
	for _, k := range []string{"tls", "authUsername", "authPassword", "secret"} {
		if _, ok := created[k]; ok {
			t.Errorf("legacy create has new name %q", k)
		}
	}
	if created["security"] != true || created["httpUser"] != "user" || created["httpPass"] != "pass" ||
		created["enabled"] != true || created["attempts"] != float64(0) || created["logs"] != "" {
		t.Errorf("unexpected fields: %v", created)
	}
	if key, _ := created["signatureKey"].(string); len(key) != 128 {
		t.Errorf("generated secret must be 128 hex chars, got %q", key)
	}

	got, err := callJSON(t, c, "GET", "/webhooks/sub-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["signatureKey"]; ok {
		t.Error("the secret is only returned on creation and rotation")
	}
	if got["$id"] != "sub-1" || got["name"] != "rows of t1" {
		t.Errorf("get: %v", got)
	}

	list, err := callJSON(t, c, "GET", "/webhooks", map[string]any{"queries": []string{`{"method":"equal","attribute":"name","values":["rows of t1"]}`}})
	if err != nil {
		t.Fatal(err)
	}
	if list["total"] != float64(1) || len(list["webhooks"].([]any)) != 1 {
		t.Errorf("list: %v", list)
	}

	// Update: the legacy param names are accepted (request filter V22); omitted optional fields reset.
	upd := webhookParams("sub-1")
	delete(upd, "webhookId")
	upd["name"] = "renamed"
	upd["httpUser"] = "u2"
	updated, err := callJSON(t, c, "PUT", "/webhooks/sub-1", upd)
	if err != nil {
		t.Fatal(err)
	}
	if updated["name"] != "renamed" || updated["httpUser"] != "u2" || updated["httpPass"] != "" || updated["security"] != false {
		t.Errorf("update: %v", updated)
	}

	rot, err := callJSON(t, c, "PATCH", "/webhooks/sub-1/secret", map[string]any{"secret": "0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	if rot["signatureKey"] != "0123456789abcdef" {
		t.Errorf("rotation: %v", rot)
	}
	rot2, err := callJSON(t, c, "PUT", "/webhooks/sub-1/secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := rot2["signatureKey"].(string); len(k) != 128 {
		t.Errorf("rotation without a secret generates one: %v", rot2)
	}

	if _, err := c.Call("DELETE", "/webhooks/sub-1", map[string]any{"content-type": "application/json"}, nil); err != nil {
		t.Fatal(err)
	}
	_, err = callJSON(t, c, "GET", "/webhooks/sub-1", nil)
	wantErr(t, err, 404, ErrWebhookNotFound)
}

// With X-Appwrite-Response-Format 1.9.1 (or newer) the current names come back.
func TestWebhooksCurrentFormatThroughSDK(t *testing.T) {
	f := newFixture(t, Options{})
	c := f.sdk(f.key)
	c.AddHeader("X-Appwrite-Response-Format", "1.9.1")

	p := webhookParams("unique()")
	p["secret"] = "s3cr3t-value"
	p["authUsername"] = "envelope"
	created, err := callJSON(t, c, "POST", "/webhooks", p)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := created["$id"].(string)
	if len(id) != 20 || id == "unique()" {
		t.Errorf("unique() must generate a 20-char id, got %q", id)
	}
	if created["secret"] != "s3cr3t-value" || created["tls"] != false || created["authUsername"] != "envelope" || created["authPassword"] != "" {
		t.Errorf("create: %v", created)
	}
	for _, k := range []string{"security", "httpUser", "httpPass", "signatureKey"} {
		if _, ok := created[k]; ok {
			t.Errorf("current format has legacy name %q", k)
		}
	}
	got, err := callJSON(t, c, "GET", "/webhooks/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["secret"]; ok {
		t.Error("secret returned by get")
	}
	// The projects alias serves the same resources.
	if _, err := callJSON(t, c, "GET", "/projects/"+testProject+"/webhooks/"+id, nil); err != nil {
		t.Fatal(err)
	}
}

func TestWebhookValidators(t *testing.T) {
	f := newFixture(t, Options{})
	c := f.sdk(f.key)
	if _, err := callJSON(t, c, "POST", "/webhooks", webhookParams("dup")); err != nil {
		t.Fatal(err)
	}
	_, err := callJSON(t, c, "POST", "/webhooks", webhookParams("dup"))
	wantErr(t, err, 409, ErrWebhookAlreadyExists)

	many := make([]string, 101)
	for i := range many {
		many[i] = "users.*.create"
	}
	cases := []struct {
		name   string
		change func(map[string]any)
		msg    string
	}{
		{"id special start", func(p map[string]any) { p["webhookId"] = "_bad" }, "Invalid `webhookId` param"},
		{"id too long", func(p map[string]any) { p["webhookId"] = strings.Repeat("a", 37) }, "at most 36 chars"},
		{"missing url", func(p map[string]any) { delete(p, "url") }, `Param "url" is not optional.`},
		{"ftp url", func(p map[string]any) { p["url"] = "ftp://x.test/" }, "valid URL with following schemes (http, https)"},
		{"name 129", func(p map[string]any) { p["name"] = strings.Repeat("n", 129) }, "no longer than 128 chars"},
		{"101 events", func(p map[string]any) { p["events"] = many }, "Invalid `events` param"},
		{"bad event", func(p map[string]any) { p["events"] = []string{"rows.created"} }, "Invalid `events` param"},
		{"user 257", func(p map[string]any) { p["authUsername"] = strings.Repeat("u", 257) }, "no longer than 256 chars"},
		{"password 257", func(p map[string]any) { p["authPassword"] = strings.Repeat("p", 257) }, "Invalid `authPassword` param"},
		{"secret 7", func(p map[string]any) { p["secret"] = "1234567" }, "at least 8 chars"},
		{"secret 257", func(p map[string]any) { p["secret"] = strings.Repeat("s", 257) }, "Invalid `secret` param"},
	}
	for _, tc := range cases {
		p := webhookParams("v1")
		tc.change(p)
		_, err := callJSON(t, c, "POST", "/webhooks", p)
		wantErr(t, err, 400, ErrGeneralArgumentInvalid)
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: message %q lacks %q", tc.name, err.Error(), tc.msg)
		}
	}
	_, err = callJSON(t, c, "PUT", "/webhooks/nope", webhookParams("x"))
	wantErr(t, err, 404, ErrWebhookNotFound)
	_, err = callJSON(t, c, "PATCH", "/webhooks/nope/secret", nil)
	wantErr(t, err, 404, ErrWebhookNotFound)
	_, err = c.Call("DELETE", "/webhooks/nope", nil, nil)
	wantErr(t, err, 404, ErrWebhookNotFound)
	_, err = callJSON(t, c, "GET", "/nothing/here", nil)
	wantErr(t, err, 404, ErrGeneralRouteNotFound)
}

// authPassword is stored encrypted in a 255-character column: about 90 characters fit; a 256-character
// username does not fit its 255-character column either. The answer is 400 (fixed) or 500 (before the fix).
func TestAuthPasswordStoredLength(t *testing.T) {
	for _, mode := range []struct {
		opt    AuthPasswordTooLong
		status int
		typ    string
	}{{TooLong400, 400, ErrGeneralArgumentInvalid}, {TooLong500, 500, ErrGeneralUnknown}} {
		f := newFixture(t, Options{TooLong: mode.opt})
		c := f.sdk(f.key)
		ok := webhookParams("fits")
		ok["authUsername"] = strings.Repeat("u", 255)
		ok["authPassword"] = strings.Repeat("p", 90)
		if _, err := callJSON(t, c, "POST", "/webhooks", ok); err != nil {
			t.Fatalf("90-char password and 255-char user must fit: %v", err)
		}
		long := webhookParams("toolong")
		long["authPassword"] = strings.Repeat("p", 120) // 121 + 160 > 255
		_, err := callJSON(t, c, "POST", "/webhooks", long)
		wantErr(t, err, mode.status, mode.typ)
		user := webhookParams("longuser")
		user["authUsername"] = strings.Repeat("u", 256)
		_, err = callJSON(t, c, "POST", "/webhooks", user)
		wantErr(t, err, mode.status, mode.typ)
		// Update goes through the same column.
		upd := webhookParams("fits")
		delete(upd, "webhookId")
		upd["authPassword"] = strings.Repeat("p", 150)
		_, err = callJSON(t, c, "PUT", "/webhooks/fits", upd)
		wantErr(t, err, mode.status, mode.typ)
	}
}

func TestEncryptedLengthFormula(t *testing.T) {
	for _, n := range []int{0, 1, 3, 90, 100} {
		got := encryptedLength(strings.Repeat("x", n))
		base := 121 + 4*((n+2)/3)
		if got < base || got > base+4*((n+2)/3) {
			t.Errorf("n=%d: %d outside [%d, ...]", n, got, base)
		}
	}
}
