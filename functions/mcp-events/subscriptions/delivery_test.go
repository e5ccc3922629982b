package subscriptions_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
	"appwrite-agent/functions/mcp-events/subscriptions"
)

// TestLastErrorOf: the logs Appwrite's webhook worker writes at a failed delivery (Workers/Webhooks.php
// 1.9.6:168-178, HEAD 0cefd06:182-192) map to the SEP-3415 lastError categories, never to the logs' text.
func TestLastErrorOf(t *testing.T) {
	const head = "URL: https://ingress.example/appwrite/webhooks/mcpev_1\nMethod: POST\n"
	for _, c := range []struct{ logs, want string }{
		{head + "Status code: 404\nBody: \n{\"message\":\"not found\"}\n", "http_4xx"},
		{head + "Status code: 400\nBody: \nStatus code: 500\n", "http_4xx"}, // the body never counts
		{head + "Status code: 503\nBody: \n\n", "http_5xx"},
		{head + "CURL Error: Operation timed out after 15001 milliseconds with 0 bytes received\nEvents: users.1.create\n", "timeout"},
		{head + "CURL Error: Connection timed out after 15000 milliseconds\nEvents: users.1.create\n", "timeout"},
		{head + "CURL Error: Failed to connect to ingress.example port 443 after 2 ms: Couldn't connect to server\nEvents: x\n", "connection_refused"},
		{head + "CURL Error: Could not resolve host: ingress.example\nEvents: x\n", "connection_refused"},
		{head + "CURL Error: SSL certificate problem: unable to get local issuer certificate\nEvents: x\n", "tls_error"},
		{head + "Client Error: SSL: no alternative certificate subject name matches target host name 'ingress.example'\nEvents: x\n", "tls_error"},
		{head + "Client Error: Operation timed out after 15000 milliseconds with 0 bytes received\nEvents: x\n", "timeout"},
		{head + "Client Error: Maximum response size exceeded\nEvents: x\n", "connection_refused"},
		{"", "connection_refused"},
	} {
		if got := subscriptions.LastErrorOf(c.logs); got != c.want {
			t.Errorf("LastErrorOf(%q) = %q, want %q", c.logs, got, c.want)
		}
	}
}

// TestDeliveryStatusOfAWebhookPausedByFailures: the stand-in's worker fails ten deliveries to the ingress in a
// row and pauses the webhook as Appwrite does (enabled false, attempts 10, logs of the last failure). The
// refresh answers deliveryStatus {active: false, lastError: "http_5xx"} with the reason and what the refresh
// did in _meta, re-enables the webhook (attempts back to 0) and events flow again; the next refresh is
// healthy. A webhook failing but not yet paused is active with its last error; a first subscribe carries no
// deliveryStatus at all.
func TestDeliveryStatusOfAWebhookPausedByFailures(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	params := eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), st.Recv.URL("/paused"), secret, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	events := func(n int) {
		t.Helper()
		for range n {
			st.CreateRow(eventstest.TableID, "ticket")
			eventstest.Must(t, st.LA.Flush(ctx)) // one delivery at a time, as a sequence of events
		}
	}
	status := func(r eventstest.RPCResult) (map[string]any, map[string]any) {
		t.Helper()
		if r.Error != nil {
			t.Fatalf("subscribe: %s", r.Raw)
		}
		ds, _ := r.Result["deliveryStatus"].(map[string]any)
		meta, _ := r.Result["_meta"].(map[string]any)
		note, _ := meta[subscriptions.MetaDeliveryStatus].(map[string]any)
		return ds, note
	}

	first := eventstest.RPC(t, url, tok, "events/subscribe", params)
	if ds, note := status(first); ds != nil || note != nil || strings.Contains(string(first.Raw), "deliveryStatus") {
		t.Fatalf("a new subscription reports a delivery status: %s", first.Raw)
	}
	id := first.Result["id"].(string)
	webhook := func() map[string]any {
		t.Helper()
		for _, wh := range st.Webhooks(eventstest.ProjectID) {
			if wh["$id"] == id {
				return wh
			}
		}
		t.Fatalf("no webhook %s", id)
		return nil
	}

	// Failing, not paused: three 404s from the ingress.
	st.Ingress.Status.Store(http.StatusNotFound)
	events(3)
	ds, note := status(eventstest.RPC(t, url, tok, "events/subscribe", params))
	if ds["active"] != true || ds["lastError"] != "http_4xx" || note == nil || note["failedAttempts"] != float64(3) ||
		!strings.Contains(note["reason"].(string), "the last 3 deliveries to the ingress failed") || note["refresh"] != "reset Appwrite's failure counter" {
		t.Fatalf("failing webhook: deliveryStatus %v, note %v", ds, note)
	}
	if wh := webhook(); wh["attempts"] != float64(0) || wh["enabled"] != true {
		t.Fatalf("the refresh did not reset the counter: %v", wh)
	}

	// Paused: ten 503s in a row, and Appwrite's worker disables the webhook.
	st.Ingress.Status.Store(http.StatusServiceUnavailable)
	events(10)
	if wh := webhook(); wh["enabled"] != false || wh["attempts"] != float64(10) || !strings.Contains(wh["logs"].(string), "Status code: 503") {
		t.Fatalf("the stand-in did not pause the webhook after 10 failures: %v", wh)
	}
	reqs, _ := st.Ingress.Requests()
	delivered := len(reqs)
	events(1) // paused: nothing is sent
	if reqs, _ := st.Ingress.Requests(); len(reqs) != delivered {
		t.Fatalf("a paused webhook was delivered")
	}
	refresh := eventstest.RPC(t, url, tok, "events/subscribe", params)
	ds, note = status(refresh)
	if raw, _ := json.Marshal(ds); string(raw) != `{"active":false,"lastError":"http_5xx"}` {
		t.Fatalf("paused webhook: deliveryStatus %s (%s)", raw, refresh.Raw)
	}
	if note == nil || note["failedAttempts"] != float64(10) || !strings.Contains(note["reason"].(string), "Appwrite paused the webhook after 10 consecutive failed deliveries to the ingress (the last: http_5xx)") ||
		!strings.HasPrefix(note["refresh"].(string), "re-enabled the webhook") {
		t.Fatalf("paused webhook: note %v", note)
	}
	if wh := webhook(); wh["enabled"] != true || wh["attempts"] != float64(0) {
		t.Fatalf("the refresh did not re-enable the webhook: %v", wh)
	}

	// Delivering again; the next refresh is healthy, with no note.
	st.Ingress.Status.Store(0)
	events(1)
	if reqs, _ := st.Ingress.Requests(); len(reqs) != delivered+1 {
		t.Fatalf("the re-enabled webhook delivered %d events, want 1", len(reqs)-delivered)
	}
	healthy := eventstest.RPC(t, url, tok, "events/subscribe", params)
	ds, note = status(healthy)
	if raw, _ := json.Marshal(ds); string(raw) != `{"active":true,"lastError":null}` || note != nil {
		t.Fatalf("healthy refresh: %s", healthy.Raw)
	}
}
