package handler_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/subscriptions"
)

// TestDeliveryStatusOfAWebhookPausedByFailures: the stand-in's worker fails ten deliveries to the ingress in a
// row and pauses the webhook as Appwrite does (enabled false, attempts 10, logs of the last failure). The
// refresh answers deliveryStatus {active: false, lastError: "http_5xx"} with the reason and what the refresh
// did in _meta, re-enables the webhook (attempts back to 0) and events flow again; the next refresh is
// healthy. A webhook failing but not yet paused is active with its last error; a first subscribe carries no
// deliveryStatus at all.
func TestDeliveryStatusOfAWebhookPausedByFailures(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	params := subParams("tablesdb.row.created", rowArgs(), st.recv.url("/paused"), secret, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	events := func(n int) {
		t.Helper()
		for range n {
			st.createRow(tableID, "ticket")
			must(t, st.la.Flush(ctx)) // one delivery at a time, as a sequence of events
		}
	}
	status := func(r rpcResult) (map[string]any, map[string]any) {
		t.Helper()
		if r.Error != nil {
			t.Fatalf("subscribe: %s", r.Raw)
		}
		ds, _ := r.Result["deliveryStatus"].(map[string]any)
		meta, _ := r.Result["_meta"].(map[string]any)
		note, _ := meta[subscriptions.MetaDeliveryStatus].(map[string]any)
		return ds, note
	}

	first := rpc(t, url, tok, "events/subscribe", params)
	if ds, note := status(first); ds != nil || note != nil || strings.Contains(string(first.Raw), "deliveryStatus") {
		t.Fatalf("a new subscription reports a delivery status: %s", first.Raw)
	}
	id := first.Result["id"].(string)
	webhook := func() map[string]any {
		t.Helper()
		for _, wh := range st.webhooks(projectID) {
			if wh["$id"] == id {
				return wh
			}
		}
		t.Fatalf("no webhook %s", id)
		return nil
	}

	// Failing, not paused: three 404s from the ingress.
	st.ingress.status.Store(http.StatusNotFound)
	events(3)
	ds, note := status(rpc(t, url, tok, "events/subscribe", params))
	if ds["active"] != true || ds["lastError"] != "http_4xx" || note == nil || note["failedAttempts"] != float64(3) ||
		!strings.Contains(note["reason"].(string), "the last 3 deliveries to the ingress failed") || note["refresh"] != "reset Appwrite's failure counter" {
		t.Fatalf("failing webhook: deliveryStatus %v, note %v", ds, note)
	}
	if wh := webhook(); wh["attempts"] != float64(0) || wh["enabled"] != true {
		t.Fatalf("the refresh did not reset the counter: %v", wh)
	}

	// Paused: ten 503s in a row, and Appwrite's worker disables the webhook.
	st.ingress.status.Store(http.StatusServiceUnavailable)
	events(10)
	if wh := webhook(); wh["enabled"] != false || wh["attempts"] != float64(10) || !strings.Contains(wh["logs"].(string), "Status code: 503") {
		t.Fatalf("the stand-in did not pause the webhook after 10 failures: %v", wh)
	}
	reqs, _ := st.ingress.requests()
	delivered := len(reqs)
	events(1) // paused: nothing is sent
	if reqs, _ := st.ingress.requests(); len(reqs) != delivered {
		t.Fatalf("a paused webhook was delivered")
	}
	refresh := rpc(t, url, tok, "events/subscribe", params)
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
	st.ingress.status.Store(0)
	events(1)
	if reqs, _ := st.ingress.requests(); len(reqs) != delivered+1 {
		t.Fatalf("the re-enabled webhook delivered %d events, want 1", len(reqs)-delivered)
	}
	healthy := rpc(t, url, tok, "events/subscribe", params)
	ds, note = status(healthy)
	if raw, _ := json.Marshal(ds); string(raw) != `{"active":true,"lastError":null}` || note != nil {
		t.Fatalf("healthy refresh: %s", healthy.Raw)
	}
}

// TestAbsentCursorIsNull: SEP-3415 "Absent means null": a subscribe (and a refresh) without a cursor field is
// the same subscription as with "cursor": null, answered with cursor null.
func TestAbsentCursorIsNull(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	withNull := subParams("users.user.created", map[string]any{"project_id": projectID}, st.recv.url("/cursor"), secret, nil)
	absent := subParams("users.user.created", map[string]any{"project_id": projectID}, st.recv.url("/cursor"), secret, nil)
	delete(absent, "cursor")
	var ids []any
	for i, p := range []map[string]any{absent, withNull, absent} {
		r := rpc(t, url, tok, "events/subscribe", p)
		if r.Error != nil {
			t.Fatalf("subscribe %d: %s", i, r.Raw)
		}
		if c, has := r.Result["cursor"]; !has || c != nil || r.Result["truncated"] != false {
			t.Fatalf("subscribe %d: %s", i, r.Raw)
		}
		ids = append(ids, r.Result["id"])
	}
	if ids[0] != ids[1] || ids[1] != ids[2] || len(st.webhooks(projectID)) != 1 {
		t.Fatalf("ids %v, %d webhooks: absent and null cursors made different subscriptions", ids, len(st.webhooks(projectID)))
	}
}

// TestDottedIDsRefused: an id that goes into the webhook's Appwrite event strings (database, table, bucket,
// function, site) and contains '.' is refused with -32602 naming the argument, before the callback is
// challenged or Appwrite is written to: Appwrite (and the stand-in, as it) refuses a webhook on such events
// with a 400, since its Event validator splits event strings on '.'.
func TestDottedIDsRefused(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	for _, c := range []struct {
		event string
		args  map[string]any
		field string
	}{
		{"tablesdb.row.created", map[string]any{"project_id": projectID, "database_id": "my.db", "table_id": tableID}, "arguments.database_id"},
		{"tablesdb.row.deleted", map[string]any{"project_id": projectID, "database_id": dbID, "table_id": "v1.tickets"}, "arguments.table_id"},
		{"storage.file.created", map[string]any{"project_id": projectID, "bucket_id": "up.loads"}, "arguments.bucket_id"},
		{"functions.execution.failed", map[string]any{"project_id": projectID, "function_id": "a.create"}, "arguments.function_id"},
		{"sites.deployment.completed", map[string]any{"project_id": projectID, "site_id": "www.example"}, "arguments.site_id"},
	} {
		calls := st.apiCalls.Load()
		r := rpc(t, url, tok, "events/subscribe", subParams(c.event, c.args, st.recv.url("/dotted"), secret, nil))
		if r.Error == nil || r.Error.Code != -32602 || r.Error.Data["field"] != c.field ||
			!strings.Contains(r.Error.Message, c.field+": ") || !strings.Contains(r.Error.Message, "contains '.'") {
			t.Fatalf("%s %v: %s", c.event, c.args, r.Raw)
		}
		if st.apiCalls.Load() != calls || len(st.recv.received()) != 0 || len(st.webhooks(projectID)) != 0 {
			t.Fatalf("%s: a refused subscribe contacted Appwrite or the callback", c.event)
		}
	}
	// What Appwrite would have answered: the webhook on a dotted database id's events is a 400.
	body := `{"webhookId":"dotted","name":"dotted","url":"` + st.ingress.srv.URL + `/hook","events":["databases.my.db.tables.t.rows.*.create"],"enabled":true,"tls":true}`
	if status, raw := st.call(projectID, st.apiKey, "POST", "/webhooks", "application/json", strings.NewReader(body)); status != http.StatusBadRequest {
		t.Fatalf("the stand-in accepted a webhook on a dotted id's events: %d %s", status, raw)
	} else if !strings.Contains(string(raw), "Event is not valid") {
		t.Fatalf("not the Event validator: %s", raw)
	}
}
