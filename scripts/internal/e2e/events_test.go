// Package e2e runs the product as deployed (staged binaries on the local open-runtimes server, the local
// Appwrite stand-in) and drives it as its users do.
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/stack"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/testclock"
	"appwrite-agent/shared/devkit/webhookreceiver"
	"appwrite-agent/shared/eventsclient"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/id"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

type world struct {
	t   *testing.T
	st  *stack.Stack
	rcv *webhookreceiver.Receiver
	sec string
	mcp *eventsclient.Client
	db  *tablesdb.TablesDB
	// out is the functions' output: each execution's logs, as the runtime hands them over (read it after
	// st.Stop, which waits for the last line).
	out bytes.Buffer
	// clock is the stand-in's clock, the wall clock moved by the test (the functions keep the wall clock).
	clock *testclock.Clock
}

func start(t *testing.T, env map[string][]string) *world {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	w := &world{t: t, clock: testclock.Wall(), sec: "whsec_" + base64.StdEncoding.EncodeToString(raw)}
	w.rcv = webhookreceiver.New(w.sec)
	t.Cleanup(w.rcv.Close)
	dir := t.TempDir()
	ca := filepath.Join(dir, "receiver.pem")
	if err := os.WriteFile(ca, w.rcv.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	if env == nil {
		env = map[string][]string{}
	}
	env["*"] = append(env["*"], "SAFEHTTP_CA_FILE="+ca)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	st, err := stack.Start(ctx, stack.Options{StateDir: dir, Env: env, Output: &w.out, Appwrite: localappwrite.Options{DeliveryIDHeader: true, Profile: localappwrite.ProfileCloud, WebhookLimit: 50,
		Clock: w.clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Stop)
	w.st = st
	d := st.Demo
	w.mcp = &eventsclient.Client{Endpoint: st.URLs["mcp-events"] + "/mcp", Token: d.OAuthToken}
	w.db = appwrite.NewTablesDB(appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(d.Endpoint), appwrite.WithProject(d.ProjectID), appwrite.WithKey(d.APIKey)))
	if err := st.Appwrite.Server.SeedDatabase(d.ProjectID, localappwrite.DatabaseSpec{ID: d.DatabaseID, Tables: []localappwrite.TableSpec{{ID: "other"}}}); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) args() map[string]string {
	return map[string]string{"project_id": w.st.Demo.ProjectID, "database_id": w.st.Demo.DatabaseID, "table_id": w.st.Demo.TicketsTableID}
}

func (w *world) row(table string) string {
	w.t.Helper()
	row, err := w.db.CreateRow(w.st.Demo.DatabaseID, table, id.Unique(), map[string]any{})
	if err != nil {
		w.t.Fatal(err)
	}
	return row.Id
}

// settle waits until Appwrite's queues are idle (deliveries and the executions they cause).
func (w *world) settle() {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.st.Appwrite.Server.Flush(ctx); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) events() []webhookreceiver.Delivery { return w.rcv.Events() }

// TestEventsThroughMCPAndIngress: ChatGPT's flow from subscribe to a signed event, through the staged
// mcp-events and webhook-ingress binaries and Appwrite's own webhook worker.
func TestEventsThroughMCPAndIngress(t *testing.T) {
	w := start(t, nil)
	ctx := context.Background()

	list, err := w.mcp.List(ctx)
	if err != nil || len(list) != 8 {
		t.Fatalf("events/list: %v %v", list, err)
	}
	var schema map[string]json.RawMessage
	for _, e := range list {
		if e.Name == "tablesdb.row.created" {
			var s struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(e.PayloadSchema, &s); err != nil {
				t.Fatal(err)
			}
			schema = s.Properties
		}
	}

	sub, err := w.mcp.Subscribe(ctx, "tablesdb.row.created", w.args(), w.rcv.URL(), w.sec, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(w.rcv.Deliveries()); n != 1 || !w.rcv.Deliveries()[0].Verified {
		t.Fatalf("challenge: %d requests", n)
	}

	// A subscribed change: exactly one verified POST whose body matches payloadSchema.
	rowID := w.row(w.st.Demo.TicketsTableID)
	w.row("other") // not subscribed: nothing
	w.settle()
	evs := w.events()
	if len(evs) != 1 || len(w.rcv.Deliveries()) != 2 {
		t.Fatalf("%d events, %d requests", len(evs), len(w.rcv.Deliveries()))
	}
	ev := evs[0]
	occ, err := ev.Event()
	if err != nil || !ev.Verified || occ.Name != "tablesdb.row.created" || occ.Data["row_id"] != rowID || ev.Header.Get("X-MCP-Subscription-Id") != sub.ID {
		t.Fatalf("%+v %+v %v", ev, occ, err)
	}
	for k := range occ.Data {
		if _, ok := schema[k]; !ok {
			t.Errorf("data.%s is not in the advertised payloadSchema", k)
		}
	}

	// Appwrite re-sends the same delivery: same eventId.
	for _, d := range w.st.Appwrite.Server.Deliveries() {
		if d.WebhookID == sub.ID {
			if err := w.st.Appwrite.Server.Redeliver(d.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.settle()
	evs = w.events()
	if len(evs) != 2 || evs[1].Header.Get("webhook-id") != evs[0].Header.Get("webhook-id") {
		t.Fatalf("redelivery: %d events", len(evs))
	}

	// A restarted ingress loses nothing.
	if err := w.st.Restart("webhook-ingress"); err != nil {
		t.Fatal(err)
	}
	w.row(w.st.Demo.TicketsTableID)
	w.settle()
	if n := len(w.events()); n != 3 {
		t.Fatalf("after the ingress restart: %d events", n)
	}

	// After events/unsubscribe nothing is delivered.
	if err := w.mcp.Unsubscribe(ctx, "tablesdb.row.created", w.args(), w.rcv.URL()); err != nil {
		t.Fatal(err)
	}
	w.row(w.st.Demo.TicketsTableID)
	w.settle()
	if n := len(w.events()); n != 3 {
		t.Fatalf("after unsubscribe: %d events", n)
	}
}

// TestExpiredSubscriptionDeliversNothing: a grant that ran out delivers nothing, and the ingress answers
// Appwrite 200 (counted and dropped), so that Appwrite never pauses the webhook and emails the team.
func TestExpiredSubscriptionDeliversNothing(t *testing.T) {
	// A one-millisecond grant: the envelope keeps whole seconds (rounded down), so it ends at most 1 ms
	// after it was granted, at the refreshBefore the answer states. The functions run as separate
	// processes on the wall clock, so the test waits for that instant (at most 1 ms), not a guessed time.
	w := start(t, map[string][]string{"mcp-events": {"MCP_EVENTS_TTL_MIN=1ms"}})
	ctx := context.Background()
	sub, err := w.mcp.Subscribe(ctx, "tablesdb.row.created", w.args(), w.rcv.URL(), w.sec, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sub.RefreshBefore == nil {
		t.Fatal("a 1 ms grant has no refreshBefore")
	}
	end, err := time.Parse(time.RFC3339, *sub.RefreshBefore)
	if err != nil {
		t.Fatalf("refreshBefore %q: %v", *sub.RefreshBefore, err)
	}
	if d := time.Until(end); d > time.Millisecond {
		t.Fatalf("a 1 ms grant ends in %v", d)
	} else if d > 0 {
		time.Sleep(d)
	}
	w.row(w.st.Demo.TicketsTableID)
	w.settle()
	if n := len(w.events()); n != 0 {
		t.Fatalf("an expired subscription delivered %d events", n)
	}
	var dropped int
	for _, d := range w.st.Appwrite.Server.Deliveries() {
		for _, a := range d.Attempts {
			if a.StatusCode == 200 && strings.Contains(a.ResponseBody, "subscription_expired") {
				dropped++
			} else {
				t.Fatalf("the ingress answered %d %s", a.StatusCode, a.ResponseBody)
			}
		}
	}
	if dropped != 1 {
		t.Fatalf("the ingress dropped %d deliveries as expired, want 1", dropped)
	}
}

// sdkTimeout bounds the tests' Appwrite SDK calls: the SDK's 10 s default was exceeded on a loaded machine (load
// average 33) by calls that carry megabytes or run a function. A safety net, not a measure.
const sdkTimeout = 2 * time.Minute
