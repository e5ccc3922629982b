package handler_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/functions"
	"github.com/appwrite/sdk-for-go/id"
	"github.com/open-runtimes/types-for-go/v4/openruntimes"

	"appwrite-agent/functions/webhook-ingress/ingress"
	"appwrite-agent/shared/appwritesig"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/testclock"
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

// resign makes d's signature valid for its (altered) path, as only someone holding the webhook's signing
// secret could: what remains is the envelope's own protection.
func (f *fixture) resign(d delivery, s subscription) delivery {
	mac := hmac.New(sha1.New, []byte(s.secret))
	mac.Write([]byte(f.ingress.URL + d.path))
	mac.Write(d.body)
	d.signature = base64.StdEncoding.EncodeToString(mac.Sum(nil))
	return d
}

// longCallback spreads an envelope over authUsername, authPassword and the webhook URL.
func (f *fixture) longCallback() string { return f.receiver.URL() + "/" + strings.Repeat("c", 220) }

// TestEnvelopeInFieldsOrURLDelivers: a subscription whose envelope fits in authUsername and authPassword
// and one with part of its envelope in the webhook URL both deliver verified events.
func TestEnvelopeInFieldsOrURLDelivers(t *testing.T) {
	f := newFixture(t)
	short := f.subscribeTo("sub-fields", "row.created", rowArgs, time.Now().Add(time.Hour), f.receiver.URL())
	long := f.subscribeTo("sub-url", "row.created", rowArgs, time.Now().Add(time.Hour), f.longCallback())
	if short.tail != "" || long.tail == "" {
		t.Fatalf("setup: short tail %q, long tail %q", short.tail, long.tail)
	}
	for i, s := range []subscription{short, long} {
		a := f.send(f.appwriteDelivery(s, rowEvents("tickets", "r1", "create"), rowBody("tickets", "r1", "2026-12-01T10:00:00.000+00:00")))
		if a.Status != 200 || a.Outcome != "delivered" {
			t.Fatalf("%s: %+v", s.id, a)
		}
		evs := f.receiver.Events()
		if len(evs) != i+1 || !evs[i].Verified || evs[i].Header.Get("X-MCP-Subscription-Id") != s.id {
			t.Fatalf("%s: %+v", s.id, evs)
		}
	}
}

// TestSealedURLPartTampering: the sealed part of the URL is covered twice, by Appwrite's signature and by
// the envelope; changed, moved, removed or swapped (even with a valid Appwrite signature), nothing is
// delivered.
func TestSealedURLPartTampering(t *testing.T) {
	f := newFixture(t)
	s := f.subscribeTo("sub-tail-1", "row.created", rowArgs, time.Now().Add(time.Hour), f.longCallback())
	other := f.subscribeTo("sub-tail-2", "row.created", rowArgs, time.Now().Add(time.Hour), f.longCallback()+"x")
	events := rowEvents("tickets", "r1", "create")
	body := rowBody("tickets", "r1", "2026-12-01T10:00:00.000+00:00")
	base := f.appwriteDelivery(s, events, body)
	prefix := "/appwrite/webhooks/" + s.id

	// Not re-signed: Appwrite's signature over the URL fails.
	d := base
	d.path = prefix + "/" + strings.Replace(s.tail, s.tail[:1], flipChar(s.tail[:1]), 1)
	if a := f.send(d); a.Status != 401 || a.Error != "bad_signature" {
		t.Fatalf("unsigned change: %+v", a)
	}
	// Every single-bit flip of every character of the sealed part, re-signed.
	for i := range len(s.tail) {
		for bit := range 7 {
			b := []byte(s.tail)
			b[i] ^= 1 << bit
			if c := b[i]; c <= ' ' || c >= 0x7f || strings.IndexByte("/?#%\"<>\\^`{|}", c) >= 0 {
				continue // not a character of a URL path Appwrite would store and send unchanged
			}
			d := base
			d.path = prefix + "/" + string(b)
			if a := f.send(f.resign(d, s)); a.Status == 200 {
				t.Fatalf("char %d bit %d: %+v", i, bit, a)
			}
		}
	}
	for name, path := range map[string]string{
		"removed":                   prefix,
		"from another subscription": prefix + "/" + other.tail,
		"swapped with the password": prefix + "/" + s.pass,
		"percent-encoded":           prefix + "/%41" + s.tail[1:],
		"empty":                     prefix + "/",
		"one more segment":          prefix + "/" + s.tail + "/x",
	} {
		d := base
		d.path = path
		if a := f.send(f.resign(d, s)); a.Status == 200 {
			t.Errorf("%s: %+v", name, a)
		}
	}
	d = base
	d.pass = s.tail
	d.path = prefix + "/" + s.pass
	if a := f.send(f.resign(d, s)); a.Status == 200 {
		t.Errorf("password and URL part swapped: %+v", a)
	}
	if a := f.send(base); a.Status != 200 || a.Outcome != "delivered" {
		t.Fatalf("the untouched delivery: %+v", a)
	}
	if n := len(f.receiver.Events()); n != 1 {
		t.Fatalf("%d events delivered, want 1", n)
	}
}

