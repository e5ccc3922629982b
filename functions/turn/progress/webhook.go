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

// Send implements Sink: one POST per batch; any 2xx is a delivery, 410 Gone drops the sink at once.
func (w *Webhook) Send(ctx context.Context, batch []Envelope) (int, error) {
	if len(batch) == 0 {
		return 0, nil
	}
	body, err := json.Marshal(WebhookBody{TurnID: w.TurnID, Events: wireEvents(batch)})
	if err != nil {
		return 0, fmt.Errorf("encoding the batch: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	id := w.TurnID + "_" + strconv.Itoa(batch[0].Seq) + "-" + strconv.Itoa(batch[len(batch)-1].Seq)
	if err := stdwebhooks.SetHeaders(req.Header, id, now(), body, w.Secret); err != nil {
		return 0, fmt.Errorf("%w: signing: %v", ErrPermanent, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "appwrite-agent-turn/1 (progress webhook)")
	res, err := w.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("POST %s: %w", w.URL, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return len(batch), nil
	case res.StatusCode == http.StatusGone:
		return 0, fmt.Errorf("%w: POST %s answered HTTP 410 Gone", ErrPermanent, w.URL)
	default:
		return 0, fmt.Errorf("POST %s answered HTTP %d", w.URL, res.StatusCode)
	}
}

func wireEvents(batch []Envelope) []WebhookEvent {
	out := make([]WebhookEvent, len(batch))
	for i, e := range batch {
		out[i] = WebhookEvent{Seq: e.Seq, Time: e.Time.UTC().Format(TimeFormat), Event: e.Event}
	}
	return out
}
