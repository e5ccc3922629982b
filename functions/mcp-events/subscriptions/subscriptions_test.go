package subscriptions_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
)

// TestMain runs every test once per stand-in profile (eventstest.Main).
func TestMain(m *testing.M) { eventstest.Main(m) }

// TestRenamedAndNewEvents: the first catalog's names cannot be subscribed to again (NotFound naming the new
// one), but a subscription under an old name can still be unsubscribed; the deployment events subscribe
// with or without their status filter, narrowed to the function's or site's deployment updates, and are
// authorized by reading the function or site.
func TestRenamedAndNewEvents(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	cb := st.Recv.URL("/catalog")

	r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("row.created", eventstest.RowArgs(), cb, secret, nil))
	if r.Error == nil || r.Error.Code != -32011 || r.Error.Data["kind"] != "event" || r.Error.Data["renamedTo"] != "tablesdb.row.created" {
		t.Fatalf("old name: %s", r.Raw)
	}
	r = eventstest.RPC(t, url, tok, "events/unsubscribe", map[string]any{"name": "row.created", "arguments": eventstest.RowArgs(), "delivery": map[string]any{"url": cb}})
	if r.Error != nil {
		t.Fatalf("unsubscribe under the old name: %s", r.Raw)
	}

	fnArgs := map[string]any{"project_id": eventstest.ProjectID, "function_id": eventstest.FunctionID}
	failedOnly := map[string]any{"project_id": eventstest.ProjectID, "function_id": eventstest.FunctionID, "status": "failed"}
	ids := map[string]bool{}
	for _, c := range []struct {
		event string
		args  map[string]any
		hook  string
	}{
		{"functions.deployment.completed", fnArgs, "[functions." + eventstest.FunctionID + ".deployments.*.update]"},
		{"functions.deployment.completed", failedOnly, "[functions." + eventstest.FunctionID + ".deployments.*.update]"},
		{"sites.deployment.completed", map[string]any{"project_id": eventstest.ProjectID, "site_id": eventstest.SiteID}, "[sites." + eventstest.SiteID + ".deployments.*.update]"},
	} {
		r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams(c.event, c.args, cb, secret, nil))
		if r.Error != nil {
			t.Fatalf("%s %v: %s", c.event, c.args, r.Raw)
		}
		id := r.Result["id"].(string)
		ids[id] = true
		for _, wh := range st.Webhooks(eventstest.ProjectID) {
			if wh["$id"] == id && fmt.Sprint(wh["events"]) != c.hook {
				t.Fatalf("%s events %v", c.event, wh["events"])
			}
		}
	}
	if len(ids) != 3 {
		t.Fatalf("a status filter must be its own subscription: %v", ids)
	}
	for _, c := range []struct {
		args map[string]any
		code int
		kind string
	}{
		{map[string]any{"project_id": eventstest.ProjectID, "function_id": eventstest.FunctionID, "status": "building"}, -32602, ""},
		{map[string]any{"project_id": eventstest.ProjectID, "site_id": "nope"}, -32011, "site"},
	} {
		ev := "functions.deployment.completed"
		if _, ok := c.args["site_id"]; ok {
			ev = "sites.deployment.completed"
		}
		r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams(ev, c.args, cb, secret, nil))
		if r.Error == nil || r.Error.Code != c.code || (c.kind != "" && r.Error.Data["kind"] != c.kind) {
			t.Fatalf("%v: %s", c.args, r.Raw)
		}
	}
	// Without project:sites.read the site event steps up.
	narrow := st.Token(eventstest.UserID, []string{"project:webhooks.read", "project:webhooks.write"})
	r = eventstest.RPC(t, url, narrow, "events/subscribe", eventstest.SubParams("sites.deployment.completed", map[string]any{"project_id": eventstest.ProjectID, "site_id": eventstest.SiteID}, cb, secret, nil))
	if r.Status != 403 || r.Error == nil || r.Error.Code != -32012 {
		t.Fatalf("step-up: %d %s", r.Status, r.Raw)
	}
	// list_subscriptions shows the status filter among the arguments, whatever the profile.
	cs := eventstest.Connect(t, url, tok, "2025-11-25")
	subs := eventstest.Structured(t, eventstest.CallTool(t, cs, "list_subscriptions", map[string]any{"project_id": eventstest.ProjectID}))["subscriptions"].([]any)
	filtered := 0
	for _, s := range subs {
		if s.(map[string]any)["arguments"].(map[string]any)["status"] == "failed" {
			filtered++
		}
	}
	if len(subs) != 3 || filtered != 1 {
		t.Fatalf("list_subscriptions: %v", subs)
	}
}

