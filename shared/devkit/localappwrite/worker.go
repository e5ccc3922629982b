package localappwrite

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// deliveryTimeout is Appwrite's webhook request and connect timeout (Workers/Webhooks.php: 15 s).
const deliveryTimeout = 15 * time.Second

// maxResponseLog is how much of a failed response body Appwrite keeps in the webhook's logs (10 KB).
const maxResponseLog = 10000

// queue is the stand-in for Appwrite's v1-webhooks and v1-functions queues: jobs drained by workers the Server
// owns. Close stops them.
type queue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	jobs    []func(context.Context)
	pending int // queued + running
	changed chan struct{}
	closed  bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func newQueue(workers int) *queue {
	q := &queue{changed: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	q.ctx, q.cancel = context.WithCancel(context.Background())
	for range workers {
		q.wg.Add(1)
		// Workers live until Close (owned by the Server).
		go q.work()
	}
	return q
}

func (q *queue) work() {
	defer q.wg.Done()
	for {
		q.mu.Lock()
		for len(q.jobs) == 0 && !q.closed {
			q.cond.Wait()
		}
		if q.closed {
			q.mu.Unlock()
			return
		}
		job := q.jobs[0]
		q.jobs = q.jobs[1:]
		q.mu.Unlock()

		job(q.ctx)

		q.mu.Lock()
		q.pending--
		q.notifyLocked()
		q.mu.Unlock()
	}
}

func (q *queue) notifyLocked() {
	close(q.changed)
	q.changed = make(chan struct{})
}

func (q *queue) enqueue(job func(context.Context)) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.jobs = append(q.jobs, job)
	q.pending++
	q.notifyLocked()
	q.cond.Signal()
	return true
}

func (q *queue) flush(ctx context.Context) error {
	for {
		q.mu.Lock()
		if q.pending == 0 {
			q.mu.Unlock()
			return nil
		}
		ch := q.changed
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (q *queue) close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		q.wg.Wait()
		return
	}
	q.closed = true
	q.pending -= len(q.jobs)
	q.jobs = nil
	q.notifyLocked()
	q.cond.Broadcast()
	q.mu.Unlock()
	q.cancel()
	q.wg.Wait()
}

// Delivery is one webhook delivery as the stand-in sent it (every try of it).
type Delivery struct {
	// ID identifies the delivery; sent as X-Appwrite-Webhook-Delivery-Id only with Options.DeliveryIDHeader
	// (Appwrite Cloud's header per the seed; not signed; the open-source worker has none).
	ID string `json:"id"`
	// ProjectID, WebhookID and WebhookName identify the webhook.
	ProjectID   string `json:"projectId"`
	WebhookID   string `json:"webhookId"`
	WebhookName string `json:"webhookName"`
	// URL is where it was sent (the stored webhook URL).
	URL string `json:"url"`
	// Events are all generated event strings (the X-Appwrite-Webhook-Events list).
	Events []string `json:"events"`
	// Header is the request header sent (Authorization included).
	Header http.Header `json:"headers"`
	// Body is the raw JSON body.
	Body string `json:"body"`
	// Attempts are the tries, oldest first.
	Attempts []DeliveryAttempt `json:"attempts"`
	// Success is true once a try got a status below 400.
	Success bool `json:"success"`
	// Done is true once the worker finished with it.
	Done bool `json:"done"`

	insecure bool // webhook tls=false: skip certificate verification
}

// DeliveryAttempt is one try of a delivery.
type DeliveryAttempt struct {
	// At is when the try started.
	At time.Time `json:"at"`
	// StatusCode is the response status (0 on a transport error).
	StatusCode int `json:"statusCode"`
	// Error is the transport error, if any.
	Error string `json:"error,omitempty"`
	// ResponseBody is the start of the response body (at most 10,000 bytes).
	ResponseBody string `json:"responseBody,omitempty"`
}

func (d *Delivery) clone() Delivery {
	c := *d
	c.Events = slices.Clone(d.Events)
	c.Header = d.Header.Clone()
	c.Attempts = slices.Clone(d.Attempts)
	return c
}

// Deliveries returns copies of every delivery so far, oldest first.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Delivery, len(s.deliveries))
	for i, d := range s.deliveries {
		out[i] = d.clone()
	}
	return out
}

// ResetDeliveries forgets recorded deliveries.
func (s *Server) ResetDeliveries() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deliveries = nil
	s.deliveryIndex = map[string]*Delivery{}
}

