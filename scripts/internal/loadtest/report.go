package loadtest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"appwrite-agent/scripts/internal/stack"
)

// Report is what one run measured.
type Report struct {
	// Config is the run's configuration; Machine where it ran; LoadBefore/LoadAfter the load averages.
	Config                Config
	Machine               Machine
	LoadBefore, LoadAfter string
	// Scratch is the folder of the run's files, the functions' per-execution log files among them.
	Scratch string

	// StackStart is building (cached) and starting the stand-in and all instances.
	StackStart time.Duration
	// Subscriptions and SubscribeTime: events/subscribe calls (each with its callback challenge).
	Subscriptions int
	SubscribeTime time.Duration
	// LoadTime is from the first change until everything settled (delayed retries included); ProduceTime
	// until the last change was made.
	LoadTime, ProduceTime time.Duration
	// Ticks and ScheduledRuns: retry ticks and the delayed executions they started.
	Ticks, ScheduledRuns int
	// RestartTime is the ingress replica's restart (stop, start, first /health), after RestartAfter changes.
	RestartTime  time.Duration
	RestartAfter int
	// Failovers and ProxyErrors come from the balancer; Served is requests per ingress replica.
	Failovers, ProxyErrors int64
	ProxyErrorText         []string
	Served                 []int64
	// Ingress and Jobs are the ingress's request times (Appwrite's deliveries; delayed retries), as the
	// balancer saw them (subscriber time and retries included).
	Ingress, Jobs Timing
	// Memory is per instance.
	Memory []InstanceMemory

	// Expected is the number of changes, each matching exactly one subscription.
	Expected int
	// DeliveredOnce, DeliveredMore: events acknowledged (2xx) once, more than once; Unexplained are repeats
	// not preceded by an answer the ingress did not wait for and made after the ingress had reported the
	// event delivered (must be 0). A 200 the subscriber sent in time can still reach the ingress after its
	// attempt deadline on a loaded machine; the ingress then tries again, as at-least-once delivery must,
	// and has not reported the event delivered yet.
	DeliveredOnce, DeliveredMore, Unexplained int
	// Abandoned410 and Abandoned413: events abandoned by rule (the subscriber answered 410 or 413).
	Abandoned410, Abandoned413 int
	// AbandonedDown: events of the subscriber that never recovers (out of retries, by design).
	AbandonedDown int
	// Lost: events of recovering subscribers never acknowledged and not abandoned by rule (must be 0).
	Lost     int
	LostRows []string
	// Requests counts the subscribers' answers by kind; MaxRequests is the most POSTs one event got
	// (bounded by 4 executions x MaxAttempts).
	Requests    [numKinds]int
	MaxRequests int
	// OutageAnswers are the 5xx the recovering subscriber gave (all during its outage).
	OutageAnswers int
	// Mismatched: requests whose row, subscription id or subscriber did not match the change, or rows
	// delivered under more than one eventId (must be 0). Unverified: signatures that failed (must be 0).
	Mismatched, Unverified int
	// PerSecond is acknowledged events per second, first to last acknowledgement (retry tail included).
	PerSecond float64
	// IngressPerSecond is Appwrite deliveries the ingress answered per second, first arrival to last answer
	// (every outcome: delivered, scheduled, abandoned).
	IngressPerSecond float64
	// Compare are the clean comparison's rounds.
	Compare []Round
}

// Round is one round of the clean comparison: the plain relay as a handler in the harness process, the same
// relay deployed as a function (two processes on the local runtime, as the ingress), and the ingress.
type Round struct {
	// PerSecond are the deliveries per second of each path.
	PerSecond [3]float64
	// CPU is what one delivery of each phase cost.
	CPU [3]PhaseCPU
}

