package loadtest

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"appwrite-agent/shared/devkit/netfault"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Answer kinds a subscriber gives to one request.
const (
	kindOK         = iota // 2xx, acknowledged
	kindSlow              // 2xx after a delay, acknowledged
	kindLate              // a slow 2xx the sender no longer waited for (not acknowledged)
	kind5xx               // 500 or 503
	kindTimeout           // no answer until the sender gave up
	kindReset             // connection reset (TCP RST) without an answer
	kindGone              // 410
	kindTooLarge          // 413
	kindUnverified        // the signature did not verify (answered 401)
	numKinds
)

var kindNames = [numKinds]string{"200", "slow 200", "late 200 (sender gone)", "5xx", "timeout", "connection reset", "410", "413", "bad signature (401)"}

// profile is how one subscriber fails: per-request probabilities, an outage window, or down for good.
type profile struct {
	name                                      string
	p5xx, pTimeout, pReset, pSlow, p410, p413 float64
	// outage answers 503 to everything until the load phase is this old and it has answered at least once
	// (0: none).
	outage time.Duration
	// down answers 503 to everything, always (a subscriber that never recovers).
	down bool
}

// record is one request a subscriber received, kept compactly.
type record struct {
	sub     int8
	kind    int8
	at      time.Time
	eventID string
	rowID   string
	subID   string
}

// farm is the subscribers: one loopback HTTPS server each (distinct hosts, as real subscribers are), all
// with httptest's certificate, verifying every request with the Standard Webhooks library.
type farm struct {
	servers  []*httptest.Server
	secrets  []string
	hooks    []*standardwebhooks.Webhook
	profiles []profile

	armed      atomic.Bool  // failures apply only once the load starts (subscribe challenges always pass)
	loadStart  atomic.Int64 // unix nanos of the load phase's start
	outageSeen atomic.Bool  // the outage subscriber has answered 503 at least once
	calm       atomic.Bool  // every subscriber answers 200 (the clean comparison)

	mu      sync.Mutex
	rng     *rand.Rand
	records []record
	relayed atomic.Int64 // POSTs that arrived through the plain relay function
	inproc  atomic.Int64 // POSTs that arrived through the plain relay in the harness process
	cleanOK atomic.Int64 // acknowledged events of the clean subscriber
	// cleanConns counts the connections the clean subscriber accepted (each one a TLS handshake).
	cleanConns atomic.Int64
}

func newFarm(profiles []profile, seed uint64) *farm {
	f := &farm{profiles: profiles, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	for i := range profiles {
		secret := "whsec_" + randomB64(32)
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			panic(err)
		}
		f.secrets = append(f.secrets, secret)
		f.hooks = append(f.hooks, wh)
		srv := httptest.NewUnstartedServer(f.handler(i))
		if i == len(profiles)-1 { // the clean subscriber: count its connections (each one a TLS handshake)
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					f.cleanConns.Add(1)
				}
			}
		}
		srv.StartTLS()
		f.servers = append(f.servers, srv)
	}
	return f
}

func (f *farm) url(i int) string { return f.servers[i].URL + "/hooks/mcp" }

// certPEM is the certificate every httptest TLS server uses.
func (f *farm) certPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.servers[0].Certificate().Raw})
}

func (f *farm) close() {
	for _, s := range f.servers {
		s.CloseClientConnections()
		s.Close()
	}
}

func (f *farm) snapshot() []record {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]record(nil), f.records...)
}

// decide picks the answer to one event request of subscriber i.
func (f *farm) decide(i int) (kind int, slow time.Duration) {
	if !f.armed.Load() || f.calm.Load() {
		return kindOK, 0
	}
	p := f.profiles[i]
	if p.down {
		return kind5xx, 0
	}
	// The outage lasts its time and at least until it has answered once: on a loaded machine no event may
	// reach the subscriber inside the window, and the run must still exercise a recovery.
	if p.outage > 0 && (time.Since(time.Unix(0, f.loadStart.Load())) < p.outage || !f.outageSeen.Swap(true)) {
		f.outageSeen.Store(true)
		return kind5xx, 0
	}
	f.mu.Lock()
	x := f.rng.Float64()
	d := time.Duration(50+f.rng.IntN(200)) * time.Millisecond
	f.mu.Unlock()
	for _, c := range []struct {
		p float64
		k int
	}{{p.p5xx, kind5xx}, {p.pTimeout, kindTimeout}, {p.pReset, kindReset}, {p.pSlow, kindSlow}, {p.p410, kindGone}, {p.p413, kindTooLarge}} {
		if x < c.p {
			return c.k, d
		}
		x -= c.p
	}
	return kindOK, 0
}

func (f *farm) handler(i int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		switch r.URL.Path { // a plain relay's forwarded Appwrite body: nothing to verify
		case "/relay":
			f.relayed.Add(1)
			w.WriteHeader(http.StatusOK)
			return
		case "/inproc":
			f.inproc.Add(1)
			w.WriteHeader(http.StatusOK)
			return
		}
		var msg struct {
			Type      string `json:"type"`
			Challenge string `json:"challenge"`
			EventID   string `json:"eventId"`
			Data      struct {
				RowID string `json:"row_id"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &msg)
		verified := f.hooks[i].Verify(body, r.Header) == nil
		if msg.Type == "verification" {
			if !verified {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"challenge": msg.Challenge})
			return
		}
		rec := record{sub: int8(i), at: time.Now(), eventID: msg.EventID, rowID: msg.Data.RowID, subID: r.Header.Get("X-MCP-Subscription-Id")}
		kind, slow := kindUnverified, time.Duration(0)
		if verified {
			kind, slow = f.decide(i)
		}
		switch kind {
		case kindSlow:
			select {
			case <-time.After(slow):
			case <-r.Context().Done():
			}
			if r.Context().Err() != nil {
				kind = kindLate
			}
		case kindTimeout:
			select { // hang until the sender gives up (bounded)
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		}
		rec.kind = int8(kind)
		if kind == kindOK && i == len(f.profiles)-1 {
			f.cleanOK.Add(1)
		}
		f.mu.Lock()
		f.records = append(f.records, rec)
		f.mu.Unlock()
		switch kind {
		case kindOK, kindSlow:
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"ok":true}`)
		case kindLate, kindTimeout:
			panic(http.ErrAbortHandler)
		case kindReset:
			netfault.Reset(w)
		case kind5xx:
			if len(msg.EventID)%2 == 0 {
				w.WriteHeader(http.StatusInternalServerError)
			} else {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		case kindGone:
			w.WriteHeader(http.StatusGone)
		case kindTooLarge:
			w.WriteHeader(http.StatusRequestEntityTooLarge)
		case kindUnverified:
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
}
