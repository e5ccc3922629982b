// Package subscriptions implements events/subscribe and events/unsubscribe: validation, authorization with
// the caller's token, the callback verification handshake, and the Appwrite webhook that is the subscription
// (deterministic id, derived signature secret, sealed envelope, narrowed Appwrite events). Nothing is stored
// anywhere else, so any replica serves any call.
package subscriptions

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"appwrite-agent/functions/mcp-events/hostlimit"
	"appwrite-agent/functions/mcp-events/mcperr"
	"appwrite-agent/functions/mcp-events/metrics"
	"appwrite-agent/functions/mcp-events/oauth"
	"appwrite-agent/shared/appwritesig"
	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/seal"
	"appwrite-agent/shared/stdwebhooks"
)

// IDPrefix starts every subscription id, and so every webhook this server manages.
const IDPrefix = "mcpev_"

// ScopeWebhooksWrite is the scope events/unsubscribe needs (it deletes a project webhook).
const ScopeWebhooksWrite = eventcatalog.ScopePrefix + "webhooks.write"

// IDLength is the length of a subscription id: IDPrefix + 30 hex digits (120 bits), Appwrite's 36-character
// custom-id limit.
const IDLength = 36

// WebhookPath is the ingress path of a subscription's webhook: IngressURL + WebhookPath + id.
const WebhookPath = "/appwrite/webhooks/"

// MaxWebhookURL is Appwrite's url column size.
const MaxWebhookURL = 255

// cleanupBudget bounds the opportunistic cleanup after a subscribe.
const cleanupBudget = 3 * time.Second

// Options configure a Service.
type Options struct {
	// Appwrite is the project API client.
	Appwrite *Appwrite
	// Sealer seals envelopes.
	Sealer *seal.Sealer
	// SigKeys derive webhook signature secrets.
	SigKeys *appwritesig.Keys
	// Callback is the SSRF-safe client for verification POSTs, built from CallbackOptions.
	Callback *http.Client
	// CallbackOptions are the safehttp options of Callback (used to check destinations up front).
	CallbackOptions safehttp.Options
	// IngressURL is the webhook-ingress base URL.
	IngressURL string
	// TTLDefault, TTLMin, TTLMax bound grants.
	TTLDefault, TTLMin, TTLMax time.Duration
	// RotationGrace is how long a replaced secret keeps signing.
	RotationGrace time.Duration
	// ChallengeTimeout bounds the verification POST.
	ChallengeTimeout time.Duration
	// ChallengeRate is the most verification challenges this instance sends to one destination host per
	// minute (0: no limit).
	ChallengeRate int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Service serves events/subscribe and events/unsubscribe. It holds no per-subscription state; its only
// state is the per-instance challenge rate limiter.
type Service struct {
	o       Options
	limiter *hostlimit.Limiter
}

// New returns a Service.
func New(o Options) (*Service, error) {
	if o.Appwrite == nil || o.Sealer == nil || o.SigKeys == nil || o.Callback == nil {
		return nil, errors.New("subscriptions: Appwrite, Sealer, SigKeys and Callback are required")
	}
	if n := len(strings.TrimRight(o.IngressURL, "/")) + len(WebhookPath) + IDLength; n > MaxWebhookURL {
		return nil, fmt.Errorf("subscriptions: ingress URL too long: webhook URLs would be %d characters, Appwrite stores %d", n, MaxWebhookURL)
	}
	o.IngressURL = strings.TrimRight(o.IngressURL, "/")
	if err := checkURLBudget(o.Sealer, o.IngressURL+WebhookPath+strings.Repeat("x", IDLength)); err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	svc := &Service{o: o}
	if o.ChallengeRate > 0 {
		svc.limiter = hostlimit.New(o.ChallengeRate, time.Minute, o.Now)
	}
	return svc, nil
}

// Delivery is the delivery object of events/subscribe and events/unsubscribe.
type Delivery struct {
	Mode   string `json:"mode"`
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

// SubscribeParams are the params of events/subscribe.
type SubscribeParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Delivery  *Delivery       `json:"delivery"`
	Cursor    json.RawMessage `json:"cursor"`
	MaxAgeMs  json.RawMessage `json:"maxAgeMs"`
	// TTLMs is kept raw to tell absent (server default) from null (no expiry requested) from a number.
	TTLMs json.RawMessage `json:"ttlMs"`
}

// SubscribeResult is the result of events/subscribe.
type SubscribeResult struct {
	ResultType    string  `json:"resultType"`
	ID            string  `json:"id"`
	RefreshBefore string  `json:"refreshBefore"`
	Cursor        *string `json:"cursor"`
	Truncated     bool    `json:"truncated"`
	// DeliveryStatus is present on the refresh of an existing subscription (SEP-3415), read from its webhook.
	DeliveryStatus *DeliveryStatus `json:"deliveryStatus,omitempty"`
	// Meta carries MetaRotation while a previous secret is in its grace window, or was just dropped, and
	// MetaDeliveryStatus when delivery was paused or failing.
	Meta map[string]any `json:"_meta,omitempty"`
}

// MetaRotation is the _meta key of a subscribe result that reports a secret rotation's grace window.
const MetaRotation = "appwrite-agent/rotation"

// Rotation reports what happened to the previous secret when a subscribe replaced it (or while its grace
// window lasts): kept until PreviousSecretUntil, or not kept because both secrets do not fit the webhook
// (Reason says why and what would fit).
type Rotation struct {
	PreviousSecretKept  bool   `json:"previousSecretKept"`
	PreviousSecretUntil string `json:"previousSecretUntil,omitempty"`
	Reason              string `json:"reason,omitempty"`
}

// UnsubscribeParams are the params of events/unsubscribe.
type UnsubscribeParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Delivery  *Delivery       `json:"delivery"`
}

