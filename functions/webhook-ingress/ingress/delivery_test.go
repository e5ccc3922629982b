package ingress_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"appwrite-agent/functions/webhook-ingress/ingress"
	"appwrite-agent/shared/devkit/webhookreceiver"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/stdwebhooks"
)

const secretText = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func setup(t *testing.T) (*webhookreceiver.Receiver, *http.Client, ingress.Destination) {
	t.Helper()
	r := webhookreceiver.New(secretText)
	t.Cleanup(r.Close)
	client := safehttp.NewClient(safehttp.Options{
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		TLSConfig:    r.TLSConfig(),
	})
	secret, err := stdwebhooks.ParseSecret(secretText)
	if err != nil {
		t.Fatal(err)
	}
	return r, client, ingress.Destination{URL: r.URL(), SubscriptionID: "sub_1", Secrets: []stdwebhooks.Secret{secret}}
}

// clock advances a second per call, so every attempt carries a new timestamp and signature.
func clock() func() time.Time {
	t := time.Now().Add(-10 * time.Second)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func fastPolicy() ingress.Policy {
	return ingress.Policy{MaxAttempts: 4, Budget: 5 * time.Second, BaseDelay: 10 * time.Millisecond, MaxDelay: 40 * time.Millisecond, AttemptTimeout: 2 * time.Second}
}

func TestDeliverOnceVerifiedByTheStandardLibrary(t *testing.T) {
	r, client, target := setup(t)
	body := []byte(`{"eventId":"evt_1","name":"row.created","timestamp":"2026-12-01T10:00:00Z","data":{"row_id":"r1"}}`)
	res := ingress.NewSender(client).Deliver(context.Background(), target, "evt_1", body, fastPolicy(), time.Now)
	if !res.Delivered() || len(res.Attempts) != 1 {
		t.Fatalf("%+v", res)
	}
	got := r.Deliveries()
	if len(got) != 1 || !got[0].Verified || string(got[0].Body) != string(body) {
		t.Fatalf("%+v", got)
	}
	h := got[0].Header
	if h.Get("webhook-id") != "evt_1" || h.Get(ingress.HeaderSubscriptionID) != "sub_1" || h.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", h)
	}
}

func TestFailTwiceThenSucceedReSignsEachAttempt(t *testing.T) {
	r, client, target := setup(t)
	r.SetBehaviour(func(n int, _ webhookreceiver.Delivery) (int, time.Duration) {
		if n <= 2 {
			return 503, 0
		}
		return 0, 0
	})
	now := time.Now()
	times := []time.Time{now.Add(-2 * time.Second), now.Add(-time.Second), now}
	i := 0
	res := ingress.NewSender(client).Deliver(context.Background(), target, "evt_2", []byte(`{"eventId":"evt_2"}`), fastPolicy(), func() time.Time { i++; return times[i-1] })
	if !res.Delivered() || len(res.Attempts) != 3 {
		t.Fatalf("attempts %d delivered %v", len(res.Attempts), res.Delivered())
	}
	got := r.Deliveries()
	sigs := map[string]bool{}
	for _, d := range got {
		if !d.Verified || d.Header.Get("webhook-id") != "evt_2" {
			t.Fatalf("attempt not verified or wrong id: %+v", d)
		}
		sigs[d.Header.Get("webhook-signature")+d.Header.Get("webhook-timestamp")] = true
	}
	if len(sigs) != 3 {
		t.Fatalf("signatures were reused: %v", sigs)
	}
	if len(r.Events()) != 1 {
		t.Fatalf("event accepted %d times", len(r.Events()))
	}
}

func TestNoRetryOn410And413(t *testing.T) {
	for _, status := range []int{410, 413} {
		r, client, target := setup(t)
		r.SetBehaviour(func(int, webhookreceiver.Delivery) (int, time.Duration) { return status, 0 })
		res := ingress.NewSender(client).Deliver(context.Background(), target, "evt_3", []byte(`{}`), fastPolicy(), clock())
		if res.Delivered() || len(res.Attempts) != 1 || res.Last().Status != status || res.Last().Retryable() {
			t.Fatalf("%d: %+v", status, res)
		}
	}
}

func TestRetriesStopAtMaxAttempts(t *testing.T) {
	r, client, target := setup(t)
	r.SetBehaviour(func(int, webhookreceiver.Delivery) (int, time.Duration) { return 500, 0 })
	res := ingress.NewSender(client).Deliver(context.Background(), target, "evt_4", []byte(`{}`), fastPolicy(), clock())
	if res.Delivered() || len(res.Attempts) != 4 || res.Last().Reason != safehttp.ReasonHTTP5xx {
		t.Fatalf("%+v", res)
	}
}

