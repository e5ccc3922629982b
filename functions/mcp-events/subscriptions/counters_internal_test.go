package subscriptions

import "testing"

// TestCountWritesOneCounterLine: count writes one SubscriptionsTotal increment in the project's counter
// format (labels sorted), and nothing when the call has no log.
func TestCountWritesOneCounterLine(t *testing.T) {
	var lines []string
	count(Call{Log: func(line string) { lines = append(lines, line) }}, "subscribe", "tablesdb.row.created", OutcomeCreated)
	want := `{"metric":"mcp_events_subscriptions_total","event":"tablesdb.row.created","op":"subscribe","outcome":"created","inc":1}`
	if len(lines) != 1 || lines[0] != want {
		t.Fatalf("lines %q, want [%s]", lines, want)
	}
	count(Call{}, "subscribe", "tablesdb.row.created", OutcomeCreated) // no log: nothing to write, no panic
}
