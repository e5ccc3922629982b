package automations

import (
	"encoding/json"
	"testing"
)

// IsScheduled takes only Appwrite's cron execution: trigger schedule, POST, no user, no client IP. A delayed
// execution made through the Executions API (trigger schedule with its creator's client IP, perhaps a user)
// and everything else are ordinary requests.
func TestIsScheduled(t *testing.T) {
	cron := map[string]string{"x-appwrite-trigger": "schedule", "x-appwrite-user-id": "", "x-appwrite-key": "k"}
	if !IsScheduled("POST", cron) {
		t.Fatal("the cron execution is not recognised")
	}
	for name, c := range map[string]struct {
		method string
		h      map[string]string
	}{
		"delayed, by a guest": {"POST", map[string]string{"x-appwrite-trigger": "schedule", "x-appwrite-user-id": "", "x-appwrite-client-ip": "203.0.113.9"}},
		"delayed, empty ip":   {"POST", map[string]string{"x-appwrite-trigger": "schedule", "x-appwrite-client-ip": ""}},
		"delayed, by a user":  {"POST", map[string]string{"x-appwrite-trigger": "schedule", "x-appwrite-user-id": "u1"}},
		"http":                {"POST", map[string]string{"x-appwrite-trigger": "http"}},
		"event":               {"POST", map[string]string{"x-appwrite-trigger": "event"}},
		"no trigger":          {"POST", map[string]string{}},
		"GET":                 {"GET", cron},
	} {
		if IsScheduled(c.method, c.h) {
			t.Errorf("%s: taken for chat's schedule", name)
		}
	}
}

func TestTitle(t *testing.T) {
	for _, c := range []struct {
		event string
		args  map[string]string
		want  string
	}{
		{"tablesdb.row.created", map[string]string{"project_id": "p", "database_id": "main", "table_id": "tickets"}, "New rows in tickets"},
		{"functions.execution.failed", map[string]string{"function_id": "checkout"}, "Failed executions of checkout"},
		{"users.user.created", map[string]string{"project_id": "p"}, "New users"},
		{"row.created", map[string]string{"table_id": "t"}, "row.created on t"},
		{"something.else", nil, "something.else"},
	} {
		if got := Title(c.event, c.args); got != c.want {
			t.Errorf("Title(%s, %v) = %q, want %q", c.event, c.args, got, c.want)
		}
	}
}

// EventMessage holds the event's name, time and ids (sorted) and the instruction; a payload that is not an
// object is left out, and values that are not strings are written as JSON.
func TestEventMessage(t *testing.T) {
	got := EventMessage("tablesdb.row.created", "2026-12-05T10:00:00.123Z", json.RawMessage(`{"row_id":"r1","project_id":"p","size":12}`), "Triage it.")
	want := "Automation event: tablesdb.row.created at 2026-12-05T10:00:00Z\n- project_id: p\n- row_id: r1\n- size: 12\n\nInstruction: Triage it.\n\n" +
		"(This turn was started by the user's automation: the user is not here to answer questions. Use the tools to read what the event points at.)"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := EventMessage("e", "not a time", json.RawMessage(`[1]`), "x"); got != "Automation event: e\n\nInstruction: x\n\n(This turn was started by the user's automation: the user is not here to answer questions. Use the tools to read what the event points at.)" {
		t.Errorf("odd payload: %q", got)
	}
}

// checkNotOwn refuses chat's own tables and functions in chat's project only.
func TestCheckNotOwn(t *testing.T) {
	s := New(Config{Own: OwnResources{ProjectID: "p", Tables: map[string][]string{"chat": {"messages"}, "main": {"turn_progress"}}, Functions: []string{"turn", "chat"}}},
		nil, nil, nil, nil, nil)
	for _, c := range []struct {
		event string
		args  map[string]string
		ok    bool
	}{
		{"tablesdb.row.created", map[string]string{"project_id": "p", "database_id": "chat", "table_id": "messages"}, false},
		{"tablesdb.row.updated", map[string]string{"project_id": "p", "database_id": "main", "table_id": "turn_progress"}, false},
		{"functions.execution.failed", map[string]string{"project_id": "p", "function_id": "chat"}, false},
		{"tablesdb.row.created", map[string]string{"project_id": "other", "database_id": "chat", "table_id": "messages"}, true},
		{"tablesdb.row.created", map[string]string{"project_id": "p", "database_id": "main", "table_id": "messages"}, true},
		{"functions.execution.failed", map[string]string{"project_id": "p", "function_id": "checkout"}, true},
	} {
		if err := s.checkNotOwn(c.event, c.args); (err == nil) != c.ok {
			t.Errorf("%s %v: %v", c.event, c.args, err)
		}
	}
}
