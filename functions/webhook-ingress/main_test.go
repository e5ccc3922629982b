package handler_test

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"

	handler "appwrite-agent/functions/webhook-ingress"
	"appwrite-agent/shared/devkit/fakesentry"
	"appwrite-agent/shared/devkit/fnhttptest"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/webhookreceiver"
)

func TestHealthAndUnknownPath(t *testing.T) { fnhttptest.CheckHealthAndNotFound(t, handler.Main) }

// envEntry is handler.FromEnv(now) built again at every request, so that a test can change the environment
// with t.Setenv between requests; Main builds it once per process.
func envEntry(now func() time.Time) localruntime.Handler {
	return func(rt openruntimes.Context) openruntimes.Response { return handler.FromEnv(now)(rt) }
}

// TestSentryReportsIngressServerFaults: with SENTRY_DSN set, a delayed retry that cannot be scheduled and a
// webhook Appwrite signed whose envelope does not open reach Sentry with the function, event, project,
// outcome and reason tags and no secret; a forged request, a filtered change and a subscriber's failure
// send nothing. Without SENTRY_DSN, nothing is sent.
func TestSentryReportsIngressServerFaults(t *testing.T) {
	f := newFixture(t)
	fake := fakesentry.New()
	defer fake.Close()
	// One attempt with time to spare: the subscriber's scripted answer, not the machine's speed, decides
	// each outcome (a 300 ms budget timed out on a loaded machine and was reported as a server fault).
	t.Setenv("INGRESS_BUDGET_MS", "5000")
	t.Setenv("INGRESS_MAX_ATTEMPTS", "1")

	s := f.subscribe("sub-sentry-1", "row.created", rowArgs, time.Now().Add(time.Hour))
	good := f.appwriteDelivery(s, rowEvents("tickets", "r1", "create"), rowBody("tickets", "r1", "2026-12-01T10:00:00.000+00:00"))
	forged := good
	forged.signature = "AAAA"
	f.receiver.SetBehaviour(func(int, webhookreceiver.Delivery) (int, time.Duration) { return 503, 0 })
	f.send(good) // schedule fails: no dynamic key; but SENTRY_DSN is not set yet
	if n := len(fake.Events()); n != 0 {
		t.Fatalf("reports without SENTRY_DSN: %d", n)
	}

	t.Setenv("SENTRY_DSN", fake.DSN)
	// Not server faults: a forged request, a subscriber answering 410 (abandoned, not retried).
	if a := f.send(forged); a.Status != http.StatusUnauthorized {
		t.Fatalf("forged: %+v", a)
	}
	f.receiver.SetBehaviour(func(int, webhookreceiver.Delivery) (int, time.Duration) { return 410, 0 })
	if a := f.send(good); a.Outcome != "abandoned" {
		t.Fatalf("410: %+v", a)
	}
	if n := len(fake.Events()); n != 0 {
		t.Fatalf("bad input or a subscriber's failure was reported: %+v", fake.Events())
	}

	// Server faults.
	f.receiver.SetBehaviour(func(int, webhookreceiver.Delivery) (int, time.Duration) { return 503, 0 })
	if a := f.send(good); a.Outcome != "abandoned" {
		t.Fatalf("unschedulable: %+v", a)
	}
	wrongKeys := good
	wrongKeys.user, wrongKeys.pass = flip(good.user), good.pass
	if a := f.send(wrongKeys); a.Error != "subscription_rejected" {
		t.Fatalf("envelope: %+v", a)
	}
	evs := fake.Events()
	if len(evs) != 2 || len(fake.Problems()) != 0 {
		t.Fatalf("reports %+v, problems %v", evs, fake.Problems())
	}
	for i, want := range []map[string]string{
		{"function": "webhook-ingress", "operation": "webhook", "event": "row.created", "project_id": projectID, "outcome": "schedule_failed", "reason": "http_5xx"},
		{"function": "webhook-ingress", "operation": "webhook", "project_id": projectID, "outcome": "rejected", "reason": "subscription_rejected"},
	} {
		for k, v := range want {
			if evs[i].Tags[k] != v {
				t.Errorf("report %d: tag %s = %q, want %q (%v)", i, k, evs[i].Tags[k], v, evs[i].Tags)
			}
		}
		for _, secret := range []string{subSecret, subSecret[6:], s.secret, s.user[:30]} {
			if strings.Contains(evs[i].Raw, secret) {
				t.Errorf("report %d carries a secret (%q): %s", i, secret, evs[i].Raw)
			}
		}
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

// profile is the stand-in profile of this pass over the package's tests: TestMain runs every test against
// Appwrite Cloud's behaviour and against the open-source server's.
var profile localappwrite.Profile

// TestMain runs every test once per stand-in profile.
func TestMain(m *testing.M) {
	os.Exit(localappwrite.EachProfile(m, func(p localappwrite.Profile) { profile = p }))
}
