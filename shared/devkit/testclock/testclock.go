// Package testclock is the clock a test moves by hand, for code that takes its time source as an argument
// (a func() time.Time such as Now, or an interface with Now and AfterFunc).
//
// A Clock is either stopped (New: it reads what the test set, and moves only by Advance or Set) or the
// wall clock moved by the test (Wall: time.Now plus the sum of the test's moves), for tests where processes
// the test does not drive, such as staged binaries or a browser, read the wall clock and must stay close
// to it. Timers armed with AfterFunc fire only when Advance or Set moves the clock past them, never by the
// wall clock's own passing: a test decides when a deadline is reached and never races a timer.
//
// A Clock is safe for concurrent use.
package testclock

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Clock is a time source that a test moves. Its zero value is not usable: build one with New or Wall.
type Clock struct {
	mu     sync.Mutex
	wall   bool          // Now is time.Now plus offset; else at plus offset
	at     time.Time     // a stopped clock's starting time
	offset time.Duration // the sum of the test's moves
	timers []*timer      // armed, not yet fired or stopped, in arming order
	armed  chan struct{} // closed and replaced when a timer is armed
}

type timer struct {
	at time.Time
	f  func()
}

// New returns a clock stopped at t: Now returns t until the test calls Advance or Set.
func New(t time.Time) *Clock {
	return &Clock{at: t, armed: make(chan struct{})}
}

// Wall returns the wall clock moved by the test: Now returns time.Now plus the sum of every Advance, and
// keeps moving between them. Set makes Now read the given time at that instant, moving on from there.
func Wall() *Clock {
	return &Clock{wall: true, armed: make(chan struct{})}
}

// Now returns the clock's current time. A method value (clock.Now) is a func() time.Time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked()
}

func (c *Clock) nowLocked() time.Time {
	if c.wall {
		return time.Now().Add(c.offset)
	}
	return c.at.Add(c.offset)
}

// Advance moves the clock by d (back when d is negative), then runs the timers that became due, in the
// order of their deadlines, on the caller's goroutine after the move.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.fire()
}

// Set moves the clock to t (back when t is earlier), then runs the timers that became due, as Advance does.
// On a Wall clock, Now reads t at the time of the call and moves on with the wall clock from there.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.offset += t.Sub(c.nowLocked())
	c.fire()
}

// fire is called with c.mu held and releases it: it takes the due timers off the list and runs them
// unlocked, so that a timer's function may use the clock.
func (c *Clock) fire() {
	now := c.nowLocked()
	var due []*timer
	c.timers = slices.DeleteFunc(c.timers, func(t *timer) bool {
		if t.at.After(now) {
			return false
		}
		due = append(due, t)
		return true
	})
	c.mu.Unlock()
	slices.SortStableFunc(due, func(a, b *timer) int { return a.at.Compare(b.at) })
	for _, t := range due {
		t.f()
	}
}

// AfterFunc arms a timer that calls f once the clock has been moved d or more past the current time, on the
// goroutine of the Advance or Set that moves it there. stop disarms the timer and reports whether it did
// (false once f has been called or the timer was stopped), as time.Timer.Stop does.
func (c *Clock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{at: c.nowLocked().Add(d), f: f}
	c.timers = append(c.timers, t)
	close(c.armed)
	c.armed = make(chan struct{})
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := len(c.timers)
		c.timers = slices.DeleteFunc(c.timers, func(x *timer) bool { return x == t })
		return len(c.timers) < n
	}
}

// WaitArmed blocks until at least one timer is armed (not fired, not stopped), so that a test moves the
// clock only once the code under test has armed the deadline it means to reach. A timer armed and stopped
// meanwhile does not count. It fails with the context's error when ctx ends first.
func (c *Clock) WaitArmed(ctx context.Context) error {
	for {
		c.mu.Lock()
		n, armed := len(c.timers), c.armed
		c.mu.Unlock()
		if n > 0 {
			return nil
		}
		select {
		case <-armed:
		case <-ctx.Done():
			return fmt.Errorf("testclock: no timer was armed: %w", ctx.Err())
		}
	}
}