// EmptyResult is the result of events/unsubscribe.
type EmptyResult struct {
	ResultType string `json:"resultType"`
}

// ID derives the subscription id from its identity (principal, callback URL, event name, canonical
// arguments): IDPrefix + the first 30 hex digits of SHA-256 over the length-prefixed parts.
func ID(principal, callbackURL, event string, args map[string]string) string {
	h := sha256.New()
	for _, p := range []string{"mcp-events/subscription/v1", principal, callbackURL, event, eventcatalog.Canonical(args)} {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return IDPrefix + hex.EncodeToString(h.Sum(nil))[:IDLength-len(IDPrefix)]
}

// WebhookURL returns the ingress URL of subscription id.
func (s *Service) WebhookURL(id string) string { return s.o.IngressURL + WebhookPath + id }

// clampTTL turns the client's ttlMs into the granted duration.
func (s *Service) clampTTL(raw json.RawMessage) (time.Duration, error) {
	ttl := s.o.TTLDefault
	switch v := strings.TrimSpace(string(raw)); v {
	case "":
	case "null":
		// No expiry requested: this server never grants one (it stores nothing), so it grants the maximum.
		ttl = s.o.TTLMax
	default:
		ms, ok := jsonNumber(v)
		if !ok {
			return 0, mcperr.Invalid("ttlMs", "ttlMs: must be a number of milliseconds or null")
		}
		// Clamp in milliseconds, before converting: a huge or very negative number (or one beyond float64,
		// read as ±Inf) must not overflow the Duration conversion.
		lo, hi := float64(s.o.TTLMin/time.Millisecond), float64(s.o.TTLMax/time.Millisecond)
		switch {
		case ms <= lo:
			return s.o.TTLMin, nil
		case ms >= hi:
			return s.o.TTLMax, nil
		default:
			ttl = time.Duration(ms) * time.Millisecond
		}
	}
	return min(max(ttl, s.o.TTLMin), s.o.TTLMax), nil
}

// jsonNumber parses v, which must be a JSON number literal, as a float64; a number beyond float64's range
// is ±Inf (still a number: it is clamped like any other).
func jsonNumber(v string) (float64, bool) {
	if v == "" || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) || !json.Valid([]byte(v)) {
		return 0, false // not a number literal: a string ("NaN", "1h"), a boolean, an object, ...
	}
	f, err := strconv.ParseFloat(v, 64)
	var ne *strconv.NumError
	if err != nil && !(errors.As(err, &ne) && ne.Err == strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// checkURL validates a callback URL: absolute https, no credentials or fragment, not too long, and (without
// sending anything) a destination the SSRF policy allows.
func (s *Service) checkURL(ctx context.Context, raw string) *mcperr.Error {
	if raw == "" {
		return mcperr.Invalid("delivery.url", "delivery.url: required")
	}
	if len(raw) > seal.MaxURLBytes {
		return mcperr.Invalid("delivery.url", "delivery.url: longer than %d bytes", seal.MaxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || !u.IsAbs() {
		return mcperr.Invalid("delivery.url", "delivery.url: not an absolute URL")
	}
	if u.Scheme != "https" {
		return mcperr.Invalid("delivery.url", "delivery.url: must use https (got %q)", u.Scheme)
	}
	if u.User != nil || u.Fragment != "" {
		return mcperr.Invalid("delivery.url", "delivery.url: must not carry credentials or a fragment")
	}
	if err := safehttp.CheckDestination(ctx, raw, s.o.CallbackOptions); err != nil {
		var blocked *safehttp.BlockedError
		if errors.As(err, &blocked) || errors.Is(err, safehttp.ErrBlocked) {
			why := blockedWhy(err)
			return mcperr.New(mcperr.InvalidParams, map[string]any{"field": "delivery.url", "reason": why},
				"delivery.url: destination not allowed (%s)", why)
		}
		// Resolution failures are reported by the verification POST itself.
	}
	return nil
}

func blockedWhy(err error) string {
	var b *safehttp.BlockedError
	if errors.As(err, &b) && b.Why != "" {
		return b.Why
	}
	return "private or reserved address"
}

// Call carries what one request knows about its caller.
type Call struct {
	// Principal is the verified caller.
	Principal *oauth.Principal
	// Log receives diagnostics and metric lines.
	Log metrics.Sink
}

func (c Call) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log(fmt.Sprintf(format, args...))
	}
}

func count(c Call, op, event, outcome string) {
	metrics.Count(c.Log, metrics.SubscriptionsTotal, "op", op, "event", event, "outcome", outcome)
}

func outcomeOf(err *mcperr.Error) string {
	switch err.Kind {
	case mcperr.InvalidParams:
		return metrics.OutcomeInvalidParams
	case mcperr.Forbidden:
		return metrics.OutcomeForbidden
	case mcperr.NotFound:
		return metrics.OutcomeNotFound
	case mcperr.Unsupported:
		return metrics.OutcomeUnsupported
	case mcperr.CallbackEndpointError:
		return metrics.OutcomeCallbackError
	case mcperr.ResourceExhausted:
		return metrics.OutcomeResourceExhausted
	default:
		return metrics.OutcomeError
	}
}

// prepared is a validated request.
type prepared struct {
	event   eventcatalog.Event
	args    map[string]string // all arguments, project_id included
	project string
	url     string
	id      string
}

func (s *Service) prepare(ctx context.Context, c Call, name string, rawArgs json.RawMessage, d *Delivery, checkURL bool) (*prepared, *mcperr.Error) {
	if name == "" {
		return nil, mcperr.Invalid("name", "name: required")
	}
	ev, ok := eventcatalog.Lookup(name)
	if !ok {
		return nil, mcperr.New(mcperr.NotFound, map[string]any{"kind": "event"}, "unknown event %q", name)
	}
	// A renamed event: its subscriptions keep delivering until they expire and can be unsubscribed, but a
	// subscribe (or refresh) must use the catalog's name.
	if ev.RenamedTo != "" && checkURL {
		return nil, mcperr.New(mcperr.NotFound, map[string]any{"kind": "event", "renamedTo": ev.RenamedTo},
			"event %q was renamed %q (the names of Appwrite's MCP servers): subscribe to %q; subscriptions made under the old name deliver until they expire", name, ev.RenamedTo, ev.RenamedTo)
	}
	if d == nil {
		return nil, mcperr.Invalid("delivery", "delivery: required object (mode, url and, to subscribe, secret)")
	}
	if d.Mode != "" && d.Mode != "webhook" {
		return nil, mcperr.New(mcperr.Unsupported, map[string]any{"feature": "deliveryMode", "value": d.Mode},
			"delivery mode %q is not supported; only webhook", d.Mode)
	}
	if checkURL {
		if err := s.checkURL(ctx, d.URL); err != nil {
			return nil, err
		}
	} else if d.URL == "" {
		return nil, mcperr.Invalid("delivery.url", "delivery.url: required")
	}
	args, err := ev.ValidateArgs(rawArgs)
	if err != nil {
		return nil, mcperr.Invalid("arguments", "%s", err.Error())
	}
	if err := dottedID(args); err != nil {
		return nil, err
	}
	return &prepared{
		event: ev, args: args, project: args[eventcatalog.ArgProject], url: d.URL,
		id: ID(c.Principal.Subject, d.URL, ev.Name, args),
	}, nil
}

// Subscribe serves events/subscribe.
func (s *Service) Subscribe(ctx context.Context, c Call, p SubscribeParams) (*SubscribeResult, *mcperr.Error) {
	res, outcome, err := s.subscribe(ctx, c, p)
	if err != nil {
		outcome = outcomeOf(err)
		c.logf("events/subscribe %s: %s", p.Name, err.Error())
	}
	event := p.Name
	if _, ok := eventcatalog.Lookup(event); !ok {
		event = "unknown"
	}
	count(c, "subscribe", event, outcome)
	return res, err
}

func (s *Service) subscribe(ctx context.Context, c Call, p SubscribeParams) (*SubscribeResult, string, *mcperr.Error) {
	pr, merr := s.prepare(ctx, c, p.Name, p.Arguments, p.Delivery, true)
	if merr != nil {
		return nil, "", merr
	}
	secret, err := stdwebhooks.ParseSecret(p.Delivery.Secret)
	if err != nil {
		return nil, "", mcperr.Invalid("delivery.secret", "delivery.secret: must be %q followed by standard base64 of %d to %d random bytes",
			stdwebhooks.SecretPrefix, stdwebhooks.MinSecretBytes, stdwebhooks.MaxSecretBytes)
	}
	ttl, terr := s.clampTTL(p.TTLMs)
	if terr != nil {
		return nil, "", mcperr.As(terr)
	}
	if err := checkMaxAge(p.MaxAgeMs); err != nil {
		return nil, "", err
	}
	if err := s.fitsAlone(pr, secret, ttl); err != nil {
		return nil, "", err
	}
	if missing := pr.event.MissingScopes(c.Principal.Scopes); len(missing) > 0 {
		return nil, "", mcperr.InsufficientScope(missing, pr.event.StepUpScopes(c.Principal.Scopes),
			"the access token lacks the scopes %s needs: %s", pr.event.Name, strings.Join(missing, ", "))
	}
	proj := s.o.Appwrite.Project(pr.project, c.Principal.Token)
	// Before anything is contacted: an Appwrite older than MinVersion would ignore the secret.
	if err := s.o.Appwrite.RequireVersion(ctx); err != nil {
		return nil, "", mapAppwrite(err, "webhook", pr.project)
	}
	if err := s.authorize(ctx, proj, pr); err != nil {
		return nil, "", err
	}

	now := s.o.Now().UTC().Truncate(time.Second)
	principal := c.Principal.Subject
	existing, err := proj.Client.GetWebhook(ctx, proj.Auth, pr.id)
	if err != nil && awclient.StatusOf(err) != http.StatusNotFound {
		return nil, "", mapAppwrite(err, "webhook", "")
	}
	if err != nil {
		existing = nil
	}
	argsNoProject := withoutProject(pr.args)
	// What the existing webhook says: its envelope, when Appwrite returns authPassword (the open-source
	// server does, Appwrite Cloud never), or else its label (label.go), when it verifies for this caller.
	var prev *seal.Subscription
	var prevLabel *label
	if existing != nil {
		if sub, oerr := s.openWebhook(existing, pr.project, seal.Target{Event: pr.event.Name, Args: seal.ArgsOf(argsNoProject)}); oerr == nil {
			prev = &sub
		} else if l, ok := parseLabel(existing.Name); ok && l.Event == pr.event.Name && s.ownedBy(l, pr.id, pr.project, principal, argsNoProject) {
			prevLabel = &l
		} else {
			c.logf("events/subscribe: existing webhook %s neither opens nor carries this caller's label (%v); replacing it", pr.id, oerr)
		}
	}

	sub := seal.Subscription{
		CallbackURL: pr.url, Secret: secret, Event: pr.event.Name, Args: seal.ArgsOf(argsNoProject),
		ProjectID: pr.project, Expiry: now.Add(ttl),
	}
	outcome := metrics.OutcomeCreated
	var rotation *Rotation
	switch {
	case prev != nil:
		outcome = metrics.OutcomeRefreshed
		if !bytes.Equal(prev.Secret, secret) {
			outcome = metrics.OutcomeRotated
			sub.PrevSecret, sub.PrevSecretUntil = prev.Secret, now.Add(s.o.RotationGrace)
		} else if len(prev.PrevSecret) > 0 && now.Before(prev.PrevSecretUntil) {
			sub.PrevSecret, sub.PrevSecretUntil = prev.PrevSecret, prev.PrevSecretUntil
		}
	case prevLabel != nil:
		// The label says whether the secret changed, but the previous secret is sealed in authPassword, which
		// this Appwrite does not return: it cannot be kept for a grace window.
		outcome = metrics.OutcomeRefreshed
		if !bytes.Equal(prevLabel.Fingerprint, s.fingerprint(pr.id, secret)) {
			outcome = metrics.OutcomeRotated
			rotation = &Rotation{PreviousSecretKept: false, Reason: reasonUnreadable}
		} else if !prevLabel.PrevUntil.IsZero() && now.Before(prevLabel.PrevUntil) {
			rotation = &Rotation{PreviousSecretKept: false, Reason: reasonUnreadableGrace}
		}
	}
	// An existing, unexpired subscription of this principal that records a verification of the same URL
	// proves the handshake already happened: refreshes skip it on every replica. A lapsed one is re-verified.
	// (The id is a hash over the principal and the URL, and the label's URL MAC binds both.)
	verified := false
	switch {
	case prev != nil:
		verified = !prev.VerifiedAt.IsZero() && prev.CallbackURL == pr.url && !prev.Expired(now)
		sub.VerifiedAt = prev.VerifiedAt
	case prevLabel != nil:
		verified = now.Before(prevLabel.Expiry) && s.provesURL(*prevLabel, pr.id, pr.project, principal, pr.url, argsNoProject)
		sub.VerifiedAt = prevLabel.VerifiedAt
	}
	if !verified {
		sub.VerifiedAt = now
	}
	// The project's managed webhooks: another live subscription of this principal to this URL proves the
	// verification too (per (principal, URL)), and the caller's expired subscriptions are deleted before the
	// write, so that they never hold a slot of the plan's webhook limit.
	lctx, lcancel := context.WithTimeout(ctx, cleanupBudget)
	hooks, err := proj.Client.ListWebhooks(lctx, proj.Auth, IDPrefix)
	lcancel()
	if err != nil {
		c.logf("events/subscribe %s: list webhooks: %v (no cleanup; the callback is challenged unless this subscription proves it)", pr.id, err)
	} else {
		if !verified {
			if at, from, ok := s.verifiedSibling(hooks, principal, pr, now); ok {
				verified, sub.VerifiedAt = true, at
				c.logf("events/subscribe %s: callback already verified by subscription %s", pr.id, from)
			}
		}
		s.cleanup(ctx, c, proj, principal, pr.id, hooks)
	}
	// Seal first, so that a subscription that cannot fit is refused before the endpoint is contacted.
	f, err := s.o.Sealer.Seal(pr.id, sub)
	var tooLong *seal.TooLongError
	if errors.As(err, &tooLong) && len(sub.PrevSecret) > 0 {
		// Both secrets do not fit: rotate without a grace window rather than fail, and say so in the answer.
		rotation = &Rotation{PreviousSecretKept: false, Reason: "the previous secret was not kept (deliveries are signed with the new secret only): " +
			tooLong.Error() + "; without it the callback URL fits"}
		c.logf("events/subscribe %s: previous secret dropped: %s", pr.id, tooLong.Error())
		sub.PrevSecret, sub.PrevSecretUntil = nil, time.Time{}
		f, err = s.o.Sealer.Seal(pr.id, sub)
	} else if err == nil && len(sub.PrevSecret) > 0 {
		rotation = &Rotation{PreviousSecretKept: true, PreviousSecretUntil: sub.PrevSecretUntil.UTC().Format(time.RFC3339)}
	}
	if err != nil {
		return nil, "", s.sealError(err, sub)
	}
	if !verified {
		if err := s.challengeAllowed(pr.url); err != nil {
			return nil, "", err
		}
		if err := s.verifyCallback(ctx, pr, secret); err != nil {
			return nil, "", err
		}
	}
	whSecret, err := s.o.SigKeys.Secret(pr.id)
	if err != nil {
		return nil, "", mcperr.As(err)
	}
	in := awclient.WebhookInput{
		Name: s.labelFor(pr.id, principal, sub).String(), URL: s.webhookURL(pr.id, f.URLTail), Events: pr.event.AppwriteEvents(pr.args),
		TLS: true, AuthUsername: f.Username, AuthPassword: f.Password,
	}
	if err := s.upsert(ctx, proj, pr.id, whSecret, in, existing != nil); err != nil {
		return nil, "", err
	}
	res := &SubscribeResult{
		ResultType: "complete", ID: pr.id, RefreshBefore: RefreshBefore(sub.Expiry, ttl).UTC().Format(time.RFC3339),
		Cursor: nil, Truncated: false,
	}
	if rotation != nil {
		res.Meta = map[string]any{MetaRotation: rotation}
	}
	if prev != nil || prevLabel != nil {
		// A refresh of this caller's subscription: how its webhook was doing, before this update re-enabled it
		// (enabled: true) and reset Appwrite's failure counter.
		var note *DeliveryNote
		res.DeliveryStatus, note = deliveryStatus(existing)
		if note != nil {
			if res.Meta == nil {
				res.Meta = map[string]any{}
			}
			res.Meta[MetaDeliveryStatus] = note
			c.logf("events/subscribe %s: %s; the refresh %s", pr.id, note.Reason, note.Refresh)
		}
	}
	return res, outcome, nil
}

// RefreshBefore is the refreshBefore of a grant of ttl that expires at expiry: a tenth of the grant earlier
// (rounded up to whole seconds), so that a client refreshing at refreshBefore, however slowly, never lets
// deliveries lapse (6 minutes for an hour, 30 s at a 5-minute floor; appwrite/mcp docs/events.md "TTL").
func RefreshBefore(expiry time.Time, ttl time.Duration) time.Time {
	margin := (ttl/10 + time.Second - 1).Truncate(time.Second)
	return expiry.Add(-margin)
}

// What a rotation answers when the previous secret cannot be read back.
const (
	reasonUnreadable = "the previous secret was not kept (deliveries are signed with the new secret only): " +
		"it is sealed in the webhook's authPassword, which this Appwrite does not return (Appwrite Cloud never does)"
	reasonUnreadableGrace = "the previous secret's grace window ends now (deliveries are signed with the current secret only): " +
		"it is sealed in the webhook's authPassword, which this Appwrite does not return (Appwrite Cloud never does)"
)

func withoutProject(args map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range args {
		if k != eventcatalog.ArgProject {
			out[k] = v
		}
	}
	return out
}

// authorize reads the subscription's target with the caller's token: the table, bucket, function or site,
// or one user of the project's users.
func (s *Service) authorize(ctx context.Context, proj Project, pr *prepared) *mcperr.Error {
	kind := string(pr.event.Target)
	r := awclient.Request{Method: http.MethodGet}
	switch pr.event.Target {
	case eventcatalog.TargetTable:
		r.Path = awclient.Path("tablesdb", pr.args[eventcatalog.ArgDatabase], "tables", pr.args[eventcatalog.ArgTable])
	case eventcatalog.TargetBucket:
		r.Path = awclient.Path("storage", "buckets", pr.args[eventcatalog.ArgBucket])
	case eventcatalog.TargetFunction:
		r.Path = awclient.Path("functions", pr.args[eventcatalog.ArgFunction])
	case eventcatalog.TargetSite:
		r.Path = awclient.Path("sites", pr.args[eventcatalog.ArgSite])
	case eventcatalog.TargetUsers:
		// At most one user: enough to prove the caller may read the project's users.
		r.Path, r.Query = awclient.Path("users"), url.Values{"queries[]": {`{"method":"limit","values":[1]}`}}
	default:
		return nil
	}
	if err := proj.Client.Call(ctx, proj.Auth, r, nil); err != nil {
		return mapAppwrite(err, kind, pr.project)
	}
	return nil
}

var paramRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("Invalid `([A-Za-z]+)` param") })