// PhaseCPU is the CPU time (user + system, /proc/<pid>/stat) one delivery cost during a comparison phase, by
// process.
type PhaseCPU struct {
	// Harness is the harness process: the stand-in, the balancers, the subscriber and the in-harness relay.
	// Function is the phase's function processes (the relay function's or the ingress's two).
	Harness, Function time.Duration
	// Conns is how many connections the subscriber accepted during the phase (each a TLS handshake).
	Conns int
}

// InstanceMemory is one instance's memory.
type InstanceMemory struct {
	Instance string
	Mem      stack.Mem
}

// Timing summarizes request durations.
type Timing struct {
	N                  int
	P50, P90, P99, Max time.Duration
}

func summarize(ds []time.Duration) Timing {
	if len(ds) == 0 {
		return Timing{}
	}
	slices.Sort(ds)
	q := func(p float64) time.Duration { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
	return Timing{N: len(ds), P50: q(0.50), P90: q(0.90), P99: q(0.99), Max: ds[len(ds)-1]}
}

func (r *Report) analyze(recs []record, rowSub []int, subIDs []string, subOf func(int) int, deliveredAt map[string]time.Time, cfg Config) {
	r.Expected = len(rowSub)
	byRow := map[string][]record{}
	var first, last time.Time
	for _, rc := range recs {
		r.Requests[rc.kind]++
		if int(rc.sub) == recovering && rc.kind == kind5xx {
			r.OutageAnswers++
		}
		if rc.kind == kindUnverified {
			r.Unverified++
		}
		byRow[rc.rowID] = append(byRow[rc.rowID], rc)
		if first.IsZero() || rc.at.Before(first) {
			first = rc.at
		}
	}
	acked := 0
	for i, k := range rowSub {
		id := rowID(i)
		rs := byRow[id]
		delete(byRow, id)
		r.MaxRequests = max(r.MaxRequests, len(rs))
		acks, slow, gone, tooLarge := 0, false, false, false
		events := map[string]bool{}
		for _, rc := range rs {
			events[rc.eventID] = true
			if rc.subID != subIDs[k] || int(rc.sub) != subOf(k) {
				r.Mismatched++
			}
			switch rc.kind {
			case kindOK, kindSlow:
				acks++
				if at, reported := deliveredAt[rc.eventID]; acks > 1 && !slow && reported && rc.at.After(at) {
					r.Unexplained++
				}
				slow = slow || rc.kind == kindSlow
				if rc.at.After(last) {
					last = rc.at
				}
			case kindGone:
				gone = true
			case kindTooLarge:
				tooLarge = true
			}
		}
		if len(events) > 1 {
			r.Mismatched++
		}
		switch {
		case acks == 1:
			r.DeliveredOnce++
		case acks > 1:
			r.DeliveredMore++
		case gone:
			r.Abandoned410++
		case tooLarge:
			r.Abandoned413++
		case subOf(k) == downForGood:
			r.AbandonedDown++
		default:
			r.Lost++
			if len(r.LostRows) < 20 {
				var kinds []string
				for _, rc := range rs {
					kinds = append(kinds, rc.at.Format("15:04:05.000")+" "+kindNames[rc.kind])
				}
				r.LostRows = append(r.LostRows, fmt.Sprintf("%s (subscriber %d: %s)", id, subOf(k), strings.Join(kinds, ", ")))
			}
		}
		acked += min(acks, 1)
	}
	for _, rs := range byRow { // requests for rows that were never made
		r.Mismatched += len(rs)
	}
	if !last.IsZero() {
		r.PerSecond = float64(acked) / last.Sub(first).Seconds()
	}
}

// Check returns every violated invariant.
func (r *Report) Check() error {
	var errs []error
	if r.Lost != 0 {
		errs = append(errs, fmt.Errorf("%d events lost: %v", r.Lost, r.LostRows))
	}
	if r.Unexplained != 0 {
		errs = append(errs, fmt.Errorf("%d events delivered more than once without a retry to explain it", r.Unexplained))
	}
	if r.Mismatched != 0 {
		errs = append(errs, fmt.Errorf("%d requests or events did not match their change and subscription", r.Mismatched))
	}
	if r.Unverified != 0 {
		errs = append(errs, fmt.Errorf("%d requests failed Standard Webhooks verification", r.Unverified))
	}
	if r.ProxyErrors != 0 {
		errs = append(errs, fmt.Errorf("%d ingress requests found no replica: %q", r.ProxyErrors, r.ProxyErrorText))
	}
	if bound := executions * r.Config.MaxAttempts; r.MaxRequests > bound {
		errs = append(errs, fmt.Errorf("an event got %d POSTs, more than %d executions x %d attempts", r.MaxRequests, executions, r.Config.MaxAttempts))
	}
	if got := r.DeliveredOnce + r.DeliveredMore + r.Abandoned410 + r.Abandoned413 + r.AbandonedDown + r.Lost; got != r.Expected {
		errs = append(errs, fmt.Errorf("accounting: %d outcomes for %d changes", got, r.Expected))
	}
	if r.DeliveredOnce == 0 || r.Config.Changes >= 100 && (r.AbandonedDown == 0 || r.Config.Outage > 0 && r.OutageAnswers == 0) {
		errs = append(errs, fmt.Errorf("the run exercised too little: %d delivered, %d abandoned, %d answers of the outage", r.DeliveredOnce, r.AbandonedDown, r.OutageAnswers))
	}
	return errors.Join(errs...)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// Markdown renders the report for docs/benchmarks.md.
func (r *Report) Markdown() string {
	var b strings.Builder
	c := r.Config
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("Machine: %d CPUs, `%s`, %s; load average %s before, %s after the run (the 2 cores are shared with other engineers' builds and tests). The run's files, the functions' log files among them, were in `%s`.\n\n",
		r.Machine.CPUs, r.Machine.Model, r.Machine.Go, r.LoadBefore, r.LoadAfter, r.Scratch)
	w("Run: %d subscriptions (%d projects x %d tables, subscriber = subscription %% 10, through 2 mcp-events replicas), %d changes by %d producers, stand-in with %d workers, ingress `INGRESS_BUDGET_MS=%d`, `INGRESS_MAX_ATTEMPTS=%d`, `INGRESS_RETRY_WINDOW_MINUTES=%d`, retry tick %v, outage %v, ingress replica 1 restarted after %d changes, seed %d.\n\n",
		r.Subscriptions, c.Projects, c.SubsPerProject, c.Changes, c.Producers, c.Workers, c.BudgetMS, c.MaxAttempts, RetryWindowMinutes, c.RetryTick, c.Outage, c.RestartAfter, c.Seed)
	w("| figure | value |\n|---|---:|\n")
	w("| stack start (stage and build, cached by Go; stand-in; 6 processes healthy) | %s |\n", ms(r.StackStart))
	w("| events/subscribe x %d (each with its challenge) | %s |\n", r.Subscriptions, ms(r.SubscribeTime))
	w("| events expected | %d |\n", r.Expected)
	w("| delivered once | %d |\n", r.DeliveredOnce)
	w("| delivered more than once (same eventId) | %d (unexplained by a retry: %d) |\n", r.DeliveredMore, r.Unexplained)
	w("| lost (recovering subscribers) | **%d** |\n", r.Lost)
	w("| abandoned by rule: 410 / 413 | %d / %d |\n", r.Abandoned410, r.Abandoned413)
	w("| abandoned after the retry window (subscriber down for good) | %d |\n", r.AbandonedDown)
	w("| 503 answers of the subscriber with the %v outage (all its events then delivered) | %d |\n", c.Outage, r.OutageAnswers)
	w("| mismatched (row, subscription id, subscriber, eventId) / unverified signatures | %d / %d |\n", r.Mismatched, r.Unverified)
	w("| most POSTs for one event (bound: %d executions x %d attempts) | %d |\n", executions, c.MaxAttempts, r.MaxRequests)
	w("| Appwrite deliveries answered by the ingress per second (first arrival to last answer) | %.0f |\n", r.IngressPerSecond)
	w("| acknowledged events per second (first to last acknowledgement, retry tail included) | %.0f |\n", r.PerSecond)
	w("| changes made in / settled in | %s / %s |\n", ms(r.ProduceTime), ms(r.LoadTime))
	w("| ingress time, Appwrite delivery (n=%d): p50 / p90 / p99 / max | %s / %s / %s / %s |\n", r.Ingress.N, ms(r.Ingress.P50), ms(r.Ingress.P90), ms(r.Ingress.P99), ms(r.Ingress.Max))
	w("| ingress time, delayed retry (n=%d): p50 / p99 | %s / %s |\n", r.Jobs.N, ms(r.Jobs.P50), ms(r.Jobs.P99))
	w("| retry ticks / delayed executions run | %d / %d |\n", r.Ticks, r.ScheduledRuns)
	w("| ingress restart (stop, start, healthy) | %s |\n", ms(r.RestartTime))
	w("| requests per ingress replica / failovers / unanswered | %v / %d / %d |\n", r.Served, r.Failovers, r.ProxyErrors)
	b.WriteString("\nSubscriber answers (every POST the ingress made):\n\n| answer | requests |\n|---|---:|\n")
	for k, n := range r.Requests {
		w("| %s | %d |\n", kindNames[k], n)
	}
	b.WriteString("\nPeak memory (VmHWM) per instance:\n\n| instance | VmHWM | VmRSS at the end |\n|---|---:|---:|\n")
	for _, m := range r.Memory {
		w("| %s | %.1f MB | %.1f MB |\n", m.Instance, float64(m.Mem.HWM)/1024, float64(m.Mem.RSS)/1024)
	}
	if len(r.Compare) > 0 {
		w("\nClean comparison (one healthy subscriber, %d changes per round after an unrecorded warm-up round, same stand-in, workers and producers; the three paths take turns, each after a collection of the harness's heap). The ratio is the ingress's throughput over the relay function's, the like-for-like plain two-hop relay: the same relay as a handler inside the harness process does not run on the runtime at all:\n\n| round | relay in the harness (deliveries/s) | relay function (deliveries/s) | ingress (deliveries/s) | ratio |\n|---|---:|---:|---:|---:|\n", c.CompareChanges)
		var sum [3]float64
		for i, x := range r.Compare {
			w("| %d | %.0f | %.0f | %.0f | %.2f |\n", i+1, x.PerSecond[0], x.PerSecond[1], x.PerSecond[2], x.PerSecond[2]/x.PerSecond[1])
			for k := range sum {
				sum[k] += x.PerSecond[k]
			}
		}
		n := float64(len(r.Compare))
		w("| mean | %.0f | %.0f | %.0f | **%.2f** (%.2f of the relay in the harness) |\n", sum[0]/n, sum[1]/n, sum[2]/n, sum[2]/sum[1], sum[2]/sum[0])
		w("\nCPU time per delivery (`/proc/<pid>/stat`, user + system, 10 ms ticks; harness = stand-in, balancers, subscriber and the in-harness relay; functions = the phase's two function processes) and the subscriber's new connections (TLS handshakes) per round:\n\n| round | relay in the harness | relay function: harness + functions | ingress: harness + functions | new connections |\n|---|---:|---:|---:|---:|\n")
		us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
		for i, x := range r.Compare {
			w("| %d | %.0f µs | %.0f + %.0f µs | %.0f + %.0f µs | %d / %d / %d |\n", i+1, us(x.CPU[0].Harness), us(x.CPU[1].Harness), us(x.CPU[1].Function),
				us(x.CPU[2].Harness), us(x.CPU[2].Function), x.CPU[0].Conns, x.CPU[1].Conns, x.CPU[2].Conns)
		}
	}
	return b.String()
}
