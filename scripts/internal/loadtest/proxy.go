package loadtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// balancer plays the part of Appwrite's executor in front of a function's replicas: it spreads requests
// round-robin, skips a replica that is being restarted (drained first, as a load balancer deregisters a
// target before stopping it), and moves a request to the next replica only when the connection could not
// be made (nothing reached the replica, so nothing can be done twice). It times every request.
type balancer struct {
	backends []string
	draining []atomic.Bool
	served   []atomic.Int64
	next     atomic.Uint64
	client   *http.Client

	failovers atomic.Int64 // requests moved to another replica after a refused connection
	errs      atomic.Int64 // requests no replica answered (502)
	errText   []string     // the first few errors behind errs (under mu)

	mu          sync.Mutex
	first, last time.Time       // first webhook request's start, last one's end
	webhooks    []time.Duration // POST /appwrite/webhooks/... (Appwrite's deliveries)
	jobs        []time.Duration // POST /jobs/retry (delayed retries)
	// delivered is when the ingress first answered "delivered" for an eventId: from then on it has the
	// subscriber's acknowledgement, so another POST of that event would be a real duplicate.
	delivered map[string]time.Time
}

func newBalancer(backends ...string) *balancer {
	return &balancer{
		backends:  backends,
		draining:  make([]atomic.Bool, len(backends)),
		served:    make([]atomic.Int64, len(backends)),
		delivered: map[string]time.Time{},
		client: &http.Client{Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
			MaxIdleConns:        256,
			MaxIdleConnsPerHost: 128,
			IdleConnTimeout:     30 * time.Second,
		}},
	}
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var last error
	first := int(b.next.Add(1) % uint64(len(b.backends)))
	for i := range b.backends {
		k := (first + i) % len(b.backends)
		if b.draining[k].Load() && i < len(b.backends)-1 {
			continue
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, b.backends[k]+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			break
		}
		req.Header = r.Header.Clone()
		res, err := b.client.Do(req)
		if err != nil {
			last = err
			var op *net.OpError
			if errors.As(err, &op) && op.Op == "dial" {
				b.failovers.Add(1)
				continue
			}
			break
		}
		for k, vs := range res.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(res.StatusCode)
		answer, _ := io.ReadAll(res.Body)
		res.Body.Close()
		_, _ = w.Write(answer)
		b.served[k].Add(1)
		d := time.Since(start)
		var outcome struct {
			Status  string `json:"status"`
			EventID string `json:"eventId"`
		}
		_ = json.Unmarshal(answer, &outcome)
		b.mu.Lock()
		if _, seen := b.delivered[outcome.EventID]; outcome.Status == "delivered" && outcome.EventID != "" && !seen {
			b.delivered[outcome.EventID] = time.Now()
		}
		if strings.HasPrefix(r.URL.Path, "/jobs/") {
			b.jobs = append(b.jobs, d)
		} else {
			b.webhooks = append(b.webhooks, d)
			if b.first.IsZero() || start.Before(b.first) {
				b.first = start
			}
			b.last = time.Now()
		}
		b.mu.Unlock()
		return
	}
	b.errs.Add(1)
	b.mu.Lock()
	if len(b.errText) < 5 {
		b.errText = append(b.errText, fmt.Sprintf("%s %s after %v: %v", r.Method, r.URL.Path, time.Since(start).Round(time.Millisecond), last))
	}
	b.mu.Unlock()
	w.WriteHeader(http.StatusBadGateway)
}

// span is from the first Appwrite delivery's arrival to the last one's answer.
func (b *balancer) span() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last.Sub(b.first)
}

// deliveredAt returns when the ingress first reported each event delivered.
func (b *balancer) deliveredAt() map[string]time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.delivered)
}

func (b *balancer) timings() (webhooks, jobs []time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]time.Duration(nil), b.webhooks...), append([]time.Duration(nil), b.jobs...)
}

// relay is the plain two-hop relay as a handler inside the harness process (the comparison's "relay in the
// harness"; testdata/relay is the same relay deployed as a function): it forwards each POST body to the
// subscriber over TLS with no verification, projection or signing (as BenchmarkPlainRelay), with safehttp's
// pool size.
type relay struct {
	target string
	client *http.Client
}

func (rl *relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	res, err := rl.client.Post(rl.target, "application/json", bytes.NewReader(body))
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"status":"relayed"}`)
}
