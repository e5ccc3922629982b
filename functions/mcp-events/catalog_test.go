package handler_test

import (
	"fmt"
	"testing"

	handler "appwrite-agent/functions/mcp-events"
)

// TestRenamedAndNewEvents: the first catalog's names cannot be subscribed to again (NotFound naming the new
// one), but a subscription under an old name can still be unsubscribed; the deployment events subscribe
// with or without their status filter, narrowed to the function's or site's deployment updates, and are
// authorized by reading the function or site.
func TestRenamedAndNewEvents(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	cb := st.recv.url("/catalog")

	r := rpc(t, url, tok, "events/subscribe", subParams("row.created", rowArgs(), cb, secret, nil))
	if r.Error == nil || r.Error.Code != -32011 || r.Error.Data["kind"] != "event" || r.Error.Data["renamedTo"] != "tablesdb.row.created" {
		t.Fatalf("old name: %s", r.Raw)
	}
	r = rpc(t, url, tok, "events/unsubscribe", map[string]any{"name": "row.created", "arguments": rowArgs(), "delivery": map[string]any{"url": cb}})
	if r.Error != nil {
		t.Fatalf("unsubscribe under the old name: %s", r.Raw)
	}

	fnArgs := map[string]any{"project_id": projectID, "function_id": fnID}
	failedOnly := map[string]any{"project_id": projectID, "function_id": fnID, "status": "failed"}
	ids := map[string]bool{}
	for _, c := range []struct {
		event string
		args  map[string]any
		hook  string
	}{
		{"functions.deployment.completed", fnArgs, "[functions." + fnID + ".deployments.*.update]"},
		{"functions.deployment.completed", failedOnly, "[functions." + fnID + ".deployments.*.update]"},
		{"sites.deployment.completed", map[string]any{"project_id": projectID, "site_id": siteID}, "[sites." + siteID + ".deployments.*.update]"},
	} {
		r := rpc(t, url, tok, "events/subscribe", subParams(c.event, c.args, cb, secret, nil))
		if r.Error != nil {
			t.Fatalf("%s %v: %s", c.event, c.args, r.Raw)
		}
		id := r.Result["id"].(string)
		ids[id] = true
		for _, wh := range st.webhooks(projectID) {
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
		{map[string]any{"project_id": projectID, "function_id": fnID, "status": "building"}, -32602, ""},
		{map[string]any{"project_id": projectID, "site_id": "nope"}, -32011, "site"},
	} {
		ev := "functions.deployment.completed"
		if _, ok := c.args["site_id"]; ok {
			ev = "sites.deployment.completed"
		}
		r := rpc(t, url, tok, "events/subscribe", subParams(ev, c.args, cb, secret, nil))
		if r.Error == nil || r.Error.Code != c.code || (c.kind != "" && r.Error.Data["kind"] != c.kind) {
			t.Fatalf("%v: %s", c.args, r.Raw)
		}
	}
	// Without project:sites.read the site event steps up.
	narrow := st.token(userID, []string{"project:webhooks.read", "project:webhooks.write"})
	r = rpc(t, url, narrow, "events/subscribe", subParams("sites.deployment.completed", map[string]any{"project_id": projectID, "site_id": siteID}, cb, secret, nil))
	if r.Status != 403 || r.Error == nil || r.Error.Code != -32012 {
		t.Fatalf("step-up: %d %s", r.Status, r.Raw)
	}
	// list_subscriptions shows the status filter among the arguments, whatever the profile.
	cs := connect(t, url, tok, "2025-11-25")
	subs := structured(t, callTool(t, cs, "list_subscriptions", map[string]any{"project_id": projectID}))["subscriptions"].([]any)
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
