package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"appwrite-agent/functions/mcp-events/internal/testissuer"
	"appwrite-agent/functions/mcp-events/oauth"
	"appwrite-agent/shared/devkit/testclock"
)

// newClock is the JWKS cache's clock, stopped until the test moves it.
func newClock() *testclock.Clock { return testclock.New(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)) }

// flakyJWKS fronts a test issuer's JWKS and can answer 503 or hang instead.
type flakyJWKS struct {
	srv     *httptest.Server
	fetches atomic.Int64
	mode    atomic.Value // "ok", "503", "hang"
	arrived chan struct{}
	release chan struct{}
}

func newFlaky(t *testing.T, is *testissuer.Issuer) *flakyJWKS {
	f := &flakyJWKS{arrived: make(chan struct{}, 100), release: make(chan struct{})}
	f.mode.Store("ok")
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.fetches.Add(1)
		f.arrived <- struct{}{}
		switch f.mode.Load().(string) {
		case "503":
			http.Error(w, `{"message":"unavailable"}`, http.StatusServiceUnavailable)
			return
		case "hang":
			select {
			case <-f.release:
			case <-r.Context().Done():
			}
			http.Error(w, `{"message":"gave up"}`, http.StatusServiceUnavailable)
			return
		}
		resp, err := http.Get(is.URL + "/jwks")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(func() {
		select {
		case <-f.release:
		default:
			close(f.release)
		}
		f.srv.Close()
	})
	return f
}

// waitArrival waits until the JWKS server has received one more request.
func (f *flakyJWKS) waitArrival(t *testing.T) {
	t.Helper()
	select {
	case <-f.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("no JWKS fetch arrived")
	}
}

func jwksSetup(t *testing.T) (*testissuer.Issuer, *flakyJWKS, *testclock.Clock, *oauth.Verifier) {
	is := testissuer.New()
	t.Cleanup(is.Close)
	f := newFlaky(t, is)
	clk := newClock()
	j := oauth.NewJWKSWithOptions(f.srv.URL, nil, oauth.JWKSOptions{Now: clk.Now, FetchTimeout: 20 * time.Second})
	return is, f, clk, oauth.NewVerifier(is.URL, []string{aud}, j)
}

// TestJWKSFailureIsCachedToo: with the issuer answering 503, twenty tokens with unknown key ids (one after
// the other and concurrently) cause one fetch per refresh interval, not one each.
func TestJWKSFailureIsCachedToo(t *testing.T) {
	is, f, clk, v := jwksSetup(t)
	f.mode.Store("503")
	for i := 0; i < 10; i++ {
		_, err := v.Verify(ctx(t), is.Mint(testissuer.Token{Sub: "u", Aud: aud, Kid: fmt.Sprint("made-up-", i)}))
		var ue *oauth.UnavailableError
		if !errors.Is(err, oauth.ErrKeysUnavailable) || errors.Is(err, oauth.ErrInvalidToken) || !errors.As(err, &ue) ||
			ue.RetryAfter < time.Second || ue.RetryAfter > oauth.DefaultMinRefresh || !strings.Contains(err.Error(), "HTTP 503") {
			t.Fatalf("unknown key id against an unreachable JWKS: %v", err)
		}
	}
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = v.Verify(ctx(t), is.Mint(testissuer.Token{Sub: "u", Aud: aud, Kid: fmt.Sprint("concurrent-", i)}))
		}()
	}
	wg.Wait()
	if n := f.fetches.Load(); n != 1 {
		t.Fatalf("20 unknown key ids against a failing issuer caused %d fetches, want 1", n)
	}
	clk.Advance(oauth.DefaultMinRefresh)
	f.mode.Store("ok")
	if _, err := v.Verify(ctx(t), is.Mint(testissuer.Token{Sub: "u", Aud: aud})); err != nil {
		t.Fatalf("after the interval, with the issuer back: %v", err)
	}
	if n := f.fetches.Load(); n != 2 {
		t.Fatalf("fetches %d, want 2", n)
	}
}

