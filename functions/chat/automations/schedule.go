package automations

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"time"

	"appwrite-agent/functions/chat/store"
)

// IsScheduled tells chat's own schedule (appwrite.json's "schedule", docs/chat.md "Automations") from every
// other request, by what Appwrite sets (docs/local-appwrite.md "Function schedules", from Appwrite 1.9.6's
// Tasks/ScheduleFunctions.php and Workers/Functions.php:422-437): x-appwrite-trigger is "schedule" and there
// is no calling user. A function domain request is trigger "http" whatever the client sends (the router
// overwrites it: app/controllers/general.php:391), and so is an execution made through the Executions API;
// a delayed execution made through that API (scheduledAt) is trigger "schedule" too, but carries its
// creator's x-appwrite-client-ip, which the API sets when it is created (Executions/Create.php:240-241), and
// the worker keeps: a cron execution has none.
func IsScheduled(method string, headers map[string]string) bool {
	_, clientIP := headers["x-appwrite-client-ip"]
	return method == http.MethodPost && headers["x-appwrite-trigger"] == "schedule" && headers["x-appwrite-user-id"] == "" && !clientIP
}

// Sweeper stores the finished turns of an automation's conversation (the handler's, which stores a turn).
type Sweeper func(ctx context.Context, a store.Automation) error

// Report is what a scheduled run did, for the execution's log.
type Report struct {
	Refreshed, RefreshFailed, Unsubscribed, TokensRefreshed, Swept int
	// Left is how many were left for the next run (the run's time ran out).
	Left int
}

func (r Report) String() string {
	return fmt.Sprintf("automations: %d refreshed, %d refresh failed, %d unsubscribed, %d tokens refreshed, %d conversations swept, %d left for the next run",
		r.Refreshed, r.RefreshFailed, r.Unsubscribed, r.TokensRefreshed, r.Swept, r.Left)
}

// reserve is the time a scheduled run keeps for itself: it starts no new refresh with less left.
const reserve = 4 * time.Second

// RunSchedule is one scheduled run (a cron execution of chat, every 5 minutes): it keeps every automation
// alive and tidy within ctx's deadline, the most urgent first.
//
//   - The access tokens of the connections that active automations use are refreshed when they expire within
//     RefreshAhead, once per connection (before any turn meets an expired one: two turns refreshing the same
//     refresh token at once would spend it twice).
//   - An active automation whose refreshBefore comes within RefreshAhead is subscribed again (the same call
//     refreshes it); a failure is recorded on it (refresh_error: the page shows it with a way to reconnect).
//   - A paused automation that still has a subscription is unsubscribed (a pause by the rate limit happens
//     during a delivery, which has no time for it).
//   - sweep stores the finished turns of each automation's conversation (their tokens count as its usage).
func (s *Service) RunSchedule(ctx context.Context, sweep Sweeper) (Report, error) {
	var rep Report
	all, err := s.st.AllAutomations(ctx)
	if err != nil {
		return rep, fmt.Errorf("listing the automations: %w", err)
	}
	now := s.now()
	due := func(a store.Automation) time.Time {
		t, err := time.Parse(time.RFC3339Nano, a.RefreshBefore)
		if err != nil {
			return time.Time{} // never refreshed: first
		}
		return t
	}
	sort.SliceStable(all, func(i, j int) bool { return due(all[i]).Before(due(all[j])) })
	tokensDone := map[string]bool{}
	for i, a := range all {
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < reserve {
			rep.Left = len(all) - i
			break
		}
		switch {
		case a.Status == store.AutomationActive:
			key := a.UserID + "\x00" + a.ConnectionID
			if !tokensDone[key] {
				tokensDone[key] = true
				if s.refreshTokensAhead(ctx, a, now) {
					rep.TokensRefreshed++
				}
			}
			if a.Subscribed && !due(a).IsZero() && due(a).After(now.Add(s.cfg.RefreshAhead)) {
				break
			}
			if err := s.resubscribe(ctx, a, false); err != nil {
				rep.RefreshFailed++
				s.log("automations: refreshing " + a.ID + ": " + err.Error())
			} else {
				rep.Refreshed++
			}
		case a.Subscribed:
			if na := s.dropSubscription(ctx, a); !na.Subscribed {
				rep.Unsubscribed++
			}
		}
		if sweep != nil {
			if err := sweep(ctx, a); err != nil {
				s.log("automations: storing the finished turns of " + a.ID + ": " + err.Error())
			} else {
				rep.Swept++
			}
		}
	}
	return rep, nil
}

// refreshTokensAhead refreshes the access token of a's connection when it expires within RefreshAhead (and
// can be refreshed), and reports whether it did. A failure is left to the subscription's refresh, which
// meets it and records it.
func (s *Service) refreshTokensAhead(ctx context.Context, a store.Automation, now time.Time) bool {
	c, err := s.open(ctx, a.UserID, a.ConnectionID)
	if err != nil || c.tok.Refreshable() == "" || !c.tok.Expired(now.Add(s.cfg.RefreshAhead)) {
		return false
	}
	if err := c.refreshTokens(ctx, "", false); err != nil {
		s.log("automations: refreshing the access token of connection " + a.ConnectionID + " ahead of its expiry: " + err.Error())
		return false
	}
	return true
}
