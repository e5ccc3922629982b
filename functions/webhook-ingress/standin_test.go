package handler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"appwrite-agent/shared/appwritesig"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/testclock"
	"appwrite-agent/shared/devkit/webhookreceiver"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/seal"
	"appwrite-agent/shared/stdwebhooks"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/functions"
	"github.com/appwrite/sdk-for-go/id"
	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

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

// profile is the stand-in profile of this pass over the package's tests: TestMain runs every test against
// Appwrite Cloud's behaviour and against the open-source server's.
var profile localappwrite.Profile

func TestMain(m *testing.M) {
	os.Exit(localappwrite.EachProfile(m, func(p localappwrite.Profile) { profile = p }))
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
