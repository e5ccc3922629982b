package subscriptions

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"appwrite-agent/functions/mcp-events/mcperr"
)

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
	ok, retry := s.limiter.allow(host)
	if ok {
		return nil
	}
	secs := int((retry + time.Second - 1) / time.Second)
	return mcperr.New(mcperr.ResourceExhausted, map[string]any{
		"resource": "verificationChallenges", "host": hostKey(host), "limit": s.limiter.limit,
		"windowMs": s.limiter.window.Milliseconds(), "retryAfterMs": retry.Milliseconds(),
	}, "too many verification challenges to %s: this server sends at most %d per %s to one host; retry in %s",
		hostKey(host), s.limiter.limit, s.limiter.window, fmt.Sprintf("%ds", secs))
}

// A limiter bounds how often one instance does something to one destination host: at most limit times in
// any sliding window (the verification challenges, per minute). It is in-process state, a protection rather
// than a quota: each replica counts on its own, a restart starts afresh, and nothing is stored anywhere.

// maxLimitedHosts bounds the memory of a limiter. When more distinct hosts than this are active within one
// window, new hosts are let through uncounted rather than refused: the limit protects destinations from
// floods of challenges, and an attacker that spreads over thousands of hosts floods none of them.
const maxLimitedHosts = 4096

// limiter allows at most limit events per host in any window. It is safe for concurrent use.
type limiter struct {
	limit  int
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	hosts map[string][]time.Time // per host, the times of the events still inside the window, oldest first
}

// newLimiter returns a limiter of limit events per window per host, reading time from now.
func newLimiter(limit int, window time.Duration, now func() time.Time) *limiter {
	return &limiter{limit: limit, window: window, now: now, hosts: map[string][]time.Time{}}
}

// hostKey normalizes a host name for counting: lower case, without trailing dots.
func hostKey(host string) string { return strings.ToLower(strings.TrimRight(host, ".")) }

// allow records one event for host and reports whether it is within the limit; when it is not, retry is
// how long until the oldest counted event leaves the window.
func (l *limiter) allow(host string) (ok bool, retry time.Duration) {
	key := hostKey(host)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	times := l.live(l.hosts[key], now)
	if len(times) >= l.limit {
		l.hosts[key] = times
		return false, times[0].Add(l.window).Sub(now)
	}
	if len(times) == 0 && len(l.hosts) >= maxLimitedHosts {
		l.sweep(now)
		if len(l.hosts) >= maxLimitedHosts {
			return true, 0
		}
	}
	l.hosts[key] = append(times, now)
	return true, 0
}

// live drops the times that left the window.
func (l *limiter) live(times []time.Time, now time.Time) []time.Time {
	i := 0
	for i < len(times) && !now.Before(times[i].Add(l.window)) {
		i++
	}
	return times[i:]
}

// sweep forgets the hosts with no event inside the window.
func (l *limiter) sweep(now time.Time) {
	for k, times := range l.hosts {
		if len(l.live(times, now)) == 0 {
			delete(l.hosts, k)
		}
	}
}
