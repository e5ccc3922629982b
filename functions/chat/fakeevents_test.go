package handler

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/shared/stdwebhooks"
)

// fakeEvents plays an MCP events server (mcp-events, docs/events.md) for chat's automation tests, with its
// OAuth authorization server on the same origin: events/list, events/subscribe (which verifies the callback
// with a signed challenge, as mcp-events does), events/unsubscribe, bearer tokens it accepts or refuses with a
// 401 naming its protected-resource metadata, and a token endpoint that rotates refresh tokens. Its clock is
// the test's. It also sends deliveries to a subscription's callback, as webhook-ingress does.
type fakeEvents struct {
	t   *testing.T
	srv *httptest.Server
	now func() time.Time

	mu sync.Mutex
	// access are the access tokens it accepts; refresh is the refresh token its token endpoint takes (each
	// use rotates both).
	access  map[string]bool
	refresh string
	// refreshes counts the token endpoint's grants.
	refreshes int
	// subs are the live subscriptions by callback URL.
	subs map[string]fakeSub
	// ttl is the grant of each subscribe.
	ttl time.Duration
}

type fakeSub struct {
	ID, Name, URL, Secret string
	Args                  map[string]string
	RefreshBefore         time.Time
}

func newFakeEvents(t *testing.T, now func() time.Time) *fakeEvents {
	f := &fakeEvents{t: t, now: now, access: map[string]bool{"at-1": true}, refresh: "rt-1", subs: map[string]fakeSub{}, ttl: time.Hour}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", f.serveMCP)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		writeTestJSON(w, 200, map[string]any{"resource": f.url(), "authorization_servers": []string{f.srv.URL + "/as"}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server/as", func(w http.ResponseWriter, _ *http.Request) {
		writeTestJSON(w, 200, map[string]any{"issuer": f.srv.URL + "/as", "token_endpoint": f.srv.URL + "/token"})
	})
	mux.HandleFunc("POST /token", f.serveToken)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// url is the MCP endpoint.
func (f *fakeEvents) url() string { return f.srv.URL + "/mcp" }

// tokens are the connection's tokens as the page hands them to chat; expiresIn 0 leaves the expiry out.
func (f *fakeEvents) tokens(expiresIn time.Duration) map[string]any {
	t := map[string]any{"access_token": "at-1", "token_type": "Bearer", "refresh_token": "rt-1"}
	if expiresIn > 0 {
		t["expires_at"] = f.now().Add(expiresIn).Unix()
	}
	return t
}

func (f *fakeEvents) clientInfo() map[string]any {
	return map[string]any{"client_id": "chat-client", "issuer": f.srv.URL + "/as"}
}

func writeTestJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeEvents) serveToken(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Form.Get("grant_type") != "refresh_token" || r.Form.Get("refresh_token") != f.refresh || r.Form.Get("client_id") != "chat-client" || r.Form.Get("resource") != f.url() {
		writeTestJSON(w, 400, map[string]any{"error": "invalid_grant", "error_description": "refresh token not valid"})
		return
	}
	f.refreshes++
	at, rt := fmt.Sprintf("at-%d", f.refreshes+1), fmt.Sprintf("rt-%d", f.refreshes+1)
	f.access, f.refresh = map[string]bool{at: true}, rt
	writeTestJSON(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600, "refresh_token": rt})
}

