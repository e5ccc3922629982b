// Package ingress turns one Appwrite webhook delivery into at most one signed, projected MCP event: it
// proves the request is Appwrite's and ours (path id, signature over the stored URL and body, the sealed
// subscription in Basic auth, project, expiry), matches and projects the payload with the event catalog,
// derives an eventId that is stable across Appwrite's retries, and delivers with bounded retries. When the
// subscriber is still failing at the end of the budget, delivery continues as delayed executions of the
// ingress itself (see jobs.go) for a bounded window.
package ingress

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/eventdelivery"
	"appwrite-agent/shared/fnhttp"
	"appwrite-agent/shared/opsmetrics"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/seal"
	"appwrite-agent/shared/stdwebhooks"
)

// WebhookPathPrefix is where Appwrite's webhook worker POSTs: WebhookPathPrefix + subscription id.
const WebhookPathPrefix = "/appwrite/webhooks/"

// Appwrite's webhook headers, lower-cased as the runtime gives them. X-Appwrite-Webhook-Delivery-Id (sent by
// Appwrite Cloud only, per the seed) is deliberately not read: Appwrite's signature does not cover it.
const (
	hdrWebhookID = "x-appwrite-webhook-id"
	hdrEvents    = "x-appwrite-webhook-events"
	hdrProjectID = "x-appwrite-webhook-project-id"
	hdrSignature = "x-appwrite-webhook-signature"
)

// Counter names.
const (
	MetricIngress    = "mcp_events_ingress_total"
	MetricDeliveries = "mcp_events_deliveries_total"
)

// Request is the part of an incoming request the ingress reads.
type Request struct {
	Method  string
	Path    string
	Headers map[string]string // lower-cased keys
	Body    []byte
	// AppwriteKey is the function's own dynamic API key (x-appwrite-key), used to schedule delayed retries.
	AppwriteKey string
}

// Answer is the ingress's reply: an HTTP status and its JSON body, Outcome for a 200, Error otherwise.
type Answer struct {
	Status  int
	Outcome Outcome
	Error   fnhttp.ErrorBody
}

// Event is the body a subscriber receives.
type Event struct {
	EventID   string         `json:"eventId"`
	Name      string         `json:"name"`
	Timestamp string         `json:"timestamp"`
	Data      map[string]any `json:"data"`
}

