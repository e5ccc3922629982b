// Package metrics names the counters of mcp-events and writes them in the one counter format of the
// project, shared/opsmetrics (one JSON object per increment, see docs/CONVENTIONS.md "Counters"):
//
//	{"metric":"mcp_events_subscriptions_total","event":"row.created","op":"subscribe","outcome":"created","inc":1}
package metrics

import "appwrite-agent/shared/opsmetrics"

// SubscriptionsTotal counts events/subscribe and events/unsubscribe calls by op, event and outcome.
const SubscriptionsTotal = "mcp_events_subscriptions_total"

// ToolCallsTotal counts tools/call by tool and outcome (ok, not_found, forbidden, unavailable,
// invalid_arguments, error).
const ToolCallsTotal = "mcp_events_tool_calls_total"

// Outcomes of SubscriptionsTotal.
const (
	OutcomeCreated      = "created"
	OutcomeRefreshed    = "refreshed"
	OutcomeRotated      = "rotated"
	OutcomeUnsubscribed = "unsubscribed"
	// OutcomeAbsent: an unsubscribe found nothing to remove (answered {}: unsubscribe is idempotent).
	OutcomeAbsent        = "absent"
	OutcomeInvalidParams = "invalid_params"
	OutcomeForbidden     = "forbidden"
	OutcomeNotFound      = "not_found"
	OutcomeUnsupported   = "unsupported"
	OutcomeCallbackError = "callback_error"
	// OutcomeResourceExhausted: the per-host challenge rate limit refused the subscribe.
	OutcomeResourceExhausted = "resource_exhausted"
	OutcomeError             = "error"
)

// Sink receives one log line.
type Sink func(line string)

// Count writes one increment of counter name to sink (nothing when sink is nil), with labels given as
// key, value pairs (opsmetrics.Line).
func Count(sink Sink, name string, labels ...string) {
	if sink != nil {
		sink(opsmetrics.Line(name, labels...))
	}
}
