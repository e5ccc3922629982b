// Package metrics writes counters as structured log lines, one JSON object per increment, that a log
// pipeline can turn into a chartable counter:
//
//	{"metric":"mcp_events_subscriptions_total","value":1,"op":"subscribe","event":"row.created","outcome":"created"}
//
// Functions have no metrics endpoint and no state between executions, so a counter is a log line; sum
// "value" grouped by the labels to chart it.
package metrics

import (
	"encoding/json"
	"sort"
)

// SubscriptionsTotal counts events/subscribe and events/unsubscribe calls by op, event and outcome.
const SubscriptionsTotal = "mcp_events_subscriptions_total"

// Outcomes of SubscriptionsTotal.
const (
	OutcomeCreated       = "created"
	OutcomeRefreshed     = "refreshed"
	OutcomeRotated       = "rotated"
	OutcomeUnsubscribed  = "unsubscribed"
	OutcomeInvalidParams = "invalid_params"
	OutcomeForbidden     = "forbidden"
	OutcomeNotFound      = "not_found"
	OutcomeUnsupported   = "unsupported"
	OutcomeCallbackError = "callback_error"
	OutcomeError         = "error"
)

// Sink receives one log line.
type Sink func(line string)

// Line renders one increment of counter name with labels as the JSON log line (keys in a fixed order:
// metric, value, then the labels sorted).
func Line(name string, labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := []byte(`{"metric":`)
	b = appendJSON(b, name)
	b = append(b, `,"value":1`...)
	for _, k := range keys {
		b = append(b, ',')
		b = appendJSON(b, k)
		b = append(b, ':')
		b = appendJSON(b, labels[k])
	}
	return string(append(b, '}'))
}

func appendJSON(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

// Count writes one increment to sink (nothing when sink is nil).
func Count(sink Sink, name string, labels map[string]string) {
	if sink != nil {
		sink(Line(name, labels))
	}
}
