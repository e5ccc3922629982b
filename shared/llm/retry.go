package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"appwrite-agent/shared/opsmetrics"
)

// Retry defaults. They follow the OpenAI SDKs (openai-python _constants.py: DEFAULT_MAX_RETRIES = 2,
// INITIAL_RETRY_DELAY = 0.5, MAX_RETRY_DELAY = 8.0), which the reference engine used through ChatOpenAI; the
// jitter is full jitter (a uniform wait between 0 and the exponential bound) where the SDKs take off at most
// a quarter.
const (
	// DefaultMaxRetries is LLM_MAX_RETRIES when unset: a model call is tried at most 1 + 2 times.
	DefaultMaxRetries = 2
	// EnvMaxRetries names the setting (0 turns retries off).
	EnvMaxRetries = "LLM_MAX_RETRIES"
	// RetryBaseDelay is the bound of the first backoff; it doubles with each retry up to RetryMaxDelay.
	RetryBaseDelay = 500 * time.Millisecond
	// RetryMaxDelay caps the backoff bound.
	RetryMaxDelay = 8 * time.Second
	// maxRetryHeaderWait is the longest Retry-After honoured by a call without a deadline (the SDKs' 60 s);
	// a call with a deadline honours any wait that fits before it and gives up at once otherwise.
	maxRetryHeaderWait = 60 * time.Second
)

// MetricRetries is the counter of model-call retries (docs/CONVENTIONS.md "Counters"), labelled with the
// reason (RetryEvent.Reason).
const MetricRetries = "llm_retries_total"

// Retry is the retry policy of a Client's model calls. A call is retried when the provider answered 408,
// 409, 429 or 5xx (or asked for it with x-should-retry: true), when the connection was refused, reset or
// closed before an answer, and when a stream died before its first token; never once a token went to
// Request.OnToken (a retry would repeat it), never after the call's context ended, and never past its
// deadline.
type Retry struct {
	// Max is the number of retries after the first attempt (0: none).
	Max int
	// Sleep waits d or until ctx ends (then it returns ctx.Err()); nil waits on a timer. Tests set it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0, 1) that scales the backoff bound; nil is math/rand/v2's Float64.
	Jitter func() float64
	// OnRetry, when set, is told of every retry before its wait (log it, count it: RetryEvent.Metric).
	OnRetry func(RetryEvent)
}

// RetryEvent describes one retry.
type RetryEvent struct {
	// Attempt is the retry's number (1 for the first retry), Max the policy's Retry.Max.
	Attempt, Max int
	// Reason is what failed: "http_<status>", "connection_refused", "connection_reset",
	// "connection_closed" (no answer) or "stream_cut" (a stream ended before its first token).
	Reason string
	// Status is the HTTP status of a failed answer (0 for a connection failure).
	Status int
	// Wait is how long the client waits before the retry; FromProvider reports that the provider chose it
	// (Retry-After or retry-after-ms).
	Wait         time.Duration
	FromProvider bool
	// Err is the failure, as Describe tells it.
	Err error
}

// String is the event's log line.
func (e RetryEvent) String() string {
	how := "backoff"
	if e.FromProvider {
		how = "Retry-After"
	}
	return fmt.Sprintf("model call retry %d of %d after %s (status %d): waiting %s (%s): %v",
		e.Attempt, e.Max, e.Reason, e.Status, e.Wait.Round(time.Millisecond), how, e.Err)
}

// Metric is the event's counter line: MetricRetries with its reason.
func (e RetryEvent) Metric() string { return opsmetrics.Line(MetricRetries, "reason", e.Reason) }

// WaitTooLongError ends a call whose provider asks (Retry-After) for a wait that would end after the call's
// deadline: the call gives up at once instead of waiting for nothing.
type WaitTooLongError struct {
	// Status is the HTTP status of the answer (429 for a rate limit).
	Status int
	// Wait is what the provider asked for; Left what was left before the deadline.
	Wait, Left time.Duration
	// Err is the provider's error, as Describe tells it.
	Err error
}

// Error names the rate limit and the wait.
func (e *WaitTooLongError) Error() string {
	what := "The model provider is unavailable"
	if e.Status == http.StatusTooManyRequests {
		what = "The model provider's rate limit was reached"
	}
	return fmt.Sprintf("%s and it asks to wait %s before the next call, more than the %s left of this turn (%v).",
		what, roundWait(e.Wait), roundWait(e.Left), e.Err)
}

