// Package eventdelivery sends MCP event webhooks: one signed POST (Standard Webhooks headers plus
// X-MCP-Subscription-Id) through the SSRF-safe client, the retry policy around it (bounded attempts with
// exponential backoff and jitter, re-signed every time, none after 2xx, 410 or 413, all inside a time
// budget), and the verification challenge that proves a callback wants the events.
package eventdelivery

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/stdwebhooks"
)

// HeaderSubscriptionID is the only MCP-specific delivery header.
const HeaderSubscriptionID = "X-MCP-Subscription-Id"

// canonicalSubscriptionID is HeaderSubscriptionID as http.Header.Set stores it.
const canonicalSubscriptionID = "X-Mcp-Subscription-Id"

// MaxBodyBytes is the largest body a subscriber is sent (ChatGPT's limit, 256 KiB).
const MaxBodyBytes = 256 << 10

// maxResponseBytes bounds what is read of a subscriber's answer (only the challenge answer matters).
const maxResponseBytes = 16 << 10

// Target is where and how a subscription's events are delivered.
type Target struct {
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

var errUnsignable = errors.New("eventdelivery: cannot sign the delivery")

// Sender posts through one client's transport and signs with one stdwebhooks.Signer. Make one per process
// with NewSender and share it: it keeps the HMAC states of recent secrets. It is safe for concurrent use.
//
// A Sender calls the transport itself rather than http.Client.Do: a delivery never follows a redirect (a
// 3xx is the attempt's answer, ReasonRedirect, as safehttp's client would refuse to follow it) and carries
// no cookies, and the attempt's deadline is its context's. What Do adds for a client that follows redirects
// and times its requests (a copy of the headers for the next hop, a timer and a body wrapper per request)
// is then work without a use, on every attempt (docs/benchmarks.md, section 1).
type Sender struct {
	rt      http.RoundTripper
	timeout time.Duration // the client's Timeout (0: none)
	signer  *stdwebhooks.Signer
}

// NewSender returns a Sender over client's Transport (http.DefaultTransport when nil) and Timeout, read
// once: an attempt ends at its context's deadline or after the Timeout, whichever comes first. The client's
// CheckRedirect and Jar are not used (see Sender).
func NewSender(client *http.Client) *Sender {
	rt := client.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &Sender{rt: rt, timeout: client.Timeout, signer: stdwebhooks.NewSigner()}
}

// Post sends body once to t, signed at now with message id msgID.
func Post(ctx context.Context, client *http.Client, t Target, msgID string, body []byte, now time.Time) Attempt {
	return NewSender(client).Post(ctx, t, msgID, body, now)
}

// Post is the package's Post through s.
func (s *Sender) Post(ctx context.Context, t Target, msgID string, body []byte, now time.Time) Attempt {
	start := time.Now()
	if len(body) > MaxBodyBytes {
		return Attempt{Status: 0, Reason: safehttp.ReasonTooLarge, Err: fmt.Errorf("%w: body is %d bytes, limit %d", errUnsignable, len(body), MaxBodyBytes)}
	}
	if s.timeout > 0 {
		if dl, ok := ctx.Deadline(); !ok || start.Add(s.timeout).Before(dl) {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, start.Add(s.timeout))
			defer cancel()
		}
	}
	// A *bytes.Reader body: net/http writes a body it knows to be in memory with the headers, in one write
	// (TestPostRequest).
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return Attempt{Reason: safehttp.ReasonBlocked, Err: fmt.Errorf("%w: %v", errUnsignable, err)}
	}
	// What req.Header.Set does, with the six values in one slice (every attempt makes these).
	vals := make([]string, 3, 6)
	vals[0], vals[1], vals[2] = "application/json", "appwrite-mcp-events/1", t.SubscriptionID
	vals, err = s.signer.AppendValues(vals, msgID, now, body, t.Secrets...)
	if err != nil {
		return Attempt{Reason: safehttp.ReasonConnectionFailed, Err: fmt.Errorf("%w: %v", errUnsignable, err)}
	}
	req.Header["Content-Type"], req.Header["User-Agent"], req.Header[canonicalSubscriptionID] = vals[0:1:1], vals[1:2:2], vals[2:3:3]
	stdwebhooks.SetValues(req.Header, vals[3:])
	res, err := s.rt.RoundTrip(req)
	a := Attempt{}
	if err != nil {
		err = &url.Error{Op: "Post", URL: t.URL, Err: err} // as http.Client.Do reports it
	} else {
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
// budget does. Each attempt is signed afresh with the time from now.
func Deliver(ctx context.Context, client *http.Client, t Target, msgID string, body []byte, p Policy, now func() time.Time) Result {
	return NewSender(client).Deliver(ctx, t, msgID, body, p, now)
}

// Deliver is the package's Deliver through s.
func (s *Sender) Deliver(ctx context.Context, t Target, msgID string, body []byte, p Policy, now func() time.Time) Result {
	return s.DeliverInto(ctx, nil, t, msgID, body, p, now)
}

// DeliverInto is Deliver with the result's attempts appended to attempts: room the caller keeps on its
// stack for Policy.MaxAttempts of them saves an allocation per delivery.
func (s *Sender) DeliverInto(ctx context.Context, attempts []Attempt, t Target, msgID string, body []byte, p Policy, now func() time.Time) Result {
	if p.MaxAttempts < 1 {
		p.MaxAttempts = 1
	}
	// The budget is a deadline, not a context of its own: each attempt gets one context, whose deadline is
	// the earliest of the attempt's, the budget's and ctx's.
	budget := time.Now().Add(p.Budget)
	if dl, ok := ctx.Deadline(); ok && dl.Before(budget) {
		budget = dl
	}
	r := Result{Attempts: attempts[:0]}
	for n := 1; ; n++ {
		adl := budget
		if p.AttemptTimeout > 0 {
			adl = minTime(adl, time.Now().Add(p.AttemptTimeout))
		}
		actx, acancel := context.WithDeadline(ctx, adl)
		a := s.Post(actx, t, msgID, body, now())
		acancel()
		r.Attempts = append(r.Attempts, a)
		if !a.Retryable() || n >= p.MaxAttempts {
			return r
		}
		wait := p.Delay(n)
		if time.Until(budget) < wait+50*time.Millisecond {
			return r // no time left for another attempt
		}
		select {
		case <-ctx.Done():
			return r
		case <-time.After(wait):
		}
	}
}

// ChallengeError says why a callback failed verification; Reason is one of the MCP categories
// (challenge_failed, timeout, connection_refused, tls_error, http_4xx, http_5xx).
type ChallengeError struct {
	Reason string
	Err    error
}

func (e *ChallengeError) Error() string {
	if e.Err != nil {
		return "callback verification failed: " + e.Reason + ": " + e.Err.Error()
	}
	return "callback verification failed: " + e.Reason
}

func (e *ChallengeError) Unwrap() error { return e.Err }

// ReasonChallengeFailed: the callback answered but did not echo the challenge.
const ReasonChallengeFailed = "challenge_failed"

// Challenge POSTs a signed verification envelope {"type":"verification","challenge":<nonce>} to t and
// succeeds only when the answer is a 2xx whose JSON body echoes the nonce (compared in constant time).
func Challenge(ctx context.Context, client *http.Client, t Target, now time.Time) error {
	nonce := randomHex(24)
	body, _ := json.Marshal(map[string]string{"type": "verification", "challenge": nonce})
	a := Post(ctx, client, t, "msg_verification_"+randomHex(12), body, now)
	if !a.Delivered() {
		reason := a.Reason.MCP()
		if reason == "" {
			reason = ReasonChallengeFailed
		}
		err := a.Err
		if err == nil {
			err = fmt.Errorf("status %d", a.Status)
		}
		return &ChallengeError{Reason: reason, Err: err}
	}
	var echo struct {
		Challenge string `json:"challenge"`
	}
	if err := json.NewDecoder(io.LimitReader(bytes.NewReader(a.Body), maxResponseBytes)).Decode(&echo); err != nil {
		return &ChallengeError{Reason: ReasonChallengeFailed, Err: errors.New("answer is not a JSON object with challenge")}
	}
	if subtle.ConstantTimeCompare([]byte(echo.Challenge), []byte(nonce)) != 1 {
		return &ChallengeError{Reason: ReasonChallengeFailed, Err: errors.New("answer does not echo the challenge")}
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
