package eventcatalog_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"appwrite-agent/shared/eventcatalog"
)

func TestCatalogShape(t *testing.T) {
	want := []string{"tablesdb.row.created", "tablesdb.row.updated", "tablesdb.row.deleted", "storage.file.created", "users.user.created",
		"functions.execution.failed", "functions.deployment.completed", "sites.deployment.completed"}
	all := eventcatalog.All()
	if len(all) != len(want) {
		t.Fatalf("%d events", len(all))
	}
	for i, e := range all {
		if e.Name != want[i] {
			t.Fatalf("event %d is %s", i, e.Name)
		}
		s := e.InputSchema()
		req := s["required"].([]string)
		if req[0] != "project_id" || s["additionalProperties"] != false {
			t.Fatalf("%s input schema %v", e.Name, s)
		}
		if _, ok := e.PayloadSchema()["properties"].(map[string]any)["project_id"]; !ok {
			t.Fatalf("%s payload lacks project_id", e.Name)
		}
		for _, banned := range []string{"email", "phone", "prefs", "name", "logs", "responseBody"} {
			if _, ok := e.Payload[banned]; ok {
				t.Fatalf("%s payload carries %s", e.Name, banned)
			}
		}
	}
}

// TestStatusFilter: the deployment events take an optional status (ready or failed), listed in the input
// schema as an enum and not required.
func TestStatusFilter(t *testing.T) {
	ev, _ := eventcatalog.Lookup(eventcatalog.DeploymentCompleted)
	for _, c := range []struct{ in, want, err string }{
		{`{"project_id":"p","function_id":"f"}`, `{"function_id":"f","project_id":"p"}`, ""},
		{`{"project_id":"p","function_id":"f","status":"failed"}`, `{"function_id":"f","project_id":"p","status":"failed"}`, ""},
		{`{"project_id":"p","function_id":"f","status":null}`, `{"function_id":"f","project_id":"p"}`, ""},
		{`{"project_id":"p","function_id":"f","status":"building"}`, "", "arguments.status: must be one of ready, failed"},
		{`{"project_id":"p","function_id":"f","status":1}`, "", "arguments.status"},
		{`{"project_id":"p","function_id":"f","state":"ready"}`, "", "unknown argument \"state\""},
	} {
		got, err := ev.ValidateArgs(json.RawMessage(c.in))
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) || (err == nil && eventcatalog.Canonical(got) != c.want) {
			t.Errorf("%s: %v %v", c.in, got, err)
		}
	}
	props := ev.InputSchema()["properties"].(map[string]any)
	if st := props["status"].(map[string]any); fmt.Sprint(st["enum"]) != "[ready failed]" || strings.Contains(fmt.Sprint(ev.InputSchema()["required"]), "status") {
		t.Fatalf("schema: %v", ev.InputSchema())
	}
	// A status-filtered subscription's webhook events are the same as an unfiltered one's.
	if got := ev.AppwriteEvents(map[string]string{"project_id": "p", "function_id": "f", "status": "ready"}); fmt.Sprint(got) != "[functions.f.deployments.*.update]" {
		t.Fatalf("patterns: %v", got)
	}
}

func TestValidateArgs(t *testing.T) {
	ev, _ := eventcatalog.Lookup(eventcatalog.RowCreated)
	for _, c := range []struct{ in, err string }{
		{`{"project_id":"p","database_id":"d","table_id":"t"}`, ""},
		{`null`, "arguments: required"},
		{`[]`, "must be an object"},
		{`{"project_id":"p","database_id":"d"}`, "arguments.table_id: required"},
		{`{"project_id":"p","database_id":"d","table_id":"t","x":1}`, `unknown argument "x"`},
		{`{"project_id":"p","database_id":"d","table_id":"-t"}`, "arguments.table_id: must be an Appwrite id"},
		{`{"project_id":"p","database_id":"d","table_id":"` + strings.Repeat("a", 37) + `"}`, "must be an Appwrite id"},
		{`{"project_id":1,"database_id":"d","table_id":"t"}`, "arguments.project_id: must be a string"},
	} {
		_, err := ev.ValidateArgs(json.RawMessage(c.in))
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: got %v, want %q", c.in, err, c.err)
		}
	}
}

func TestMissingScopes(t *testing.T) {
	ev, _ := eventcatalog.Lookup(eventcatalog.ExecutionFailed)
	got := ev.MissingScopes(map[string]bool{"project:webhooks.read": true, "project:webhooks.write": true, "project:functions.read": true, "project:execution.read": true})
	if len(got) != 0 {
		t.Fatalf("alternative scope not accepted: %v", got)
	}
	got = ev.MissingScopes(map[string]bool{"project:functions.read": true})
	if strings.Join(got, "|") != "project:webhooks.read|project:webhooks.write|project:executions.read or project:execution.read" {
		t.Fatalf("%v", got)
	}
	// project:all grants every project scope; bare names (API-key scopes) and organization:all grant none.
	if got := ev.MissingScopes(map[string]bool{eventcatalog.ScopeAll: true}); len(got) != 0 {
		t.Fatalf("project:all: %v", got)
	}
	if got := ev.MissingScopes(map[string]bool{"webhooks.read": true, "webhooks.write": true, "functions.read": true, "executions.read": true, "organization:all": true, "all": true}); len(got) != 4 {
		t.Fatalf("bare names: %v", got)
	}
}

func ExampleEvent_AppwriteEvents() {
	ev, _ := eventcatalog.Lookup(eventcatalog.RowUpdated)
	fmt.Println(ev.AppwriteEvents(map[string]string{"project_id": "p1", "database_id": "main", "table_id": "support_tickets"}))
	// Output: [databases.main.tables.support_tickets.rows.*.update databases.main.tables.support_tickets.rows.*.upsert]
}

func ExampleCanonical() {
	fmt.Println(eventcatalog.Canonical(map[string]string{"table_id": "t", "database_id": "d", "project_id": "p"}))
	// Output: {"database_id":"d","project_id":"p","table_id":"t"}
}
