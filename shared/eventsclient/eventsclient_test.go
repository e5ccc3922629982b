package eventsclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// server answers each request with answer(method, params) and records what it received.
func server(t *testing.T, answer func(w http.ResponseWriter, method string, params map[string]any)) (*httptest.Server, *[]*http.Request) {
	t.Helper()
	var seen []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			JSONRPC string         `json:"jsonrpc"`
			ID      int64          `json:"id"`
			Method  string         `json:"method"`
			Params  map[string]any `json:"params"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.JSONRPC != "2.0" || req.ID == 0 {
			t.Errorf("not a JSON-RPC request: %s", body)
		}
		seen = append(seen, r.Clone(context.Background()))
		answer(w, req.Method, req.Params)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// A subscribe states the protocol in its headers and its _meta (2026-07-28 is stateless), carries the bearer
// token and the webhook delivery, and reads the result.
func TestSubscribeSendsTheProtocolAndReadsTheResult(t *testing.T) {
	var got map[string]any
	srv, seen := server(t, func(w http.ResponseWriter, method string, params map[string]any) {
		got = params
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","id":"mcpev_1","refreshBefore":"2026-12-01T02:54:00Z","cursor":null,"truncated":false}}`)
	})
	c := &Client{Endpoint: srv.URL + "/mcp", Token: "tok", Name: "chat-test"}
	sub, err := c.Subscribe(ctx(t), "tablesdb.row.created", map[string]string{"project_id": "p"}, "https://cb.example/x", "whsec_abc", 60000)
	if err != nil || sub.ID != "mcpev_1" || sub.RefreshBefore == nil || *sub.RefreshBefore != "2026-12-01T02:54:00Z" {
		t.Fatalf("subscribe: %+v %v", sub, err)
	}
	r := (*seen)[0]
	for h, want := range map[string]string{"Authorization": "Bearer tok", "Mcp-Method": "events/subscribe", "Mcp-Protocol-Version": ProtocolVersion,
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream"} {
		if r.Header.Get(h) != want {
			t.Errorf("%s = %q, want %q", h, r.Header.Get(h), want)
		}
	}
	meta, _ := got["_meta"].(map[string]any)
	info, _ := meta["io.modelcontextprotocol/clientInfo"].(map[string]any)
	if meta["io.modelcontextprotocol/protocolVersion"] != ProtocolVersion || info["name"] != "chat-test" {
		t.Errorf("_meta = %v", meta)
	}
	delivery, _ := got["delivery"].(map[string]any)
	if delivery["mode"] != "webhook" || delivery["url"] != "https://cb.example/x" || delivery["secret"] != "whsec_abc" || got["ttlMs"] != float64(60000) {
		t.Errorf("params = %v", got)
	}
}

// Errors come back typed: a JSON-RPC error in a 200 and in a 4xx (with its status and challenge), an HTTP
// refusal without one (a 401 is Unauthorized), an answer that is not JSON-RPC, and one over the bound.
func TestErrors(t *testing.T) {
	for _, c := range []struct {
		name         string
		status       int
		header, body string
		code, http   int
		unauthorized bool
		contains     string
	}{
		{"json-rpc in 200", 200, "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":{"field":"delivery.url"}}}`, -32602, 0, false, "MCP error -32602: bad"},
		{"step-up", 403, `Bearer error="insufficient_scope", scope="project:rows.read"`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32012,"message":"missing scopes"}}`, -32012, 403, false, "missing scopes"},
		{"no token", 401, `Bearer resource_metadata="https://m.example/.well-known/oauth-protected-resource/mcp"`, `{"error":"invalid_token"}`, 0, 401, true, `HTTP 401: {"error":"invalid_token"}`},
		{"html", 502, "", "<html>bad gateway</html>", 0, 502, false, "HTTP 502: <html>bad gateway</html>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := server(t, func(w http.ResponseWriter, _ string, _ map[string]any) {
				if c.header != "" {
					w.Header().Set("WWW-Authenticate", c.header)
				}
				w.WriteHeader(c.status)
				_, _ = io.WriteString(w, c.body)
			})
			_, err := (&Client{Endpoint: srv.URL}).List(ctx(t))
			var e *Error
			if !errors.As(err, &e) || e.Code != c.code || e.HTTPStatus != c.http || e.Challenge != c.header || !strings.Contains(err.Error(), c.contains) {
				t.Fatalf("err %v (%+v), want code %d status %d containing %q", err, e, c.code, c.http, c.contains)
			}
			if Unauthorized(err) != c.unauthorized {
				t.Errorf("Unauthorized = %v", !c.unauthorized)
			}
		})
	}
	srv, _ := server(t, func(w http.ResponseWriter, _ string, _ map[string]any) { _, _ = io.WriteString(w, "not json") })
	if _, err := (&Client{Endpoint: srv.URL}).List(ctx(t)); err == nil || !strings.Contains(err.Error(), "not JSON-RPC") {
		t.Errorf("non-JSON answer: %v", err)
	}
	big, _ := server(t, func(w http.ResponseWriter, _ string, _ map[string]any) {
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"events":[],"pad":"`+strings.Repeat("x", MaxAnswerBytes)+`"}}`)
	})
	if _, err := (&Client{Endpoint: big.URL}).List(ctx(t)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized answer: %v", err)
	}
}