// Signature computes X-Appwrite-Webhook-Signature as Appwrite's worker does:
// base64(HMAC-SHA1(key = secret, message = stored URL + raw body)).
func Signature(secret, url string, body []byte) string {
	mac := hmac.New(sha1.New, []byte(secret))
	mac.Write([]byte(url))
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// signedURL is the URL the worker signs: Appwrite 1.9.6 and earlier sign rawurldecode(url) (Workers/
// Webhooks.php:104,115 in 1.9.6), later versions the stored url (appwrite#13196). The request still goes to
// the stored url.
func (s *Server) signedURL(stored string) string {
	v, ok := parseVersion(s.opts.Version)
	if ok && versionLess(v, [3]int{1, 9, 7}) {
		return rawURLDecode(stored)
	}
	return stored
}

// rawURLDecode is PHP's rawurldecode: every %XX with two hex digits becomes its byte; anything else (a lone %,
// a +) stays as it is.
func rawURLDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	unhex := func(c byte) (byte, bool) {
		switch {
		case c >= '0' && c <= '9':
			return c - '0', true
		case c >= 'a' && c <= 'f':
			return c - 'a' + 10, true
		case c >= 'A' && c <= 'F':
			return c - 'A' + 10, true
		}
		return 0, false
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				out = append(out, hi<<4|lo)
				i += 2
				continue
			}
		}
		out = append(out, s[i])
	}
	return string(out)
}