// fieldNames maps Appwrite webhook params to the subscription fields that fill them.
var fieldNames = map[string]string{
	"authUsername": "envelope (delivery.url, delivery.secret and arguments sealed in authUsername)",
	"authPassword": "envelope (delivery.url, delivery.secret and arguments sealed in authPassword)",
	"httpUser":     "envelope (delivery.url, delivery.secret and arguments sealed in authUsername)",
	"httpPass":     "envelope (delivery.url, delivery.secret and arguments sealed in authPassword)",
	"url":          "webhook url (MCP_EVENTS_INGRESS_URL, and the envelope sealed after it)",
	"name":         "webhook name",
	"events":       "arguments (Appwrite refused the event pattern)",
}

// mapAppwrite maps an Appwrite failure to an MCP error: 401/403 Forbidden, 404 NotFound (data.kind), 400
// InvalidParams naming the field, anything else (5xx, transport) an internal error with a retry hint. An
// Appwrite 5xx is never passed through as such.
func mapAppwrite(err error, kind, project string) *mcperr.Error {
	var ve *VersionError
	if errors.As(err, &ve) {
		return mcperr.New(mcperr.Unsupported, map[string]any{"appwriteVersion": ve.Found, "minimumAppwriteVersion": ve.Need},
			"events are not available on this server: %s", strings.TrimPrefix(ve.Error(), "appwrite: "))
	}
	var ae *awclient.Error
	if !errors.As(err, &ae) || ae.Status == 0 {
		e := mcperr.New(mcperr.Internal, nil, "Appwrite could not be reached; retry later")
		e.Fault = "appwrite_unreachable"
		return e
	}
	where := ""
	if project != "" {
		where = " in project " + project
	}
	switch {
	case ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden:
		return mcperr.New(mcperr.Forbidden, map[string]any{"appwriteType": ae.Type},
			"Appwrite refused access to the %s%s: %s", kind, where, ae.Message)
	case ae.Status == http.StatusNotFound && ae.Type == "general_route_not_found":
		// Not a missing resource: this Appwrite lacks a route mcp-events calls.
		return mcperr.New(mcperr.Internal, map[string]any{"appwriteType": ae.Type},
			"Appwrite%s has no route for a call mcp-events makes (it needs Appwrite %s or later): %s", where, MinVersion, ae.Message)
	case ae.Status == http.StatusNotFound:
		k := kind
		if strings.HasPrefix(ae.Type, "project_") {
			k = "project"
		}
		return mcperr.New(mcperr.NotFound, map[string]any{"kind": k, "appwriteType": ae.Type},
			"%s not found%s: %s", k, where, ae.Message)
	case ae.Status == http.StatusBadRequest:
		field := "arguments"
		if m := paramRe().FindStringSubmatch(ae.Message); m != nil {
			if f, ok := fieldNames[m[1]]; ok {
				field = f
			} else {
				field = m[1]
			}
		}
		return mcperr.Invalid(field, "Appwrite refused the subscription's %s: %s", field, ae.Message)
	default:
		e := mcperr.New(mcperr.Internal, map[string]any{"appwriteStatus": ae.Status},
			"Appwrite failed (%d %s); retry later", ae.Status, ae.Type)
		e.Fault = fmt.Sprintf("appwrite_%d", ae.Status)
		return e
	}
}

