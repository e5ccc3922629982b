package metrics_test

import (
	"fmt"

	"appwrite-agent/functions/mcp-events/metrics"
)

func ExampleCount() {
	sink := func(line string) { fmt.Println(line) }
	metrics.Count(sink, metrics.SubscriptionsTotal, "op", "subscribe", "event", "tablesdb.row.created", "outcome", metrics.OutcomeCreated)
	// Output: {"metric":"mcp_events_subscriptions_total","event":"tablesdb.row.created","op":"subscribe","outcome":"created","inc":1}
}