// checkTimedOut asserts that no attempt got an answer and each ended by the sender's deadline. (How many
// reached the subscriber before that deadline depends on the machine's load, so it is only reported.)
func checkTimedOut(t *testing.T, res ingress.Result, held int) {
	t.Helper()
	if res.Delivered() || held > len(res.Attempts) {
		t.Fatalf("delivered %v, %d attempts, %d held by the subscriber", res.Delivered(), len(res.Attempts), held)
	}
	for i, a := range res.Attempts {
		if a.Status != 0 || a.Reason != safehttp.ReasonTimeout || !errors.Is(a.Err, context.DeadlineExceeded) {
			t.Fatalf("attempt %d: status %d, reason %s, err %v (want no answer and the sender's deadline)", i+1, a.Status, a.Reason, a.Err)
		}
	}
}

// A subscriber that never answers: each attempt ends at its own timeout, and the attempts run out.
func TestHangingSubscriberEachAttemptTimesOut(t *testing.T) {
	r, client, target := setup(t)
	held := r.Hang()
	p := fastPolicy()
	p.MaxAttempts, p.AttemptTimeout, p.Budget = 2, 100*time.Millisecond, time.Minute
	res := ingress.NewSender(client).Deliver(context.Background(), target, "evt_5", []byte(`{}`), p, clock())
	if len(res.Attempts) != 2 {
		t.Fatalf("%d attempts, want 2", len(res.Attempts))
	}
	checkTimedOut(t, res, held())
}

// A subscriber that hangs for a minute holds the delivery for the budget, not the minute: the budget ends
// the first attempt (whose own timeout is longer) and leaves no time for another.
func TestHangingSubscriberCostsAtMostTheBudget(t *testing.T) {
	r, client, target := setup(t)
	held := r.Hang()
	p := fastPolicy()
	p.Budget, p.AttemptTimeout = 300*time.Millisecond, time.Minute
	start := time.Now()
	res := ingress.NewSender(client).Deliver(context.Background(), target, "evt_5", []byte(`{}`), p, clock())
	took := time.Since(start)
	if len(res.Attempts) != 1 {
		t.Fatalf("%d attempts, want 1", len(res.Attempts))
	}
	checkTimedOut(t, res, held())
	// A safety net only, far above the budget: the point is that the minute is not waited.
	if took > 20*time.Second {
		t.Fatalf("took %v with a %v budget", took, p.Budget)
	}
}

func TestBlockedDestinationIsNotRetried(t *testing.T) {
	r, _, target := setup(t)
	strict := safehttp.NewClient(safehttp.Options{TLSConfig: r.TLSConfig()})
	res := ingress.NewSender(strict).Deliver(context.Background(), target, "evt_6", []byte(`{}`), fastPolicy(), clock())
	if len(res.Attempts) != 1 || res.Last().Reason != safehttp.ReasonBlocked || len(r.Deliveries()) != 0 {
		t.Fatalf("%+v, received %d", res.Last(), len(r.Deliveries()))
	}
}

func TestOversizeBodyIsRefusedUnsent(t *testing.T) {
	r, client, target := setup(t)
	body := []byte(`"` + strings.Repeat("a", ingress.MaxBodyBytes) + `"`)
	res := ingress.NewSender(client).Deliver(context.Background(), target, "evt_7", body, fastPolicy(), clock())
	if len(res.Attempts) != 1 || res.Last().Retryable() || len(r.Deliveries()) != 0 {
		t.Fatalf("%+v", res.Last())
	}
}

