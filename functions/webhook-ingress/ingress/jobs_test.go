package ingress

import (
	"testing"
	"time"
)

// TestNextRunLeavesAppwriteItsMinute: whatever the second within the minute, the first delayed run is at
// least a minute plus scheduleMargin ahead (Appwrite refuses less than 60 s by its own clock), on a whole
// minute, and later runs keep their doubling waits inside the retry window.
func TestNextRunLeavesAppwriteItsMinute(t *testing.T) {
	base := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	for _, off := range []time.Duration{0, time.Millisecond, 29 * time.Second, 30 * time.Second, 59*time.Second + 999*time.Millisecond} {
		now := base.Add(off)
		d := Deps{Now: func() time.Time { return now }, Config: &Config{RetryWindow: 15 * time.Minute}}
		at, ok := nextRun(&d, &Job{FirstAttempt: now.Unix()})
		if !ok || at.Sub(now) < time.Minute+scheduleMargin || at.Sub(now) > 2*time.Minute+scheduleMargin || at.Second() != 0 || at.Nanosecond() != 0 {
			t.Fatalf("now %v: next run %v (%v ahead, ok %v)", now, at, at.Sub(now), ok)
		}
		for runs, want := range []bool{true, true, true, true, false} {
			at, ok := nextRun(&d, &Job{FirstAttempt: now.Unix(), Runs: runs})
			if ok != want || ok && at.Sub(now) < time.Minute<<runs {
				t.Fatalf("now %v, run %d: %v %v", now, runs, at, ok)
			}
		}
	}
}
