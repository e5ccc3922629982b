package localappwrite

import (
	"testing"
)

// Undeclared params are dropped (utopia-php/http reads declared params only): a signatureKey has no effect on
// create or rotation, and the pre-1.9.1 names are mapped only for requests in a pre-1.9.1 format
// (Request/Filters/V22.php:53-71, general.php:891-893).
func TestUndeclaredParamsDropped(t *testing.T) {
	f := newFixture(t, Options{})
	p := webhookParams("drop")
	p["signatureKey"] = "caller-chosen-key"
	p["httpUser"] = "legacy-user"
	status, got := f.rawCall(t, "POST", "/webhooks", p, map[string]string{"X-Appwrite-Response-Format": "1.9.5"})
	if status != 201 {
		t.Fatalf("%d %v", status, got)
	}
	if s, _ := got["secret"].(string); !hex128.MatchString(s) {
		t.Errorf("signatureKey must be ignored and a secret generated, got %q", s)
	}
	if got["authUsername"] != "" {
		t.Errorf("httpUser is not mapped for a 1.9.5 request: %v", got)
	}
	status, got = f.rawCall(t, "PATCH", "/webhooks/drop/secret", map[string]any{"signatureKey": "caller-chosen-key"}, nil)
	if s, _ := got["secret"].(string); status != 200 || !hex128.MatchString(s) {
		t.Errorf("rotation with signatureKey only must generate: %d %v", status, got)
	}
	// A 1.8.0 request maps httpUser (set) over authUsername, and still ignores signatureKey.
	p = webhookParams("legacy")
	p["signatureKey"] = "caller-chosen-key"
	p["httpUser"] = "legacy-user"
	p["authUsername"] = "new-user"
	status, got = f.rawCall(t, "POST", "/webhooks", p, map[string]string{"X-Appwrite-Response-Format": "1.8.0"})
	if s, _ := got["signatureKey"].(string); status != 201 || got["httpUser"] != "legacy-user" || !hex128.MatchString(s) {
		t.Errorf("legacy create: %d %v", status, got)
	}
}
