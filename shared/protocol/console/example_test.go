package console_test

import (
	"encoding/json"
	"fmt"

	"appwrite-agent/shared/protocol/console"
)

func ExampleResult() {
	fmt.Println(console.Result(`[
	  {"type": "resource", "mutation": "create", "resourceType": "database", "resourceId": "main", "title": "Main"},
	  {"type": "refresh", "scopes": ["Databases"]},
	  {"type": "toast", "level": "success", "message": "Created database Main"}
	]`))
	fmt.Println(console.Result(`[{"type": "set_theme", "theme": "blue"}]`))
	// Output:
	// {"protocol":"appwrite.console/v1","actions":[{"type":"resource","mutation":"create","resourceType":"database","resourceId":"main","title":"Main"},{"type":"refresh","scopes":["databases"]},{"type":"toast","level":"success","message":"Created database Main"}]}
	// Error: invalid console actions — set_theme.theme must be one of ['dark', 'light', 'system']
}

func ExampleNormalize() {
	env, err := console.Normalize(console.Chart{
		Title:    "Requests (last 24 hours)",
		Interval: "1h",
		Metrics: []console.ChartMetric{{
			Metric: "network.requests",
			Points: []console.ChartPoint{{Time: "2026-08-04T08:00:00+00:00", Value: 49}},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(env)
	// Output:
	// {"protocol":"appwrite.console/v1","actions":[{"type":"chart","title":"Requests (last 24 hours)","metrics":[{"metric":"network.requests","points":[{"time":"2026-08-04T08:00:00+00:00","value":49.0}]}],"interval":"1h"}]}
}

func ExampleCall() {
	args := json.RawMessage(`{"actions": "{\"type\": \"scroll_to_card\", \"cardId\": \"card-api-endpoint\"}"}`)
	fmt.Println(console.Call(args))
	// Output:
	// {"protocol":"appwrite.console/v1","actions":[{"type":"scroll_to_card","cardId":"api-endpoint"}]}
}
