package opsmetrics

import (
	"encoding/json"
	"testing"
)

// TestWriteJSONMatchesEncodingJSON: the fast path writes exactly what encoding/json writes.
func TestWriteJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "row.created", "status_request_entity_too_large", "a b-c_d.e:f/g", `q"`, `b\s`, "<a>&", "tab\t", "\x00", "\x7f", "é", "\u2028", string([]byte{0xff}), "ünïcode ok"} {
		got := appendJSON([]byte("x"), s)
		want, _ := json.Marshal(s)
		if string(got) != "x"+string(want) {
			t.Errorf("%q: got %s, want x%s", s, got, want)
		}
	}
}

func BenchmarkLine(b *testing.B) {
	for b.Loop() {
		_ = Line("mcp_events_deliveries_total", "event", "row.created", "outcome", "delivered")
	}
}
