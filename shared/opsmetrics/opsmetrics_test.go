package opsmetrics_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"appwrite-agent/shared/opsmetrics"
)

func ExampleLine() {
	fmt.Println(opsmetrics.Line("mcp_events_deliveries_total", "outcome", "delivered", "event", "row.created"))
	// Output: {"metric":"mcp_events_deliveries_total","event":"row.created","outcome":"delivered","inc":1}
}

func TestLineIsJSONWhateverTheLabels(t *testing.T) {
	line := opsmetrics.Line(`we"ird`, "k\n", `"v"`, "metric", "spoof", "odd")
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if m["metric"] != `we"ird` || m["k\n"] != `"v"` || m["odd"] != "" || m["inc"] != float64(1) {
		t.Fatalf("%v", m)
	}
}
