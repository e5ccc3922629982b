// Package opsmetrics formats counter increments as structured log lines an operator can chart: one JSON
// object per line with the counter name, its labels and the increment, written through the function's
// Context.Log (the only log channel of the runtime). Appwrite keeps execution logs; a log pipeline or a
// grep over them sums the counters. It is the project's only counter format (docs/CONVENTIONS.md,
// "Counters").
package opsmetrics

import (
	"slices"
	"strings"
	"unsafe"

	"appwrite-agent/shared/jsonquote"
)

// Line returns the log line for counter name increased by 1 with labels given as key, value pairs, for
// example Line("mcp_events_deliveries_total", "event", "row.created", "outcome", "delivered"). Keys are
// sorted, so equal increments give equal lines. An odd trailing key gets an empty value.
func Line(name string, labels ...string) string {
	return string(AppendLine(make([]byte, 0, lineSize(name, labels)), name, labels...))
}

// lineSize is the length of Line's result, exact unless a label needs escaping.
func lineSize(name string, labels []string) int {
	size := len(`{"metric":,"inc":1}`) + len(name) + 2
	for _, l := range labels {
		size += len(l) + 3
	}
	return size
}

// AppendLine appends Line(name, labels...) to b.
func AppendLine(b []byte, name string, labels ...string) []byte {
	type kv struct{ k, v string }
	var buf [8]kv // counters have a few labels: no allocation for them
	pairs := buf[:0]
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
	b = append(b, `{"metric":`...)
	b = jsonquote.Append(b, name)
	for _, p := range pairs {
		b = append(b, ',')
		b = jsonquote.Append(b, p.k)
		b = append(b, ':')
		b = jsonquote.Append(b, p.v)
	}
	return append(b, `,"inc":1}`...)
}

// Lines collects counter lines, one per line, for a single write to the log at the end of an execution
// (each log call of the runtime is a write to the execution's log file). The zero value is empty and
// ready; a nil *Lines drops what is added.
type Lines struct {
	// b only grows: the bytes String has handed out are never written again (as in strings.Builder).
	b []byte
}

// LinesIn returns empty Lines that collect into storage first (a caller's buffer, such as a field of the
// execution's own state, saving an allocation), growing past it as needed.
func LinesIn(storage []byte) Lines { return Lines{b: storage[:0:len(storage)]} }

// Add appends Line(name, labels...) as a line of its own.
func (l *Lines) Add(name string, labels ...string) {
	if l == nil {
		return
	}
	switch {
	case len(l.b) > 0:
		l.b = append(l.b, '\n')
	case cap(l.b) == 0:
		l.b = make([]byte, 0, 320) // the three lines of a delivery
	}
	l.b = AppendLine(l.b, name, labels...)
}

// Len is the length of the collected text (0 when nothing was added).
func (l *Lines) Len() int { return len(l.b) }

// String returns the collected lines, separated by "\n" (no trailing newline), without a copy: Lines only
// appends, so a string it returned keeps its text whatever is added later.
func (l *Lines) String() string { return unsafe.String(unsafe.SliceData(l.b), len(l.b)) }
