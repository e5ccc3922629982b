// Package progress publishes a turn's timeline while it runs: events are numbered, batched (at least every
// Interval, at once for the events a client waits for) and delivered in order to each sink (Appwrite
// Realtime rows, a signed webhook). A failing sink never fails the turn: after MaxFailures failed deliveries
// in a row it is dropped for the rest of the turn, the timeline gets a status event and the log the reason.
// The Publisher also records the whole timeline, for the synchronous response body.
package progress

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"appwrite-agent/functions/turn/timeline"
)

// Defaults of Options.
const (
	DefaultInterval    = 250 * time.Millisecond
	DefaultMaxFailures = 3
	DefaultSendTimeout = 10 * time.Second
)

// Clock is the time source of a Publisher: Now stamps events, AfterFunc schedules the batching deadline and
// retries. Tests inject a fake one so that nothing waits on the real clock.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f once d has passed; stop cancels it and reports whether it did.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// RealClock is the wall clock.
var RealClock Clock = realClock{}

// Envelope is one published event: its sequence number (1, 2, … in timeline order, so a receiver sees a gap),
// the time it was emitted, and the event.
type Envelope struct {
	Seq   int
	Time  time.Time
	Event timeline.Event
}

// Sink receives batches of consecutive envelopes, in order. Send returns how many envelopes of the batch, from
// its start, were delivered (all of them when err is nil); the rest is sent again later.
type Sink interface {
	// Name names the sink in status events and logs ("realtime", "webhook").
	Name() string
	// Send delivers batch.
	Send(ctx context.Context, batch []Envelope) (delivered int, err error)
}

// ErrPermanent, wrapped by a Send error, drops the sink at once (for example a webhook answering 410 Gone).
var ErrPermanent = errors.New("permanent sink failure")

// Options configure a Publisher.
type Options struct {
	// Clock is RealClock when nil.
	Clock Clock
	// Interval is the longest an event waits before it goes out (DefaultInterval when 0).
	Interval time.Duration
	// MaxFailures is how many failed deliveries in a row drop a sink (DefaultMaxFailures when 0). A failed
	// delivery is retried after Interval, together with the events emitted since.
	MaxFailures int
	// SendTimeout bounds one Send (DefaultSendTimeout when 0).
	SendTimeout time.Duration
	// Log receives the reason a sink was dropped.
	Log func(string)
}

// Immediate reports the event types that go out at once instead of waiting for the batching interval.
func Immediate(typ string) bool {
	switch typ {
	case timeline.TypeRoute, timeline.TypeToolStart, timeline.TypeToolEnd, timeline.TypeDone, timeline.TypeError,
		timeline.TypeComplete:
		return true
	}
	return false
}

// DroppedMessage is the status text the timeline gets when a sink is dropped.
func DroppedMessage(sink string, failures int) string {
	n := fmt.Sprintf("%d failed deliveries", failures)
	if failures == 1 {
		n = "1 failed delivery"
	}
	return fmt.Sprintf("Progress sink '%s' dropped after %s; the turn goes on without it.", sink, n)
}

// Publisher numbers, records and publishes one turn's events. Emit is the engine's emit function; Close
// delivers what is left and returns the whole timeline. A Publisher serves one turn.
type Publisher struct {
	opts Options

	mu      sync.Mutex
	changed *sync.Cond
	events  []Envelope
	held    *timeline.Event // complete, held back until Close so that drop notices come before it
	drain   bool            // Close started: send whatever is pending, without waiting
	final   bool            // complete is appended: workers stop once they delivered everything
	workers []*worker
	wg      sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

type worker struct {
	sink    Sink
	next    int // index in events of the first undelivered envelope
	urgent  bool
	due     bool
	backoff bool // the last delivery failed: wait for the timer
	timer   func() bool
	fails   int
	dropped bool
	done    bool
	kick    chan struct{}
}

// New returns a Publisher for sinks; with no sink it only records. It starts one goroutine per sink, which
// ends when Close returns.
func New(opts Options, sinks ...Sink) *Publisher {
	if opts.Clock == nil {
		opts.Clock = RealClock
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.MaxFailures <= 0 {
		opts.MaxFailures = DefaultMaxFailures
	}
	if opts.SendTimeout <= 0 {
		opts.SendTimeout = DefaultSendTimeout
	}
	p := &Publisher{opts: opts}
	p.changed = sync.NewCond(&p.mu)
	// The workers' context is cancelled by Close: no goroutine outlives the turn.
	p.ctx, p.cancel = context.WithCancel(context.Background())
	for _, s := range sinks {
		w := &worker{sink: s, kick: make(chan struct{}, 1)}
		p.workers = append(p.workers, w)
		p.wg.Add(1)
		go p.run(w)
	}
	return p
}

// Emit records e and queues it for the sinks. complete is held back until Close.
func (p *Publisher) Emit(e timeline.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.final || p.held != nil {
		return // nothing follows complete
	}
	if e.Type == timeline.TypeComplete {
		if p.held == nil {
			p.held = &e
		}
		return
	}
	p.appendLocked(e)
}

func (p *Publisher) appendLocked(e timeline.Event) {
	p.events = append(p.events, Envelope{Seq: len(p.events) + 1, Time: p.opts.Clock.Now().UTC(), Event: e})
	// The first token of an answer goes out at once, with its answer_start: the page shows the answer
	// starting as soon as the model does; the tokens after it are batched.
	n := len(p.events)
	urgent := Immediate(e.Type) || (e.Type == timeline.TypeToken && n >= 2 && p.events[n-2].Event.Type == timeline.TypeAnswerStart)
	for _, w := range p.workers {
		if urgent {
			w.urgent = true
		}
		w.wake()
	}
	p.changed.Broadcast()
}

func (w *worker) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Close delivers the pending events (retrying a failing sink until it is dropped), then complete, waits for
// the sinks until ctx ends, and returns the whole timeline. A timeline without complete gets one.
func (p *Publisher) Close(ctx context.Context) []timeline.Event {
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.cancel()
		p.changed.Broadcast()
		p.mu.Unlock()
	})
	defer stop()
	p.mu.Lock()
	p.drain = true
	for _, w := range p.workers {
		w.wake()
	}
	// Phase 1: every sink delivered everything so far, or was dropped (its notice is then part of the
	// timeline, and goes to the other sinks in this same loop).
	for ctx.Err() == nil && !p.allDeliveredLocked() {
		p.changed.Wait()
	}
	complete := timeline.Complete()
	if p.held != nil {
		complete = *p.held
	}
	p.appendLocked(complete)
	p.final = true
	p.mu.Unlock()
	// Phase 2: complete goes out; a sink failing now is only logged.
	p.wg.Wait()
	p.cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]timeline.Event, len(p.events))
	for i, e := range p.events {
		out[i] = e.Event
	}
	return out
}