func flipChar(c string) string {
	if c == "A" {
		return "B"
	}
	return "A"
}

// stack is the ingress deployed as a function of our own project on the local Appwrite stand-in, a user's
// project with a table, and a subscriber.
type stack struct {
	t        *testing.T
	aw       *localappwrite.Server
	api      *httptest.Server
	receiver *webhookreceiver.Receiver
	userKey  string
	ingress  string // the ingress function domain
	// clock is the ingress's clock, the wall clock moved forward by what the test says, so a test can run a
	// retry scheduled minutes ahead without waiting for it.
	clock *testclock.Clock
}

func newStack(t *testing.T, opts localappwrite.Options) *stack {
	t.Helper()
	opts.Profile, opts.WebhookLimit = profile, -1
	st := &stack{t: t, receiver: webhookreceiver.New(subSecret), clock: testclock.Wall()}
	t.Cleanup(st.receiver.Close)
	opts.Logf = t.Logf
	// Stand-in-only: the ingress's function domain is on loopback, which real Appwrite refuses (PublicDomain).
	opts.AllowLoopbackWebhookURLs = true
	st.aw = localappwrite.New(opts)
	st.api = httptest.NewServer(st.aw)
	st.aw.SetBaseURL(st.api.URL)
	t.Cleanup(func() { st.api.Close(); _ = st.aw.Close() })

	fn := httptest.NewServer(localruntime.New(envEntry(st.clock.Now), localruntime.Options{Secret: "rt", LogDir: t.TempDir()}))
	t.Cleanup(fn.Close)
	must(t, st.aw.SeedProject(localappwrite.ProjectSpec{ID: "ours"}))
	must(t, st.aw.RegisterFunction("ours", localappwrite.FunctionSpec{ID: "webhook-ingress", URL: fn.URL, Secret: "rt", Scopes: []string{"executions.write"}, Execute: []string{"any"}, Timeout: 60}))
	st.ingress = st.aw.DomainURL("webhook-ingress")

	caFile := filepath.Join(t.TempDir(), "ca.pem")
	must(t, os.WriteFile(caFile, st.receiver.CertPEM(), 0o600))
	for k, v := range map[string]string{
		"SEAL_KEYS": testSealKeys, "APPWRITE_WEBHOOK_SECRET_KEYS": testSigKeys, "MCP_EVENTS_INGRESS_URL": st.ingress,
		"SAFEHTTP_ALLOW": "127.0.0.0/8", "SAFEHTTP_CA_FILE": caFile, "INGRESS_BUDGET_MS": "5000", "INGRESS_MAX_ATTEMPTS": "2",
		"APPWRITE_FUNCTION_API_ENDPOINT": st.api.URL + "/v1", "APPWRITE_FUNCTION_PROJECT_ID": "ours", "APPWRITE_FUNCTION_ID": "webhook-ingress",
	} {
		t.Setenv(k, v)
	}

	must(t, st.aw.SeedProject(localappwrite.ProjectSpec{ID: projectID}))
	must(t, st.aw.SeedDatabase(projectID, localappwrite.DatabaseSpec{ID: "db1", Tables: []localappwrite.TableSpec{{ID: "tickets"}, {ID: "other"}}}))
	key, err := st.aw.CreateKey(projectID, []string{"rows.read", "rows.write", "webhooks.read", "webhooks.write"})
	must(t, err)
	st.userKey = key
	return st
}

func (st *stack) client() client.Client {
	return appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(st.api.URL+"/v1"), appwrite.WithProject(projectID), appwrite.WithKey(st.userKey))
}

// subscribe creates the Appwrite webhook exactly as mcp-events does: deterministic id, ingress URL, derived
// secret, the sealed subscription in Basic auth, narrowed events.
func (st *stack) subscribe(webhookID, event string, args map[string]string, expiry time.Time) {
	st.subscribeTo(webhookID, event, args, expiry, st.receiver.URL())
}