// mapWebhookWrite maps a failed webhook create or update. Appwrite answers 500 general_unknown when a value
// does not fit its 255-character column after encryption (appwrite#14293: the database validates after
// encrypting authPassword, and no handler maps the StructureException); the envelope budgets exist to keep
// that from happening, so a 5xx here says what Appwrite answered and what that usually means.
func mapWebhookWrite(err error, op, project string) *mcperr.Error {
	var ae *awclient.Error
	if errors.As(err, &ae) && ae.Status >= 500 {
		return mcperr.New(mcperr.Internal, map[string]any{"appwriteStatus": ae.Status, "appwriteType": ae.Type, "operation": "webhook " + op},
			"Appwrite failed to %s the subscription's webhook in project %s: %d %s %q. Appwrite answers so when a webhook field is longer than its 255-character column after encryption (appwrite#14293): this deployment's envelope budgets (MCP_EVENTS_SEAL_USERNAME_BUDGET, MCP_EVENTS_SEAL_PASSWORD_BUDGET, MCP_EVENTS_SEAL_URL_BUDGET) exceed what Appwrite stores",
			op, project, ae.Status, ae.Type, ae.Message)
	}
	return mapAppwrite(err, "webhook", project)
}

// sealError turns a seal refusal into InvalidParams naming what the client can change: the callback URL
// (the ids are the user's resources), with the exact maximum for this request, and a shorter secret when
// that would make room.
func (s *Service) sealError(err error, sub seal.Subscription) *mcperr.Error {
	var tl *seal.TooLongError
	if errors.As(err, &tl) {
		msg := "the subscription does not fit in an Appwrite webhook: " + tl.Error()
		if len(sub.Secret) > stdwebhooks.MinSecretBytes {
			short := sub
			short.Secret = sub.Secret[:stdwebhooks.MinSecretBytes]
			if m := s.o.Sealer.MaxCallbackURL(short); m > tl.MaxCallbackURL && m >= 1 {
				msg += fmt.Sprintf(" (a %d-byte secret leaves room for %d)", stdwebhooks.MinSecretBytes, m)
			}
		}
		return mcperr.New(mcperr.InvalidParams, map[string]any{"field": "delivery.url", "length": tl.CallbackURL, "maxLength": max(tl.MaxCallbackURL, 0)}, "%s", msg)
	}
	var fe *seal.FieldError
	if errors.As(err, &fe) {
		return mcperr.Invalid(fe.Field, "%s: %s", fe.Field, fe.Reason)
	}
	return mcperr.As(err)
}

