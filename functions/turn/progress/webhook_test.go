package progress

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/functions/turn/timeline"
	"appwrite-agent/shared/stdwebhooks"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

type hookServer struct {
	mu     sync.Mutex
	bodies []WebhookBody
	ids    []string
	status int
}

func newHookServer(t *testing.T) (*hookServer, *httptest.Server) {
	h := &hookServer{status: http.StatusNoContent}
	ref, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := ref.Verify(body, r.Header); err != nil {
			t.Errorf("standard-webhooks refused the signature: %v", err)
		}
		var b WebhookBody
		_ = json.Unmarshal(body, &b)
		h.mu.Lock()
		h.bodies = append(h.bodies, b)
		h.ids = append(h.ids, r.Header.Get("webhook-id"))
		st := h.status
		h.mu.Unlock()
		w.WriteHeader(st)
	}))
	t.Cleanup(srv.Close)
	return h, srv
}

func envelopes(n int, content string) []Envelope {
	out := make([]Envelope, n)
	for i := range out {
		out[i] = Envelope{Seq: i + 1, Time: time.Unix(1_800_000_000, 0), Event: timeline.Token("platform", content)}
	}
	return out
}

func TestWebhookSignsSplitsAndKeepsOrder(t *testing.T) {
	h, srv := newHookServer(t)
	sec, _ := stdwebhooks.ParseSecret(secret)
	w := &Webhook{URL: srv.URL, Secret: sec, TurnID: "turn1", Client: srv.Client()}
	// 5 events of 400 kB: more than MaxWebhookBody together, so several POSTs, in order.
	n, err := w.Send(context.Background(), envelopes(5, strings.Repeat("x", 400_000)))
	if err != nil || n != 5 {
		t.Fatalf("%d %v", n, err)
	}
	seq := 0
	for i, b := range h.bodies {
		if b.TurnID != "turn1" || len(b.Events) == 0 {
			t.Fatalf("body %d: %+v", i, b.TurnID)
		}
		for _, e := range b.Events {
			seq++
			if e.Seq != seq || e.Time != "2027-01-15T08:00:00.000Z" {
				t.Fatalf("event %d: seq %d time %s", seq, e.Seq, e.Time)
			}
		}
	}
	if seq != 5 || len(h.bodies) < 3 || h.ids[0] != "turn1_1-"+itoa(len(h.bodies[0].Events)) {
		t.Fatalf("%d events in %d bodies, ids %v", seq, len(h.bodies), h.ids)
	}
	// 410 is permanent; 500 is not.
	h.status = http.StatusGone
	if _, err := w.Send(context.Background(), envelopes(1, "x")); !errors.Is(err, ErrPermanent) {
		t.Fatalf("410: %v", err)
	}
	h.status = http.StatusInternalServerError
	if _, err := w.Send(context.Background(), envelopes(1, "x")); err == nil || errors.Is(err, ErrPermanent) {
		t.Fatalf("500: %v", err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
