// Package fakesentry is a fake Sentry for tests: an HTTP server that accepts envelopes at a DSN and
// decodes the events in them. Only tests import it.
package fakesentry

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// ProjectID and PublicKey make up the fake's DSN.
const (
	ProjectID = "4242"
	PublicKey = "abcdef0123456789abcdef0123456789"
)

// Event is the part of a Sentry event the tests look at, with the raw envelope it came in.
type Event struct {
	EventID string            `json:"event_id"`
	Level   string            `json:"level"`
	Message string            `json:"message"`
	Tags    map[string]string `json:"tags"`
	// Raw is the whole envelope as received (to check nothing secret is in it).
	Raw string `json:"-"`
	// Auth is the X-Sentry-Auth header.
	Auth string `json:"-"`
}

// Server is the fake Sentry.
type Server struct {
	srv *httptest.Server
	// DSN is the DSN to configure.
	DSN string

	mu     sync.Mutex
	events []Event
	bad    []string
	got    chan struct{}
}

// New starts a fake Sentry; Close it when done.
func New() *Server {
	s := &Server{got: make(chan struct{}, 64)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.DSN = strings.Replace(s.srv.URL, "http://", "http://"+PublicKey+"@", 1) + "/" + ProjectID
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Events returns the events received so far.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// Problems lists requests the fake could not accept (wrong path, auth or envelope).
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bad...)
}

func (s *Server) problem(w http.ResponseWriter, msg string) {
	s.mu.Lock()
	s.bad = append(s.bad, msg)
	s.mu.Unlock()
	http.Error(w, msg, http.StatusBadRequest)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/"+ProjectID+"/envelope/" {
		s.problem(w, "unexpected "+r.Method+" "+r.URL.Path)
		return
	}
	auth := r.Header.Get("X-Sentry-Auth")
	if !strings.Contains(auth, "sentry_key="+PublicKey) {
		s.problem(w, "X-Sentry-Auth without the DSN's key: "+auth)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			s.problem(w, "gzip: "+err.Error())
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		s.problem(w, "read: "+err.Error())
		return
	}
	// An envelope: a header line, then (item header line, item payload line) pairs.
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	if !sc.Scan() {
		s.problem(w, "empty envelope")
		return
	}
	var head struct {
		EventID string `json:"event_id"`
		DSN     string `json:"dsn"`
	}
	if json.Unmarshal(sc.Bytes(), &head) != nil {
		s.problem(w, "envelope header is not JSON: "+sc.Text())
		return
	}
	for sc.Scan() {
		var item struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(sc.Bytes(), &item) != nil {
			s.problem(w, "item header is not JSON: "+sc.Text())
			return
		}
		if !sc.Scan() {
			s.problem(w, "item without payload")
			return
		}
		if item.Type != "event" {
			continue
		}
		var ev Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			s.problem(w, "event payload is not JSON")
			return
		}
		if ev.EventID != head.EventID {
			s.problem(w, "event id differs from the envelope's")
			return
		}
		ev.Raw, ev.Auth = string(raw), auth
		s.mu.Lock()
		s.events = append(s.events, ev)
		s.mu.Unlock()
		s.got <- struct{}{}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"id":"` + head.EventID + `"}`))
}
