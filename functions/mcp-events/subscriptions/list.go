package subscriptions

import (
	"context"
	"maps"
	"sort"
	"time"

	"appwrite-agent/functions/mcp-events/mcperr"
	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/eventcatalog"
)

// Listed is one of the caller's subscriptions as the list_subscriptions tool shows it: what, where and until
// when. Secrets never appear.
type Listed struct {
	// ID is the subscription id (the webhook's $id).
	ID string `json:"id"`
	// Event is the MCP event name.
	Event string `json:"event"`
	// Arguments are the subscription's arguments, project_id included.
	Arguments map[string]string `json:"arguments"`
	// CallbackURL is where deliveries go; empty when Appwrite does not return the webhook's authPassword
	// (Appwrite Cloud never does), where it is sealed.
	CallbackURL string `json:"callback_url,omitempty"`
	// ExpiresAt is when the subscription ends unless refreshed (RFC 3339, UTC). It is not events/subscribe's
	// refreshBefore, which comes a tenth of the grant earlier: the grant's length is not stored.
	ExpiresAt string `json:"expires_at"`
	// Expired reports that ExpiresAt has passed (the webhook is deleted on the next cleanup).
	Expired bool `json:"expired"`
	// VerifiedAt is when the callback passed the verification challenge.
	VerifiedAt string `json:"verified_at,omitempty"`
	// Enabled is false when Appwrite disabled the webhook after failed deliveries (a refresh re-enables it).
	Enabled bool `json:"enabled"`
	// Rotating reports that a previous secret still signs deliveries (a rotation grace window).
	Rotating bool `json:"rotating"`
}

// List returns the caller's subscriptions in project, sorted by event and id: the managed webhooks whose
// envelope opens and whose id is the one the caller's principal gets for that envelope, or, when Appwrite
// does not return authPassword (Appwrite Cloud), whose label's owner MAC verifies for the caller (label.go).
// Other principals' subscriptions in the same project are never shown.
func (s *Service) List(ctx context.Context, c Call, project string) ([]Listed, *mcperr.Error) {
	proj := s.o.Appwrite.Project(project, c.Principal.Token)
	hooks, err := proj.Client.ListWebhooks(ctx, proj.Auth, IDPrefix)
	if err != nil {
		return nil, mapAppwrite(err, "webhook", project)
	}
	now := s.o.Now()
	out := []Listed{}
	for _, w := range hooks {
		if len(w.ID) != IDLength {
			continue
		}
		sub, err := s.openWebhook(&w, project)
		if err != nil {
			if l, ok := s.listedByLabel(&w, project, c.Principal.Subject, now); ok {
				out = append(out, l)
			}
			continue
		}
		args, mine := ownArgs(c.Principal.Subject, project, w.ID, sub)
		if !mine {
			continue
		}
		var prevUntil time.Time
		if len(sub.PrevSecret) > 0 {
			prevUntil = sub.PrevSecretUntil
		}
		out = append(out, listed(&w, sub.Event, args, sub.CallbackURL, sub.Expiry, sub.VerifiedAt, prevUntil, now))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Event != out[j].Event {
			return out[i].Event < out[j].Event
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// listedByLabel is webhook w as listed from its label, when the label is principal's.
func (s *Service) listedByLabel(w *awclient.Webhook, project, principal string, now time.Time) (Listed, bool) {
	l, ok := parseLabel(w.Name)
	if !ok {
		return Listed{}, false
	}
	args, mine := s.ownedByAny(l, w, project, principal)
	if !mine {
		return Listed{}, false
	}
	full := map[string]string{eventcatalog.ArgProject: project}
	maps.Copy(full, args)
	return listed(w, l.Event, full, "", l.Expiry, l.VerifiedAt, l.PrevUntil, now), true
}

// listed is webhook w as list_subscriptions shows it, from what its envelope or its label says: args with
// project_id, the callback URL ("" when only the label was read), the expiry, when it was verified (zero:
// never) and until when its previous secret is valid (zero: no rotation).
func listed(w *awclient.Webhook, event string, args map[string]string, callbackURL string, expiry, verifiedAt, prevUntil, now time.Time) Listed {
	l := Listed{
		ID: w.ID, Event: event, Arguments: args, CallbackURL: callbackURL,
		ExpiresAt: expiry.UTC().Format(time.RFC3339), Expired: !now.Before(expiry),
		Enabled: w.Enabled, Rotating: !prevUntil.IsZero() && now.Before(prevUntil),
	}
	if !verifiedAt.IsZero() {
		l.VerifiedAt = verifiedAt.UTC().Format(time.RFC3339)
	}
	return l
}
