package metrics_test

import (
	"fmt"

	"appwrite-agent/functions/mcp-events/metrics"
)

func ExampleLine() {
	fmt.Println(metrics.Line(metrics.SubscriptionsTotal, map[string]string{"op": "subscribe", "event": "row.created", "outcome": metrics.OutcomeCreated}))
	// Output: {"metric":"mcp_events_subscriptions_total","value":1,"event":"row.created","op":"subscribe","outcome":"created"}
}
