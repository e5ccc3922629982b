package progress

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"appwrite-agent/functions/turn/timeline"
	"appwrite-agent/shared/stdwebhooks"
)

// WebhookBody is the JSON body of one webhook delivery: the turn and a batch of consecutive events.
type WebhookBody struct {
	TurnID string         `json:"turn_id"`
	Events []WebhookEvent `json:"events"`
}

// WebhookEvent is one event of a webhook batch (and the JSON of a Realtime row's payload is its Event).
type WebhookEvent struct {
	Seq   int            `json:"seq"`
	Time  string         `json:"time"`
	Event timeline.Event `json:"event"`
}

// TimeFormat is how event times are written: Appwrite's DateTime format, UTC with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Webhook posts batches to URL, signed with Standard Webhooks (webhook-id = "<turn>_<first seq>-<last seq>",
// so a retry that carries the same events has the same id). Client must be an SSRF-safe client
// (shared/safehttp): the URL comes from the request.
type Webhook struct {
	URL    string
	Secret stdwebhooks.Secret
	TurnID string
	Client *http.Client
	// Now stamps webhook-timestamp (time.Now when nil).
	Now func() time.Time
}

// Name implements Sink.
func (w *Webhook) Name() string { return "webhook" }

// MaxWebhookBody is the size a webhook body stays under: a longer batch is split into several POSTs, in order
// (a single larger event goes alone).
const MaxWebhookBody = 1 << 20

// Send implements Sink: one POST per batch (split at MaxWebhookBody); any 2xx is a delivery, 410 Gone drops
// the sink at once.
func (w *Webhook) Send(ctx context.Context, batch []Envelope) (int, error) {
	events := wireEvents(batch)
	done := 0
	for done < len(events) {
		n, body, err := w.body(events[done:])
		if err != nil {
			return done, err
		}
		if err := w.post(ctx, body, events[done].Seq, events[done+n-1].Seq); err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

// body encodes as many leading events as fit in MaxWebhookBody (at least one).
func (w *Webhook) body(events []WebhookEvent) (int, []byte, error) {
	n := len(events)
	for {
		body, err := json.Marshal(WebhookBody{TurnID: w.TurnID, Events: events[:n]})
		if err != nil {
			return 0, nil, fmt.Errorf("encoding the batch: %w", err)
		}
		if len(body) <= MaxWebhookBody || n == 1 {
			return n, body, nil
		}
		n = max(1, n/2)
	}
}

func (w *Webhook) post(ctx context.Context, body []byte, first, last int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	id := w.TurnID + "_" + strconv.Itoa(first) + "-" + strconv.Itoa(last)
	if err := stdwebhooks.SetHeaders(req.Header, id, now(), body, w.Secret); err != nil {
		return fmt.Errorf("%w: signing: %v", ErrPermanent, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "appwrite-agent-turn/1 (progress webhook)")
	res, err := w.Client.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", w.URL, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return nil
	case res.StatusCode == http.StatusGone:
		return fmt.Errorf("%w: POST %s answered HTTP 410 Gone", ErrPermanent, w.URL)
	default:
		return fmt.Errorf("POST %s answered HTTP %d", w.URL, res.StatusCode)
	}
}

func wireEvents(batch []Envelope) []WebhookEvent {
	out := make([]WebhookEvent, len(batch))
	for i, e := range batch {
		out[i] = WebhookEvent{Seq: e.Seq, Time: e.Time.UTC().Format(TimeFormat), Event: e.Event}
	}
	return out
}
