// Package hostlimit bounds how often one instance does something to one destination host: at most N times
// in any sliding window (a minute for the verification challenges of mcp-events). It is in-process state,
// a protection rather than a quota: each replica counts on its own, a restart starts afresh, and nothing is
// stored anywhere.
package hostlimit

import (
	"strings"
	"sync"
	"time"
)

// maxHosts bounds the memory of a Limiter. When more distinct hosts than this are active within one window,
// new hosts are let through uncounted rather than refused: the limit protects destinations from floods of
// challenges, and an attacker that spreads over thousands of hosts floods none of them.
const maxHosts = 4096

// Limiter allows at most Limit events per host in any Window. It is safe for concurrent use.
type Limiter struct {
	limit  int
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	hosts map[string][]time.Time // per host, the times of the events still inside the window, oldest first
}

// New returns a limiter of limit events per window per host, reading time from now (time.Now when nil).
func New(limit int, window time.Duration, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{limit: limit, window: window, now: now, hosts: map[string][]time.Time{}}
}

// Limit is the number of events allowed per host in a window.
func (l *Limiter) Limit() int { return l.limit }

// Window is the length of the sliding window.
func (l *Limiter) Window() time.Duration { return l.window }

// Key normalizes a host name for counting: lower case, without trailing dots.
func Key(host string) string { return strings.ToLower(strings.TrimRight(host, ".")) }

// Allow records one event for host and reports whether it is within the limit; when it is not, retry is
// how long until the oldest counted event leaves the window.
func (l *Limiter) Allow(host string) (ok bool, retry time.Duration) {
	key := Key(host)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	times := l.live(l.hosts[key], now)
	if len(times) >= l.limit {
		l.hosts[key] = times
		return false, times[0].Add(l.window).Sub(now)
	}
	if len(times) == 0 && len(l.hosts) >= maxHosts {
		l.sweep(now)
		if len(l.hosts) >= maxHosts {
			return true, 0
		}
	}
	l.hosts[key] = append(times, now)
	return true, 0
}

// live drops the times that left the window.
func (l *Limiter) live(times []time.Time, now time.Time) []time.Time {
	i := 0
	for i < len(times) && !now.Before(times[i].Add(l.window)) {
		i++
	}
	return times[i:]
}

// sweep forgets the hosts with no event inside the window.
func (l *Limiter) sweep(now time.Time) {
	for k, times := range l.hosts {
		if len(l.live(times, now)) == 0 {
			delete(l.hosts, k)
		}
	}
}
