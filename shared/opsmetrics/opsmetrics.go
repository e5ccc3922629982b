// Package opsmetrics formats counter increments as structured log lines an operator can chart: one JSON
// object per line with the counter name, its labels and the increment, written through the function's
// Context.Log (the only log channel of the runtime). Appwrite keeps execution logs; a log pipeline or a
// grep over them sums the counters. It is the project's only counter format (docs/CONVENTIONS.md,
// "Counters").
package opsmetrics

import (
	"encoding/json"
	"slices"
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
	var buf [8]kv // counters have a few labels: no allocation for them
	pairs := buf[:0]
	size := len(`{"metric":,"inc":1}`) + len(name) + 2
	for i := 0; i < len(labels); i += 2 {
		if labels[i] == "metric" || labels[i] == "inc" {
			continue
		}
		pairs = append(pairs, kv{labels[i], labels[i+1]})
		size += len(labels[i]) + len(labels[i+1]) + 6
	}
	slices.SortFunc(pairs, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	var b strings.Builder
	b.Grow(size) // exact unless a label needs escaping
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

// writeJSON writes s as a JSON string exactly as encoding/json does. Label names and values are almost
// always plain identifiers, written as they are; anything else goes through encoding/json (the ingress
// writes three lines per delivery, so this shows in its profile).
func writeJSON(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !plain(c) {
			out, _ := json.Marshal(s)
			b.Write(out)
			return
		}
	}
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// plain reports whether encoding/json writes c unchanged inside a string (no escaping, not HTML-escaped,
// not part of a multi-byte character).
func plain(c byte) bool {
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}
