package subscriptions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"appwrite-agent/functions/mcp-events/mcperr"
	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/seal"
	"appwrite-agent/shared/stdwebhooks"
)

// Subscribe serves events/subscribe.
func (s *Service) Subscribe(ctx context.Context, c Call, p SubscribeParams) (*SubscribeResult, *mcperr.Error) {
	res, outcome, err := s.subscribe(ctx, c, p)
	record(c, "subscribe", p.Name, outcome, err)
	return res, err
}

// subscribe serves events/subscribe, step by step, and returns the SubscriptionsTotal outcome of a success:
//
//  1. checkSubscribe: the event, its arguments, the delivery, the secret and the grant asked for;
//  2. authorizeSubscribe: the token's scopes, Appwrite's version, a read of the target with the token;
//  3. existing: what the subscription's webhook says, when it exists (its envelope or its label);
//  4. renew: the subscription to write (expiry, secrets, what proves the callback) and what happened to it;
//  5. tidyProject: another subscription of the caller's that proves the callback, the expired ones deleted;
//  6. sealRenewal: the sealed envelope, without the previous secret when both do not fit;
//  7. challenge: the verification handshake, unless the callback is proven;
//  8. writeWebhook: the webhook created or updated, with its derived signature secret;
//  9. answer: the grant, the rotation and, on a refresh, how delivery was doing.
func (s *Service) subscribe(ctx context.Context, c Call, p SubscribeParams) (*SubscribeResult, string, *mcperr.Error) {
	req, err := s.checkSubscribe(ctx, c, p)
	if err != nil {
		return nil, "", err
	}
	proj, err := s.authorizeSubscribe(ctx, c, req)
	if err != nil {
		return nil, "", err
	}
	now := s.o.Now().UTC().Truncate(time.Second)
	cur, err := s.existing(ctx, c, proj, req)
	if err != nil {
		return nil, "", err
	}
	next := s.renew(c, req, cur, now)
	s.tidyProject(ctx, c, proj, req, &next, now)
	fields, err := s.sealRenewal(c, req, &next)
	if err != nil {
		return nil, "", err
	}
	if !next.verified {
		if err := s.challenge(ctx, req); err != nil {
			return nil, "", err
		}
	}
	if err := s.writeWebhook(ctx, c, proj, req, next.sub, fields, cur.webhook != nil); err != nil {
		return nil, "", err
	}
	return answer(c, req, cur, next), next.outcome, nil
}

// subscribeRequest is a checked events/subscribe.
type subscribeRequest struct {
	*prepared
	// secret is delivery.secret, parsed.
	secret stdwebhooks.Secret
	// ttl is the grant: the client's ttlMs clamped into the server's bounds.
	ttl time.Duration
	// argsNoProject are the arguments without project_id: what the envelope and the label bind.
	argsNoProject map[string]string
}

// checkSubscribe checks what a subscribe asks for, before anything is contacted: the event, its arguments and
// the delivery (prepare, the callback URL against the SSRF policy included), the secret and the grant.
func (s *Service) checkSubscribe(ctx context.Context, c Call, p SubscribeParams) (*subscribeRequest, *mcperr.Error) {
	pr, merr := s.prepare(ctx, c, p.Name, p.Arguments, p.Delivery, true)
	if merr != nil {
		return nil, merr
	}
	secret, err := stdwebhooks.ParseSecret(p.Delivery.Secret)
	if err != nil {
		return nil, mcperr.Invalid("delivery.secret", "delivery.secret: must be %q followed by standard base64 of %d to %d random bytes",
			stdwebhooks.SecretPrefix, stdwebhooks.MinSecretBytes, stdwebhooks.MaxSecretBytes)
	}
	ttl, err := s.clampTTL(p.TTLMs)
	if err != nil {
		return nil, mcperr.As(err)
	}
	if err := checkMaxAge(p.MaxAgeMs); err != nil {
		return nil, err
	}
	req := &subscribeRequest{prepared: pr, secret: secret, ttl: ttl, argsNoProject: withoutProject(pr.args)}
	if err := s.fitsAlone(req); err != nil {
		return nil, err
	}
	return req, nil
}