// Unwrap returns the provider's error.
func (e *WaitTooLongError) Unwrap() error { return e.Err }

func roundWait(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// exchangeKey carries an *exchange in the context of one attempt.
type exchangeKey struct{}

// exchange is what the transport saw of one attempt's HTTP answer: the providers put the retry hints
// (Retry-After, retry-after-ms, x-should-retry) in headers that go-openai's errors do not keep.
type exchange struct {
	status int
	header http.Header
}

// recorder is the client's transport: base's, noting the status and headers of each answer in the
// attempt's exchange.
type recorder struct{ base http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if ex, ok := req.Context().Value(exchangeKey{}).(*exchange); ok && resp != nil {
		ex.status, ex.header = resp.StatusCode, resp.Header
	}
	return resp, err
}

// errStreamCut is a stream that ended before it said it was finished.
var errStreamCut = errors.New("the stream ended before the answer was finished")

// retryReason reports whether a failed attempt may be retried, and why it failed. The status is the
// attempt's last HTTP answer, as the transport saw it (the status an *openai.APIError or
// *openai.RequestError carries is that answer's).
func retryReason(err error, ex *exchange) (reason string, status int, ok bool) {
	status = ex.status
	if status >= 400 || (status != 0 && status < 200) {
		switch strings.ToLower(ex.header.Get("x-should-retry")) {
		case "true":
			return "http_" + strconv.Itoa(status), status, true
		case "false":
			return "", status, false
		}
		switch {
		case status == http.StatusRequestTimeout, status == http.StatusConflict, status == http.StatusTooManyRequests, status >= 500:
			return "http_" + strconv.Itoa(status), status, true
		}
		return "", status, false
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection_refused", 0, true
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		if status != 0 {
			return "stream_cut", status, true
		}
		return "connection_reset", 0, true
	case errors.Is(err, errStreamCut):
		return "stream_cut", status, true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		if status != 0 {
			return "stream_cut", status, true
		}
		return "connection_closed", 0, true
	}
	return "", status, false
}

// retryAfter reads the provider's wait: retry-after-ms (OpenAI's, milliseconds), else Retry-After in
// seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < math.MaxInt64/float64(time.Second) {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// wait is how long to wait before retry n (0 for the first): the provider's Retry-After when it gave one,
// otherwise full jitter under min(RetryMaxDelay, RetryBaseDelay*2^n).
func (r Retry) wait(n int, h http.Header, hasDeadline bool) (time.Duration, bool) {
	if d, ok := retryAfter(h, time.Now()); ok && (hasDeadline || d <= maxRetryHeaderWait) {
		return d, true
	}
	bound := RetryMaxDelay
	if n < 5 {
		bound = min(RetryMaxDelay, RetryBaseDelay<<n)
	}
	j := rand.Float64
	if r.Jitter != nil {
		j = r.Jitter
	}
	return time.Duration(j() * float64(bound)), false
}

func (r Retry) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Complete runs one model call (the Responses API for reasoning models, chat completions otherwise) with
// the client's retry policy (Retry). Its errors are Describe's, a *WaitTooLongError, or the context's.
func (c *Client) Complete(ctx context.Context, req Request) (Result, error) {
	p := c.settings.Retry
	for n := 0; ; n++ {
		ex := &exchange{}
		streamed := false
		r := req
		if req.OnToken != nil {
			r.OnToken = func(s string) { streamed = true; req.OnToken(s) }
		}
		res, err := c.once(context.WithValue(ctx, exchangeKey{}, ex), r)
		if err == nil {
			return res, nil
		}
		if streamed || ctx.Err() != nil || n >= p.Max {
			return Result{}, Describe(err)
		}
		reason, status, ok := retryReason(err, ex)
		if !ok {
			return Result{}, Describe(err)
		}
		deadline, hasDeadline := ctx.Deadline()
		wait, asked := p.wait(n, ex.header, hasDeadline)
		if hasDeadline {
			if left := time.Until(deadline); wait >= left {
				if asked {
					return Result{}, &WaitTooLongError{Status: status, Wait: wait, Left: max(left, 0), Err: Describe(err)}
				}
				return Result{}, Describe(err)
			}
		}
		if p.OnRetry != nil {
			p.OnRetry(RetryEvent{Attempt: n + 1, Max: p.Max, Reason: reason, Status: status, Wait: wait, FromProvider: asked, Err: Describe(err)})
		}
		if err := p.sleep(ctx, wait); err != nil {
			return Result{}, err
		}
	}
}