// TestDottedIDsRefused: an id that goes into the webhook's Appwrite event strings (database, table, bucket,
// function, site) and contains '.' is refused with -32602 naming the argument, before the callback is
// challenged or Appwrite is written to: Appwrite (and the stand-in, as it) refuses a webhook on such events
// with a 400, since its Event validator splits event strings on '.'.
func TestDottedIDsRefused(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	for _, c := range []struct {
		event string
		args  map[string]any
		field string
	}{
		{"tablesdb.row.created", map[string]any{"project_id": eventstest.ProjectID, "database_id": "my.db", "table_id": eventstest.TableID}, "arguments.database_id"},
		{"tablesdb.row.deleted", map[string]any{"project_id": eventstest.ProjectID, "database_id": eventstest.DatabaseID, "table_id": "v1.tickets"}, "arguments.table_id"},
		{"storage.file.created", map[string]any{"project_id": eventstest.ProjectID, "bucket_id": "up.loads"}, "arguments.bucket_id"},
		{"functions.execution.failed", map[string]any{"project_id": eventstest.ProjectID, "function_id": "a.create"}, "arguments.function_id"},
		{"sites.deployment.completed", map[string]any{"project_id": eventstest.ProjectID, "site_id": "www.example"}, "arguments.site_id"},
	} {
		calls := st.APICalls.Load()
		r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams(c.event, c.args, st.Recv.URL("/dotted"), secret, nil))
		if r.Error == nil || r.Error.Code != -32602 || r.Error.Data["field"] != c.field ||
			!strings.Contains(r.Error.Message, c.field+": ") || !strings.Contains(r.Error.Message, "contains '.'") {
			t.Fatalf("%s %v: %s", c.event, c.args, r.Raw)
		}
		if st.APICalls.Load() != calls || len(st.Recv.Received()) != 0 || len(st.Webhooks(eventstest.ProjectID)) != 0 {
			t.Fatalf("%s: a refused subscribe contacted Appwrite or the callback", c.event)
		}
	}
	// What Appwrite would have answered: the webhook on a dotted database id's events is a 400.
	body := `{"webhookId":"dotted","name":"dotted","url":"` + st.Ingress.Srv.URL + `/hook","events":["databases.my.db.tables.t.rows.*.create"],"enabled":true,"tls":true}`
	if status, raw := st.Call(eventstest.ProjectID, st.APIKey, "POST", "/webhooks", "application/json", strings.NewReader(body)); status != http.StatusBadRequest {
		t.Fatalf("the stand-in accepted a webhook on a dotted id's events: %d %s", status, raw)
	} else if !strings.Contains(string(raw), "Event is not valid") {
		t.Fatalf("not the Event validator: %s", raw)
	}
}

