package ingress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"time"

	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/stdwebhooks"
)

// This file sends MCP event webhooks to the subscribers: one signed POST (Standard Webhooks headers plus
// X-MCP-Subscription-Id) through the SSRF-safe client, and the retry policy around it (bounded attempts with
// exponential backoff and jitter, re-signed every time, none after 2xx, 410 or 413, all inside a time
// budget). (The verification challenge that proves a callback wants the events is mcp-events' own, in
// functions/mcp-events/subscriptions/challenge.go.)

// HeaderSubscriptionID is the only MCP-specific delivery header.
const HeaderSubscriptionID = "X-MCP-Subscription-Id"

// MaxBodyBytes is the largest body a subscriber is sent (ChatGPT's limit, 256 KiB).
const MaxBodyBytes = 256 << 10

// maxResponseBytes bounds what is read of a subscriber's answer (only the challenge answer matters).
const maxResponseBytes = 16 << 10

// Destination is where and how a subscription's events are delivered.
type Destination struct {
	// URL is the callback URL.
	URL string
	// SubscriptionID goes into X-MCP-Subscription-Id.
	SubscriptionID string
	// Secrets sign each attempt: the current secret first, then one being rotated out.
	Secrets []stdwebhooks.Secret
}

// Attempt is the outcome of one POST.
type Attempt struct {
	// Status is the HTTP status, 0 when no response came.
	Status int
	// Reason is the outcome category.
	Reason safehttp.Reason
	// Err is the transport or signing error, if any.
	Err error
	// Body is the start of the response body (at most 16 KiB).
	Body []byte
	// Took is how long the attempt lasted.
	Took time.Duration
}

// Delivered reports a 2xx answer.
func (a Attempt) Delivered() bool { return a.Reason == safehttp.ReasonOK }

// Retryable reports whether trying again may help: not after success, 410 Gone or 413 Payload Too Large
// (the MCP events rules), and not when the destination is refused by policy or the request could not be
// signed.
func (a Attempt) Retryable() bool {
	switch {
	case a.Delivered(), a.Status == http.StatusGone, a.Status == http.StatusRequestEntityTooLarge:
		return false
	case a.Reason == safehttp.ReasonBlocked, errors.Is(a.Err, errUnsignable):
		return false
	}
	return true
}

var errUnsignable = errors.New("ingress: cannot sign the delivery")

// Sender delivers events through one HTTP client. Make one per process with NewSender and share it; it is
// safe for concurrent use.
type Sender struct {
	client  *http.Client
	timeout time.Duration // the client's Timeout: an attempt's bound unless the policy's is shorter
}

// NewSender returns a Sender over a copy of client that never follows a redirect and carries no cookies: a
// 3xx is the attempt's answer (ReasonRedirect, retried as any other failure), because the callback that was
// verified is the one delivered to, not where it points. The client's Timeout bounds each attempt through
// the attempt's context, the one place an attempt's time is set (see Deliver).
func NewSender(client *http.Client) *Sender {
	c := *client
	c.Jar = nil
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.Timeout = 0
	return &Sender{client: &c, timeout: client.Timeout}
}

// post sends body once to t, signed at now with message id msgID. The attempt ends at ctx's deadline.
func (s *Sender) post(ctx context.Context, t Destination, msgID string, body []byte, now time.Time) Attempt {
	start := time.Now()
	if len(body) > MaxBodyBytes {
		return Attempt{Reason: safehttp.ReasonTooLarge, Err: fmt.Errorf("%w: body is %d bytes, limit %d", errUnsignable, len(body), MaxBodyBytes)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return Attempt{Reason: safehttp.ReasonBlocked, Err: fmt.Errorf("%w: %v", errUnsignable, err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "appwrite-mcp-events/1")
	req.Header.Set(HeaderSubscriptionID, t.SubscriptionID)
	if err := stdwebhooks.SetHeaders(req.Header, msgID, now, body, t.Secrets...); err != nil {
		return Attempt{Reason: safehttp.ReasonConnectionFailed, Err: fmt.Errorf("%w: %v", errUnsignable, err)}
	}
	res, err := s.client.Do(req)
	a := Attempt{}
	if err == nil {
		a.Status = res.StatusCode
		a.Body, err = safehttp.ReadResponse(res, maxResponseBytes)
		res.Body.Close()
		if errors.Is(err, safehttp.ErrResponseTooLarge) {
			err = nil // the answer's size does not matter; its status does
		}
	}
	a.Reason = safehttp.Classify(err, res)
	a.Err = err
	a.Took = time.Since(start)
	return a
}

// Policy bounds the retries of one delivery.
type Policy struct {
	// MaxAttempts is the most POSTs (at least 1).
	MaxAttempts int
	// Budget bounds the whole delivery, attempts and waits included.
	Budget time.Duration
	// BaseDelay is the wait after the first failure; it doubles each time, up to MaxDelay, with up to 50%
	// random jitter added.
	BaseDelay, MaxDelay time.Duration
	// AttemptTimeout bounds one attempt (also bounded by what is left of the budget).
	AttemptTimeout time.Duration
}

// DefaultPolicy answers Appwrite well inside its 15 s webhook timeout: up to 4 attempts within 9 s.
func DefaultPolicy() Policy {
	return Policy{MaxAttempts: 4, Budget: 9 * time.Second, BaseDelay: 250 * time.Millisecond, MaxDelay: 2 * time.Second, AttemptTimeout: 4 * time.Second}
}

// Delay is the wait before attempt n+1 after n failed attempts (n >= 1).
func (p Policy) Delay(n int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	if d > p.MaxDelay {
		d = p.MaxDelay
	}
	if d > 0 {
		d += time.Duration(mrand.Int64N(int64(d)/2 + 1))
	}
	return d
}

// Result is what came of a delivery.
type Result struct {
	// Attempts lists every POST in order.
	Attempts []Attempt
}

// Last is the final attempt (zero when none was made).
func (r Result) Last() Attempt {
	if len(r.Attempts) == 0 {
		return Attempt{}
	}
	return r.Attempts[len(r.Attempts)-1]
}

// Delivered reports whether an attempt got a 2xx.
func (r Result) Delivered() bool { return r.Last().Delivered() }

// Deliver posts body to t until it is accepted, a non-retryable answer comes, the attempts run out or the
// budget does. Each attempt has its own context (its deadline the earliest of Policy.AttemptTimeout, the
// client's Timeout, the budget's end and ctx's) and is signed afresh with the time from now.
func (s *Sender) Deliver(ctx context.Context, t Destination, msgID string, body []byte, p Policy, now func() time.Time) Result {
	if p.MaxAttempts < 1 {
		p.MaxAttempts = 1
	}
	ctx, cancel := context.WithTimeout(ctx, p.Budget)
	defer cancel()
	budget, _ := ctx.Deadline()
	attempt := p.AttemptTimeout
	if attempt <= 0 || (s.timeout > 0 && s.timeout < attempt) {
		attempt = s.timeout
	}
	var r Result
	for n := 1; ; n++ {
		actx, acancel := ctx, context.CancelFunc(func() {})
		if attempt > 0 {
			actx, acancel = context.WithTimeout(ctx, attempt)
		}
		a := s.post(actx, t, msgID, body, now())
		acancel()
		r.Attempts = append(r.Attempts, a)
		if !a.Retryable() || n >= p.MaxAttempts {
			return r
		}
		wait := p.Delay(n)
		if time.Until(budget) < wait+50*time.Millisecond {
			return r // no time left for another attempt
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return r
		case <-timer.C:
		}
	}
}