// TestJWKSKnownKeyNeverWaits: while a fetch for an unknown key id hangs, a token whose key is cached
// verifies at once, and the waiting requests share that one fetch.
func TestJWKSKnownKeyNeverWaits(t *testing.T) {
	is, f, clk, v := jwksSetup(t)
	good := is.Mint(testissuer.Token{Sub: "u", Aud: aud})
	if _, err := v.Verify(ctx(t), good); err != nil {
		t.Fatal(err)
	}
	f.waitArrival(t)
	clk.Advance(oauth.DefaultMinRefresh)
	f.mode.Store("hang")

	var wg sync.WaitGroup
	var waited atomic.Int64
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = v.Verify(ctx(t), is.Mint(testissuer.Token{Sub: "u", Aud: aud, Kid: fmt.Sprint("unknown-", i)}))
			waited.Add(1)
		}()
	}
	f.waitArrival(t) // the fetch hangs now
	for i := 0; i < 3; i++ {
		if _, err := v.Verify(ctx(t), good); err != nil {
			t.Fatalf("a known key waited on the hanging fetch: %v", err)
		}
	}
	if waited.Load() == 5 {
		t.Fatal("the unknown key ids did not wait for the fetch")
	}
	close(f.release)
	wg.Wait()
	if n := f.fetches.Load(); n != 2 {
		t.Fatalf("fetches %d, want 2 (one in flight at a time)", n)
	}
}

// TestJWKSExpiredCacheIssuerUnreachable: once the cache is older than its maximum age and the issuer
// hangs, tokens with known keys keep verifying without waiting; one refresh runs in the background.
func TestJWKSExpiredCacheIssuerUnreachable(t *testing.T) {
	is, f, clk, v := jwksSetup(t)
	good := is.Mint(testissuer.Token{Sub: "u", Aud: aud})
	if _, err := v.Verify(ctx(t), good); err != nil {
		t.Fatal(err)
	}
	f.waitArrival(t)
	f.mode.Store("hang")
	clk.Advance(oauth.DefaultMaxAge + time.Minute)
	for i := 0; i < 5; i++ {
		c, cancel := context.WithCancel(context.Background())
		cancel() // a request that cannot wait at all still verifies with the known key
		if _, err := v.Verify(c, good); err != nil {
			t.Fatalf("expired cache, issuer hanging: %v", err)
		}
	}
	f.waitArrival(t) // the background refresh started
	close(f.release)
	if n := f.fetches.Load(); n != 2 {
		t.Fatalf("fetches %d, want 2", n)
	}
}

// TestJWKSRefreshFloor: made-up key ids after a successful fetch do not cause fetches within the interval.
func TestJWKSRefreshFloor(t *testing.T) {
	is, f, clk, v := jwksSetup(t)
	if _, err := v.Verify(ctx(t), is.Mint(testissuer.Token{Sub: "u", Aud: aud})); err != nil {
		t.Fatal(err)
	}
	is.Rotate()
	rotated := is.Mint(testissuer.Token{Sub: "u", Aud: aud})
	if _, err := v.Verify(ctx(t), rotated); err == nil {
		t.Fatal("a new key id verified before the refresh interval passed")
	}
	clk.Advance(oauth.DefaultMinRefresh)
	if _, err := v.Verify(ctx(t), rotated); err != nil {
		t.Fatalf("rotated key after the interval: %v", err)
	}
	for i := 0; i < 5; i++ {
		_, _ = v.Verify(ctx(t), is.Mint(testissuer.Token{Sub: "u", Aud: aud, Foreign: true, Kid: fmt.Sprint("made-up-", i)}))
	}
	if n := f.fetches.Load(); n != 2 {
		t.Fatalf("fetches %d, want 2", n)
	}
}