// TypePlanLimit is Appwrite Cloud's error type for a create beyond what the project's plan allows (403;
// appwrite/mcp docs/events.md "Free plan": 2 webhooks per project on Free, 50 on Start, unlimited on Pro and
// Scale).
const TypePlanLimit = "additional_resource_not_allowed"

// planLimit is the answer to a webhook create refused by the plan: ResourceExhausted with data
// {"limit": "webhooks", "max": <webhooks the project has>} and what to do about it. The caller's expired
// subscriptions were deleted before the create, so what fills the plan is live.
func (s *Service) planLimit(ctx context.Context, proj Project) *mcperr.Error {
	data := map[string]any{"limit": "webhooks"}
	of := ""
	if n, err := proj.Client.CountWebhooks(ctx, proj.Auth); err == nil {
		data["max"] = n
		of = fmt.Sprintf(" of %d", n)
	}
	return mcperr.New(mcperr.ResourceExhausted, data,
		"project %s has reached its Appwrite plan's limit%s webhooks, and every event subscription uses one: unsubscribe from another event (or delete a webhook in the Appwrite Console), or upgrade the plan (Free allows 2 webhooks per project, Start 50, Pro and Scale unlimited)",
		proj.ID(), of)
}

// upsert creates the webhook or updates it in place, and sets its derived signature secret.
func (s *Service) upsert(ctx context.Context, proj Project, id, secret string, in awclient.WebhookInput, exists bool) *mcperr.Error {
	if !exists {
		_, err := s.o.Appwrite.CreateWebhook(ctx, proj, id, secret, in)
		if err == nil {
			return nil
		}
		var ae *awclient.Error
		if errors.As(err, &ae) && ae.Type == TypePlanLimit {
			return s.planLimit(ctx, proj)
		}
		if awclient.StatusOf(err) != http.StatusConflict {
			return mapWebhookWrite(err, "create", proj.ID())
		}
		// Another replica created it in the meantime: update it.
	}
	if _, err := proj.Client.UpdateWebhook(ctx, proj.Auth, id, in); err != nil {
		return mapWebhookWrite(err, "update", proj.ID())
	}
	if err := s.o.Appwrite.SetWebhookSecret(ctx, proj, id, secret); err != nil {
		return mapAppwrite(err, "webhook", proj.ID())
	}
	return nil
}