// TestPostHeadersExactly: the request carries exactly these headers.
func TestPostHeadersExactly(t *testing.T) {
	r, client, target := setup(t)
	now := time.Unix(1767225600, 0)
	a := ingress.NewSender(client).Deliver(context.Background(), target, "evt_h", []byte(`{}`), fastPolicy(), func() time.Time { return now }).Last()
	if !a.Delivered() {
		t.Fatalf("%+v", a)
	}
	if d := r.Deliveries()[0]; string(d.Body) != `{}` {
		t.Fatalf("body %q", d.Body)
	}
	sig, err := stdwebhooks.Sign("evt_h", now, []byte(`{}`), target.Secrets...)
	if err != nil {
		t.Fatal(err)
	}
	want := http.Header{}
	want.Set("Content-Type", "application/json")
	want.Set("User-Agent", "appwrite-mcp-events/1")
	want.Set(ingress.HeaderSubscriptionID, "sub_1")
	want.Set(stdwebhooks.HeaderID, "evt_h")
	want.Set(stdwebhooks.HeaderTimestamp, "1767225600")
	want.Set(stdwebhooks.HeaderSignature, sig)
	want.Set("Content-Length", "2")
	want.Set("Accept-Encoding", "gzip")
	got := r.Deliveries()[0].Header
	if len(got) != len(want) {
		t.Fatalf("headers %v, want %v", got, want)
	}
	for k, v := range want {
		if strings.Join(got[k], "|") != strings.Join(v, "|") {
			t.Fatalf("header %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

// once is a policy of one attempt bounded only by a distant budget.
func once() ingress.Policy { return ingress.Policy{MaxAttempts: 1, Budget: time.Minute} }

// TestClientTimeoutStillBounds: a client Timeout shorter than the attempt's deadline still ends the attempt
// (the attempt ends at whichever comes first).
func TestClientTimeoutStillBounds(t *testing.T) {
	r, client, target := setup(t)
	held := r.Hang()
	defer held()
	client.Timeout = 100 * time.Millisecond
	a := ingress.NewSender(client).Deliver(context.Background(), target, "evt_t", []byte(`{}`), once(), time.Now).Last()
	if a.Reason != safehttp.ReasonTimeout || a.Took > 30*time.Second {
		t.Fatalf("attempt %+v, want a timeout from the client's own Timeout", a)
	}
}

// TestRedirectIsTheAnswer: a 3xx is the attempt's answer and is never followed (the callback that was
// verified is the one delivered to, not where it points), classified as a redirect and retried as any other
// failure. A 307 would have an HTTP client re-POST the event to the Location.
func TestRedirectIsTheAnswer(t *testing.T) {
	r, client, target := setup(t)
	redirector := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, r.URL(), http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	target.URL = redirector.URL + "/hook"
	p := fastPolicy()
	p.MaxAttempts = 2
	res := ingress.NewSender(client).Deliver(context.Background(), target, "evt_r", []byte(`{}`), p, clock())
	last := res.Last()
	if len(res.Attempts) != 2 || last.Status != http.StatusTemporaryRedirect || last.Reason != safehttp.ReasonRedirect || !last.Retryable() {
		t.Fatalf("%+v", res)
	}
	if n := len(r.Deliveries()); n != 0 {
		t.Fatalf("the redirect was followed: the Location received %d requests", n)
	}
}

// TestTransportErrorNamesTheURL: an attempt that gets no answer reports its error as http.Client does,
// naming the method and the callback URL.
func TestTransportErrorNamesTheURL(t *testing.T) {
	_, client, target := setup(t)
	closed := httptest.NewTLSServer(http.NotFoundHandler())
	target.URL = closed.URL + "/hook"
	closed.Close()
	a := ingress.NewSender(client).Deliver(context.Background(), target, "evt_u", []byte(`{}`), once(), time.Now).Last()
	var ue *url.Error
	if !errors.As(a.Err, &ue) || ue.Op != "Post" || ue.URL != target.URL || a.Reason != safehttp.ReasonConnectionRefused || a.Status != 0 {
		t.Fatalf("%+v", a)
	}
	if want := `Post "` + target.URL + `": `; !strings.HasPrefix(a.Err.Error(), want) {
		t.Fatalf("error %q, want it to start with %q", a.Err, want)
	}
}

// TestPostRequest: the request a Sender sends is what http.NewRequestWithContext makes of a bytes.Reader
// (method, Host, Content-Length, body), and its GetBody gives the body again, as often as asked (HTTP/2
// replays a refused request with it).
func TestPostRequest(t *testing.T) {
	type seen struct {
		host, method string
		length       int64
		body         string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Host, r.Method, r.ContentLength, string(b)}
	}))
	defer srv.Close()
	secret, err := stdwebhooks.ParseSecret(secretText)
	if err != nil {
		t.Fatal(err)
	}
	target := ingress.Destination{URL: srv.URL + "/hook", SubscriptionID: "sub_1", Secrets: []stdwebhooks.Secret{secret}}
	for _, body := range [][]byte{nil, []byte(`{"eventId":"evt_1"}`), bytes.Repeat([]byte("x"), 70000)} {
		tr := &http.Transport{}
		replays := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.GetBody == nil {
				t.Fatalf("%d bytes: no GetBody", len(body))
			}
			for i := 0; i < 2; i++ {
				again, err := req.GetBody()
				if err != nil {
					t.Fatal(err)
				}
				if b, _ := io.ReadAll(again); !bytes.Equal(b, body) {
					t.Fatalf("%d bytes: GetBody %d gave %d bytes", len(body), i, len(b))
				}
			}
			return tr.RoundTrip(req)
		})
		a := ingress.NewSender(&http.Client{Transport: replays}).Deliver(context.Background(), target, "evt_1", body, once(), time.Now).Last()
		tr.CloseIdleConnections()
		if !a.Delivered() {
			t.Fatalf("%d bytes: %+v", len(body), a)
		}
		want := seen{strings.TrimPrefix(srv.URL, "http://"), http.MethodPost, int64(len(body)), string(body)}
		if s := <-got; s != want {
			t.Fatalf("%d bytes: the server saw %+v, want %+v", len(body), s, want)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
