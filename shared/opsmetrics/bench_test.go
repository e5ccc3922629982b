package opsmetrics

import "testing"

func BenchmarkLine(b *testing.B) {
	for b.Loop() {
		_ = Line("mcp_events_deliveries_total", "event", "row.created", "outcome", "delivered")
	}
}