func (f *fakeEvents) serveMCP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     any             `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json", 400)
		return
	}
	f.mu.Lock()
	ok := f.access[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	f.mu.Unlock()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+f.srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
		writeTestJSON(w, 401, map[string]any{"error": "invalid_token", "error_description": "the token expired"})
		return
	}
	if r.Header.Get("Mcp-Method") != req.Method || r.Header.Get("MCP-Protocol-Version") != "2026-07-28" {
		writeTestJSON(w, 400, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32020, "message": "headers"}})
		return
	}
	result, rpcErr := f.method(r, req.Method, req.Params)
	out := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if rpcErr != nil {
		out["error"] = rpcErr
	} else {
		out["result"] = result
	}
	writeTestJSON(w, 200, out)
}

var rowEvent = map[string]any{"name": "tablesdb.row.created", "description": "A row was created in a table.", "delivery": []string{"webhook"},
	"inputSchema": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"project_id", "database_id", "table_id"},
		"properties": map[string]any{"project_id": map[string]any{"type": "string"}, "database_id": map[string]any{"type": "string"}, "table_id": map[string]any{"type": "string"}}},
	"payloadSchema": map[string]any{"type": "object"}}

func (f *fakeEvents) method(r *http.Request, method string, raw json.RawMessage) (any, map[string]any) {
	var p struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
		Delivery  struct{ URL, Secret string }
	}
	_ = json.Unmarshal(raw, &p)
	switch method {
	case "events/list":
		return map[string]any{"resultType": "complete", "events": []any{rowEvent}}, nil
	case "events/unsubscribe":
		f.mu.Lock()
		delete(f.subs, p.Delivery.URL)
		f.mu.Unlock()
		return map[string]any{"resultType": "complete"}, nil
	case "events/subscribe":
		if p.Name != "tablesdb.row.created" {
			return nil, map[string]any{"code": -32011, "message": "unknown event " + p.Name, "data": map[string]any{"kind": "event"}}
		}
		if p.Arguments["table_id"] == "full" { // the project's plan allows no more webhooks (Cloud's 403)
			return nil, map[string]any{"code": -32013, "message": "this project cannot have more webhooks: unsubscribe from another event or upgrade the plan", "data": map[string]any{"limit": "webhooks", "max": 5}}
		}
		if p.Arguments["table_id"] == "" {
			return nil, map[string]any{"code": -32602, "message": "arguments: table_id is required", "data": map[string]any{"field": "arguments"}}
		}
		if err := f.challenge(p.Delivery.URL, p.Delivery.Secret); err != nil {
			return nil, map[string]any{"code": -32015, "message": "callback verification failed: " + err.Error(), "data": map[string]any{"reason": "challenge_failed"}}
		}
		sum := sha256.Sum256([]byte(p.Delivery.URL + p.Name))
		sub := fakeSub{ID: "mcpev_" + hex.EncodeToString(sum[:15]), Name: p.Name, URL: p.Delivery.URL, Secret: p.Delivery.Secret, Args: p.Arguments,
			RefreshBefore: f.now().Add(f.ttl - f.ttl/10).Truncate(time.Second)}
		f.mu.Lock()
		f.subs[p.Delivery.URL] = sub
		f.mu.Unlock()
		return map[string]any{"resultType": "complete", "id": sub.ID, "refreshBefore": sub.RefreshBefore.UTC().Format(time.RFC3339), "cursor": nil, "truncated": false}, nil
	}
	return nil, map[string]any{"code": -32601, "message": "Method not found: " + method}
}

// challenge verifies a callback as mcp-events does: a signed {"type":"verification","challenge"} whose 2xx
// answer must echo the challenge.
func (f *fakeEvents) challenge(callback, secret string) error {
	nonce := fmt.Sprintf("%x", sha256.Sum256([]byte(callback+secret)))[:48]
	body, _ := json.Marshal(map[string]string{"type": "verification", "challenge": nonce})
	status, answer := f.post(callback, "msg_verification_"+nonce[:24], secret, body, f.now())
	var echo struct{ Challenge string }
	if status/100 != 2 || json.Unmarshal([]byte(answer), &echo) != nil || echo.Challenge != nonce {
		return fmt.Errorf("HTTP %d %s", status, answer)
	}
	return nil
}

// post sends body to url signed with secret as of at (Standard Webhooks).
func (f *fakeEvents) post(u, id, secret string, body []byte, at time.Time) (int, string) {
	req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if sec, err := stdwebhooks.ParseSecret(secret); err == nil {
		if err := stdwebhooks.SetHeaders(req.Header, id, at, body, sec); err != nil {
			f.t.Fatal(err)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// sub is the live subscription whose callback is for automation id (zero when there is none).
func (f *fakeEvents) sub(automationID string) fakeSub {
	f.mu.Lock()
	defer f.mu.Unlock()
	for u, s := range f.subs {
		if strings.HasSuffix(u, "/api/events/"+url.PathEscape(automationID)) {
			return s
		}
	}
	return fakeSub{}
}

// event is a delivery of a row created, as webhook-ingress sends it: eventId = webhook-id.
func event(id, rowID string, at time.Time) []byte {
	b, _ := json.Marshal(map[string]any{"eventId": id, "name": "tablesdb.row.created", "timestamp": at.UTC().Format(time.RFC3339),
		"data": map[string]any{"project_id": "p", "database_id": "main", "table_id": "tickets", "row_id": rowID, "created_at": at.UTC().Format(time.RFC3339)}})
	return b
}

// deliver sends a row event to automation id's subscription, signed with its secret as of the clock.
func (f *fakeEvents) deliver(automationID, eventID, rowID string) (int, string) {
	s := f.sub(automationID)
	if s.URL == "" {
		f.t.Fatalf("no subscription for automation %s", automationID)
	}
	return f.post(s.URL, eventID, s.Secret, event(eventID, rowID, f.now()), f.now())
}
