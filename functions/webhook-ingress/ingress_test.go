package handler_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/functions/webhook-ingress/ingress"
	"appwrite-agent/shared/appwritesig"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/webhookreceiver"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/seal"
	"appwrite-agent/shared/stdwebhooks"
)

const (
	testSealKeys = "k1:MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1ub3BxcnN0dXY="
	testSigKeys  = "s1:QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWY="
	subSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	projectID    = "proj1"
)

// fixture is an ingress behind the local runtime, a subscriber, and what Appwrite would hold.
type fixture struct {
	t        *testing.T
	ingress  *httptest.Server
	receiver *webhookreceiver.Receiver
	sealer   *seal.Sealer
	sigKeys  *appwritesig.Keys
	logs     *logSink
}

type logSink struct {
	mu    sync.Mutex
	lines []string // both logs
	logs  []string // the execution log (counter lines only)
	errs  []string // the error log
}

func (l *logSink) add(id, logs, errs string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.Split(logs+errs, "\n")...)
	l.logs = append(l.logs, strings.Split(logs, "\n")...)
	l.errs = append(l.errs, strings.Split(errs, "\n")...)
}

// checkCounterLines fails unless every line of the execution logs is one opsmetrics counter object.
func (l *logSink) checkCounterLines(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.logs {
		if line == "" {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("log line is not JSON (%v): %q", err, line)
		}
		if _, ok := v["metric"].(string); !ok || v["inc"] != 1.0 {
			t.Fatalf("log line is not a counter: %q", line)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no counter lines")
	}
}

func (l *logSink) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, receiver: webhookreceiver.New(subSecret), logs: &logSink{}}
	t.Cleanup(f.receiver.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, f.receiver.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	f.ingress = httptest.NewUnstartedServer(localruntime.New(envEntry(time.Now), localruntime.Options{LogDir: t.TempDir(), OnLog: f.logs.add}))
	f.ingress.Start()
	t.Cleanup(f.ingress.Close)
	for k, v := range map[string]string{
		"SEAL_KEYS":                    testSealKeys,
		"APPWRITE_WEBHOOK_SECRET_KEYS": testSigKeys,
		"MCP_EVENTS_INGRESS_URL":       f.ingress.URL,
		"SAFEHTTP_ALLOW":               "127.0.0.0/8",
		"SAFEHTTP_CA_FILE":             caFile,
		"INGRESS_BUDGET_MS":            "3000",
	} {
		t.Setenv(k, v)
	}
	ring, err := seal.ParseKeyring(testSealKeys)
	if err != nil {
		t.Fatal(err)
	}
	budget := seal.DefaultBudget()
	budget.URL = seal.URLBudget(f.ingress.URL + "/appwrite/webhooks/" + strings.Repeat("x", 36))
	if f.sealer, err = seal.NewSealer(ring, budget); err != nil {
		t.Fatal(err)
	}
	if f.sigKeys, err = appwritesig.ParseKeys(testSigKeys); err != nil {
		t.Fatal(err)
	}
	return f
}

// subscription is what mcp-events stores in the Appwrite webhook.
type subscription struct {
	id, user, pass, tail, secret string
	events                       []string
}

func (f *fixture) subscribe(id, event string, args map[string]string, expiry time.Time) subscription {
	return f.subscribeTo(id, event, args, expiry, f.receiver.URL())
}

// subscribeTo seals as mcp-events does.
func (f *fixture) subscribeTo(id, event string, args map[string]string, expiry time.Time, callback string) subscription {
	f.t.Helper()
	secret, _ := stdwebhooks.ParseSecret(subSecret)
	sub := seal.Subscription{
		CallbackURL: callback, Secret: secret, Event: event, Args: seal.ArgsOf(args),
		ProjectID: projectID, Expiry: expiry, VerifiedAt: time.Now(),
	}
	fields, err := f.sealer.Seal(id, sub)
	if err != nil {
		f.t.Fatal(err)
	}
	whSecret, err := f.sigKeys.Secret(id)
	if err != nil {
		f.t.Fatal(err)
	}
	e, _ := eventcatalog.Lookup(event)
	return subscription{id: id, user: fields.Username, pass: fields.Password, tail: fields.URLTail, secret: whSecret, events: e.AppwriteEvents(args)}
}

