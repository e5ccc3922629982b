package opsmetrics_test

import (
	"encoding/json"
	"fmt"
	"strings"
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

// TestLinesAreLines: Lines holds exactly the Line of each Add, joined with newlines; a nil *Lines drops.
func TestLinesAreLines(t *testing.T) {
	adds := [][]string{
		{"mcp_events_ingress_total", "outcome", "received"},
		{"mcp_events_deliveries_total", "outcome", "delivered", "event", "row.created"},
		{`we"ird`, "k\n", `"v"`, "metric", "spoof", "odd"},
		{"c"},
	}
	var l opsmetrics.Lines
	if l.Len() != 0 || l.String() != "" {
		t.Fatal("zero Lines not empty")
	}
	var want []string
	for _, a := range adds {
		l.Add(a[0], a[1:]...)
		want = append(want, opsmetrics.Line(a[0], a[1:]...))
	}
	if got := l.String(); got != strings.Join(want, "\n") || l.Len() != len(got) {
		t.Fatalf("Lines:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	var nilLines *opsmetrics.Lines
	nilLines.Add("dropped", "a", "b")

}
