package subscriptions

import (
	"fmt"
	"strconv"
	"strings"

	"appwrite-agent/functions/mcp-events/mcperr"
	"appwrite-agent/shared/awclient"
)

// DeliveryStatus is the deliveryStatus of a refresh answer (SEP-3415 "Webhook delivery status"), read from the
// webhook Appwrite returns before the refresh updates it. Appwrite delivers to webhook-ingress, which answers
// 200 whatever the subscriber did, so what it reports is whether Appwrite's leg of the delivery works: a
// failure there (the ingress unreachable, refusing, failing) is what stops events altogether.
type DeliveryStatus struct {
	// Active is the webhook's enabled: false when Appwrite paused it after repeated failed deliveries (or
	// someone disabled it). The refresh that answers it has just re-enabled it (SEP-3415: "the refresh that
	// returned this status has just reactivated it").
	Active bool `json:"active"`
	// LastError is the category of the last delivery's failure, when the last delivery failed (Appwrite's
	// attempts > 0; a success resets it), read from the webhook's logs; null otherwise. One of
	// connection_refused, timeout, tls_error, http_4xx, http_5xx: never the logs themselves.
	LastError *string `json:"lastError"`
}

// MetaDeliveryStatus is the _meta key of a refresh answer that says why delivery was paused or failing and
// what the refresh did about it (DeliveryNote); deliveryStatus itself carries only the SEP's fields.
const MetaDeliveryStatus = "appwrite-agent/deliveryStatus"

// DeliveryNote explains a deliveryStatus that is not healthy.
type DeliveryNote struct {
	// FailedAttempts is Appwrite's count of consecutive failed deliveries before the refresh.
	FailedAttempts int `json:"failedAttempts"`
	// Reason says in words what Appwrite reported.
	Reason string `json:"reason"`
	// Refresh says what this refresh did about it.
	Refresh string `json:"refresh"`
}

// deliveryStatus reads the deliveryStatus of the subscription whose webhook Appwrite returned as wh, and the
// note that explains it (nil when delivery is healthy).
func deliveryStatus(wh *awclient.Webhook) (*DeliveryStatus, *DeliveryNote) {
	st := &DeliveryStatus{Active: wh.Enabled}
	if wh.Attempts > 0 {
		reason := LastErrorOf(wh.Logs)
		st.LastError = &reason
	}
	switch {
	case !wh.Enabled && wh.Attempts > 0:
		return st, &DeliveryNote{FailedAttempts: wh.Attempts,
			Reason: fmt.Sprintf("Appwrite paused the webhook after %d consecutive failed deliveries to the ingress (the last: %s); "+
				"events that happened while it was paused were not delivered and are not replayed", wh.Attempts, *st.LastError),
			Refresh: "re-enabled the webhook and reset Appwrite's failure counter: events are delivered again from now on"}
	case !wh.Enabled:
		return st, &DeliveryNote{Reason: "the webhook was disabled in the project (not by Appwrite's failure counter, which is 0); " +
			"events that happened while it was disabled were not delivered and are not replayed",
			Refresh: "re-enabled the webhook: events are delivered again from now on"}
	case wh.Attempts > 0:
		return st, &DeliveryNote{FailedAttempts: wh.Attempts,
			Reason: fmt.Sprintf("the last %d deliveries to the ingress failed (the last: %s); Appwrite pauses the webhook after 10 by default",
				wh.Attempts, *st.LastError),
			Refresh: "reset Appwrite's failure counter"}
	}
	return st, nil
}

// LastErrorOf is the SEP-3415 lastError category of the failure Appwrite's webhook worker logged (a webhook's
// logs): "Status code: <n>" is http_4xx or http_5xx; a transport error ("CURL Error: …", "Client Error: …"
// after 1.9.6) is timeout, tls_error or, for every other failure to get an answer (refused, unresolvable,
// reset), connection_refused.
func LastErrorOf(logs string) string {
	for line := range strings.SplitSeq(logs, "\n") {
		if v, ok := strings.CutPrefix(line, "Status code: "); ok {
			if code, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && code >= 500 {
				return mcperr.ReasonHTTP5xx
			} else if err == nil && code >= 400 {
				return mcperr.ReasonHTTP4xx
			}
		}
		msg, ok := strings.CutPrefix(line, "CURL Error: ")
		if !ok {
			msg, ok = strings.CutPrefix(line, "Client Error: ")
		}
		if !ok {
			continue
		}
		m := strings.ToLower(msg)
		switch {
		case strings.Contains(m, "timed out") || strings.Contains(m, "timeout") || strings.Contains(m, "deadline exceeded"):
			return mcperr.ReasonTimeout
		case strings.Contains(m, "ssl") || strings.Contains(m, "tls") || strings.Contains(m, "certificate") || strings.Contains(m, "x509"):
			return mcperr.ReasonTLSError
		}
		return mcperr.ReasonConnectionRefused
	}
	// Attempts without a readable log (none written yet, or another format): no answer was usable.
	return mcperr.ReasonConnectionRefused
}