// delivery is one POST of Appwrite's webhook worker (src/Appwrite/Platform/Workers/Webhooks.php).
type delivery struct {
	path, webhookID, project, events, deliveryID, user, pass, signature string
	body                                                                []byte
}

func (f *fixture) appwriteDelivery(s subscription, events []string, body string) delivery {
	path := "/appwrite/webhooks/" + s.id
	if s.tail != "" {
		path += "/" + s.tail
	}
	url := f.ingress.URL + path
	mac := hmac.New(sha1.New, []byte(s.secret))
	mac.Write([]byte(url + body))
	return delivery{
		path: path, webhookID: s.id, project: projectID, events: strings.Join(events, ","),
		user: s.user, pass: s.pass, signature: base64.StdEncoding.EncodeToString(mac.Sum(nil)), body: []byte(body),
	}
}

type answer struct {
	Status                 int
	Outcome, Error, Reason string
	EventID                string
	Attempts               int
}

func (f *fixture) send(d delivery) answer {
	f.t.Helper()
	req, _ := http.NewRequest("POST", f.ingress.URL+d.path, bytes.NewReader(d.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Appwrite-Server v1.9.6. Please report abuse at security@appwrite.io")
	req.Header.Set("X-Appwrite-Webhook-Id", d.webhookID)
	req.Header.Set("X-Appwrite-Webhook-Events", d.events)
	req.Header.Set("X-Appwrite-Webhook-Name", "row.created → receiver")
	req.Header.Set("X-Appwrite-Webhook-User-Id", "")
	req.Header.Set("X-Appwrite-Webhook-Project-Id", d.project)
	req.Header.Set("X-Appwrite-Webhook-Signature", d.signature)
	if d.deliveryID != "" {
		req.Header.Set("X-Appwrite-Webhook-Delivery-Id", d.deliveryID)
	}
	if d.user != "" || d.pass != "" {
		req.SetBasicAuth(d.user, d.pass)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var a struct {
		Status, Error, Reason, EventID string
		Attempts                       int
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		f.t.Fatalf("answer is not JSON: %d %q", res.StatusCode, raw)
	}
	return answer{Status: res.StatusCode, Outcome: a.Status, Error: a.Error, Reason: a.Reason, EventID: a.EventID, Attempts: a.Attempts}
}

var rowArgs = map[string]string{"database_id": "db1", "table_id": "tickets"}

func rowEvents(table, row, action string) []string {
	return []string{
		"databases.db1.tables." + table + ".rows." + row + "." + action,
		"databases.db1.tables." + table + ".rows.*." + action,
		"databases.db1.tables.*.rows.*." + action,
		"databases.*.tables.*.rows.*." + action,
		"databases.db1.collections." + table + ".documents." + row + "." + action,
	}
}

func rowBody(table, row, updated string) string {
	return `{"$id":"` + row + `","$sequence":1,"$tableId":"` + table + `","$databaseId":"db1","$createdAt":"2026-12-01T10:00:00.000+00:00","$updatedAt":"` + updated + `","$permissions":[],"title":"printer on fire","email":"someone@example.com"}`
}

func TestDeliversExactlyOneVerifiedProjectedEvent(t *testing.T) {
	f := newFixture(t)
	s := f.subscribe("sub-rows-1", "row.created", rowArgs, time.Now().Add(time.Hour))
	a := f.send(f.appwriteDelivery(s, rowEvents("tickets", "r1", "create"), rowBody("tickets", "r1", "2026-12-01T10:00:00.000+00:00")))
	if a.Status != 200 || a.Outcome != "delivered" || a.Attempts != 1 {
		t.Fatalf("%+v", a)
	}
	events := f.receiver.Events()
	if len(events) != 1 || len(f.receiver.Deliveries()) != 1 {
		t.Fatalf("got %d events, %d deliveries", len(events), len(f.receiver.Deliveries()))
	}
	d := events[0]
	if !d.Verified {
		t.Fatalf("standard-webhooks rejected the signature: %s", d.VerifyErr)
	}
	if d.Header.Get("X-MCP-Subscription-Id") != s.id || d.Header.Get("webhook-id") != a.EventID {
		t.Fatalf("headers %v", d.Header)
	}
	// Only the subscriber's status is used: the ingress does not ask for a compressed answer.
	if _, asked := d.Header["Accept-Encoding"]; asked || d.Header.Get("User-Agent") != "appwrite-mcp-events/1" {
		t.Fatalf("headers %v", d.Header)
	}
	occ, err := d.Event()
	if err != nil || occ.Name != "row.created" || occ.EventID != a.EventID || occ.Timestamp == "" {
		t.Fatalf("%+v %v", occ, err)
	}
	checkPayloadSchema(t, "row.created", occ.Data)
	if occ.Data["row_id"] != "r1" || occ.Data["table_id"] != "tickets" || occ.Data["project_id"] != projectID {
		t.Fatalf("data %v", occ.Data)
	}
	if strings.Contains(string(d.Body), "printer") || strings.Contains(string(d.Body), "example.com") {
		t.Fatalf("row columns leaked: %s", d.Body)
	}
	if f.logs.count(`"metric":"mcp_events_deliveries_total"`) == 0 || f.logs.count(`"outcome":"delivered"`) != 1 {
		t.Fatalf("no delivery counter in the logs: %v", f.logs.lines)
	}
}

// checkPayloadSchema checks data against the event's payloadSchema: known keys only, required ones present,
// each of the declared JSON type.
func checkPayloadSchema(t *testing.T, event string, data map[string]any) {
	t.Helper()
	e, _ := eventcatalog.Lookup(event)
	raw, _ := json.Marshal(e.PayloadSchema())
	var schema struct {
		Properties map[string]struct{ Type string } `json:"properties"`
		Required   []string                         `json:"required"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	for k, v := range data {
		p, ok := schema.Properties[k]
		if !ok {
			t.Errorf("data.%s is not in payloadSchema", k)
			continue
		}
		ok = false
		switch v.(type) {
		case string:
			ok = p.Type == "string"
		case float64:
			ok = p.Type == "number" || p.Type == "integer"
		case bool:
			ok = p.Type == "boolean"
		case []any:
			ok = p.Type == "array"
		}
		if !ok {
			t.Errorf("data.%s = %v is not a %s", k, v, p.Type)
		}
	}
	for _, k := range schema.Required {
		if _, ok := data[k]; !ok {
			t.Errorf("data.%s is required", k)
		}
	}
}

func TestNonMatchingChangesDeliverNothing(t *testing.T) {
	f := newFixture(t)
	s := f.subscribe("sub-rows-2", "row.created", rowArgs, time.Now().Add(time.Hour))
	// Events of another table or action (Appwrite never sends them to this webhook: a replayed delivery
	// with its events header rewritten): the envelope is bound to its event and ids and does not open.
	for _, d := range []delivery{
		f.appwriteDelivery(s, rowEvents("other", "r1", "create"), rowBody("other", "r1", "2026-12-01T10:00:00.000+00:00")),
		f.appwriteDelivery(s, rowEvents("tickets", "r1", "update"), rowBody("tickets", "r1", "2026-12-01T10:00:00.000+00:00")),
	} {
		if a := f.send(d); a.Status != 401 || a.Error != "subscription_rejected" {
			t.Fatalf("%+v", a)
		}
	}
	// The events match, the payload is another table's: filtered.
	if a := f.send(f.appwriteDelivery(s, rowEvents("tickets", "r1", "create"), rowBody("other", "r1", "2026-12-01T10:00:00.000+00:00"))); a.Status != 200 || a.Outcome != "ignored" {
		t.Fatalf("%+v", a)
	}
	fs := f.subscribe("sub-exec-1", "execution.failed", map[string]string{"function_id": "fn1"}, time.Now().Add(time.Hour))
	completed := `{"$id":"e1","functionId":"fn1","status":"completed","$updatedAt":"2026-12-01T10:00:00.000+00:00"}`
	if a := f.send(f.appwriteDelivery(fs, []string{"functions.fn1.executions.e1.update"}, completed)); a.Outcome != "ignored" {
		t.Fatalf("completed execution: %+v", a)
	}
	failed := `{"$id":"e2","functionId":"fn1","status":"failed","responseStatusCode":500,"logs":"secret","$updatedAt":"2026-12-01T10:00:00.000+00:00"}`
	if a := f.send(f.appwriteDelivery(fs, []string{"functions.fn1.executions.e2.update"}, failed)); a.Outcome != "delivered" {
		t.Fatalf("failed execution: %+v", a)
	}
	if n := len(f.receiver.Deliveries()); n != 1 {
		t.Fatalf("receiver got %d requests, want 1", n)
	}
	occ, _ := f.receiver.Events()[0].Event()
	checkPayloadSchema(t, "execution.failed", occ.Data)
}

func TestAppwriteResendsKeepTheEventID(t *testing.T) {
	f := newFixture(t)
	s := f.subscribe("sub-rows-3", "row.updated", rowArgs, time.Now().Add(time.Hour))
	d := f.appwriteDelivery(s, rowEvents("tickets", "r9", "update"), rowBody("tickets", "r9", "2026-12-01T11:00:00.000+00:00"))
	first, again := f.send(d), f.send(d)
	if first.EventID == "" || first.EventID != again.EventID {
		t.Fatalf("event ids %q %q", first.EventID, again.EventID)
	}
	next := f.appwriteDelivery(s, rowEvents("tickets", "r9", "update"), rowBody("tickets", "r9", "2026-12-01T11:00:05.000+00:00"))
	if a := f.send(next); a.EventID == first.EventID {
		t.Fatal("a later change of the same row got the same event id")
	}
	// A captured genuine request replayed with made-up X-Appwrite-Webhook-Delivery-Id values (a header Appwrite
	// does not sign; only Appwrite Cloud is said to send one) keeps the original's eventId, so the subscriber's
	// deduplication drops it.
	for _, made := range []string{"dlv-1", "dlv-2", "attacker-chosen-" + strings.Repeat("x", 40)} {
		d.deliveryID = made
		if r := f.send(d); r.EventID != first.EventID {
			t.Fatalf("replay with delivery id %q: eventId %q, want the original %q", made, r.EventID, first.EventID)
		}
	}
	z := again
	ids := []string{}
	for _, e := range f.receiver.Events() {
		ids = append(ids, e.Header.Get("webhook-id"))
	}
	if !slices.Contains(ids, first.EventID) || !slices.Contains(ids, z.EventID) {
		t.Fatalf("receiver saw %v", ids)
	}
}

func TestForgedAndTamperedRequestsDeliverNothing(t *testing.T) {
	f := newFixture(t)
	s := f.subscribe("sub-rows-4", "row.created", rowArgs, time.Now().Add(time.Hour))
	other := f.subscribe("sub-rows-5", "row.created", rowArgs, time.Now().Add(time.Hour))
	good := f.appwriteDelivery(s, rowEvents("tickets", "r1", "create"), rowBody("tickets", "r1", "2026-12-01T10:00:00.000+00:00"))

	cases := map[string]func(d *delivery) (int, string){
		"forged signature": func(d *delivery) (int, string) {
			d.signature = base64.StdEncoding.EncodeToString(make([]byte, 20))
			return 401, "bad_signature"
		},
		"no signature": func(d *delivery) (int, string) { d.signature = ""; return 401, "bad_signature" },
		"tampered body": func(d *delivery) (int, string) {
			d.body = bytes.Replace(d.body, []byte("r1"), []byte("r2"), 1)
			return 401, "bad_signature"
		},
		"replayed to another id": func(d *delivery) (int, string) {
			d.path = "/appwrite/webhooks/" + other.id
			d.webhookID = other.id
			return 401, "bad_signature"
		},
		"header id mismatch": func(d *delivery) (int, string) { d.webhookID = other.id; return 401, "webhook_id_mismatch" },
		"wrong project":      func(d *delivery) (int, string) { d.project = "proj2"; return 401, "subscription_rejected" },
		"no basic auth":      func(d *delivery) (int, string) { d.user, d.pass = "", ""; return 401, "missing_subscription" },
		"swapped envelope": func(d *delivery) (int, string) {
			d.user, d.pass = other.user, other.pass
			return 401, "subscription_rejected"
		},
		"tampered envelope": func(d *delivery) (int, string) { d.user = flip(d.user); return 401, "subscription_rejected" },
		"bad path":          func(d *delivery) (int, string) { d.path = "/appwrite/webhooks/_bad"; return 404, "not_found" },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			d := good
			d.body = append([]byte(nil), good.body...)
			status, code := mutate(&d)
			if a := f.send(d); a.Status != status || a.Error != code {
				t.Fatalf("got %d %q, want %d %q", a.Status, a.Error, status, code)
			}
		})
	}
	if n := len(f.receiver.Deliveries()); n != 0 {
		t.Fatalf("receiver got %d requests", n)
	}
	if f.logs.count(`"outcome":"rejected"`) != len(cases) {
		t.Fatalf("rejections counted %d times, want %d", f.logs.count(`"outcome":"rejected"`), len(cases))
	}
}

func flip(s string) string {
	b := []byte(s)
	if b[5] == 'A' {
		b[5] = 'B'
	} else {
		b[5] = 'A'
	}
	return string(b)
}

func TestExpiredSubscriptionDeliversNothing(t *testing.T) {
	f := newFixture(t)
	s := f.subscribe("sub-rows-6", "row.created", rowArgs, time.Now().Add(-time.Second))
	a := f.send(f.appwriteDelivery(s, rowEvents("tickets", "r1", "create"), rowBody("tickets", "r1", "2026-12-01T10:00:00.000+00:00")))
	// Genuine but expired: 2xx (counted, dropped), never a failure Appwrite would count towards pausing the
	// webhook and emailing the team.
	if a.Status != 200 || a.Outcome != "ignored" || a.Reason != "subscription_expired" || len(f.receiver.Deliveries()) != 0 {
		t.Fatalf("%+v", a)
	}
}

func TestRetriesThenSucceedsAndNeverFailsAppwrite(t *testing.T) {
	f := newFixture(t)
	s := f.subscribe("sub-rows-7", "row.created", rowArgs, time.Now().Add(time.Hour))
	d := f.appwriteDelivery(s, rowEvents("tickets", "r1", "create"), rowBody("tickets", "r1", "2026-12-01T10:00:00.000+00:00"))

	f.receiver.SetBehaviour(func(n int, _ webhookreceiver.Delivery) (int, time.Duration) {
		if n <= 2 {
			return 500, 0
		}
		return 0, 0
	})
	if a := f.send(d); a.Status != 200 || a.Outcome != "delivered" || a.Attempts != 3 {
		t.Fatalf("%+v", a)
	}
	if len(f.receiver.Events()) != 1 || f.logs.count(`"outcome":"retried"`) != 1 {
		t.Fatalf("events %d, retried counted %d", len(f.receiver.Events()), f.logs.count(`"outcome":"retried"`))
	}
	for _, got := range f.receiver.Deliveries() {
		if !got.Verified {
			t.Fatalf("attempt not verified: %s", got.VerifyErr)
		}
	}

	for _, status := range []int{410, 413} {
		before := len(f.receiver.Deliveries())
		f.receiver.SetBehaviour(func(int, webhookreceiver.Delivery) (int, time.Duration) { return status, 0 })
		if a := f.send(d); a.Status != 200 || a.Outcome != "abandoned" || a.Attempts != 1 {
			t.Fatalf("%d: %+v", status, a)
		}
		if got := len(f.receiver.Deliveries()) - before; got != 1 {
			t.Fatalf("%d was retried: %d requests", status, got)
		}
	}

	// A subscriber that never answers costs at most the budget (300 ms here, which is also the attempt
	// timeout), and Appwrite still gets a 2xx. Without the right to create executions, the delivery is
	// abandoned (and counted). The receiver holds the request until it closes, so the only possible end of
	// the attempt is the ingress's own deadline.
	t.Setenv("INGRESS_BUDGET_MS", "300")
	held := f.receiver.Hang()
	start := time.Now()
	a := f.send(d)
	if a.Status != 200 || a.Outcome != "abandoned" || a.Reason != "timeout" || a.Attempts != 1 || held() > 1 {
		t.Fatalf("hanging subscriber: %+v, %d requests held", a, held())
	}
	// A safety net only: the point is that the subscriber's silence does not hold the ingress for a minute.
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("hanging subscriber held the ingress for %v", took)
	}
}

func TestDelayedRetriesThroughAppwriteExecutions(t *testing.T) {
	f := newFixture(t)
	// The function's own project on Appwrite: createExecution records the delayed job.
	var mu sync.Mutex
	var jobs []map[string]any
	var keys []string
	appwrite := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/functions/webhook-ingress/executions" || r.Header.Get("X-Appwrite-Project") != "ours" {
			w.WriteHeader(404)
			return
		}
		var p map[string]any
		_ = json.NewDecoder(r.Body).Decode(&p)
		mu.Lock()
		jobs = append(jobs, p)
		keys = append(keys, r.Header.Get("X-Appwrite-Key"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(202)
		_, _ = w.Write([]byte(`{"$id":"exec1","status":"scheduled"}`))
	}))
	defer appwrite.Close()
	t.Setenv("APPWRITE_FUNCTION_API_ENDPOINT", appwrite.URL+"/v1")
	t.Setenv("APPWRITE_FUNCTION_PROJECT_ID", "ours")
	t.Setenv("APPWRITE_FUNCTION_ID", "webhook-ingress")
	t.Setenv("INGRESS_BUDGET_MS", "300")
	t.Setenv("INGRESS_MAX_ATTEMPTS", "2")

	s := f.subscribe("sub-rows-8", "row.created", rowArgs, time.Now().Add(time.Hour))
	d := f.appwriteDelivery(s, rowEvents("tickets", "r1", "create"), rowBody("tickets", "r1", "2026-12-01T10:00:00.000+00:00"))
	f.receiver.SetBehaviour(func(int, webhookreceiver.Delivery) (int, time.Duration) { return 503, 0 })

	// Without the dynamic key the ingress cannot schedule: abandoned, counted as schedule_failed in a
	// valid counter line, with the reason in the error log.
	if a := f.send(d); a.Outcome != "abandoned" {
		t.Fatalf("no key: %+v", a)
	}
	if f.logs.count(`{"metric":"mcp_events_deliveries_total","event":"row.created","outcome":"schedule_failed","reason":"http_5xx","inc":1}`) != 1 {
		t.Fatalf("schedule_failed counter line missing: %q", f.logs.logs)
	}
	f.logs.checkCounterLines(t)
	if f.logs.count("scheduling the delayed retry of event") != 1 || !slices.ContainsFunc(f.logs.errs, func(l string) bool { return strings.Contains(l, ingress.ErrCannotSchedule.Error()) }) {
		t.Fatalf("the error log does not say why: %q", f.logs.errs)
	}
	a := sendWithKey(t, f, d, "dynamic_testkey")
	if a.Status != 200 || a.Outcome != "scheduled" || len(jobs) != 1 || keys[0] != "dynamic_testkey" {
		t.Fatalf("%+v jobs=%d", a, len(jobs))
	}
	job := jobs[0]
	at, err := time.Parse("2006-01-02T15:04:05.000+00:00", job["scheduledAt"].(string))
	if err != nil || at.Before(time.Now().Add(time.Minute-time.Second)) || at.Second() != 0 || job["async"] != true || job["path"] != "/jobs/retry" {
		t.Fatalf("job %v (%v)", job, err)
	}
	sealed := job["body"].(string)
	// The job is sealed: neither its JSON nor the subscriber's address shows, in plain or base64 form.
	for _, plain := range []string{`"eventId"`, a.EventID, f.receiver.URL()} {
		for _, form := range []string{plain, base64.RawURLEncoding.EncodeToString([]byte(plain)), base64.StdEncoding.EncodeToString([]byte(plain))} {
			if strings.Contains(sealed, form) {
				t.Fatalf("the job shows %q", plain)
			}
		}
	}

	// The delayed execution runs: the subscriber has recovered, the event arrives once, same eventId. Its
	// budget is a real one (300 ms, enough to give up on a 503 quickly, is not enough for a TLS delivery on two
	// loaded cores under -race: the attempt then timed out and the job was abandoned).
	t.Setenv("INGRESS_BUDGET_MS", "5000")
	f.receiver.SetBehaviour(nil)
	before := len(f.receiver.Events())
	r := postJob(t, f, sealed)
	if r.Outcome != "delivered" || r.EventID != a.EventID || len(f.receiver.Events()) != before+1 {
		t.Fatalf("job run: %+v", r)
	}
	if last := f.receiver.Events()[len(f.receiver.Events())-1]; !last.Verified || last.Header.Get("webhook-id") != a.EventID {
		t.Fatalf("retried event: %+v", last)
	}
	// A forged or tampered job is refused.
	if r := postJob(t, f, flip(sealed)); r.Status != 401 || r.Error != "bad_job" {
		t.Fatalf("tampered job: %+v", r)
	}
	if r := postJob(t, f, "not-a-job"); r.Status != 401 {
		t.Fatalf("forged job: %+v", r)
	}
}

func sendWithKey(t *testing.T, f *fixture, d delivery, key string) answer {
	t.Helper()
	// The runtime merges OPEN_RUNTIMES_HEADERS; a second server injects the key like the executor does.
	srv := httptest.NewServer(localruntime.New(envEntry(time.Now), localruntime.Options{LogDir: t.TempDir(), Headers: map[string]string{"x-appwrite-key": key}}))
	defer srv.Close()
	g := *f
	g.ingress = &httptest.Server{URL: srv.URL}
	// The signature covers the stored URL (MCP_EVENTS_INGRESS_URL), not the address reached, so it still verifies.
	return g.send(d)
}

func postJob(t *testing.T, f *fixture, body string) answer {
	t.Helper()
	res, err := http.Post(f.ingress.URL+"/jobs/retry", "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var a struct {
		Status, Error, Reason, EventID string
		Attempts                       int
	}
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("%d %q", res.StatusCode, raw)
	}
	return answer{Status: res.StatusCode, Outcome: a.Status, Error: a.Error, EventID: a.EventID, Attempts: a.Attempts}
}

func TestTwoInstancesAndARestartLoseNothing(t *testing.T) {
	f := newFixture(t)
	s := f.subscribe("sub-rows-9", "row.created", rowArgs, time.Now().Add(time.Hour))
	second := httptest.NewServer(localruntime.New(envEntry(time.Now), localruntime.Options{LogDir: t.TempDir()}))
	defer second.Close()
	first := f.ingress
	for i, srv := range []*httptest.Server{first, second, first, second} {
		if i == 2 {
			// "Restart" the first instance: a new process with the same configuration.
			first.Close()
			first = httptest.NewServer(localruntime.New(envEntry(time.Now), localruntime.Options{LogDir: t.TempDir()}))
			defer first.Close()
			srv = first
		}
		g := *f
		g.ingress = &httptest.Server{URL: srv.URL}
		row := "r" + string(rune('a'+i))
		d := f.appwriteDelivery(s, rowEvents("tickets", row, "create"), rowBody("tickets", row, "2026-12-01T10:00:00.000+00:00"))
		if a := g.send(d); a.Outcome != "delivered" {
			t.Fatalf("instance %d: %+v", i, a)
		}
	}
	if n := len(f.receiver.Events()); n != 4 {
		t.Fatalf("receiver got %d events, want 4", n)
	}
}

// TestNotConfiguredIsAClearJSON503: without sealing keys, or with keys that are weak or malformed (short, all
// zeros, a repeated pattern, not base64, without an id, an id twice), the ingress serves nothing: every
// webhook is answered a JSON 503 not_configured, and the log names SEAL_KEYS (a function cannot refuse to
// start: the runtime starts it, and each request finds the configuration unusable).
func TestNotConfiguredIsAClearJSON503(t *testing.T) {
	f := newFixture(t)
	key := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	good := key([]byte("0123456789abcdefghijklmnopqrstuv"))
	for name, keys := range map[string]string{
		"missing":    "",
		"short":      "k1:" + key([]byte("0123456789abcdef")),
		"zeros":      "k1:" + key(make([]byte, 32)),
		"repeated":   "k1:" + key(bytes.Repeat([]byte("ab"), 16)),
		"not base64": "k1:not base64!",
		"no id":      good,
		"id twice":   "k1:" + good + ",k1:" + key([]byte("vutsrqponmlkjihgfedcba9876543210")),
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("SEAL_KEYS", keys)
			before := f.logs.count("SEAL_KEYS")
			res, err := http.Post(f.ingress.URL+"/appwrite/webhooks/x", "application/json", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			if res.StatusCode != 503 || !strings.Contains(string(raw), "not_configured") {
				t.Fatalf("%d %s", res.StatusCode, raw)
			}
			if f.logs.count("SEAL_KEYS") == before {
				t.Fatal("the log does not say which setting is wrong")
			}
		})
	}
}

// TestDeliveryBudgetFitsTheExecution: INGRESS_BUDGET_MS is accepted up to the execution's 12 s cut less
// what scheduling a retry needs, and refused one millisecond above, with the bounds in the log.
func TestDeliveryBudgetFitsTheExecution(t *testing.T) {
	if got := time.Duration(ingress.MaxBudgetMS)*time.Millisecond + ingress.ScheduleReserve; got != ingress.ExecutionTimeout {
		t.Fatalf("max budget + schedule reserve = %v, execution timeout %v", got, ingress.ExecutionTimeout)
	}
	f := newFixture(t)
	post := func() int {
		t.Helper()
		res, err := http.Post(f.ingress.URL+"/appwrite/webhooks/x", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	t.Setenv("INGRESS_BUDGET_MS", strconv.Itoa(ingress.MaxBudgetMS))
	if code := post(); code == http.StatusServiceUnavailable {
		t.Fatalf("INGRESS_BUDGET_MS=%d refused", ingress.MaxBudgetMS)
	}
	cfg, err := ingress.LoadConfig()
	if err != nil || cfg.Policy.Budget != 10*time.Second {
		t.Fatalf("budget %v, %v", cfg.Policy.Budget, err)
	}
	// The client's timeouts are one attempt's (each attempt has that deadline anyway), and with its header
	// timeout no shorter than its total one, safehttp sets no header timer.
	if a := cfg.Policy.AttemptTimeout; a <= 0 || cfg.HTTP.TotalTimeout != a || cfg.HTTP.HeaderTimeout != a || !cfg.HTTP.DisableCompression {
		t.Fatalf("attempt timeout %v, client %+v", a, cfg.HTTP)
	}
	t.Setenv("INGRESS_BUDGET_MS", "1500")
	if cfg, err = ingress.LoadConfig(); err != nil || cfg.Policy.AttemptTimeout != 1500*time.Millisecond || cfg.HTTP.TotalTimeout != 1500*time.Millisecond {
		t.Fatalf("a budget under the attempt timeout: attempt %v, client total %v, %v", cfg.Policy.AttemptTimeout, cfg.HTTP.TotalTimeout, err)
	}
	t.Setenv("INGRESS_BUDGET_MS", strconv.Itoa(ingress.MaxBudgetMS))
	t.Setenv("INGRESS_BUDGET_MS", strconv.Itoa(ingress.MaxBudgetMS+1))
	if code := post(); code != http.StatusServiceUnavailable {
		t.Fatalf("INGRESS_BUDGET_MS=%d: status %d, want 503", ingress.MaxBudgetMS+1, code)
	}
	if f.logs.count("INGRESS_BUDGET_MS must be an integer from 100 to 10000") == 0 {
		t.Fatal("the log does not give the accepted range")
	}
}

// TestPercentInTheIngressURLIsRefused: Appwrite 1.9.6 and earlier sign rawurldecode(url), later versions the
// stored url, so a webhook URL with a "%" would fail verification on one of them: the ingress refuses such a
// configuration, naming it.
func TestPercentInTheIngressURLIsRefused(t *testing.T) {
	newFixture(t)
	t.Setenv("MCP_EVENTS_INGRESS_URL", "https://ingress.example.com/a%20b")
	if _, err := ingress.LoadConfig(); err == nil || !strings.Contains(err.Error(), "MCP_EVENTS_INGRESS_URL must not hold a %") {
		t.Fatalf("%v", err)
	}
}