// dispatch runs Appwrite's shutdown hook for one event: generate the event strings, then queue a delivery for
// every enabled webhook whose events intersect them (array_intersect) and an execution for every enabled
// function whose events do.
func (s *Server) dispatch(ev pendingEvent) {
	events := s.eventsOf(ev.pattern, ev.params)
	if len(events) == 0 {
		return
	}
	body, err := phpJSON(ev.payload)
	if err != nil {
		s.opts.Logf("localappwrite: encoding event payload: %v", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.projects[ev.project]
	if pr == nil {
		return
	}
	s.realtimeLocked(pr, ev, events)
	for _, id := range pr.webhookOrder {
		wh := pr.webhooks[id]
		if wh == nil || !wh.enabled || !intersects(wh.events, events) {
			continue
		}
		d := s.newDeliveryLocked(pr, wh, events, body, ev.userID)
		s.q.enqueue(func(ctx context.Context) { s.deliver(ctx, d, s.opts.DeliveryRetries, false) })
	}
	for _, fn := range pr.functions {
		if !fn.enabled || !intersects(fn.events, events) {
			continue
		}
		// Appwrite's functions worker does not trigger a function on its own executions' events.
		if strings.HasPrefix(events[0], "functions."+fn.id+".") {
			continue
		}
		s.queueEventExecutionLocked(pr, fn, events, body, ev.userID)
	}
}

func intersects(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// newDeliveryLocked builds the request Appwrite's worker sends (Workers/Webhooks.php): POST, JSON body, the
// X-Appwrite-Webhook-* headers, the signature over stored URL + body, Basic auth only when both user and
// password are set.
func (s *Server) newDeliveryLocked(pr *project, wh *webhook, events []string, body []byte, userID string) *Delivery {
	d := &Delivery{
		ID:          hex.EncodeToString(randomBytes(16)),
		ProjectID:   pr.id,
		WebhookID:   wh.id,
		WebhookName: wh.name,
		URL:         wh.url,
		Events:      slices.Clone(events),
		Body:        string(body),
		Header:      http.Header{},
	}
	h := d.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", fmt.Sprintf("Appwrite-Server v%s. Please report abuse at security@appwrite.io", s.opts.Version))
	h.Set("X-Appwrite-Webhook-Id", wh.id)
	h.Set("X-Appwrite-Webhook-Events", strings.Join(events, ","))
	h.Set("X-Appwrite-Webhook-Name", wh.name)
	h.Set("X-Appwrite-Webhook-User-Id", userID)
	h.Set("X-Appwrite-Webhook-Project-Id", pr.id)
	h.Set("X-Appwrite-Webhook-Signature", Signature(wh.secret, s.signedURL(wh.url), body))
	if s.opts.DeliveryIDHeader {
		h.Set("X-Appwrite-Webhook-Delivery-Id", d.ID)
	}
	if wh.authUsername != "" && wh.authPassword != "" {
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(wh.authUsername+":"+wh.authPassword)))
	}
	d.insecure = !wh.tls
	s.deliveries = append(s.deliveries, d)
	s.deliveryIndex[d.ID] = d
	return d
}

// Redeliver sends a recorded delivery again (same id, headers and body), as a retry of the same delivery,
// and waits for the worker to queue it. It counts toward the webhook's failure counter like any delivery.
func (s *Server) Redeliver(id string) error {
	s.mu.Lock()
	d := s.deliveryIndex[id]
	if d != nil {
		d.Done = false
	}
	s.mu.Unlock()
	if d == nil {
		return fmt.Errorf("localappwrite: no delivery %q", id)
	}
	if !s.q.enqueue(func(ctx context.Context) { s.deliver(ctx, d, 0, true) }) {
		return fmt.Errorf("localappwrite: server closed")
	}
	return nil
}

// deliver sends d (1 + retries tries) and updates the webhook's failure counter: a failure (transport error or
// status >= 400; 3xx counts as success) increments attempts and writes logs; reaching MaxFailedAttempts
// disables the webhook; a success resets attempts to 0.
func (s *Server) deliver(ctx context.Context, d *Delivery, retries int, force bool) {
	s.mu.Lock()
	// Like Appwrite's worker, which loads the webhooks when it runs the job: a webhook deleted or disabled
	// since the event was queued gets nothing (an explicit Redeliver still goes out).
	if pr := s.projects[d.ProjectID]; !force && (pr == nil || pr.webhooks[d.WebhookID] == nil || !pr.webhooks[d.WebhookID].enabled) {
		d.Done = true
		s.mu.Unlock()
		return
	}
	header := d.Header.Clone()
	url, body := d.URL, d.Body
	s.mu.Unlock()
	insecure := d.insecure

	var last DeliveryAttempt
	ok := false
	for try := 0; try <= retries && !ok; try++ {
		last = DeliveryAttempt{At: s.now()}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			last.Error = err.Error()
		} else {
			req.Header = header.Clone()
			resp, err := s.deliveryClient(insecure).Do(req)
			if err != nil {
				last.Error = err.Error()
			} else {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 5<<20))
				_ = resp.Body.Close()
				last.StatusCode = resp.StatusCode
				if len(b) > maxResponseLog {
					b = b[:maxResponseLog]
				}
				last.ResponseBody = string(b)
				ok = resp.StatusCode < 400
			}
		}
		s.mu.Lock()
		d.Attempts = append(d.Attempts, last)
		s.mu.Unlock()
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	d.Done = true
	d.Success = d.Success || ok
	pr := s.projects[d.ProjectID]
	if pr == nil {
		return
	}
	wh := pr.webhooks[d.WebhookID]
	if wh == nil {
		return
	}
	if ok {
		wh.attempts = 0
		return
	}
	var logs bytes.Buffer
	fmt.Fprintf(&logs, "URL: %s\nMethod: POST\n", url)
	if last.Error != "" {
		fmt.Fprintf(&logs, "CURL Error: %s\nEvents: %s\n", last.Error, strings.Join(d.Events, ", "))
	} else {
		fmt.Fprintf(&logs, "Status code: %d\nBody: \n%s\n", last.StatusCode, last.ResponseBody)
	}
	wh.logs = logs.String()
	wh.attempts++
	wh.updated = s.now()
	if wh.attempts >= s.opts.MaxFailedAttempts {
		wh.enabled = false
		s.opts.Logf("localappwrite: webhook %s/%s disabled after %d failed delivery attempts", pr.id, wh.id, wh.attempts)
	}
}

// deliveryClient returns the injected client, or a copy that skips certificate verification for a webhook
// with tls=false (Appwrite sets CURLOPT_SSL_VERIFYPEER from the webhook's security attribute).
func (s *Server) deliveryClient(insecure bool) *http.Client {
	c := s.opts.DeliveryClient
	if !insecure {
		return c
	}
	var base *http.Transport
	switch t := c.Transport.(type) {
	case nil:
		base = http.DefaultTransport.(*http.Transport)
	case *http.Transport:
		base = t
	default:
		return c // a custom RoundTripper (tests): leave it alone
	}
	s.insecureOnce.Do(func() {
		tr := base.Clone()
		if tr.TLSClientConfig == nil {
			tr.TLSClientConfig = &tls.Config{}
		}
		tr.TLSClientConfig.InsecureSkipVerify = true //nolint:gosec // copies Appwrite's tls=false
		cc := *c
		cc.Transport = tr
		s.insecure = &cc
	})
	return s.insecure
}