// cleanup deletes the expired subscriptions among hooks (the project's managed webhooks, as listed in the same
// call): the caller's, known by their label (its owner MAC verifies for principal), and any whose envelope
// opens (when Appwrite returns authPassword, as the open-source server does). Webhooks this deployment cannot
// read (another deployment's keys, another principal's label) are left alone. Bounded by cleanupBudget;
// failures only log.
func (s *Service) cleanup(ctx context.Context, c Call, proj Project, principal, keep string, hooks []awclient.Webhook) {
	ctx, cancel := context.WithTimeout(ctx, cleanupBudget)
	defer cancel()
	now := s.o.Now()
	for _, w := range hooks {
		if w.ID == keep || len(w.ID) != IDLength {
			continue
		}
		expired := false
		if sub, err := s.openWebhook(&w, proj.ID()); err == nil {
			expired = sub.Expired(now)
		} else if l, ok := parseLabel(w.Name); ok {
			_, mine := s.ownedByAny(l, &w, proj.ID(), principal)
			expired = mine && !now.Before(l.Expiry)
		}
		if !expired {
			continue
		}
		if err := proj.Client.DeleteWebhook(ctx, proj.Auth, w.ID); err != nil && awclient.StatusOf(err) != http.StatusNotFound {
			c.logf("cleanup %s: delete expired webhook %s: %v", proj.ID(), w.ID, err)
			continue
		}
		c.logf("cleanup %s: deleted expired subscription webhook %s", proj.ID(), w.ID)
	}
}

