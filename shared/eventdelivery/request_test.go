package eventdelivery_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"appwrite-agent/shared/eventdelivery"
	"appwrite-agent/shared/stdwebhooks"
)

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
	target := eventdelivery.Target{URL: srv.URL + "/hook", SubscriptionID: "sub_1", Secrets: []stdwebhooks.Secret{secret}}
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
		a := eventdelivery.NewSender(&http.Client{Transport: replays}).Deliver(context.Background(), target, "evt_1", body, once(), time.Now).Last()
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
