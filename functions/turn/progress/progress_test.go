package progress

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"appwrite-agent/functions/turn/timeline"
	"appwrite-agent/functions/turn/timeline/timelinetest"
	"appwrite-agent/shared/devkit/testclock"
)

// newClock is the publisher's clock: its timers fire only when the test advances it.
func newClock() *testclock.Clock { return testclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)) }

// waitArmed blocks until the publisher has armed a timer that is still armed, so that the test advances the
// clock only once the deadline it means exists.
func waitArmed(t *testing.T, clk *testclock.Clock) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // against a hung test, not a timing assertion
	defer cancel()
	if err := clk.WaitArmed(ctx); err != nil {
		t.Fatal(err)
	}
}

// chanSink hands every batch to the test and answers with the test's reply.
type chanSink struct {
	name    string
	batches chan []Envelope
	replies chan error
}

func newChanSink(name string) *chanSink {
	return &chanSink{name: name, batches: make(chan []Envelope), replies: make(chan error)}
}

func (s *chanSink) Name() string { return s.name }
func (s *chanSink) Send(ctx context.Context, b []Envelope) (int, error) {
	select {
	case s.batches <- b:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	select {
	case err := <-s.replies:
		if err != nil {
			return 0, err
		}
		return len(b), nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (s *chanSink) next(t *testing.T) []Envelope {
	t.Helper()
	select {
	case b := <-s.batches:
		return b
	case <-time.After(10 * time.Second): // a watchdog against a hung test, not a timing assertion
		t.Fatal("no batch")
		return nil
	}
}

func types(b []Envelope) string {
	s := ""
	for _, e := range b {
		s += fmt.Sprintf("%d:%s ", e.Seq, e.Event.Type)
	}
	return s
}

func TestBatchingWaitsForTheIntervalAndUrgentEventsGoAtOnce(t *testing.T) {
	clk := newClock()
	sink := newChanSink("s")
	p := New(Options{Clock: clk}, sink)
	p.Emit(timeline.Status("Routing request…"))
	waitArmed(t, clk) // the worker saw the status and armed the 250 ms deadline instead of sending
	select {
	case b := <-sink.batches:
		t.Fatalf("a status went out before its interval: %s", types(b))
	default:
	}
	clk.Advance(249 * time.Millisecond)
	select {
	case b := <-sink.batches:
		t.Fatalf("sent at 249 ms: %s", types(b))
	default:
	}
	clk.Advance(time.Millisecond)
	if got := types(sink.next(t)); got != "1:status " {
		t.Fatalf("batch %q", got)
	}
	sink.replies <- nil
	// route is urgent: it goes out without the clock moving, with what was pending before it.
	p.Emit(timeline.Route("platform", "why"))
	if got := types(sink.next(t)); got != "2:route " {
		t.Fatalf("batch %q", got)
	}
	// While that delivery is in flight, events accumulate; the first token of an answer is urgent: they go
	// together as soon as the delivery ends, without the clock moving.
	p.Emit(timeline.SubagentStart("platform"))
	p.Emit(timeline.AnswerStart("platform"))
	p.Emit(timeline.Token("platform", "a"))
	sink.replies <- nil
	if got := types(sink.next(t)); got != "3:subagent_start 4:answer_start 5:token " {
		t.Fatalf("batch %q", got)
	}
	sink.replies <- nil
	// The tokens after the first wait for the interval.
	p.Emit(timeline.Token("platform", "b"))
	waitArmed(t, clk)
	clk.Advance(249 * time.Millisecond)
	select {
	case b := <-sink.batches:
		t.Fatalf("a second token went out before its interval: %s", types(b))
	default:
	}
	clk.Advance(time.Millisecond)
	if got := types(sink.next(t)); got != "6:token " {
		t.Fatalf("batch %q", got)
	}
	sink.replies <- nil
	p.Emit(timeline.SubagentEnd("platform", "ab", 0, false))
	p.Emit(timeline.Done("ab"))
	if got := types(sink.next(t)); got != "7:subagent_end 8:done " {
		t.Fatalf("batch %q", got)
	}
	sink.replies <- nil
	p.Emit(timeline.Complete())
	done := make(chan []timeline.Event)
	go func() { done <- p.Close(context.Background()) }()
	if got := types(sink.next(t)); got != "9:complete " {
		t.Fatalf("batch %q", got)
	}
	sink.replies <- nil
	evs := <-done
	if len(evs) != 9 || evs[8].Type != timeline.TypeComplete {
		t.Fatalf("timeline %v", evs)
	}
}

func TestFailingSinkIsRetriedThenDroppedWithAStatusAndTheOtherSinkGetsEverything(t *testing.T) {
	clk := newClock()
	bad, good := newChanSink("bad"), newChanSink("good")
	logs := make(chan string, 10)
	p := New(Options{Clock: clk, Log: func(s string) { logs <- s }}, bad, good)
	p.Emit(timeline.Status("Routing request…"))
	p.Emit(timeline.Route("FINISH", "r"))
	// Both get 1..2 at once (route is urgent).
	for _, s := range []*chanSink{bad, good} {
		var b []Envelope
		select {
		case b = <-bad.batches:
			bad.replies <- errors.New("HTTP 500")
		case b = <-good.batches:
			good.replies <- nil
		}
		if types(b) != "1:status 2:route " {
			t.Fatalf("%s batch %q", s.name, types(b))
		}
	}
	// The failed batch is retried after the interval, with what came since (nothing here).
	for attempt := 2; attempt <= DefaultMaxFailures; attempt++ {
		waitArmed(t, clk) // the bad sink's retry timer (the good sink has nothing pending, so no timer)
		clk.Advance(DefaultInterval)
		if got := types(bad.next(t)); got != "1:status 2:route " {
			t.Fatalf("retry %d: %q", attempt, got)
		}
		bad.replies <- errors.New("HTTP 500")
	}
	if l := <-logs; l != "progress: sink bad dropped after 3 failed deliveries: HTTP 500" {
		t.Fatalf("log %q", l)
	}
	// Dropped: the notice is in the timeline, before what follows.
	p.Emit(timeline.AnswerStart("supervisor"))
	p.Emit(timeline.Token("supervisor", "x"))
	p.Emit(timeline.Done("x"))
	b := good.next(t)
	good.replies <- nil
	got := types(b)
	if got != "3:status 4:answer_start 5:token 6:done " && got != "3:status " {
		t.Fatalf("good batch %q", got)
	}
	if b[0].Event.Type != timeline.TypeStatus {
		t.Fatalf("first %v", b[0].Event)
	}
	if v, _ := b[0].Event.Get("sink"); v != "bad" {
		t.Fatalf("drop notice %v", b[0].Event)
	}
	done := make(chan []timeline.Event)
	go func() { done <- p.Close(context.Background()) }()
	for {
		b := good.next(t)
		good.replies <- nil
		if b[len(b)-1].Event.Type == timeline.TypeComplete {
			break
		}
	}
	evs := <-done
	body, _ := timeline.JSONArray(evs)
	dec, _ := timelinetest.ParseJSON(body)
	if err := timelinetest.CheckOrder(dec); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if len(logs) != 0 {
		t.Fatalf("more logs: %q", <-logs)
	}
}

func TestPermanentFailureDropsAtOnceAndCloseEndsOnContext(t *testing.T) {
	clk := newClock()
	s := newChanSink("hook")
	logs := make(chan string, 1)
	p := New(Options{Clock: clk, Log: func(l string) { logs <- l }}, s)
	p.Emit(timeline.Route("FINISH", "r"))
	s.next(t)
	s.replies <- fmt.Errorf("%w: 410", ErrPermanent)
	if l := <-logs; l != "progress: sink hook dropped after 1 failed deliveries: permanent sink failure: 410" {
		t.Fatalf("log %q", l)
	}
	// A second sink that never answers: Close must still return when its context ends.
	hang := newChanSink("hang")
	p2 := New(Options{Clock: clk}, hang)
	p2.Emit(timeline.Route("FINISH", "r"))
	hang.next(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []timeline.Event)
	go func() { done <- p2.Close(ctx) }()
	cancel()
	evs := <-done
	if evs[len(evs)-1].Type != timeline.TypeComplete {
		t.Fatalf("%v", evs)
	}
	p.Emit(timeline.Done(""))
	evs = p.Close(context.Background())
	if msg, _ := evs[1].Get("message"); len(evs) != 4 || msg != DroppedMessage("hook", 1) || evs[3].Type != timeline.TypeComplete {
		t.Fatalf("%v", evs)
	}
}

func TestNoSinkOnlyRecords(t *testing.T) {
	p := New(Options{})
	p.Emit(timeline.Status("s"))
	p.Emit(timeline.Complete())
	p.Emit(timeline.Status("after"))
	evs := p.Close(context.Background())
	if len(evs) != 2 || evs[1].Type != timeline.TypeComplete {
		t.Fatalf("%v", evs)
	}
}