// subscribeTo is subscribe with the callback URL given.
func (st *stack) subscribeTo(webhookID, event string, args map[string]string, expiry time.Time, callback string) {
	st.t.Helper()
	ring, _ := seal.ParseKeyring(testSealKeys)
	budget := seal.DefaultBudget()
	webhookURL := st.ingress + "/appwrite/webhooks/" + webhookID
	budget.URL = seal.URLBudget(webhookURL)
	sealer, _ := seal.NewSealer(ring, budget)
	keys, _ := appwritesig.ParseKeys(testSigKeys)
	secret, _ := stdwebhooks.ParseSecret(subSecret)
	f, err := sealer.Seal(webhookID, seal.Subscription{CallbackURL: callback, Secret: secret, Event: event, Args: seal.ArgsOf(args), ProjectID: projectID, Expiry: expiry, VerifiedAt: time.Now()})
	must(st.t, err)
	whSecret, err := keys.Secret(webhookID)
	must(st.t, err)
	e, _ := eventcatalog.Lookup(event)
	c := st.client()
	if f.URLTail != "" {
		webhookURL += "/" + f.URLTail
	}
	_, err = c.Call("POST", "/webhooks", map[string]any{"content-type": "application/json", "x-appwrite-response-format": "1.9.1"}, map[string]any{
		"webhookId": webhookID, "url": webhookURL, "name": event + " → test receiver",
		"events": e.AppwriteEvents(args), "tls": true, "authUsername": f.Username, "authPassword": f.Password, "secret": whSecret,
	})
	must(st.t, err)
}

func (st *stack) createRow(table string) string {
	st.t.Helper()
	row, err := appwrite.NewTablesDB(st.client()).CreateRow("db1", table, id.Unique(), map[string]any{"title": "printer on fire", "email": "someone@example.com"})
	must(st.t, err)
	return row.Id
}

func (st *stack) flush() {
	st.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	must(st.t, st.aw.Flush(ctx))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestAppwriteWebhookToSubscriberOnTheStandIn: Appwrite's own worker delivers a row change to the ingress
// through its function domain, and the subscriber gets exactly one verified, projected event; a change in
// another table gets nothing; Appwrite re-sending the delivery keeps the eventId. Both as the open-source
// worker (no delivery-id header) and as Appwrite Cloud (an unsigned X-Appwrite-Webhook-Delivery-Id, ignored).
func TestAppwriteWebhookToSubscriberOnTheStandIn(t *testing.T) {
	for _, cloud := range []bool{false, true} {
		t.Run(fmt.Sprintf("deliveryIdHeader=%v", cloud), func(t *testing.T) { webhookToSubscriber(t, cloud) })
	}
}

func webhookToSubscriber(t *testing.T, cloud bool) {
	st := newStack(t, localappwrite.Options{DeliveryIDHeader: cloud})
	st.subscribe("sub-standin-1", eventcatalog.RowCreated, rowArgs, time.Now().Add(time.Hour))

	rowID := st.createRow("tickets")
	st.createRow("other")
	st.flush()

	events := st.receiver.Events()
	if len(events) != 1 || len(st.receiver.Deliveries()) != 1 || !events[0].Verified {
		t.Fatalf("receiver: %d events, %d requests, %+v", len(events), len(st.receiver.Deliveries()), events)
	}
	occ, err := events[0].Event()
	must(t, err)
	if occ.Name != eventcatalog.RowCreated || occ.Data["row_id"] != rowID || occ.Data["table_id"] != "tickets" {
		t.Fatalf("%+v", occ)
	}
	checkPayloadSchema(t, eventcatalog.RowCreated, occ.Data)

	var ours []localappwrite.Delivery
	for _, d := range st.aw.Deliveries() {
		if d.WebhookID == "sub-standin-1" {
			ours = append(ours, d)
		}
	}
	// The webhook's events are narrowed to the table: Appwrite itself does not deliver the other row.
	if len(ours) != 1 {
		t.Fatalf("Appwrite made %d deliveries to the webhook, want 1", len(ours))
	}
	for _, d := range ours {
		if !d.Success {
			t.Fatalf("Appwrite counted a failed delivery: %+v", d.Attempts)
		}
	}
	// Appwrite re-sends the same delivery: the same eventId reaches the subscriber.
	for _, d := range ours {
		must(t, st.aw.Redeliver(d.ID))
	}
	st.flush()
	events = st.receiver.Events()
	if len(events) != 2 || events[1].Header.Get("webhook-id") != events[0].Header.Get("webhook-id") {
		t.Fatalf("after a redelivery: %d events, ids %v", len(events), ids(events))
	}
}

// TestExecutionFailedFiltersOnTheStandIn: Appwrite delivers every execution of the function (it filters by
// event name only); the ingress passes on the failed one alone.
func TestExecutionFailedFiltersOnTheStandIn(t *testing.T) {
	st := newStack(t, localappwrite.Options{})
	okRuntime := httptest.NewServer(localruntime.New(func(rt openruntimes.Context) openruntimes.Response { return rt.Res.Text("fine") }, localruntime.Options{LogDir: t.TempDir()}))
	defer okRuntime.Close()
	must(t, st.aw.RegisterFunction(projectID, localappwrite.FunctionSpec{ID: "resize", URL: okRuntime.URL, Timeout: 15}))
	key, err := st.aw.CreateKey(projectID, []string{"functions.read", "executions.read", "executions.write"})
	must(t, err)
	st.subscribe("sub-standin-3", "execution.failed", map[string]string{"function_id": "resize"}, time.Now().Add(time.Hour))
	fns := functions.New(appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(st.api.URL+"/v1"), appwrite.WithProject(projectID), appwrite.WithKey(key)))

	ok, err := fns.CreateExecution("resize")
	must(t, err)
	must(t, st.aw.SetFunctionFailing(projectID, "resize", true))
	bad, err := fns.CreateExecution("resize")
	must(t, err)
	st.flush()
	if ok.Status != "completed" || bad.Status != "failed" {
		t.Fatalf("executions %s %s", ok.Status, bad.Status)
	}
	events := st.receiver.Events()
	if len(events) != 1 || len(st.receiver.Deliveries()) != 1 {
		t.Fatalf("%d events, %d requests", len(events), len(st.receiver.Deliveries()))
	}
	occ, err := events[0].Event()
	must(t, err)
	if occ.Name != "execution.failed" || occ.Data["execution_id"] != bad.Id || occ.Data["status"] != "failed" {
		t.Fatalf("%+v", occ)
	}
	checkPayloadSchema(t, "execution.failed", occ.Data)
}

