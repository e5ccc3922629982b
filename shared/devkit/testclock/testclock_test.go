package testclock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"appwrite-agent/shared/devkit/testclock"
)

var start = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func Example() {
	clk := testclock.New(start)
	clk.AfterFunc(time.Minute, func() { fmt.Println("deadline at", clk.Now().Format(time.TimeOnly)) })
	fmt.Println(clk.Now().Format(time.TimeOnly))
	clk.Advance(59 * time.Second) // not yet due
	clk.Advance(time.Second)
	clk.Set(start.Add(time.Hour))
	fmt.Println(clk.Now().Format(time.TimeOnly))
	// Output:
	// 09:00:00
	// deadline at 09:01:00
	// 10:00:00
}

func ExampleWall() {
	clk := testclock.Wall()
	clk.Advance(2 * time.Hour) // two hours ahead of the wall clock, and moving with it
	fmt.Println(time.Until(clk.Now()).Round(time.Hour))
	// Output: 2h0m0s
}

func TestStoppedClockMovesOnlyWhenTold(t *testing.T) {
	clk := testclock.New(start)
	if got := clk.Now(); !got.Equal(start) {
		t.Fatalf("new clock reads %v, want %v", got, start)
	}
	clk.Advance(90 * time.Second)
	if got, want := clk.Now(), start.Add(90*time.Second); !got.Equal(want) {
		t.Fatalf("after Advance: %v, want %v", got, want)
	}
	clk.Advance(-30 * time.Second)
	if got, want := clk.Now(), start.Add(time.Minute); !got.Equal(want) {
		t.Fatalf("after a negative Advance: %v, want %v", got, want)
	}
	earlier := start.Add(-time.Hour)
	clk.Set(earlier)
	if got := clk.Now(); !got.Equal(earlier) {
		t.Fatalf("after Set back: %v, want %v", got, earlier)
	}
}

func TestWallClockKeepsMovingWithTheOffset(t *testing.T) {
	clk := testclock.Wall()
	before := time.Now()
	got := clk.Now()
	if got.Before(before) || got.After(time.Now()) {
		t.Fatalf("unmoved wall clock reads %v, outside [%v, now]", got, before)
	}
	clk.Advance(-2 * time.Hour)
	before = time.Now()
	got = clk.Now()
	if got.Before(before.Add(-2*time.Hour)) || got.After(time.Now().Add(-2*time.Hour)) {
		t.Fatalf("wall clock two hours back reads %v (wall %v)", got, before)
	}
	target := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	before = time.Now()
	clk.Set(target)
	elapsed := time.Since(before)
	if got := clk.Now(); got.Before(target) || got.After(target.Add(time.Since(before))) {
		t.Fatalf("wall clock set to %v reads %v (%v after Set began)", target, got, elapsed)
	}
}

func TestTimersFireInDeadlineOrderOnlyWhenReached(t *testing.T) {
	clk := testclock.New(start)
	var fired []string
	clk.AfterFunc(3*time.Second, func() { fired = append(fired, "3s") })
	clk.AfterFunc(time.Second, func() { fired = append(fired, "1s") })
	clk.AfterFunc(time.Hour, func() { fired = append(fired, "1h") })
	stop := clk.AfterFunc(2*time.Second, func() { fired = append(fired, "2s") })
	if !stop() {
		t.Fatal("stopping an armed timer reported it was not armed")
	}
	if stop() {
		t.Fatal("stopping a timer twice reported it armed the second time")
	}
	clk.Advance(999 * time.Millisecond)
	if len(fired) != 0 {
		t.Fatalf("fired before any deadline: %v", fired)
	}
	clk.Set(start.Add(5 * time.Second))
	if want := []string{"1s", "3s"}; !slices.Equal(fired, want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
	clk.Set(start) // back: nothing fires, the hour-long timer stays armed
	clk.Advance(time.Hour)
	if want := []string{"1s", "3s", "1h"}; !slices.Equal(fired, want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
}

func TestStopAfterFiringReportsFalse(t *testing.T) {
	clk := testclock.New(start)
	n := 0
	stop := clk.AfterFunc(0, func() { n++ })
	clk.Advance(0)
	if n != 1 {
		t.Fatalf("a zero timer fired %d times on Advance(0)", n)
	}
	if stop() {
		t.Fatal("stop after firing reported the timer armed")
	}
	clk.Advance(time.Hour)
	if n != 1 {
		t.Fatalf("a fired timer fired again: %d", n)
	}
}

// A timer's function may use the clock, as a batching deadline that re-arms itself does.
func TestTimerFunctionMayUseTheClock(t *testing.T) {
	clk := testclock.New(start)
	var ticks []time.Time
	var tick func()
	tick = func() {
		ticks = append(ticks, clk.Now())
		if len(ticks) < 3 {
			clk.AfterFunc(time.Second, tick)
		}
	}
	clk.AfterFunc(time.Second, tick)
	for range 5 {
		clk.Advance(time.Second)
	}
	want := []time.Time{start.Add(time.Second), start.Add(2 * time.Second), start.Add(3 * time.Second)}
	if !slices.EqualFunc(ticks, want, time.Time.Equal) {
		t.Fatalf("ticks %v, want %v", ticks, want)
	}
}

func TestWaitArmed(t *testing.T) {
	clk := testclock.New(start)
	clk.AfterFunc(time.Second, func() {})() // armed and stopped: does not count

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := clk.WaitArmed(canceled); !errors.Is(err, context.Canceled) {
		t.Fatalf("with no timer armed: %v, want context.Canceled", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // against a hang, not a timing assertion
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- clk.WaitArmed(ctx) }()
	clk.AfterFunc(time.Minute, func() {})
	if err := <-done; err != nil {
		t.Fatalf("WaitArmed with a timer armed: %v", err)
	}
	if err := clk.WaitArmed(canceled); err != nil {
		t.Fatalf("WaitArmed returns at once while a timer is armed, whatever the context: %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	clk := testclock.New(start)
	var wg sync.WaitGroup
	var mu sync.Mutex
	fired := 0
	for range 8 {
		wg.Go(func() {
			for range 100 {
				stop := clk.AfterFunc(time.Millisecond, func() { mu.Lock(); fired++; mu.Unlock() })
				clk.Advance(time.Millisecond)
				stop()
				_ = clk.Now()
			}
		})
	}
	wg.Wait()
	if want := start.Add(800 * time.Millisecond); !clk.Now().Equal(want) {
		t.Fatalf("after 800 moves of 1ms: %v, want %v", clk.Now(), want)
	}
	if fired != 800 {
		t.Fatalf("%d timers fired, want 800 (each was due when its own Advance returned)", fired)
	}
}
