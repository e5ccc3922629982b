package localappwrite

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/appwrite/sdk-for-go/tablesdb"
)

func seedRowsTable(t *testing.T, f *fixture) {
	t.Helper()
	err := f.s.SeedDatabase(testProject, DatabaseSpec{ID: "db1", Name: "DB", Tables: []TableSpec{{
		ID: "t1", Name: "T1", Columns: []Column{{Key: "title", Type: "string", Size: 64}, {Key: "count", Type: "integer"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
}

func createHook(t *testing.T, f *fixture, id, url string, events []string, extra map[string]any) map[string]any {
	t.Helper()
	p := map[string]any{"webhookId": id, "url": url, "name": "hook " + id, "events": events}
	for k, v := range extra {
		p[k] = v
	}
	c := f.sdk(f.key)
	c.AddHeader("X-Appwrite-Response-Format", "1.9.1")
	out, err := callJSON(t, c, "POST", "/webhooks", p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// independentSignature recomputes X-Appwrite-Webhook-Signature from the spec (base64 HMAC-SHA1 over URL+body)
// without the package's helper.
func independentSignature(secret, url string, body []byte) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(url + string(body)))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// A webhook, a row created through the SDK, and exactly the delivery Appwrite's worker would send.
func TestRowCreateDeliversExactlyAsAppwrite(t *testing.T) {
	f := newFixture(t, Options{})
	seedRowsTable(t, f)
	rec := newRecorder(t)
	hookURL := rec.ts.URL + "/appwrite/webhooks/sub-1?x=1"
	created := createHook(t, f, "sub-1", hookURL, []string{"databases.db1.tables.t1.rows.*.create"},
		map[string]any{"secret": "the-webhook-secret", "authUsername": "envelope-user", "authPassword": "envelope/pass"})
	if created["secret"] != "the-webhook-secret" {
		t.Fatalf("create: %v", created)
	}
	// A second webhook on other events receives nothing.
	createHook(t, f, "other", rec.ts.URL+"/other", []string{"users.*.create"}, nil)
	// A disabled one neither.
	createHook(t, f, "off", rec.ts.URL+"/off", []string{"databases.*.tables.*.rows.*"}, map[string]any{"enabled": false})

	db := tablesdb.New(f.sdk(f.key))
	row, err := db.CreateRow("db1", "t1", "row-1", map[string]any{"title": "hello/world é", "count": 3})
	if err != nil {
		t.Fatal(err)
	}
	f.flush(t)

	got := rec.all()
	if len(got) != 1 {
		t.Fatalf("want exactly one delivery, got %d: %+v", len(got), got)
	}
	d := got[0]
	if d.Method != http.MethodPost || d.Path != "/appwrite/webhooks/sub-1?x=1" {
		t.Errorf("request line: %s %s", d.Method, d.Path)
	}
	h := d.Header
	// The row create's event is the documents form (Documents/Create.php:529-532), mirrored.
	wantEvents := allEvents("databases.[databaseId].collections.[collectionId].documents.[documentId].create",
		[]param{{"databaseId", "db1"}, {"collectionId", "t1"}, {"tableId", "t1"}, {"documentId", "row-1"}, {"rowId", "row-1"}})
	checks := map[string]string{
		"Content-Type":                  "application/json",
		"X-Appwrite-Webhook-Id":         "sub-1",
		"X-Appwrite-Webhook-Name":       "hook sub-1",
		"X-Appwrite-Webhook-User-Id":    "",
		"X-Appwrite-Webhook-Project-Id": testProject,
		"X-Appwrite-Webhook-Events":     strings.Join(wantEvents, ","),
		"User-Agent":                    "Appwrite-Server v1.9.6. Please report abuse at security@appwrite.io",
		"X-Appwrite-Webhook-Signature":  independentSignature("the-webhook-secret", hookURL, d.Body),
	}
	for k, v := range checks {
		if h.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, h.Get(k), v)
		}
	}
	if _, ok := h["X-Appwrite-Webhook-User-Id"]; !ok {
		t.Error("X-Appwrite-Webhook-User-Id must be sent even when empty")
	}
	if h.Get("X-Appwrite-Webhook-Delivery-Id") != "" {
		t.Error("no delivery id header unless configured")
	}
	evs := strings.Split(h.Get("X-Appwrite-Webhook-Events"), ",")
	for _, want := range []string{"databases.db1.tables.t1.rows.row-1.create", "databases.db1.tables.t1.rows.*.create",
		"databases.*.collections.*.documents.*.create", "databases.db1.collections.t1.documents.row-1.create"} {
		if !slices.Contains(evs, want) {
			t.Errorf("events header lacks %s", want)
		}
	}
	req, _ := http.NewRequest("GET", "/", nil)
	req.Header = h
	user, pass, ok := req.BasicAuth()
	if !ok || user != "envelope-user" || pass != "envelope/pass" {
		t.Errorf("basic auth = %q %q %v", user, pass, ok)
	}
	// Body: the Row model, JSON-encoded like PHP (escaped slashes, \u escapes), equal to what GetRow returns.
	if !strings.Contains(string(d.Body), `hello\/world \u00e9`) {
		t.Errorf("body is not PHP json_encode output: %s", d.Body)
	}
	var body map[string]any
	if err := json.Unmarshal(d.Body, &body); err != nil {
		t.Fatal(err)
	}
	again, err := db.GetRow("db1", "t1", "row-1")
	if err != nil {
		t.Fatal(err)
	}
	if body["$id"] != row.Id || body["$tableId"] != "t1" || body["$databaseId"] != "db1" || body["title"] != "hello/world é" ||
		body["count"] != float64(3) || body["$sequence"] != float64(again.Sequence) || body["$createdAt"] != again.CreatedAt {
		t.Errorf("body %v does not match the row %+v", body, again)
	}
	// The recorded delivery matches what was received.
	ds := f.s.Deliveries()
	if len(ds) != 1 || !ds[0].Success || ds[0].Body != string(d.Body) || ds[0].WebhookID != "sub-1" {
		t.Errorf("Deliveries() = %+v", ds)
	}
	if Signature("the-webhook-secret", hookURL, d.Body) != h.Get("X-Appwrite-Webhook-Signature") {
		t.Error("Signature helper disagrees")
	}
}

func TestBasicAuthOnlyWhenBothSet(t *testing.T) {
	f := newFixture(t, Options{})
	seedRowsTable(t, f)
	rec := newRecorder(t)
	createHook(t, f, "only-user", rec.ts.URL+"/a", []string{"databases.*.tables.*.rows.*.create"}, map[string]any{"authUsername": "u"})
	createHook(t, f, "only-pass", rec.ts.URL+"/b", []string{"databases.*.tables.*.rows.*.create"}, map[string]any{"authPassword": "p"})
	if _, err := tablesdb.New(f.sdk(f.key)).CreateRow("db1", "t1", "unique()", map[string]any{"title": "x"}); err != nil {
		t.Fatal(err)
	}
	f.flush(t)
	got := rec.all()
	if len(got) != 2 {
		t.Fatalf("want 2 deliveries, got %d", len(got))
	}
	for _, d := range got {
		if d.Header.Get("Authorization") != "" {
			t.Errorf("%s: Authorization sent with only one of user/password", d.Path)
		}
	}
}

func webhookState(t *testing.T, f *fixture, id string) map[string]any {
	t.Helper()
	c := f.sdk(f.key)
	c.AddHeader("X-Appwrite-Response-Format", "1.9.1")
	wh, err := callJSON(t, c, "GET", "/webhooks/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return wh
}

// Ten consecutive failed deliveries disable the webhook; a success in between resets the counter.
func TestFailureCounterDisablesAfterTen(t *testing.T) {
	f := newFixture(t, Options{})
	seedRowsTable(t, f)
	rec := newRecorder(t)
	rec.setStatus(http.StatusInternalServerError)
	createHook(t, f, "flaky", rec.ts.URL+"/hook", []string{"databases.*.tables.*.rows.*.create"}, nil)
	db := tablesdb.New(f.sdk(f.key))
	create := func(n int) {
		for range n {
			if _, err := db.CreateRow("db1", "t1", "unique()", map[string]any{"title": "x"}); err != nil {
				t.Fatal(err)
			}
			f.flush(t) // one delivery at a time, like a sequence of events
		}
	}
	create(9)
	wh := webhookState(t, f, "flaky")
	if wh["attempts"] != float64(9) || wh["enabled"] != true {
		t.Fatalf("after 9 failures: attempts=%v enabled=%v", wh["attempts"], wh["enabled"])
	}
	if logs, _ := wh["logs"].(string); !strings.Contains(logs, "Status code: 500") || !strings.Contains(logs, rec.ts.URL+"/hook") {
		t.Errorf("logs = %q", logs)
	}
	rec.setStatus(http.StatusFound) // 3xx counts as success
	create(1)
	if wh := webhookState(t, f, "flaky"); wh["attempts"] != float64(0) || wh["enabled"] != true ||
		!strings.Contains(wh["logs"].(string), "Status code: 500") {
		t.Fatalf("a success must reset the counter and keep the last failure's logs: %v", wh)
	}
	rec.setStatus(http.StatusBadRequest)
	create(9)
	if wh := webhookState(t, f, "flaky"); wh["enabled"] != true {
		t.Fatal("still enabled after 9 failures")
	}
	create(1)
	wh = webhookState(t, f, "flaky")
	if wh["attempts"] != float64(10) || wh["enabled"] != false {
		t.Fatalf("after 10 failures: attempts=%v enabled=%v", wh["attempts"], wh["enabled"])
	}
	before := len(rec.all())
	rec.setStatus(http.StatusOK)
	create(1)
	if len(rec.all()) != before {
		t.Fatal("a disabled webhook must not receive deliveries")
	}
	if len(rec.all()) != 20 {
		t.Fatalf("want 20 deliveries in all, got %d", len(rec.all()))
	}
	// Re-enabling through the API resets the counter.
	c := f.sdk(f.key)
	c.AddHeader("X-Appwrite-Response-Format", "1.9.1")
	upd, err := callJSON(t, c, "PUT", "/webhooks/flaky", map[string]any{
		"name": "flaky", "url": rec.ts.URL + "/hook", "events": []string{"databases.*.tables.*.rows.*.create"}, "enabled": true})
	if err != nil {
		t.Fatal(err)
	}
	if upd["enabled"] != true || upd["attempts"] != float64(0) || !strings.Contains(upd["logs"].(string), "Status code: 400") {
		t.Fatalf("re-enable: %v", upd)
	}
}

func TestTransportErrorCountsAsFailure(t *testing.T) {
	f := newFixture(t, Options{})
	seedRowsTable(t, f)
	rec := newRecorder(t)
	url := rec.ts.URL + "/gone"
	rec.ts.Close()
	createHook(t, f, "dead", url, []string{"databases.*.tables.*.rows.*.create"}, nil)
	if _, err := tablesdb.New(f.sdk(f.key)).CreateRow("db1", "t1", "unique()", map[string]any{"title": "x"}); err != nil {
		t.Fatal(err)
	}
	f.flush(t)
	wh := webhookState(t, f, "dead")
	if wh["attempts"] != float64(1) || !strings.Contains(wh["logs"].(string), "CURL Error") {
		t.Fatalf("transport failure: %v", wh)
	}
}

// With the delivery-id option, every try of one delivery carries the same X-Appwrite-Webhook-Delivery-Id,
// and different deliveries carry different ids.
func TestDeliveryIDHeaderStableAcrossRetries(t *testing.T) {
	f := newFixture(t, Options{DeliveryIDHeader: true, DeliveryRetries: 2})
	seedRowsTable(t, f)
	rec := newRecorder(t)
	rec.setStatus(http.StatusServiceUnavailable)
	createHook(t, f, "ids", rec.ts.URL+"/h", []string{"databases.*.tables.*.rows.*.create"}, map[string]any{"secret": "abcdefgh"})
	db := tablesdb.New(f.sdk(f.key))
	if _, err := db.CreateRow("db1", "t1", "r1", map[string]any{"title": "x"}); err != nil {
		t.Fatal(err)
	}
	f.flush(t)
	got := rec.all()
	if len(got) != 3 {
		t.Fatalf("1 try + 2 retries, got %d", len(got))
	}
	id := got[0].Header.Get("X-Appwrite-Webhook-Delivery-Id")
	if id == "" {
		t.Fatal("missing delivery id")
	}
	for _, r := range got {
		if r.Header.Get("X-Appwrite-Webhook-Delivery-Id") != id || r.Header.Get("X-Appwrite-Webhook-Signature") != got[0].Header.Get("X-Appwrite-Webhook-Signature") {
			t.Fatal("retries must repeat the same delivery")
		}
	}
	if wh := webhookState(t, f, "ids"); wh["attempts"] != float64(1) {
		t.Errorf("one failed delivery counts once: %v", wh["attempts"])
	}
	// A manual redelivery is the same delivery again.
	rec.setStatus(http.StatusOK)
	if err := f.s.Redeliver(id); err != nil {
		t.Fatal(err)
	}
	f.flush(t)
	got = rec.all()
	if got[3].Header.Get("X-Appwrite-Webhook-Delivery-Id") != id {
		t.Error("redelivery changed the id")
	}
	if wh := webhookState(t, f, "ids"); wh["attempts"] != float64(0) {
		t.Errorf("successful redelivery resets attempts: %v", wh["attempts"])
	}
	if _, err := db.CreateRow("db1", "t1", "r2", map[string]any{"title": "y"}); err != nil {
		t.Fatal(err)
	}
	f.flush(t)
	got = rec.all()
	if got[len(got)-1].Header.Get("X-Appwrite-Webhook-Delivery-Id") == id {
		t.Error("a new delivery needs a new id")
	}
}

// tls=false turns certificate verification off like Appwrite's worker; tls=true keeps it on.
func TestTLSFlag(t *testing.T) {
	f := newFixture(t, Options{DeliveryClient: &http.Client{}})
	seedRowsTable(t, f)
	var hits int
	var mu sync.Mutex
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
	}))
	defer tlsSrv.Close()
	createHook(t, f, "insecure", tlsSrv.URL+"/a", []string{"databases.*.tables.*.rows.*.create"}, map[string]any{"tls": false})
	createHook(t, f, "strict", tlsSrv.URL+"/b", []string{"databases.*.tables.*.rows.*.create"}, map[string]any{"tls": true})
	if _, err := tablesdb.New(f.sdk(f.key)).CreateRow("db1", "t1", "unique()", map[string]any{"title": "x"}); err != nil {
		t.Fatal(err)
	}
	f.flush(t)
	mu.Lock()
	got := hits
	mu.Unlock()
	if got != 1 {
		t.Fatalf("want only the tls=false delivery to arrive, got %d", got)
	}
	if wh := webhookState(t, f, "strict"); wh["attempts"] != float64(1) {
		t.Fatalf("certificate failure must count: %v", wh)
	}
	if wh := webhookState(t, f, "insecure"); wh["attempts"] != float64(0) {
		t.Fatalf("insecure delivery failed: %v", wh)
	}
}

// Deliveries queued before the tenth failure do not go out once the webhook is disabled.
func TestQueuedDeliveriesSkipDisabledWebhook(t *testing.T) {
	f := newFixture(t, Options{Workers: 1})
	seedRowsTable(t, f)
	rec := newRecorder(t)
	rec.setStatus(500)
	createHook(t, f, "burst", rec.ts.URL, []string{"databases.*.tables.*.rows.*.create"}, nil)
	db := tablesdb.New(f.sdk(f.key))
	for range 15 {
		if _, err := db.CreateRow("db1", "t1", "unique()", map[string]any{"title": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	f.flush(t)
	if n := len(rec.all()); n != 10 {
		t.Fatalf("want 10 deliveries before the webhook is disabled, got %d", n)
	}
	if wh := webhookState(t, f, "burst"); wh["enabled"] != false {
		t.Fatal("not disabled")
	}
}

// The worker never follows a redirect (1.9.6 sets CURLOPT_MAXREDIRS without FOLLOWLOCATION): the 3xx is the
// answer, it is no failure, and the Location target gets nothing.
func TestDeliveryNeverFollowsRedirects(t *testing.T) {
	f := newFixture(t, Options{})
	seedRowsTable(t, f)
	target := newRecorder(t)
	rec := newRecorder(t)
	rec.reply = func(w http.ResponseWriter, r *http.Request, _ []byte) {
		http.Redirect(w, r, target.ts.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}
	createHook(t, f, "moved", rec.ts.URL+"/hook", []string{"databases.*.tables.*.rows.*.create"}, nil)
	db := tablesdb.New(f.sdk(f.key))
	for range 3 {
		if _, err := db.CreateRow("db1", "t1", "unique()", map[string]any{"title": "x"}); err != nil {
			t.Fatal(err)
		}
		f.flush(t)
	}
	if n := len(target.all()); n != 0 {
		t.Fatalf("the redirect target got %d requests", n)
	}
	if n := len(rec.all()); n != 3 {
		t.Fatalf("the webhook got %d requests, want 3", n)
	}
	ds := f.s.Deliveries()
	for _, d := range ds {
		if !d.Success || len(d.Attempts) != 1 || d.Attempts[0].StatusCode != http.StatusTemporaryRedirect {
			t.Fatalf("delivery %+v", d)
		}
	}
	if wh := webhookState(t, f, "moved"); wh["attempts"] != float64(0) || wh["enabled"] != true {
		t.Fatalf("a 3xx is no failure: %v", wh)
	}
}

// Appwrite 1.9.6 and earlier sign rawurldecode(url) + body; later versions the stored url. The request goes
// to the stored url either way.
func TestSignatureOverDecodedURLUpTo196(t *testing.T) {
	for _, tc := range []struct {
		version string
		decoded bool
	}{{"1.9.6", true}, {"1.9.5", true}, {"1.9.7", false}} {
		f := newFixture(t, Options{Version: tc.version})
		seedRowsTable(t, f)
		rec := newRecorder(t)
		stored := rec.ts.URL + "/appwrite/webhooks/enc?cb=https%3A%2F%2Fx.example.com%2Fa%20b%zz"
		createHook(t, f, "enc", stored, []string{"databases.*.tables.*.rows.*.create"}, map[string]any{"secret": "s3cr3t-enc"})
		if _, err := tablesdb.New(f.sdk(f.key)).CreateRow("db1", "t1", "unique()", map[string]any{"title": "x"}); err != nil {
			t.Fatal(err)
		}
		f.flush(t)
		got := rec.all()
		if len(got) != 1 || got[0].Path != "/appwrite/webhooks/enc?cb=https%3A%2F%2Fx.example.com%2Fa%20b%zz" {
			t.Fatalf("%s: %+v", tc.version, got)
		}
		signed := stored
		if tc.decoded {
			signed = rec.ts.URL + "/appwrite/webhooks/enc?cb=https://x.example.com/a b%zz"
		}
		if sig := got[0].Header.Get("X-Appwrite-Webhook-Signature"); sig != independentSignature("s3cr3t-enc", signed, got[0].Body) {
			t.Errorf("%s: signature is not over %q", tc.version, signed)
		}
	}
}
