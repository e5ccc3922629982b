package subscriptions

import (
	"fmt"
	"net/url"
	"time"

	"appwrite-agent/functions/mcp-events/hostlimit"
	"appwrite-agent/functions/mcp-events/mcperr"
	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/seal"
)

// Verification is cached per (principal, callback URL), across events and arguments (SEP-3415: a
// verification "is cached per (principal, url)"). No store holds it: the project's managed webhooks are the
// proof. A webhook whose envelope opens, has not expired, records a verification of the same URL, and whose
// id is the one this principal would get for that envelope's event and arguments (the id is a hash over the
// principal, so nobody else's webhook can pass) shows the principal already proved control of the URL.

// verifiedSibling looks among hooks (the project's managed webhooks) for another subscription of principal
// to the same callback URL that proves a verification, and returns when it happened and that webhook's id.
// The proof is the envelope when Appwrite returns authPassword, else the label's URL MAC (label.go).
func (s *Service) verifiedSibling(hooks []awclient.Webhook, principal string, pr *prepared, now time.Time) (time.Time, string, bool) {
	for _, w := range hooks {
		if w.ID == pr.id || len(w.ID) != IDLength || !w.Enabled {
			continue // a webhook Appwrite disabled after failed deliveries proves nothing about the URL today
		}
		if sub, err := s.openWebhook(&w, pr.project); err == nil {
			if sub.CallbackURL != pr.url || sub.VerifiedAt.IsZero() || sub.Expired(now) {
				continue
			}
			if _, mine := ownArgs(principal, pr.project, w.ID, sub); !mine {
				continue // another principal's subscription to the same URL
			}
			return sub.VerifiedAt, w.ID, true
		}
		l, ok := parseLabel(w.Name)
		if !ok || !now.Before(l.Expiry) {
			continue
		}
		for _, args := range argsFor(&w, l.Event) {
			if s.provesURL(l, w.ID, pr.project, principal, pr.url, args) {
				return l.VerifiedAt, w.ID, true
			}
		}
	}
	return time.Time{}, "", false
}

// challengeAllowed counts one verification challenge to the URL's host against the per-instance limit and
// returns ResourceExhausted when the host had its share in the last window.
func (s *Service) challengeAllowed(callbackURL string) *mcperr.Error {
	if s.limiter == nil {
		return nil
	}
	host := callbackURL
	if u, err := url.Parse(callbackURL); err == nil {
		host = u.Hostname()
	}
	ok, retry := s.limiter.Allow(host)
	if ok {
		return nil
	}
	secs := int((retry + time.Second - 1) / time.Second)
	return mcperr.New(mcperr.ResourceExhausted, map[string]any{
		"resource": "verificationChallenges", "host": hostlimit.Key(host), "limit": s.limiter.Limit(),
		"windowMs": s.limiter.Window().Milliseconds(), "retryAfterMs": retry.Milliseconds(),
	}, "too many verification challenges to %s: this server sends at most %d per %s to one host; retry in %s",
		hostlimit.Key(host), s.limiter.Limit(), s.limiter.Window(), fmt.Sprintf("%ds", secs))
}

// ownArgs returns the full arguments (project_id included) of the subscription sealed in webhook id, and
// whether id is the one principal gets for them: the id is a hash over the principal, so this proves the
// webhook is principal's.
func ownArgs(principal, project, id string, sub seal.Subscription) (map[string]string, bool) {
	args := sub.Args.Map()
	args[eventcatalog.ArgProject] = project
	return args, ID(principal, sub.CallbackURL, sub.Event, args) == id
}