// Outcome is the body of a 200 answer.
type Outcome struct {
	Status   string `json:"status"` // delivered, ignored, scheduled, abandoned
	EventID  string `json:"eventId,omitempty"`
	Attempts int    `json:"attempts,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// Deps are the ingress's collaborators, replaceable in tests.
type Deps struct {
	// Config is the configuration (a pointer: every call down the delivery path would copy it).
	Config *Config
	// Sender posts to subscribers (share one per process: it keeps their connections); nil means
	// eventdelivery.NewSender(safehttp.NewClient(Config.HTTP)).
	Sender *eventdelivery.Sender
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Counters collects the counter lines (shared/opsmetrics); nil drops them.
	Counters *opsmetrics.Lines
	// Report receives diagnostic text and server faults; nil drops them.
	Report Reporter
	// Scheduler creates delayed executions; nil means the Appwrite API (see jobs.go).
	Scheduler Scheduler

	appwriteKey string // the request's x-appwrite-key, for the default scheduler
}

// Reporter receives what an operator must look at.
type Reporter interface {
	// Error receives diagnostic text (the function's error log).
	Error(text string)
	// Fault receives a server fault: a failure on this side of a delivery that Appwrite proved genuine,
	// never a forged request or a subscriber's failure.
	Fault(f Fault)
}

// Fault is one server fault: what the operator must look at.
type Fault struct {
	// Event and ProjectID say where it happened, when known.
	Event, ProjectID string
	// Outcome is the counter outcome (rejected, schedule_failed, ...) and Reason its reason label.
	Outcome, Reason string
	// Detail describes it (no secrets: the reporter scrubs it again).
	Detail string
}

func (d *Deps) fault(f Fault) {
	if d.Report != nil {
		d.Report.Fault(f)
	}
}

func (d *Deps) error(text string) {
	if d.Report != nil {
		d.Report.Error(text)
	}
}

func (d *Deps) fill(appwriteKey string) {
	if d.Config == nil {
		d.Config = &Config{}
	}
	if d.Sender == nil {
		d.Sender = eventdelivery.NewSender(safehttp.NewClient(d.Config.HTTP))
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	d.appwriteKey = appwriteKey
}

// scheduler is d.Scheduler, or the Appwrite API's when nil (made only when a retry is scheduled).
func (d *Deps) scheduler() Scheduler {
	if d.Scheduler != nil {
		return d.Scheduler
	}
	return appwriteScheduler{self: d.Config.Appwrite, client: &http.Client{Timeout: 5 * time.Second}, key: d.appwriteKey}
}

func (d *Deps) reject(status int, code, msg string) Answer {
	d.Counters.Add(MetricIngress, "outcome", "rejected", "reason", code)
	return Answer{Status: status, Error: fnhttp.ErrorBody{Error: code, Message: msg}}
}

func (d *Deps) ignore(reason string) Answer {
	d.Counters.Add(MetricIngress, "outcome", "ignored", "reason", reason)
	return Answer{Status: http.StatusOK, Outcome: Outcome{Status: "ignored", Reason: reason}}
}

// HandleWebhook verifies and delivers one Appwrite webhook delivery. ctx is the execution's (its deadline
// ExecutionTimeout after it began): every wait ends with it.
func HandleWebhook(ctx context.Context, d Deps, r Request) Answer {
	d.fill(r.AppwriteKey)
	if r.Method != http.MethodPost {
		return d.reject(http.StatusMethodNotAllowed, "method_not_allowed", "Appwrite webhooks are POSTed; got "+r.Method)
	}
	id, tail, ok := ParsePath(r.Path)
	if !ok {
		return d.reject(http.StatusNotFound, "not_found", "no subscription id in the path "+r.Path)
	}
	d.Counters.Add(MetricIngress, "outcome", "received")
	if got := r.Headers[hdrWebhookID]; got != id {
		return d.reject(http.StatusUnauthorized, "webhook_id_mismatch", "X-Appwrite-Webhook-Id does not name the subscription in the path")
	}
	// Appwrite signs the URL it stores: the ingress URL and this path, sealed part included.
	if !d.Config.SigKeys.Verify(id, d.Config.PublicURL+r.Path, r.Body, r.Headers[hdrSignature]) {
		return d.reject(http.StatusUnauthorized, "bad_signature", "X-Appwrite-Webhook-Signature does not verify for this webhook")
	}
	user, pass, ok := basicAuth(r.Headers["authorization"])
	if !ok {
		return d.reject(http.StatusUnauthorized, "missing_subscription", "the webhook carries no sealed subscription in its Basic auth")
	}
	projectID := r.Headers[hdrProjectID]
	delivered := strings.Split(r.Headers[hdrEvents], ",")
	// The envelope is bound to the event and the ids Appwrite names in its events, not storing them: it
	// opens only for the ones it was sealed for.
	bindings := eventcatalog.Bindings(delivered)
	sub, err := d.Config.Sealer.Open(id, projectID, seal.Fields{Username: user, Password: pass, URLTail: tail}, Targets(bindings)...)
	if errors.Is(err, seal.ErrUnknownKey) {
		// Signed by Appwrite and sealed with a key no longer listed: keys are removed once every envelope
		// sealed with them has expired (docs/events.md §5), so this is an expired subscription awaiting
		// cleanup. Answered 200 like one (see below).
		return d.ignore("retired_key")
	}
	if err != nil {
		// Appwrite's signature over the URL and body verified: the webhook is ours, so an envelope that does
		// not open means SEAL_KEYS differ from mcp-events' (or a key was removed too early).
		d.fault(Fault{ProjectID: projectID, Outcome: "rejected", Reason: "subscription_rejected",
			Detail: "a webhook signed by Appwrite carries a sealed subscription that does not open: " + err.Error()})
		return d.reject(http.StatusUnauthorized, "subscription_rejected", "the sealed subscription does not open for this webhook and project")
	}
	now := d.Now()
	// A genuine delivery (signed by Appwrite, envelope opened) is answered 2xx whatever becomes of it:
	// Appwrite counts every status >= 400, and after ten in a row it pauses the webhook and emails every
	// member of the project (Workers/Webhooks.php, sendAlert). A subscription that lapsed is working as
	// designed: it is counted and dropped, and mcp-events deletes its webhook at its owner's next subscribe.
	if sub.Expired(now) {
		return d.ignore("subscription_expired")
	}
	event, ok := eventcatalog.Lookup(sub.Event)
	if !ok {
		return d.ignore("unknown_event")
	}
	args := sub.Args.Map() // the arguments of the binding the envelope opened for
	if !event.MatchesEvents(args, delivered) {
		return d.ignore("event_mismatch")
	}
	occ, err := event.Project(projectID, args, r.Body)
	if errors.Is(err, eventcatalog.ErrNotThisSubscription) {
		return d.ignore("filtered")
	} else if err != nil {
		d.fault(Fault{Event: sub.Event, ProjectID: projectID, Outcome: "ignored", Reason: "bad_payload",
			Detail: "Appwrite sent a payload the event catalog cannot project: " + err.Error()})
		return d.ignore("bad_payload")
	}
	eventID := EventID(id, r.Body)
	timestamp := occ.Timestamp
	if timestamp == "" {
		timestamp = now.UTC().Format(time.RFC3339)
	}
	body, err := json.Marshal(Event{EventID: eventID, Name: sub.Event, Timestamp: timestamp, Data: occ.Data()})
	if err != nil {
		d.fault(Fault{Event: sub.Event, ProjectID: projectID, Outcome: "rejected", Reason: "internal", Detail: "encoding the event: " + err.Error()})
		return d.reject(http.StatusInternalServerError, "internal", "could not encode the event")
	}
	d.Counters.Add(MetricIngress, "outcome", "accepted", "event", sub.Event)
	job := Job{WebhookID: id, ProjectID: projectID, AuthUser: user, AuthPass: pass, URLTail: tail, Args: args, EventID: eventID, Event: sub.Event, Body: body, FirstAttempt: now.Unix()}
	return deliver(ctx, &d, &sub, &job)
}

// deliver runs one execution's worth of attempts and, when they all fail retryably, schedules the next.
func deliver(ctx context.Context, d *Deps, sub *seal.Subscription, job *Job) Answer {
	target := eventdelivery.Target{URL: sub.CallbackURL, SubscriptionID: job.WebhookID}
	for _, s := range sub.SigningSecrets(d.Now()) {
		target.Secrets = append(target.Secrets, stdwebhooks.Secret(s))
	}
	res := d.Sender.Deliver(ctx, target, job.EventID, job.Body, d.Config.Policy, d.Now)
	job.Attempts += len(res.Attempts)
	last := res.Last()
	switch {
	case res.Delivered():
		if job.Attempts > 1 {
			d.Counters.Add(MetricDeliveries, "event", job.Event, "outcome", "retried")
		}
		d.Counters.Add(MetricDeliveries, "event", job.Event, "outcome", "delivered")
		return Answer{Status: http.StatusOK, Outcome: Outcome{Status: "delivered", EventID: job.EventID, Attempts: job.Attempts}}
	case !last.Retryable():
		reason := string(last.Reason)
		if last.Status == http.StatusGone || last.Status == http.StatusRequestEntityTooLarge {
			reason = "status_" + http.StatusText(last.Status)
			reason = strings.ToLower(strings.ReplaceAll(reason, " ", "_"))
		}
		d.Counters.Add(MetricDeliveries, "event", job.Event, "outcome", "abandoned", "reason", reason)
		return Answer{Status: http.StatusOK, Outcome: Outcome{Status: "abandoned", EventID: job.EventID, Attempts: job.Attempts, Reason: reason}}
	}
	reason := last.Reason.MCP()
	if at, ok := nextRun(d, job); ok {
		if err := d.scheduler().Schedule(ctx, *job, at, *d.Config); err == nil {
			d.Counters.Add(MetricDeliveries, "event", job.Event, "outcome", "scheduled", "reason", reason)
			return Answer{Status: http.StatusOK, Outcome: Outcome{Status: "scheduled", EventID: job.EventID, Attempts: job.Attempts, Reason: reason}}
		} else {
			d.Counters.Add(MetricDeliveries, "event", job.Event, "outcome", "schedule_failed", "reason", reason)
			d.error("webhook-ingress: scheduling the delayed retry of event " + job.EventID + " failed: " + err.Error())
			d.fault(Fault{Event: job.Event, ProjectID: job.ProjectID, Outcome: "schedule_failed", Reason: reason,
				Detail: "scheduling the delayed retry of event " + job.EventID + " failed: " + err.Error()})
		}
	}
	d.Counters.Add(MetricDeliveries, "event", job.Event, "outcome", "abandoned", "reason", reason)
	return Answer{Status: http.StatusOK, Outcome: Outcome{Status: "abandoned", EventID: job.EventID, Attempts: job.Attempts, Reason: reason}}
}

// EventID is the delivery's stable id, derived only from what Appwrite signs (X-Appwrite-Webhook-Signature is
// an HMAC over the stored URL, which names the webhook, and the body): the webhook id and a hash of the raw
// body. Appwrite's re-sends of one delivery carry the same body, so they share the id; a replayed request
// gets the id of the original whatever unsigned headers (such as a made-up X-Appwrite-Webhook-Delivery-Id)
// it carries, and the subscriber's deduplication drops it. Two changes of a resource differ in $updatedAt,
// so they differ in the body.
func EventID(webhookID string, body []byte) string {
	bodyHash := sha256.Sum256(body)
	h := sha256.New()
	h.Write([]byte("appwrite-webhook\x00" + webhookID + "\x00"))
	h.Write(bodyHash[:])
	return "evt_" + hex.EncodeToString(h.Sum(nil)[:16])
}

// ParsePath splits a webhook delivery path, WebhookPathPrefix + id, or WebhookPathPrefix + id + "/" + the
// sealed part of the envelope (base64url, never empty).
func ParsePath(path string) (id, tail string, ok bool) {
	rest, found := strings.CutPrefix(path, WebhookPathPrefix)
	if !found {
		return "", "", false
	}
	id, tail, cut := strings.Cut(rest, "/")
	if !eventcatalog.ValidID(id) || (cut && !isBase64URL(tail)) {
		return "", "", false
	}
	return id, tail, true
}

func isBase64URL(s string) bool {
	if s == "" || len(s) > seal.MaxSealedLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Targets returns what an envelope may be bound to in a delivery: the bindings of its Appwrite events
// (eventcatalog.Bindings of X-Appwrite-Webhook-Events), their arguments in the canonical order Open binds.
func Targets(bs []eventcatalog.Binding) []seal.Target {
	out := make([]seal.Target, 0, len(bs))
	for _, b := range bs {
		out = append(out, seal.Target{Event: b.Event, Args: seal.ArgsOf(b.Args)})
	}
	return out
}

// basicAuth parses "Basic base64(user:pass)".
func basicAuth(header string) (user, pass string, ok bool) {
	const prefix = "basic "
	if len(header) < len(prefix) || !strings.EqualFold(header[:len(prefix)], prefix) {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(header[len(prefix):]))
	if err != nil {
		return "", "", false
	}
	user, pass, ok = strings.Cut(string(raw), ":")
	return user, pass, ok && user != "" && pass != ""
}
