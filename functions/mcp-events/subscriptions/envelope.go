package subscriptions

import (
	"fmt"
	"strings"

	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/seal"
)

// A subscription's envelope (shared/seal) lives in three fields of its webhook: authUsername,
// authPassword and, when those two are full, one more path segment of the webhook URL after the
// subscription id (URL + WebhookPath + id + "/" + sealed text; base64url, so never a '%'). The event and
// the filter arguments are not stored: they are bound, and read back from the webhook's events (mcp-events)
// or the delivery's X-Appwrite-Webhook-Events (the ingress).

// webhookURL returns the URL of subscription id carrying the sealed URL part tail ("" for none).
func (s *Service) webhookURL(id, tail string) string {
	if tail == "" {
		return s.WebhookURL(id)
	}
	return s.WebhookURL(id) + "/" + tail
}

// URLTail returns the sealed part of a subscription webhook's URL: what follows WebhookPath + id + "/"
// (an ingress URL changed since does not matter); "" when there is none.
func URLTail(webhookURL, id string) string {
	marker := WebhookPath + id + "/"
	i := strings.Index(webhookURL, marker)
	if i < 0 {
		return ""
	}
	return webhookURL[i+len(marker):]
}

// fieldsOf returns the sealed fields of webhook w.
func fieldsOf(w *awclient.Webhook) seal.Fields {
	return seal.Fields{Username: w.AuthUsername, Password: w.AuthPassword, URLTail: URLTail(w.URL, w.ID)}
}

// targetsOf returns what webhook w's envelope may be bound to: the catalog events its Appwrite events
// name, with their arguments.
func targetsOf(w *awclient.Webhook) []seal.Target {
	var out []seal.Target
	for _, b := range eventcatalog.Bindings(w.Events) {
		out = append(out, seal.Target{Event: b.Event, Args: seal.ArgsOf(b.Args)})
	}
	return out
}

// openWebhook opens the envelope of webhook w in project, bound to targets, or to what its events name
// when targets is empty.
func (s *Service) openWebhook(w *awclient.Webhook, project string, targets ...seal.Target) (seal.Subscription, error) {
	if len(targets) == 0 {
		targets = targetsOf(w)
	}
	return s.o.Sealer.Open(w.ID, project, fieldsOf(w), targets...)
}

// URLBudget is the most sealed characters a subscription's webhook URL can carry with this ingress URL:
// what Appwrite's 255-character url column leaves after the ingress URL, WebhookPath, the id and a '/'.
func URLBudget(ingressURL string) int {
	return seal.URLBudget(strings.TrimRight(ingressURL, "/") + WebhookPath + strings.Repeat("x", IDLength))
}

// checkURLBudget refuses a sealer whose URL budget would make webhook URLs longer than Appwrite stores.
func checkURLBudget(sealer *seal.Sealer, webhookURL string) error {
	if b, most := sealer.Budget().URL, seal.URLBudget(webhookURL); b > most {
		return fmt.Errorf("subscriptions: the envelope's URL budget is %d characters, but with the ingress URL only %d fit in Appwrite's %d-character url column",
			b, most, seal.AppwriteColumn)
	}
	return nil
}