func ids(ds []webhookreceiver.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Header.Get("webhook-id"))
	}
	return out
}

// TestDelayedRetryOnTheStandIn: the subscriber is down through the whole budget; the ingress schedules a
// delayed execution of itself with its dynamic key; when it runs, the subscriber has recovered and gets the
// event once, with the same eventId and a fresh signature.
func TestDelayedRetryOnTheStandIn(t *testing.T) {
	st := newStack(t, localappwrite.Options{})
	// A long callback URL: the delayed job carries the sealed URL part and the bound arguments.
	st.subscribeTo("sub-standin-2", "row.created", rowArgs, time.Now().Add(time.Hour), st.receiver.URL()+"/"+strings.Repeat("d", 200))
	st.receiver.SetBehaviour(func(int, webhookreceiver.Delivery) (int, time.Duration) { return 503, 0 })

	st.createRow("tickets")
	st.flush()
	failed := st.receiver.Deliveries()
	if len(failed) != 2 || len(st.receiver.Events()) != 0 {
		t.Fatalf("first execution: %d requests, %d events", len(failed), len(st.receiver.Events()))
	}
	st.receiver.SetBehaviour(nil)
	// The delayed run comes a minute or more later (inside the subscriber's 5-minute timestamp tolerance and
	// the 15-minute retry window): the ingress's clock moves on, so the retry carries a new webhook-timestamp.
	st.clock.Advance(90 * time.Second)
	if n := st.aw.RunScheduled(time.Now().Add(20 * time.Minute)); n != 1 {
		t.Fatalf("%d delayed executions started, want 1", n)
	}
	st.flush()
	events := st.receiver.Events()
	if len(events) != 1 || !events[0].Verified || events[0].Header.Get("webhook-id") != failed[0].Header.Get("webhook-id") {
		t.Fatalf("after the delayed retry: %+v", events)
	}
	if events[0].Header.Get("webhook-signature") == failed[0].Header.Get("webhook-signature") || events[0].Header.Get("webhook-timestamp") == failed[0].Header.Get("webhook-timestamp") {
		t.Fatal("the retry was not signed afresh")
	}
	if n := st.aw.RunScheduled(time.Now().Add(time.Hour)); n != 0 {
		t.Fatalf("another retry was scheduled after success: %d", n)
	}
	var body map[string]any
	must(t, json.Unmarshal(events[0].Body, &body))
	if body["name"] != "row.created" {
		t.Fatalf("%v", body)
	}
}

// sdkTimeout bounds the tests' Appwrite SDK calls: the SDK's 10 s default was exceeded on a loaded machine (load
// average 33) by calls that carry megabytes or run a function. A safety net, not a measure.
const sdkTimeout = 2 * time.Minute

