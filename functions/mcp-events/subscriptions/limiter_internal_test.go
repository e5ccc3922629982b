package subscriptions

import (
	"fmt"
	"testing"
	"time"

	"appwrite-agent/shared/devkit/testclock"
)

func TestSlidingWindowPerHost(t *testing.T) {
	c := testclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	l := newLimiter(3, time.Minute, c.Now)
	for i := 0; i < 3; i++ {
		if ok, _ := l.allow("hooks.example"); !ok {
			t.Fatalf("event %d refused", i)
		}
		c.Advance(10 * time.Second)
	}
	ok, retry := l.allow("HOOKS.example.")
	if ok || retry != 30*time.Second {
		t.Fatalf("fourth event within the minute (same host, other spelling): ok=%v retry=%v", ok, retry)
	}
	if ok, _ := l.allow("other.example"); !ok {
		t.Fatal("another host was limited")
	}
	c.Advance(30 * time.Second) // the first event leaves the window
	if ok, _ := l.allow("hooks.example"); !ok {
		t.Fatal("refused after the window slid")
	}
	if ok, _ := l.allow("hooks.example"); ok {
		t.Fatal("allowed beyond the limit again")
	}
}

func TestManyHostsStayBounded(t *testing.T) {
	c := testclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	l := newLimiter(1, time.Minute, c.Now)
	for i := 0; i < 5000; i++ {
		if ok, _ := l.allow(fmt.Sprintf("h%d.example", i)); !ok {
			t.Fatalf("host %d refused on its first event", i)
		}
	}
	c.Advance(time.Minute)
	// The old hosts are swept when room is needed: counting works again for new ones.
	if ok, _ := l.allow("fresh.example"); !ok {
		t.Fatal("fresh host refused")
	}
	if ok, _ := l.allow("fresh.example"); ok {
		t.Fatal("fresh host not counted after the sweep")
	}
}
