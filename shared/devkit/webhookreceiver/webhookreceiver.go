// Package webhookreceiver is a subscriber's endpoint for MCP event webhooks, for tests and the local demo:
// an HTTPS server on loopback that verifies every request with the independent Standard Webhooks library,
// answers verification challenges, records what it received and can be told to fail, hang or refuse.
package webhookreceiver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Delivery is one request the receiver got.
type Delivery struct {
	// Header is the request's headers.
	Header http.Header
	// Body is the raw body.
	Body []byte
	// Verified reports whether the Standard Webhooks library accepted the signature with the receiver's
	// secret (VerifyErr says why not).
	Verified  bool
	VerifyErr string
	// Status is what the receiver answered.
	Status int
	// At is when it arrived.
	At time.Time
}

// Event decodes the body as an MCP EventOccurrence.
func (d Delivery) Event() (Occurrence, error) {
	var o Occurrence
	err := json.Unmarshal(d.Body, &o)
	return o, err
}

// Occurrence is the body of an event delivery.
type Occurrence struct {
	EventID   string         `json:"eventId"`
	Name      string         `json:"name"`
	Timestamp string         `json:"timestamp"`
	Data      map[string]any `json:"data"`
	Cursor    *string        `json:"cursor,omitempty"`
}

// Behaviour decides the answer to one request; n counts requests from 1. Return 0 to answer normally
// (200, echoing challenges). A negative status closes the connection without an answer. A delay above
// zero is waited first (or until the request is cancelled).
type Behaviour func(n int, d Delivery) (status int, delay time.Duration)

// Receiver is a running endpoint.
type Receiver struct {
	srv     *httptest.Server
	secrets []string

	mu         sync.Mutex
	deliveries []Delivery
	behaviour  Behaviour
	notify     chan struct{}
	echo       bool
	held       int

	closing   chan struct{}
	closeOnce sync.Once
}

// New starts an HTTPS receiver on loopback that verifies with secret (a "whsec_..." string) and, while it
// rotates, with any of also.
func New(secret string, also ...string) *Receiver {
	r := &Receiver{secrets: append([]string{secret}, also...), notify: make(chan struct{}, 1), echo: true, closing: make(chan struct{})}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(r.serve))
	return r
}

// URL is the receiver's callback URL.
func (r *Receiver) URL() string { return r.srv.URL + "/hooks/mcp" }

// Close stops the receiver (releasing the requests Hang holds, without an answer).
func (r *Receiver) Close() {
	r.closeOnce.Do(func() { close(r.closing) })
	r.srv.CloseClientConnections()
	r.srv.Close()
}

// RootCAs trusts the receiver's certificate, for the sender's TLS configuration.
func (r *Receiver) RootCAs() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(r.srv.Certificate())
	return pool
}

// CertPEM is the receiver's certificate in PEM form (for safehttp's SAFEHTTP_CA_FILE).
func (r *Receiver) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw})
}

// TLSConfig is a client TLS configuration that trusts the receiver.
func (r *Receiver) TLSConfig() *tls.Config { return &tls.Config{RootCAs: r.RootCAs()} }

// SetBehaviour changes how the receiver answers from now on; nil restores the default.
func (r *Receiver) SetBehaviour(b Behaviour) {
	r.mu.Lock()
	r.behaviour = b
	r.mu.Unlock()
}

// Hang makes the receiver hold every request from now on without an answer until the receiver is closed
// (then it drops the connection, still without an answer): a subscriber that never answers, so the only
// thing that ends a request is the sender giving up. A receiver that answers late instead (a Behaviour
// delay) races the sender's deadline with its answer; this one cannot. Held requests are recorded when
// they are released; the returned function counts the requests held so far.
func (r *Receiver) Hang() (held func() int) {
	r.SetBehaviour(func(int, Delivery) (int, time.Duration) {
		r.mu.Lock()
		r.held++
		r.mu.Unlock()
		<-r.closing
		return -1, 0
	})
	return func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.held
	}
}

// SetEchoChallenges chooses whether verification challenges are echoed (the default) or answered with an
// empty 200.
func (r *Receiver) SetEchoChallenges(on bool) {
	r.mu.Lock()
	r.echo = on
	r.mu.Unlock()
}

// Deliveries returns a copy of everything received so far.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.deliveries...)
}

// Events returns the received event deliveries (not challenges) that were answered with 2xx.
func (r *Receiver) Events() []Delivery {
	var out []Delivery
	for _, d := range r.Deliveries() {
		var probe struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(d.Body, &probe) == nil && probe.Type == "" && d.Status >= 200 && d.Status < 300 {
			out = append(out, d)
		}
	}
	return out
}

// Wait blocks until pred holds for the deliveries or ctx ends; it reports whether pred held.
func (r *Receiver) Wait(ctx context.Context, pred func([]Delivery) bool) bool {
	for {
		if pred(r.Deliveries()) {
			return true
		}
		select {
		case <-ctx.Done():
			return pred(r.Deliveries())
		case <-r.notify:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	d := Delivery{Header: req.Header.Clone(), Body: body, At: time.Now()}
	for _, s := range r.secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			d.VerifyErr = err.Error()
			continue
		}
		if err := wh.Verify(body, req.Header); err != nil {
			d.VerifyErr = err.Error()
			continue
		}
		d.Verified, d.VerifyErr = true, ""
		break
	}

	r.mu.Lock()
	n := len(r.deliveries) + 1
	b, echo := r.behaviour, r.echo
	r.mu.Unlock()

	status, delay := 0, time.Duration(0)
	if b != nil {
		status, delay = b(n, d)
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-req.Context().Done():
		}
	}
	var answer []byte
	switch {
	case status < 0:
		d.Status = -1
	case status == 0 || (status >= 200 && status < 300):
		if status == 0 {
			status = http.StatusOK
		}
		var c struct {
			Type, Challenge string
		}
		if echo && json.Unmarshal(body, &c) == nil && c.Type == "verification" && d.Verified {
			answer, _ = json.Marshal(map[string]string{"challenge": c.Challenge})
		} else {
			answer = []byte(`{"ok":true}`)
		}
		d.Status = status
	default:
		d.Status = status
		answer = []byte(`{"error":"scripted failure"}`)
	}

	r.mu.Lock()
	r.deliveries = append(r.deliveries, d)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}

	if d.Status < 0 {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(d.Status)
	_, _ = w.Write(answer)
}