// TestExpiredDeliveriesNeverPauseTheWebhook: Appwrite pauses a webhook after ten failed deliveries in a row
// and emails every member of the project. Ten deliveries to an expired subscription are answered 2xx
// (counted, dropped): the webhook stays enabled with no failed attempt, and the subscriber gets nothing.
func TestExpiredDeliveriesNeverPauseTheWebhook(t *testing.T) {
	st := newStack(t, localappwrite.Options{MaxFailedAttempts: 10})
	st.subscribe("sub-standin-expired", "row.created", rowArgs, time.Now().Add(-time.Minute))
	for range 10 {
		st.createRow("tickets")
	}
	st.flush()
	var n int
	for _, d := range st.aw.Deliveries() {
		if d.WebhookID != "sub-standin-expired" {
			continue
		}
		n++
		if last := d.Attempts[len(d.Attempts)-1]; last.StatusCode != 200 {
			t.Fatalf("delivery answered %d", last.StatusCode)
		}
	}
	wh, ok := st.aw.StoredWebhook(projectID, "sub-standin-expired")
	if n != 10 || !ok || !wh.Enabled || wh.Attempts != 0 {
		t.Fatalf("%d deliveries; webhook %+v", n, wh)
	}
	if got := st.receiver.Deliveries(); len(got) != 0 {
		t.Fatalf("an expired subscription delivered %d requests", len(got))
	}
}

// TestLegacySubscriptionKeepsDelivering: a subscription sealed under the first catalog's name (row.created,
// before the renaming) keeps delivering through Appwrite's worker, under its own name, until it expires.
func TestLegacySubscriptionKeepsDelivering(t *testing.T) {
	st := newStack(t, localappwrite.Options{})
	st.subscribe("sub-standin-legacy", eventcatalog.LegacyRowCreated, rowArgs, time.Now().Add(time.Hour))
	rowID := st.createRow("tickets")
	st.flush()
	events := st.receiver.Events()
	if len(events) != 1 || !events[0].Verified {
		t.Fatalf("%d events", len(events))
	}
	occ, err := events[0].Event()
	must(t, err)
	if occ.Name != "row.created" || occ.Data["row_id"] != rowID {
		t.Fatalf("%+v", occ)
	}
}

// TestSiteDeploymentCompletedOnTheStandIn: a site's build ending fires sites.[siteId].deployments.[id].update
// with the Deployment model; the subscriber of sites.deployment.completed gets the ready and the failed one,
// a subscriber filtering on failed only the failed one, and another site's deployment reaches neither.
func TestSiteDeploymentCompletedOnTheStandIn(t *testing.T) {
	st := newStack(t, localappwrite.Options{})
	must(t, st.aw.SeedSite(projectID, localappwrite.SiteSpec{ID: "landing", Name: "Landing"}))
	must(t, st.aw.SeedSite(projectID, localappwrite.SiteSpec{ID: "docs", Name: "Docs"}))
	st.subscribe("sub-site-all", eventcatalog.SiteDeployment, map[string]string{"site_id": "landing"}, time.Now().Add(time.Hour))
	st.subscribe("sub-site-failed", eventcatalog.SiteDeployment, map[string]string{"site_id": "landing", "status": "failed"}, time.Now().Add(time.Hour))
	ready, err := st.aw.SiteDeploymentDone(projectID, "landing", "ready")
	must(t, err)
	failed, err := st.aw.SiteDeploymentDone(projectID, "landing", "failed")
	must(t, err)
	_, err = st.aw.SiteDeploymentDone(projectID, "docs", "ready")
	must(t, err)
	st.flush()
	got := map[string][]string{}
	for _, ev := range st.receiver.Events() {
		occ, err := ev.Event()
		must(t, err)
		if !ev.Verified || occ.Name != eventcatalog.SiteDeployment || occ.Data["site_id"] != "landing" {
			t.Fatalf("%+v", occ)
		}
		checkPayloadSchema(t, eventcatalog.SiteDeployment, occ.Data)
		sub := ev.Header.Get("X-MCP-Subscription-Id")
		got[sub] = append(got[sub], occ.Data["deployment_id"].(string)+"/"+occ.Data["status"].(string))
	}
	slices.Sort(got["sub-site-all"]) // Appwrite's two workers deliver in either order
	want := []string{ready + "/ready", failed + "/failed"}
	slices.Sort(want)
	if fmt.Sprint(got["sub-site-all"]) != fmt.Sprint(want) || fmt.Sprint(got["sub-site-failed"]) != fmt.Sprint([]string{failed + "/failed"}) {
		t.Fatalf("deliveries: %v", got)
	}
}