// fitsAlone refuses, before Appwrite is asked anything, a subscription that cannot fit a webhook even
// without a previous secret; whether a rotation's grace window fits too is decided once the existing webhook
// is read (sealRenewal).
func (s *Service) fitsAlone(req *subscribeRequest) *mcperr.Error {
	now := s.o.Now()
	least := seal.Subscription{CallbackURL: req.url, Secret: req.secret, Event: req.event.Name, Args: seal.ArgsOf(req.argsNoProject),
		ProjectID: req.project, Expiry: now.Add(req.ttl), VerifiedAt: now}
	if _, err := s.o.Sealer.Seal(req.id, least); err != nil {
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

// authorizeSubscribe checks that the caller may subscribe: its token carries the scopes the event needs, the
// project's Appwrite honours a caller-chosen webhook secret (before anything else is contacted: an older one
// would ignore it), and the token reads the target (authorize). It returns the project as the token reaches it.
func (s *Service) authorizeSubscribe(ctx context.Context, c Call, req *subscribeRequest) (Project, *mcperr.Error) {
	if missing := req.event.MissingScopes(c.Principal.Scopes); len(missing) > 0 {
		return Project{}, mcperr.InsufficientScope(missing, req.event.StepUpScopes(c.Principal.Scopes),
			"the access token lacks the scopes %s needs: %s", req.event.Name, strings.Join(missing, ", "))
	}
	proj := s.o.Appwrite.Project(req.project, c.Principal.Token)
	if err := s.o.Appwrite.RequireVersion(ctx); err != nil {
		return Project{}, mapAppwrite(err, "webhook", req.project)
	}
	if err := s.authorize(ctx, proj, req.prepared); err != nil {
		return Project{}, err
	}
	return proj, nil
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

// existingWebhook is what the subscription's webhook says before a subscribe: nothing when there is none;
// else the webhook and, when it is this caller's subscription, its envelope (when Appwrite returns
// authPassword: the open-source server does, Appwrite Cloud never) or else its label (label.go).
type existingWebhook struct {
	webhook *awclient.Webhook
	sealed  *seal.Subscription
	label   *label
}

// refresh reports that the subscribe refreshes this caller's subscription.
func (e existingWebhook) refresh() bool { return e.sealed != nil || e.label != nil }

// existing reads the subscription's webhook, and opens its envelope or verifies its label for this caller.
// A webhook that does neither is replaced.
func (s *Service) existing(ctx context.Context, c Call, proj Project, req *subscribeRequest) (existingWebhook, *mcperr.Error) {
	wh, err := proj.Client.GetWebhook(ctx, proj.Auth, req.id)
	if awclient.StatusOf(err) == http.StatusNotFound {
		return existingWebhook{}, nil
	}
	if err != nil {
		return existingWebhook{}, mapAppwrite(err, "webhook", "")
	}
	cur := existingWebhook{webhook: wh}
	if sub, oerr := s.openWebhook(wh, req.project, seal.Target{Event: req.event.Name, Args: seal.ArgsOf(req.argsNoProject)}); oerr == nil {
		cur.sealed = &sub
	} else if l, ok := parseLabel(wh.Name); ok && l.Event == req.event.Name && s.ownedBy(l, req.id, req.project, c.Principal.Subject, req.argsNoProject) {
		cur.label = &l
	} else {
		c.logf("events/subscribe: existing webhook %s neither opens nor carries this caller's label (%v); replacing it", req.id, oerr)
	}
	return cur, nil
}

// renewal is the subscription a subscribe writes and what happened to it.
type renewal struct {
	sub seal.Subscription
	// outcome is created, refreshed or rotated (SubscriptionsTotal).
	outcome string
	// rotation, when not nil, says what became of the previous secret (the answer's _meta).
	rotation *Rotation
	// verified reports that something proves the caller controls the callback URL: no challenge is sent.
	verified bool
}

// renew is the subscription req asks for at now, from what cur says: a new grant; on a rotation the previous
// secret kept for the grace window (when it can be read back) and a grace window still running kept; the
// verification an unexpired subscription of this caller to the same URL proves (the id is a hash over the
// principal and the URL, and the label's URL MAC binds both), else now, when the challenge will be sent.
func (s *Service) renew(c Call, req *subscribeRequest, cur existingWebhook, now time.Time) renewal {
	r := renewal{outcome: OutcomeCreated, sub: seal.Subscription{
		CallbackURL: req.url, Secret: req.secret, Event: req.event.Name, Args: seal.ArgsOf(req.argsNoProject),
		ProjectID: req.project, Expiry: now.Add(req.ttl),
	}}
	switch prev, l := cur.sealed, cur.label; {
	case prev != nil:
		r.outcome = OutcomeRefreshed
		if !bytes.Equal(prev.Secret, req.secret) {
			r.outcome = OutcomeRotated
			r.sub.PrevSecret, r.sub.PrevSecretUntil = prev.Secret, now.Add(s.o.RotationGrace)
		} else if len(prev.PrevSecret) > 0 && now.Before(prev.PrevSecretUntil) {
			r.sub.PrevSecret, r.sub.PrevSecretUntil = prev.PrevSecret, prev.PrevSecretUntil
		}
		r.verified = !prev.VerifiedAt.IsZero() && prev.CallbackURL == req.url && !prev.Expired(now)
		r.sub.VerifiedAt = prev.VerifiedAt
	case l != nil:
		// The label says whether the secret changed, but the previous secret is sealed in authPassword, which
		// this Appwrite does not return: it cannot be kept for a grace window.
		r.outcome = OutcomeRefreshed
		if !bytes.Equal(l.Fingerprint, s.fingerprint(req.id, req.secret)) {
			r.outcome = OutcomeRotated
			r.rotation = &Rotation{PreviousSecretKept: false, Reason: reasonUnreadable}
		} else if !l.PrevUntil.IsZero() && now.Before(l.PrevUntil) {
			r.rotation = &Rotation{PreviousSecretKept: false, Reason: reasonUnreadableGrace}
		}
		r.verified = now.Before(l.Expiry) && s.provesURL(*l, req.id, req.project, c.Principal.Subject, req.url, req.argsNoProject)
		r.sub.VerifiedAt = l.VerifiedAt
	}
	if !r.verified {
		r.sub.VerifiedAt = now
	}
	return r
}

// tidyProject reads the project's managed webhooks: another live subscription of the caller's to the same URL
// proves the verification too (it is per principal and URL), and the caller's expired subscriptions are
// deleted before the write, so that they never hold a slot of the plan's webhook limit. A failure only logs.
func (s *Service) tidyProject(ctx context.Context, c Call, proj Project, req *subscribeRequest, next *renewal, now time.Time) {
	lctx, lcancel := context.WithTimeout(ctx, cleanupBudget)
	hooks, err := proj.Client.ListWebhooks(lctx, proj.Auth, IDPrefix)
	lcancel()
	if err != nil {
		c.logf("events/subscribe %s: list webhooks: %v (no cleanup; the callback is challenged unless this subscription proves it)", req.id, err)
		return
	}
	if !next.verified {
		if at, from, ok := s.verifiedSibling(hooks, c.Principal.Subject, req.prepared, now); ok {
			next.verified, next.sub.VerifiedAt = true, at
			c.logf("events/subscribe %s: callback already verified by subscription %s", req.id, from)
		}
	}
	s.cleanup(ctx, c, proj, c.Principal.Subject, req.id, hooks)
}

// sealRenewal seals next's subscription, before the callback is contacted, so that a subscription that cannot
// fit is refused first. When the previous secret is what does not fit, the rotation goes without a grace
// window rather than fail, and next.rotation says so; a kept previous secret is reported too.
func (s *Service) sealRenewal(c Call, req *subscribeRequest, next *renewal) (seal.Fields, *mcperr.Error) {
	f, err := s.o.Sealer.Seal(req.id, next.sub)
	var tooLong *seal.TooLongError
	if errors.As(err, &tooLong) && len(next.sub.PrevSecret) > 0 {
		next.rotation = &Rotation{PreviousSecretKept: false, Reason: "the previous secret was not kept (deliveries are signed with the new secret only): " +
			tooLong.Error() + "; without it the callback URL fits"}
		c.logf("events/subscribe %s: previous secret dropped: %s", req.id, tooLong.Error())
		next.sub.PrevSecret, next.sub.PrevSecretUntil = nil, time.Time{}
		f, err = s.o.Sealer.Seal(req.id, next.sub)
	} else if err == nil && len(next.sub.PrevSecret) > 0 {
		next.rotation = &Rotation{PreviousSecretKept: true, PreviousSecretUntil: next.sub.PrevSecretUntil.UTC().Format(time.RFC3339)}
	}
	if err != nil {
		return seal.Fields{}, s.sealError(err, next.sub)
	}
	return f, nil
}

// challenge sends the verification handshake to the callback, within the per-host challenge rate.
func (s *Service) challenge(ctx context.Context, req *subscribeRequest) *mcperr.Error {
	if err := s.challengeAllowed(req.url); err != nil {
		return err
	}
	return s.verifyCallback(ctx, req.prepared, req.secret)
}

// writeWebhook creates or updates (exists) the subscription's webhook: its label as name, its URL with the
// sealed tail, the event's Appwrite events, the sealed fields, and the signature secret derived from its id.
func (s *Service) writeWebhook(ctx context.Context, c Call, proj Project, req *subscribeRequest, sub seal.Subscription, f seal.Fields, exists bool) *mcperr.Error {
	whSecret, err := s.o.SigKeys.Secret(req.id)
	if err != nil {
		return mcperr.As(err)
	}
	in := awclient.WebhookInput{
		Name: s.labelFor(req.id, c.Principal.Subject, sub).String(), URL: s.webhookURL(req.id, f.URLTail), Events: req.event.AppwriteEvents(req.args),
		TLS: true, AuthUsername: f.Username, AuthPassword: f.Password,
	}
	return s.upsert(ctx, proj, req.id, whSecret, in, exists)
}

// answer is the result of a subscribe that wrote next: the id and refreshBefore; the rotation in _meta; and,
// on a refresh of the caller's subscription, how its webhook was doing before this update re-enabled it
// (enabled: true) and reset Appwrite's failure counter.
func answer(c Call, req *subscribeRequest, cur existingWebhook, next renewal) *SubscribeResult {
	res := &SubscribeResult{
		ResultType: "complete", ID: req.id, RefreshBefore: RefreshBefore(next.sub.Expiry, req.ttl).UTC().Format(time.RFC3339),
		Cursor: nil, Truncated: false,
	}
	if next.rotation != nil {
		res.Meta = map[string]any{MetaRotation: next.rotation}
	}
	if cur.refresh() {
		var note *DeliveryNote
		res.DeliveryStatus, note = deliveryStatus(cur.webhook)
		if note != nil {
			if res.Meta == nil {
				res.Meta = map[string]any{}
			}
			res.Meta[MetaDeliveryStatus] = note
			c.logf("events/subscribe %s: %s; the refresh %s", req.id, note.Reason, note.Refresh)
		}
	}
	return res
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
