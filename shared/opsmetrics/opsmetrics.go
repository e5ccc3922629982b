// Package opsmetrics formats counter increments as structured log lines an operator can chart: one JSON
// object per line with the counter name, its labels and the increment, written through the function's
// Context.Log (the only log channel of the runtime). Appwrite keeps execution logs; a log pipeline or a
// grep over them sums the counters.
package opsmetrics

import (
	"encoding/json"
	"sort"
	"strings"
)

// Line returns the log line for counter name increased by 1 with labels given as key, value pairs, for
// example Line("mcp_events_deliveries_total", "event", "row.created", "outcome", "delivered"). Keys are
// sorted, so equal increments give equal lines. An odd trailing key gets an empty value.
func Line(name string, labels ...string) string {
	if len(labels)%2 == 1 {
		labels = append(labels, "")
	}
	type kv struct{ k, v string }
	pairs := make([]kv, 0, len(labels)/2)
	for i := 0; i < len(labels); i += 2 {
		if labels[i] == "metric" || labels[i] == "inc" {
			continue
		}
		pairs = append(pairs, kv{labels[i], labels[i+1]})
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].k < pairs[j].k })
	var b strings.Builder
	b.WriteString(`{"metric":`)
	writeJSON(&b, name)
	for _, p := range pairs {
		b.WriteByte(',')
		writeJSON(&b, p.k)
		b.WriteByte(':')
		writeJSON(&b, p.v)
	}
	b.WriteString(`,"inc":1}`)
	return b.String()
}

func writeJSON(b *strings.Builder, s string) {
	out, _ := json.Marshal(s)
	b.Write(out)
}
