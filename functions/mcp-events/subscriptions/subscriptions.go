// Package subscriptions implements events/subscribe and events/unsubscribe: validation, authorization with
// the caller's token, the callback verification handshake, and the Appwrite webhook that is the subscription
// (deterministic id, derived signature secret, sealed envelope, narrowed Appwrite events). Nothing is stored
// anywhere else, so any replica serves any call.
//
// The files: subscriptions.go (the Service, the subscription id, the checks every call makes, unsubscribe and
// the cleanup of expired subscriptions), subscribe.go (events/subscribe, step by step), appwrite.go (the
// users' projects, Appwrite's version and webhook secret checks), envelope.go and label.go (what a webhook
// carries), challenge.go (the verification handshake), verified.go (a verification another subscription
// proves), limiter.go (the per-host challenge rate), delivery.go (a refresh's deliveryStatus), list.go (the
// caller's subscriptions, for list_subscriptions), counters.go (mcp_events_subscriptions_total).
package subscriptions

import (
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

	"appwrite-agent/functions/mcp-events/mcperr"
	"appwrite-agent/functions/mcp-events/oauth"
	"appwrite-agent/shared/appwritesig"
	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/seal"
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
	limiter *limiter
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
		svc.limiter = newLimiter(o.ChallengeRate, time.Minute, o.Now)
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
	// Log receives diagnostics and counter lines (nil: nothing is logged).
	Log func(line string)
}

func (c Call) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log(fmt.Sprintf(format, args...))
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

func withoutProject(args map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range args {
		if k != eventcatalog.ArgProject {
			out[k] = v
		}
	}
	return out
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
	record(c, "unsubscribe", p.Name, outcome, err)
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
			return &EmptyResult{ResultType: "complete"}, OutcomeAbsent, nil
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
	return &EmptyResult{ResultType: "complete"}, OutcomeUnsubscribed, nil
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
