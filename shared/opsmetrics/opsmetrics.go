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
// sorted, so equal increments give equal lines. An odd trailing key gets an empty value; the keys "metric"
// and "inc" are dropped. Strings are quoted as encoding/json quotes them.
func Line(name string, labels ...string) string {
	type kv struct{ k, v string }
	var pairs []kv
	for i := 0; i < len(labels); i += 2 {
		if labels[i] == "metric" || labels[i] == "inc" {
			continue
		}
		v := "" // an odd trailing key gets an empty value
		if i+1 < len(labels) {
			v = labels[i+1]
		}
		pairs = append(pairs, kv{labels[i], v})
	}
	slices.SortFunc(pairs, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	var b strings.Builder
	b.WriteString(`{"metric":`)
	b.Write(quote(name))
	for _, p := range pairs {
		b.WriteByte(',')
		b.Write(quote(p.k))
		b.WriteByte(':')
		b.Write(quote(p.v))
	}
	b.WriteString(`,"inc":1}`)
	return b.String()
}

// quote is s as a JSON string (a string always marshals).
func quote(s string) []byte {
	q, _ := json.Marshal(s)
	return q
}

// Lines collects counter lines, one per line, for a single write to the log at the end of an execution
// (each log call of the runtime is a write to the execution's log file). The zero value is empty and
// ready; a nil *Lines drops what is added.
type Lines struct {
	b strings.Builder
}

// Add appends Line(name, labels...) as a line of its own.
func (l *Lines) Add(name string, labels ...string) {
	if l == nil {
		return
	}
	if l.b.Len() > 0 {
		l.b.WriteByte('\n')
	}
	l.b.WriteString(Line(name, labels...))
}

// Len is the length of the collected text (0 when nothing was added).
func (l *Lines) Len() int { return l.b.Len() }

// String returns the collected lines, separated by "\n" (no trailing newline).
func (l *Lines) String() string { return l.b.String() }
