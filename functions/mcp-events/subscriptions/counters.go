package subscriptions

import (
	"appwrite-agent/functions/mcp-events/mcperr"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/opsmetrics"
)

// The counter of events/subscribe and events/unsubscribe, written in the project's one counter format,
// shared/opsmetrics (one JSON object per increment, docs/CONVENTIONS.md "Counters"), to the call's log:
//
//	{"metric":"mcp_events_subscriptions_total","event":"row.created","op":"subscribe","outcome":"created","inc":1}

// SubscriptionsTotal counts events/subscribe and events/unsubscribe calls by op, event and outcome.
const SubscriptionsTotal = "mcp_events_subscriptions_total"

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

// count writes one increment of SubscriptionsTotal for op, event and outcome to c's log.
func count(c Call, op, event, outcome string) {
	if c.Log != nil {
		c.Log(opsmetrics.Line(SubscriptionsTotal, "op", op, "event", event, "outcome", outcome))
	}
}

// record ends an events/<op> call for event name: a failure (err) is logged, and the call is counted with
// outcome, or the failure's (an event the catalog does not name is counted as "unknown").
func record(c Call, op, name, outcome string, err *mcperr.Error) {
	if err != nil {
		outcome = outcomeOf(err)
		c.logf("events/%s %s: %s", op, name, err.Error())
	}
	event := name
	if _, ok := eventcatalog.Lookup(event); !ok {
		event = "unknown"
	}
	count(c, op, event, outcome)
}

// outcomeOf is the SubscriptionsTotal outcome of a call that failed with err.
func outcomeOf(err *mcperr.Error) string {
	switch err.Kind {
	case mcperr.InvalidParams:
		return OutcomeInvalidParams
	case mcperr.Forbidden:
		return OutcomeForbidden
	case mcperr.NotFound:
		return OutcomeNotFound
	case mcperr.Unsupported:
		return OutcomeUnsupported
	case mcperr.CallbackEndpointError:
		return OutcomeCallbackError
	case mcperr.ResourceExhausted:
		return OutcomeResourceExhausted
	default:
		return OutcomeError
	}
}