// argsFor returns the candidate arguments (without project_id) that webhook w's Appwrite events give event:
// one set, or one per value of a filter Appwrite's events do not name (a deployment's status).
func argsFor(w *awclient.Webhook, event string) []map[string]string {
	var out []map[string]string
	for _, b := range eventcatalog.Bindings(w.Events) {
		if b.Event == event {
			out = append(out, b.Args)
		}
	}
	return out
}

// Unsubscribe serves events/unsubscribe.
func (s *Service) Unsubscribe(ctx context.Context, c Call, p UnsubscribeParams) (*EmptyResult, *mcperr.Error) {
	res, outcome, err := s.unsubscribe(ctx, c, p)
	if err != nil {
		outcome = outcomeOf(err)
		c.logf("events/unsubscribe %s: %s", p.Name, err.Error())
	}
	event := p.Name
	if _, ok := eventcatalog.Lookup(event); !ok {
		event = "unknown"
	}
	count(c, "unsubscribe", event, outcome)
	return res, err
}

func (s *Service) unsubscribe(ctx context.Context, c Call, p UnsubscribeParams) (*EmptyResult, string, *mcperr.Error) {
	pr, merr := s.prepare(ctx, c, p.Name, p.Arguments, p.Delivery, false)
	if merr != nil {
		return nil, "", merr
	}
	if !eventcatalog.HasScope(c.Principal.Scopes, ScopeWebhooksWrite) {
		return nil, "", mcperr.InsufficientScope([]string{ScopeWebhooksWrite}, []string{ScopeWebhooksWrite},
			"the access token lacks the scope unsubscribing needs: %s", ScopeWebhooksWrite)
	}
	proj := s.o.Appwrite.Project(pr.project, c.Principal.Token)
	if err := proj.Client.DeleteWebhook(ctx, proj.Auth, pr.id); err != nil {
		if awclient.StatusOf(err) == http.StatusNotFound {
			var ae *awclient.Error
			if errors.As(err, &ae) && strings.HasPrefix(ae.Type, "project_") {
				return nil, "", mapAppwrite(err, "project", pr.project)
			}
			// Nothing to remove: unsubscribe is idempotent (OpenAI's MCP events guide; appwrite/mcp).
			return &EmptyResult{ResultType: "complete"}, metrics.OutcomeAbsent, nil
		}
		return nil, "", mapAppwrite(err, "webhook", pr.project)
	}
	lctx, lcancel := context.WithTimeout(ctx, cleanupBudget)
	hooks, err := proj.Client.ListWebhooks(lctx, proj.Auth, IDPrefix)
	lcancel()
	if err != nil {
		c.logf("cleanup %s: list webhooks: %v", proj.ID(), err)
	} else {
		s.cleanup(ctx, c, proj, c.Principal.Subject, pr.id, hooks)
	}
	return &EmptyResult{ResultType: "complete"}, metrics.OutcomeUnsubscribed, nil
}