// TestExpiredSubscriptionsAreCleanedUp: acting in a project deletes managed webhooks whose envelopes
// expired.
func TestExpiredSubscriptionsAreCleanedUp(t *testing.T) {
	st := eventstest.NewStack(t)
	st.Env["MCP_EVENTS_TTL_MIN"] = "1s"
	url := st.Instance(st.Server(handler.Options{Now: st.Clock.Now}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.deleted", eventstest.RowArgs(), st.Recv.URL("/old"), secret, 1000))
	if r.Error != nil {
		t.Fatalf("%s", r.Raw)
	}
	old := r.Result["id"]
	st.Clock.Advance(5 * time.Second) // the one-second subscription has expired
	r = eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("users.user.created", map[string]any{"project_id": eventstest.ProjectID}, st.Recv.URL("/new"), secret, nil))
	if r.Error != nil {
		t.Fatalf("%s", r.Raw)
	}
	hooks := st.Webhooks(eventstest.ProjectID)
	if len(hooks) != 1 || hooks[0]["$id"] == old {
		t.Fatalf("expired webhook not cleaned up: %v", hooks)
	}
}

// TestLocalNamesRefusedUpFront: callback hosts that name this machine or a local network (localhost with
// a trailing dot, .localhost, .local, .internal, single labels) are refused before any Appwrite call, with
// data.field and data.reason; so are private addresses.
func TestLocalNamesRefusedUpFront(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	// An unknown project: had Appwrite been asked, the answer would be NotFound.
	args := map[string]any{"project_id": "nope", "database_id": eventstest.DatabaseID, "table_id": eventstest.TableID}
	before := st.APICalls.Load()
	for _, cb := range []string{
		"https://localhost./h", "https://localhost/h", "https://LocalHost.:8443/h", "https://a.localhost./h",
		"https://printer.local/h", "https://db.internal/h", "https://metadata/computeMetadata/v1/",
		"https://10.1.2.3/h", "https://[::1]/h", "https://127.0.0.1./h",
	} {
		r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", args, cb, secret, nil))
		if r.Error == nil || r.Error.Code != -32602 || r.Error.Data["field"] != "delivery.url" || r.Error.Data["reason"] == nil || r.Error.Data["reason"] == "" {
			t.Fatalf("%s: %s", cb, r.Raw)
		}
	}
	if n := st.APICalls.Load() - before; n != 0 {
		t.Fatalf("refused callback URLs still caused %d Appwrite calls", n)
	}
}

// TestTTLExtremes: ttlMs far outside the bounds (negative, huge, beyond float64) is clamped, never
// overflowed into the wrong end.
func TestTTLExtremes(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	for _, c := range []struct {
		ttl  string
		want time.Duration
	}{
		{"-1e13", 5 * time.Minute}, {"-5", 5 * time.Minute}, {"-1e400", 5 * time.Minute},
		{"1e13", 24 * time.Hour}, {"1e400", 24 * time.Hour}, {"9.3e18", 24 * time.Hour},
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"events/subscribe","params":{"name":"users.user.created","arguments":{"project_id":"` + eventstest.ProjectID +
			`"},"delivery":{"mode":"webhook","url":"` + st.Recv.URL("/ttl") + `","secret":"` + secret + `"},"ttlMs":` + c.ttl + `}}`
		// The grant is made between before and after, however long the call takes; refreshBefore keeps
		// whole seconds (rounded down).
		before := time.Now()
		status, _, m, raw := eventstest.Post(t, "POST", url, tok, body, nil)
		after := time.Now()
		res, _ := m["result"].(map[string]any)
		if status != 200 || res == nil {
			t.Fatalf("ttlMs %s: %d %s", c.ttl, status, raw)
		}
		// refreshBefore leaves a tenth of the grant before the expiry.
		if rb := eventstest.MustTime(t, res["refreshBefore"]); rb.Before(before.Add(c.want-c.want/10).Truncate(time.Second)) || rb.After(after.Add(c.want-c.want/10)) {
			t.Fatalf("ttlMs %s: refreshBefore %v, want %v after a moment in [%v, %v]", c.ttl, rb, c.want, before, after)
		}
	}
	for _, bad := range []string{`"NaN"`, `"Infinity"`, `true`, `{}`} {
		body := `{"jsonrpc":"2.0","id":1,"method":"events/subscribe","params":{"name":"users.user.created","arguments":{"project_id":"` + eventstest.ProjectID +
			`"},"delivery":{"mode":"webhook","url":"` + st.Recv.URL("/ttl") + `","secret":"` + secret + `"},"ttlMs":` + bad + `}}`
		if _, _, m, raw := eventstest.Post(t, "POST", url, tok, body, nil); eventstest.RPCCode(m) != -32602 {
			t.Fatalf("ttlMs %s: %s", bad, raw)
		}
	}
}
