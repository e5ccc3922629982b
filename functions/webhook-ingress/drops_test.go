package handler_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"appwrite-agent/shared/seal"
	"appwrite-agent/shared/stdwebhooks"
)

// TestEveryDropIsAnswered200: a delivery Appwrite signed is answered 2xx whatever the ingress decides not to
// deliver, with the reason and a counter, because Appwrite pauses a webhook after ten failed deliveries and
// emails every member of the project (appwrite/mcp's tests ask the same of its ingress): an expired
// subscription, one sealed with a key no longer listed (an orphaned webhook after a rotation), a change of
// another table, and a body that is not a resource model. The subscriber gets nothing. (An envelope opens
// only for the events Appwrite names, of this catalog: events that are not the subscription's, or an event
// the catalog does not have, make it not open, a 401 like any tampered header; TestNonMatchingChangesDeliverNothing.)
func TestEveryDropIsAnswered200(t *testing.T) {
	f := newFixture(t)
	hour := time.Now().Add(time.Hour)
	row := func(table string) string { return rowBody(table, "r1", "2026-12-01T10:00:00.000+00:00") }
	rows := rowEvents("tickets", "r1", "create")

	retired := func() subscription {
		ring, err := seal.ParseKeyring("k0:" + base64.StdEncoding.EncodeToString([]byte("a retired key of 32 bytes, k0!!!")))
		if err != nil {
			t.Fatal(err)
		}
		old, err := seal.NewSealer(ring, seal.DefaultBudget())
		if err != nil {
			t.Fatal(err)
		}
		s := f.subscribe("sub-drop-retired", "tablesdb.row.created", rowArgs, hour)
		secret, _ := stdwebhooks.ParseSecret(subSecret)
		fields, err := old.Seal(s.id, seal.Subscription{CallbackURL: f.receiver.URL(), Secret: secret, Event: "tablesdb.row.created",
			Args: seal.ArgsOf(rowArgs), ProjectID: projectID, Expiry: hour, VerifiedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		s.user, s.pass, s.tail = fields.Username, fields.Password, fields.URLTail
		return s
	}

	for _, c := range []struct {
		name, reason string
		delivery     func() delivery
	}{
		{"expired", "subscription_expired", func() delivery {
			return f.appwriteDelivery(f.subscribe("sub-drop-expired", "tablesdb.row.created", rowArgs, time.Now().Add(-time.Second)), rows, row("tickets"))
		}},
		{"retired key", "retired_key", func() delivery { return f.appwriteDelivery(retired(), rows, row("tickets")) }},
		{"another table's row", "filtered", func() delivery {
			return f.appwriteDelivery(f.subscribe("sub-drop-table", "tablesdb.row.created", rowArgs, hour), rows, row("orders"))
		}},
		{"not JSON", "bad_payload", func() delivery {
			return f.appwriteDelivery(f.subscribe("sub-drop-json", "tablesdb.row.created", rowArgs, hour), rows, "not json")
		}},
		{"an array", "bad_payload", func() delivery {
			return f.appwriteDelivery(f.subscribe("sub-drop-array", "tablesdb.row.created", rowArgs, hour), rows, "[1, 2]")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := f.logs.count(`"reason":"` + c.reason + `"`)
			if a := f.send(c.delivery()); a.Status != 200 || a.Outcome != "ignored" || a.Reason != c.reason {
				t.Fatalf("got %+v, want 200 ignored %s", a, c.reason)
			}
			if f.logs.count(`"reason":"`+c.reason+`"`) != before+1 {
				t.Fatalf("no counter line for %s: %v", c.reason, f.logs.lines)
			}
		})
	}
	if n := len(f.receiver.Deliveries()); n != 0 {
		t.Fatalf("the subscriber got %d requests", n)
	}
	f.logs.checkCounterLines(t)
}

// TestWorkerPayloadsAreDelivered: the payloads Appwrite's workers build from documents rather than API models
// (appwrite/mcp's recorded execution_async_failed.json: database-format times, no $createdAt) and values of
// an unexpected type are delivered, projected to the payload schema with times in RFC 3339; a time that does
// not parse is left out and the event is stamped when it arrived.
func TestWorkerPayloadsAreDelivered(t *testing.T) {
	f := newFixture(t)
	exec := f.subscribe("sub-quirk-exec", "functions.execution.failed", map[string]string{"function_id": "fn_billing"}, time.Now().Add(time.Hour))
	async := `{"$id":"68e7a1b2c3d4e5f6a7b8","$updatedAt":"2026-10-09 09:38:31.950","resourceId":"fn_billing","resourceType":"functions","trigger":"schedule","status":"failed","responseStatusCode":500,"logs":"charging jane@example.com","duration":0.412}`
	if a := f.send(f.appwriteDelivery(exec, []string{"functions.fn_billing.executions.68e7a1b2c3d4e5f6a7b8.update"}, async)); a.Outcome != "delivered" {
		t.Fatalf("async execution: %+v", a)
	}
	users := f.subscribe("sub-quirk-user", "users.user.created", nil, time.Now().Add(time.Hour))
	before := time.Now().UTC().Truncate(time.Second)
	if a := f.send(f.appwriteDelivery(users, []string{"users.user_jane.create"}, `{"$id":"user_jane","$createdAt":"yesterday","email":"jane@example.com","status":"yes"}`)); a.Outcome != "delivered" {
		t.Fatalf("user: %+v", a)
	}
	events := f.receiver.Events()
	if len(events) != 2 {
		t.Fatalf("%d events", len(events))
	}
	first, _ := events[0].Event()
	if first.Timestamp != "2026-10-09T09:38:31.950+00:00" || first.Data["updated_at"] != "2026-10-09T09:38:31.950+00:00" || first.Data["created_at"] != nil {
		t.Fatalf("execution: %+v", first)
	}
	checkPayloadSchema(t, "functions.execution.failed", first.Data)
	second, _ := events[1].Event()
	stamped, err := time.Parse(time.RFC3339, second.Timestamp)
	if err != nil || stamped.Before(before) || second.Data["created_at"] != nil || second.Data["status"] != nil {
		t.Fatalf("user: %+v (%v)", second, err)
	}
	checkPayloadSchema(t, "users.user.created", second.Data)
	if strings.Contains(string(events[0].Body)+string(events[1].Body), "jane@example.com") {
		t.Fatal("a personal field leaked")
	}
}

// TestOnlyPOSTIsAWebhook: Appwrite POSTs its webhooks; any other method on a webhook path is 405 with a JSON
// body, counted as rejected, and nothing is delivered.
func TestOnlyPOSTIsAWebhook(t *testing.T) {
	f := newFixture(t)
	s := f.subscribe("sub-get", "tablesdb.row.created", rowArgs, time.Now().Add(time.Hour))
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		req, _ := http.NewRequest(m, f.ingress.URL+"/appwrite/webhooks/"+s.id, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error string }
		err = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed || err != nil || body.Error != "method_not_allowed" {
			t.Fatalf("%s: %d %+v %v", m, res.StatusCode, body, err)
		}
	}
	if len(f.receiver.Deliveries()) != 0 || f.logs.count(`"reason":"method_not_allowed"`) != 3 {
		t.Fatalf("deliveries %d, counters %v", len(f.receiver.Deliveries()), f.logs.lines)
	}
}