// fitsAlone refuses, before Appwrite is asked anything, a subscription that cannot fit a webhook even
// without a previous secret; whether a rotation's grace window fits too is decided once the existing webhook
// is read.
func (s *Service) fitsAlone(pr *prepared, secret []byte, ttl time.Duration) *mcperr.Error {
	now := s.o.Now()
	least := seal.Subscription{CallbackURL: pr.url, Secret: secret, Event: pr.event.Name, Args: seal.ArgsOf(withoutProject(pr.args)),
		ProjectID: pr.project, Expiry: now.Add(ttl), VerifiedAt: now}
	if _, err := s.o.Sealer.Seal(pr.id, least); err != nil {
		return s.sealError(err, least)
	}
	return nil
}

// checkMaxAge accepts a maxAgeMs that is absent, null or a number of milliseconds not below zero (SEP-3415:
// how old an event the subscriber still wants; this server replays nothing, so it only checks it).
func checkMaxAge(raw json.RawMessage) *mcperr.Error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var ms float64
	if err := json.Unmarshal(raw, &ms); err != nil || ms < 0 {
		return mcperr.Invalid("maxAgeMs", "maxAgeMs: must be null or a number of milliseconds, 0 or more")
	}
	return nil
}

// dottedID refuses an id that goes into the webhook's Appwrite event strings (every argument but project_id)
// and contains a '.': Appwrite fills ids into its event strings unescaped (src/Appwrite/Event/Event.php
// 1.9.6:602-604, str_replace), '.' is their separator, and its Event validator splits on it and refuses the
// webhook's events (Event.php 1.9.6:37-42, at most 7 parts; :84-106, the part where the action belongs must
// be one): a create would be a 400 after the callback had been challenged, and the ingress could not bind the
// ids back from the events header. Refused first, with -32602 naming the argument, as appwrite/mcp does.
func dottedID(args map[string]string) *mcperr.Error {
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if k != eventcatalog.ArgProject && strings.Contains(args[k], ".") {
			return mcperr.Invalid("arguments."+k, "arguments.%s: %q contains '.', the separator of Appwrite's event strings: "+
				"Appwrite cannot subscribe a webhook to its events; use a resource whose id has no '.'", k, args[k])
		}
	}
	return nil
}
