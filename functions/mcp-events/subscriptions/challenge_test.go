package subscriptions_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
)

func TestCallbackEndpointReasons(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	// The hanging callback is the one case decided by the challenge timeout: its own server waits 1 s (the
	// others answer at once, and a loaded machine must not turn them into timeouts).
	generous := st.Env["MCP_EVENTS_CHALLENGE_TIMEOUT"]
	st.Env["MCP_EVENTS_CHALLENGE_TIMEOUT"] = "1s"
	hangURL := st.Instance(st.Server(handler.Options{}))
	st.Env["MCP_EVENTS_CHALLENGE_TIMEOUT"] = generous
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	eventstest.Must(t, err)
	closedURL := "https://" + closed.Addr().String() + "/h"
	closed.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer plain.Close()
	plainURL := strings.Replace(plain.URL, "http:", "https:", 1) + "/h"

	for _, c := range []struct {
		mode, url, reason string
	}{
		{"wrong", "", "challenge_failed"},
		{"404", "", "http_4xx"},
		{"500", "", "http_5xx"},
		// A redirect is the answer, never followed, even to an endpoint that would answer the challenge.
		{"307", "", "http_4xx"},
		{"hang", "", "timeout"},
		{"answer", closedURL, "connection_refused"},
		{"answer", plainURL, "tls_error"},
	} {
		t.Run(c.mode+" "+c.reason, func(t *testing.T) {
			st.Recv.SetMode(c.mode)
			cb := c.url
			if cb == "" {
				cb = st.Recv.URL("/" + c.mode)
			}
			u := url
			if c.mode == "hang" {
				u = hangURL
			}
			r := eventstest.RPC(t, u, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil))
			if r.Error == nil || r.Error.Code != -32015 || r.Error.Data["reason"] != c.reason {
				t.Fatalf("got %s", r.Raw)
			}
			// What the endpoint answered never surfaces: only the reason.
			if !strings.HasPrefix(r.Error.Message, "callback verification failed: ") || strings.Contains(r.Error.Message, "not-the-challenge") ||
				strings.Contains(r.Error.Message, "boom") || strings.Contains(r.Error.Message, "no\n") {
				t.Fatalf("message %q", r.Error.Message)
			}
		})
	}
	for _, got := range st.Recv.Received() {
		if got.Path == "/redirected" {
			t.Fatal("the challenge followed a redirect")
		}
	}
	st.Recv.SetMode("answer")
	if n := len(st.Webhooks(eventstest.ProjectID)); n != 0 {
		t.Fatalf("failed verifications left %d webhooks", n)
	}
	// Once answered, the same subscription succeeds.
	r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), st.Recv.URL("/wrong"), secret, nil))
	if r.Error != nil {
		t.Fatalf("answered: %s", r.Raw)
	}
}