func (p *Publisher) allDeliveredLocked() bool {
	for _, w := range p.workers {
		if !w.dropped && !w.done && w.next < len(p.events) {
			return false
		}
	}
	return true
}

// Events returns the envelopes recorded so far (complete only after Close).
func (p *Publisher) Events() []Envelope {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.events)
}

func (p *Publisher) run(w *worker) {
	defer p.wg.Done()
	for {
		batch, exit := p.take(w)
		if exit {
			return
		}
		if batch == nil {
			select {
			case <-w.kick:
			case <-p.ctx.Done():
				p.mu.Lock()
				p.finishLocked(w, fmt.Errorf("the turn ended before it was delivered: %w", p.ctx.Err()))
				p.mu.Unlock()
				return
			}
			continue
		}
		sctx, cancel := context.WithTimeout(p.ctx, p.opts.SendTimeout)
		n, err := w.sink.Send(sctx, batch)
		cancel()
		p.delivered(w, batch, n, err)
	}
}

// take returns the batch w must send now, nil when it must wait, and exit when it is finished.
func (p *Publisher) take(w *worker) (batch []Envelope, exit bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.dropped || w.done {
		return nil, true
	}
	pending := p.events[w.next:]
	if len(pending) == 0 {
		if p.final {
			w.done = true
			p.changed.Broadcast()
			return nil, true
		}
		return nil, false
	}
	ready := w.due || (!w.backoff && (w.urgent || p.drain))
	if !ready {
		p.armLocked(w)
		return nil, false
	}
	if w.timer != nil {
		w.timer()
		w.timer = nil
	}
	w.urgent, w.due = false, false
	return slices.Clone(pending), false
}

func (p *Publisher) delivered(w *worker, batch []Envelope, n int, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n = max(0, min(n, len(batch)))
	if err == nil {
		n = len(batch)
	}
	w.next += n
	if err == nil {
		w.fails, w.backoff = 0, false
		p.changed.Broadcast()
		return
	}
	w.fails++
	if errors.Is(err, ErrPermanent) || w.fails >= p.opts.MaxFailures || p.ctx.Err() != nil {
		p.dropLocked(w, err)
		return
	}
	w.backoff = true
	p.armLocked(w)
	p.changed.Broadcast()
}

// armLocked makes w due one interval from now, unless a deadline is already armed: the batching deadline of
// pending events and the retry of a failed batch are the same timer. p.mu is held.
func (p *Publisher) armLocked(w *worker) {
	if w.timer != nil {
		return
	}
	w.timer = p.opts.Clock.AfterFunc(p.opts.Interval, func() {
		p.mu.Lock()
		w.due, w.timer = true, nil
		p.mu.Unlock()
		w.wake()
	})
}

func (p *Publisher) dropLocked(w *worker, err error) {
	w.dropped = true
	if w.timer != nil {
		w.timer()
		w.timer = nil
	}
	p.log(fmt.Sprintf("progress: sink %s dropped after %d failed deliveries: %v", w.sink.Name(), w.fails, err))
	if !p.final {
		p.appendLocked(timeline.SinkStatus(DroppedMessage(w.sink.Name(), w.fails), w.sink.Name()))
	}
	p.changed.Broadcast()
}

// finishLocked ends a worker whose context ended with events undelivered.
func (p *Publisher) finishLocked(w *worker, err error) {
	if !w.dropped && !w.done && w.next < len(p.events) {
		p.log(fmt.Sprintf("progress: sink %s: %d events not delivered: %v", w.sink.Name(), len(p.events)-w.next, err))
	}
	w.done = true
	p.changed.Broadcast()
}

func (p *Publisher) log(s string) {
	if p.opts.Log != nil {
		p.opts.Log(s)
	}
}
