package automations

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"appwrite-agent/functions/chat/store"
	"appwrite-agent/shared/stdwebhooks"
)

// Answer is what chat answers a delivery: the status and the JSON body.
type Answer struct {
	Status int
	Body   map[string]any
}

func answer(status int, kv ...string) Answer {
	b := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		b[kv[i]] = kv[i+1]
	}
	return Answer{Status: status, Body: b}
}

func refuse(status int, code, format string, args ...any) Answer {
	return answer(status, "error", code, "message", fmt.Sprintf(format, args...))
}

// Deliver handles a POST to /api/events/<id> (docs/chat.md "Automations", docs/events.md "Callback
// verification"): the verification challenge of a subscribe, or an event.
//
//   - A body over MaxDeliveryBytes: 413 (the ingress does not retry).
//   - An unknown or deleted automation: 410 Gone, so the ingress stops.
//   - A signature that does not verify with the automation's secret, or a webhook-timestamp outside the
//     tolerance: 401, and nothing is read further.
//   - A challenge: 200 {"challenge"}.
//   - An event: a paused automation, or an event of another name, starts nothing (200 "ignored"); a
//     webhook-id seen before starts nothing (200 "duplicate"); past the rate limit the automation pauses and
//     its conversation says why (200 "paused"); else its turn starts (202 "started"). A turn that cannot
//     start leaves nothing and answers 503, so the ingress retries.
func (s *Service) Deliver(ctx context.Context, id string, headers map[string]string, body []byte) Answer {
	if len(body) > MaxDeliveryBytes {
		return refuse(http.StatusRequestEntityTooLarge, "payload_too_large", "a delivery is at most %d bytes (got %d)", MaxDeliveryBytes, len(body))
	}
	a, err := s.st.AutomationByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return refuse(http.StatusGone, "gone", "automation '%s' does not exist (deleted): its subscription is over", id)
	}
	if err != nil {
		s.log("automations: reading automation " + id + " for a delivery: " + err.Error())
		return refuse(http.StatusServiceUnavailable, "unavailable", "reading the automation failed: retry later")
	}
	raw, err := s.st.AutomationSecret(a)
	var secret stdwebhooks.Secret
	if err == nil {
		secret, err = stdwebhooks.ParseSecret(raw)
	}
	if err != nil {
		s.log("automations: the secret of automation " + id + ": " + err.Error())
		return refuse(http.StatusInternalServerError, "secret_unreadable", "the automation's secret cannot be opened")
	}
	h := http.Header{}
	for _, k := range []string{stdwebhooks.HeaderID, stdwebhooks.HeaderTimestamp, stdwebhooks.HeaderSignature} {
		if v := headers[k]; v != "" {
			h.Set(k, v)
		}
	}
	if err := stdwebhooks.Verify(h, body, s.now(), Tolerance, secret); err != nil {
		switch {
		case errors.Is(err, stdwebhooks.ErrTooOld), errors.Is(err, stdwebhooks.ErrTooNew):
			return refuse(http.StatusUnauthorized, "stale_timestamp", "webhook-timestamp is outside the %s tolerance: a replay, or a clock far off", Tolerance)
		default:
			return refuse(http.StatusUnauthorized, "bad_signature", "the delivery's signature does not verify with this automation's secret")
		}
	}
	var msg struct {
		Type      string          `json:"type"`
		Challenge string          `json:"challenge"`
		EventID   string          `json:"eventId"`
		Name      string          `json:"name"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return refuse(http.StatusBadRequest, "invalid_request", "the body is not a JSON object: %v", err)
	}
	if msg.Type == "verification" {
		if msg.Challenge == "" {
			return refuse(http.StatusBadRequest, "invalid_request", "a verification without a challenge")
		}
		return answer(http.StatusOK, "challenge", msg.Challenge)
	}
	webhookID := h.Get(stdwebhooks.HeaderID)
	if subtle.ConstantTimeCompare([]byte(msg.EventID), []byte(webhookID)) != 1 {
		return refuse(http.StatusBadRequest, "invalid_request", "eventId must equal the webhook-id header")
	}
	if msg.Name != a.Event {
		return answer(http.StatusOK, "status", "ignored", "reason", "event_mismatch")
	}
	if a.Status != store.AutomationActive {
		return answer(http.StatusOK, "status", "ignored", "reason", "paused")
	}
	window := s.window(a)
	runID, err := s.st.ClaimRun(ctx, a, webhookID, window)
	if errors.Is(err, store.ErrDuplicate) {
		return answer(http.StatusOK, "status", "duplicate", "turn_id", runID)
	}
	if err != nil {
		s.log("automations: recording a delivery of " + id + ": " + err.Error())
		return refuse(http.StatusServiceUnavailable, "unavailable", "recording the delivery failed: retry later")
	}
	// The rate limit: a run starts its turn when fewer than the limit were recorded before it in this window
	// (in the database's insertion order, which every delivery reads alike: of deliveries arriving together,
	// the first ones by that order start, the others do not). The run that finds itself past the limit pauses
	// the automation.
	before, _, err := s.st.RunPosition(ctx, a.UserID, a.ID, window, runID)
	if err != nil {
		s.forget(ctx, runID)
		s.log("automations: counting the runs of " + id + ": " + err.Error())
		return refuse(http.StatusServiceUnavailable, "unavailable", "counting the automation's turns failed: retry later")
	}
	if before >= s.cfg.TurnsPerHour {
		s.pauseForLimit(ctx, a, runID, window)
		return answer(http.StatusOK, "status", "paused", "reason", "rate_limit")
	}
	if err := s.start(ctx, a, runID, EventMessage(msg.Name, msg.Timestamp, msg.Data, a.Instruction)); err != nil {
		s.forget(ctx, runID)
		s.log("automations: starting the turn of " + id + ": " + err.Error())
		return refuse(http.StatusServiceUnavailable, "unavailable", "the turn could not start: retry later")
	}
	return answer(http.StatusAccepted, "status", "started", "turn_id", runID)
}

// window is the rate limit's window of a: the clock hour (UTC) and a's generation (a resume starts a new one).
func (s *Service) window(a store.Automation) string {
	return s.now().UTC().Format("2006-01-02T15") + "/" + strconv.FormatInt(a.Generation, 10)
}

// cleanupTime bounds what a delivery still writes after its own time ran out (forgetting a run, pausing).
const cleanupTime = 5 * time.Second

// afterwards is ctx without its cancellation, with cleanupTime of its own: what a delivery must finish even
// when the ingress has given up on it.
func afterwards(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTime)
}

// forget drops a run whose turn did not start, so the delivery's retry can start it.
func (s *Service) forget(ctx context.Context, runID string) {
	ctx, cancel := afterwards(ctx)
	defer cancel()
	if err := s.st.DeleteRun(ctx, runID); err != nil {
		s.log("automations: forgetting run " + runID + ": " + err.Error())
	}
}

// pauseForLimit pauses a for the rate limit and says so in its conversation, once per window.
func (s *Service) pauseForLimit(ctx context.Context, a store.Automation, runID, window string) {
	ctx, cancel := afterwards(ctx)
	defer cancel()
	if err := s.st.SetRunStatus(ctx, runID, store.RunLimited); err != nil {
		s.log("automations: marking run " + runID + " limited: " + err.Error())
	}
	paused, by := store.AutomationPaused, store.PausedByLimit
	if _, err := s.st.UpdateAutomation(ctx, a.ID, store.AutomationUpdate{Status: &paused, PauseReason: &by}); err != nil {
		s.log("automations: pausing " + a.ID + " for the rate limit: " + err.Error())
	}
	text := fmt.Sprintf("Paused: this automation received more than %d events within the hour, the most it may act on. "+
		"The events after the limit started nothing. Resume it when you are ready (its subscription is removed meanwhile).", s.cfg.TurnsPerHour)
	if err := s.st.AddNotice(ctx, a.UserID, a.ConversationID, store.NoticeID(a.ID, "limit/"+window), text); err != nil {
		s.log("automations: the rate-limit notice of " + a.ID + ": " + err.Error())
	}
}

// EventMessage is the user message of a delivery's turn: the event (name, time, its ids) and the
// automation's instruction. The payload carries ids and metadata only (docs/events.md §1): the agent reads
// what they point at with the events server's read tools.
func EventMessage(name, timestamp string, data json.RawMessage, instruction string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Automation event: %s", name)
	if t, err := time.Parse(time.RFC3339Nano, timestamp); err == nil {
		fmt.Fprintf(&b, " at %s", t.UTC().Format(time.RFC3339))
	}
	b.WriteString("\n")
	var fields map[string]any
	if json.Unmarshal(data, &fields) == nil {
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v, ok := fields[k].(string)
			if !ok {
				j, _ := json.Marshal(fields[k])
				v = string(j)
			}
			fmt.Fprintf(&b, "- %s: %s\n", k, v)
		}
	}
	fmt.Fprintf(&b, "\nInstruction: %s\n\n(This turn was started by the user's automation: the user is not here to answer questions. Use the tools to read what the event points at.)", instruction)
	return b.String()
}
