package request

import (
	"net/url"
	"strings"

	"appwrite-agent/shared/stdwebhooks"
	"appwrite-agent/shared/turnrequest"
)

// Progress is the validated progress field.
type Progress struct {
	TurnID   string
	Realtime bool
	// Webhook is nil without a webhook sink.
	Webhook *Webhook
}

// Webhook is a validated webhook sink.
type Webhook struct {
	URL    string
	Secret stdwebhooks.Secret
}

// Any reports whether at least one sink is requested.
func (p *Progress) Any() bool { return p != nil && (p.Realtime || p.Webhook != nil) }

// Messages of progress validation.
const (
	MsgAsyncNeedsSink  = "an async turn needs a progress sink (progress.realtime or progress.webhook): nobody reads the body of an async execution"
	MsgProgressEmpty   = "progress must enable realtime or give a webhook"
	MsgTurnID          = "progress.turn_id must be 1 to 36 characters of a-z, A-Z, 0-9, _ and -, not starting with _ or -"
	MsgWebhookURL      = "progress.webhook.url must be an https:// URL with a host"
	MsgWebhookNoSecret = "progress.webhook.secret is required: whsec_ followed by the base64 of 24 to 64 random bytes"
	MsgWebhookSecret   = "progress.webhook.secret must be whsec_ followed by the base64 of 24 to 64 random bytes"
)

func parseProgress(b *turnrequest.Progress, async bool) (*Progress, *Error) {
	if b == nil {
		if async {
			return nil, invalid("%s", MsgAsyncNeedsSink)
		}
		return nil, nil
	}
	p := &Progress{TurnID: strings.TrimSpace(b.TurnID), Realtime: b.Realtime}
	if p.TurnID != "" && !turnrequest.ValidTurnID(p.TurnID) {
		return nil, invalid("%s", MsgTurnID)
	}
	if w := b.Webhook; w != nil {
		raw := strings.TrimSpace(w.URL)
		u, err := url.Parse(raw)
		// http:// passes here; the SSRF policy (https unless SAFEHTTP_ALLOW_HTTP) is applied by the handler.
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" || u.User != nil {
			return nil, invalid("%s", MsgWebhookURL)
		}
		if strings.TrimSpace(w.Secret) == "" {
			return nil, invalid("%s", MsgWebhookNoSecret)
		}
		sec, err := stdwebhooks.ParseSecret(strings.TrimSpace(w.Secret))
		if err != nil {
			return nil, invalid("%s", MsgWebhookSecret)
		}
		p.Webhook = &Webhook{URL: raw, Secret: sec}
	}
	if !p.Any() {
		if async {
			return nil, invalid("%s", MsgAsyncNeedsSink)
		}
		return nil, invalid("%s", MsgProgressEmpty)
	}
	return p, nil
}
