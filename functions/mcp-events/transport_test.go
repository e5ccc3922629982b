package handler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"
)

// post sends body to the MCP endpoint with the given method and extra headers and returns the status, the
// headers and the decoded JSON body (nil when the body is not JSON).
func post(t *testing.T, method, url, tok, body string, hdr map[string]string) (int, http.Header, map[string]any, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, url+"/mcp", bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v // net/http sends req.Host, never a Host header of its own
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		m = nil
	}
	return resp.StatusCode, resp.Header, m, raw
}

func rpcCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return int(c)
}

// TestScopeStepUp: a subscribe or unsubscribe the token lacks scopes for is answered HTTP 403 with an
// insufficient_scope challenge naming exactly the scopes the call needs; with them, it succeeds.
func TestScopeStepUp(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	secret := newSecret()
	st.recv.accept(secret)
	cb := st.recv.url("/stepup")
	narrow := st.token(userID, []string{"project:webhooks.read", "project:webhooks.write", "project:tables.read"})

	r := rpc(t, url, narrow, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), cb, secret, nil))
	want := `Bearer error="insufficient_scope", scope="project:rows.read", resource_metadata="` + publicURL + `/.well-known/oauth-protected-resource/mcp"`
	if r.Status != http.StatusForbidden || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), want) {
		t.Fatalf("subscribe without rows.read: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	if r.Error == nil || r.Error.Code != -32012 || !strings.Contains(r.Error.Message, "rows.read") {
		t.Fatalf("body: %s", r.Raw)
	}
	if n := len(st.recv.received()); n != 0 {
		t.Fatalf("a refused subscribe contacted the callback %d times", n)
	}

	full := st.token(userID, allScopes)
	if r := rpc(t, url, full, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), cb, secret, nil)); r.Error != nil {
		t.Fatalf("after step-up: %s", r.Raw)
	}
	readOnly := st.token(userID, []string{"project:webhooks.read", "project:tables.read", "project:rows.read"})
	un := map[string]any{"name": "tablesdb.row.created", "arguments": rowArgs(), "delivery": map[string]any{"url": cb}}
	r = rpc(t, url, readOnly, "events/unsubscribe", un)
	if r.Status != http.StatusForbidden || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="project:webhooks.write"`) {
		t.Fatalf("unsubscribe without webhooks.write: %d %q %s", r.Status, r.Header.Get("WWW-Authenticate"), r.Raw)
	}
	if n := len(st.webhooks(projectID)); n != 1 {
		t.Fatalf("a refused unsubscribe changed the webhooks: %d", n)
	}
	if r := rpc(t, url, full, "events/unsubscribe", un); r.Error != nil {
		t.Fatalf("unsubscribe: %s", r.Raw)
	}
}

// TestJSONRPCEdges: batches and ids of the wrong type are invalid requests (-32600), not parse errors;
// bodies that are not JSON are parse errors; every answer on the MCP path is JSON, whatever the HTTP method.
func TestJSONRPCEdges(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	for _, c := range []struct {
		name, body string
		code       int
	}{
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"events/list"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, -32600},
		{"empty batch", `[]`, -32600},
		{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"events/list"}`, -32600},
		{"id array", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600},
		{"id boolean", `{"jsonrpc":"2.0","id":true,"method":"events/list"}`, -32600},
		{"method number", `{"jsonrpc":"2.0","id":1,"method":7}`, -32600},
		{"scalar", `"events/list"`, -32600},
		{"not json", `{"jsonrpc":"2.0",`, -32700},
		{"empty", ``, -32700},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, hdr, m, raw := post(t, "POST", url, tok, c.body, nil)
			if status != http.StatusBadRequest || rpcCode(m) != c.code || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
				t.Fatalf("%d %s %s", status, hdr.Get("Content-Type"), raw)
			}
		})
	}
	for _, method := range []string{"GET", "PUT", "DELETE", "PATCH"} {
		status, hdr, m, raw := post(t, method, url, tok, "", nil)
		if status != http.StatusMethodNotAllowed || hdr.Get("Allow") != "POST" || m == nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("%s: %d %v %s", method, status, hdr, raw)
		}
	}
	// The SDK's own plain-text refusals become JSON too, answering the request's id: a body that is not
	// application/json is 415 Unsupported Media Type.
	status, hdr, m, raw := post(t, "POST", url, tok, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Content-Type": "text/plain"})
	if status != http.StatusUnsupportedMediaType || rpcCode(m) != -32600 || m["id"] != float64(1) || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Fatalf("text/plain request: %d %s", status, raw)
	}
	// A valid id of each kind is accepted.
	for _, id := range []string{`"abc"`, `7`, `-1.5`} {
		if status, _, m, raw := post(t, "POST", url, tok, `{"jsonrpc":"2.0","id":`+id+`,"method":"events/list"}`, nil); status != 200 || m["result"] == nil {
			t.Fatalf("id %s: %d %s", id, status, raw)
		}
	}
}

// TestLocalNamesRefusedUpFront: callback hosts that name this machine or a local network (localhost with
// a trailing dot, .localhost, .local, .internal, single labels) are refused before any Appwrite call, with
// data.field and data.reason; so are private addresses.
func TestLocalNamesRefusedUpFront(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	// An unknown project: had Appwrite been asked, the answer would be NotFound.
	args := map[string]any{"project_id": "nope", "database_id": dbID, "table_id": tableID}
	before := st.apiCalls.Load()
	for _, cb := range []string{
		"https://localhost./h", "https://localhost/h", "https://LocalHost.:8443/h", "https://a.localhost./h",
		"https://printer.local/h", "https://db.internal/h", "https://metadata/computeMetadata/v1/",
		"https://10.1.2.3/h", "https://[::1]/h", "https://127.0.0.1./h",
	} {
		r := rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", args, cb, secret, nil))
		if r.Error == nil || r.Error.Code != -32602 || r.Error.Data["field"] != "delivery.url" || r.Error.Data["reason"] == nil || r.Error.Data["reason"] == "" {
			t.Fatalf("%s: %s", cb, r.Raw)
		}
	}
	if n := st.apiCalls.Load() - before; n != 0 {
		t.Fatalf("refused callback URLs still caused %d Appwrite calls", n)
	}
}

// TestTTLExtremes: ttlMs far outside the bounds (negative, huge, beyond float64) is clamped, never
// overflowed into the wrong end.
func TestTTLExtremes(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	for _, c := range []struct {
		ttl  string
		want time.Duration
	}{
		{"-1e13", 5 * time.Minute}, {"-5", 5 * time.Minute}, {"-1e400", 5 * time.Minute},
		{"1e13", 24 * time.Hour}, {"1e400", 24 * time.Hour}, {"9.3e18", 24 * time.Hour},
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"events/subscribe","params":{"name":"users.user.created","arguments":{"project_id":"` + projectID +
			`"},"delivery":{"mode":"webhook","url":"` + st.recv.url("/ttl") + `","secret":"` + secret + `"},"ttlMs":` + c.ttl + `}}`
		// The grant is made between before and after, however long the call takes; refreshBefore keeps
		// whole seconds (rounded down).
		before := time.Now()
		status, _, m, raw := post(t, "POST", url, tok, body, nil)
		after := time.Now()
		res, _ := m["result"].(map[string]any)
		if status != 200 || res == nil {
			t.Fatalf("ttlMs %s: %d %s", c.ttl, status, raw)
		}
		// refreshBefore leaves a tenth of the grant before the expiry.
		if rb := mustTime(t, res["refreshBefore"]); rb.Before(before.Add(c.want-c.want/10).Truncate(time.Second)) || rb.After(after.Add(c.want-c.want/10)) {
			t.Fatalf("ttlMs %s: refreshBefore %v, want %v after a moment in [%v, %v]", c.ttl, rb, c.want, before, after)
		}
	}
	for _, bad := range []string{`"NaN"`, `"Infinity"`, `true`, `{}`} {
		body := `{"jsonrpc":"2.0","id":1,"method":"events/subscribe","params":{"name":"users.user.created","arguments":{"project_id":"` + projectID +
			`"},"delivery":{"mode":"webhook","url":"` + st.recv.url("/ttl") + `","secret":"` + secret + `"},"ttlMs":` + bad + `}}`
		if _, _, m, raw := post(t, "POST", url, tok, body, nil); rpcCode(m) != -32602 {
			t.Fatalf("ttlMs %s: %s", bad, raw)
		}
	}
}

// modernBody is an events/* request of protocol 2026-07-28: the version in _meta.
func modernBody(method, version string, params string) string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `"}`
	if params != "" {
		meta += "," + params
	}
	return `{"jsonrpc":"2.0","id":5,"method":"` + method + `","params":{` + meta + `}}`
}

// TestEventsTransport2026: events/* follows the 2026-07-28 transport like every other method: header and
// _meta must agree (400), an unknown method is HTTP 404 with -32601, malformed params are 400; legacy
// requests keep JSON-RPC errors in a 200.
func TestEventsTransport2026(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	const v = "2026-07-28"
	hdr := func(version, method string) map[string]string {
		return map[string]string{"MCP-Protocol-Version": version, "Mcp-Method": method}
	}
	for _, c := range []struct {
		name   string
		body   string
		hdr    map[string]string
		status int
		code   int
	}{
		{"modern list", modernBody("events/list", v, ""), hdr(v, "events/list"), 200, 0},
		{"header disagrees with body", modernBody("events/list", v, ""), hdr("2025-11-25", "events/list"), 400, -32020},
		{"body disagrees with header", modernBody("events/list", "2025-11-25", ""), hdr(v, "events/list"), 400, -32020},
		{"header without _meta", `{"jsonrpc":"2.0","id":5,"method":"events/list","params":{}}`, hdr(v, "events/list"), 400, -32602},
		{"_meta without header", modernBody("events/list", v, ""), nil, 400, -32020},
		{"Mcp-Method disagrees", modernBody("events/list", v, ""), hdr(v, "events/subscribe"), 400, -32020},
		{"unknown method", modernBody("events/poll", v, ""), hdr(v, "events/poll"), 404, -32601},
		{"invalid params", modernBody("events/subscribe", v, `"name":"tablesdb.row.created"`), hdr(v, "events/subscribe"), 400, -32602},
		{"unknown event", modernBody("events/subscribe", v, `"name":"nope","delivery":{"url":"https://x.example/h"}`), hdr(v, "events/subscribe"), 200, -32011},
		{"legacy unknown method", `{"jsonrpc":"2.0","id":5,"method":"events/poll","params":{}}`, nil, 200, -32601},
		// A method neither events/* nor the SDK's answers the same way (the SDK's plain-text 400 rewrapped).
		{"legacy unknown SDK method", `{"jsonrpc":"2.0","id":5,"method":"foo/bar","params":{}}`, nil, 200, -32601},
		{"modern unknown SDK method", modernBody("foo/bar", v, ""), hdr(v, "foo/bar"), 404, -32601},
		{"legacy bad header", `{"jsonrpc":"2.0","id":5,"method":"events/list","params":{}}`, map[string]string{"MCP-Protocol-Version": "1999-01-01"}, 400, -32600},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, _, m, raw := post(t, "POST", url, tok, c.body, c.hdr)
			if status != c.status || rpcCode(m) != c.code {
				t.Fatalf("%d %s, want %d with %d", status, raw, c.status, c.code)
			}
		})
	}
}

// TestIssuerOutageIsRetryable: while the issuer's JWKS answers 503, a well-formed token whose key the
// server has not cached cannot be checked. That is HTTP 503 with Retry-After (when the next fetch may run)
// and error temporarily_unavailable, not a 401 that would send the user through authorization again; the
// second request within the refresh interval fetches nothing; a malformed token is still a 401.
func TestIssuerOutageIsRetryable(t *testing.T) {
	st := newStack(t)
	var fetches atomic.Int64
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	st.env["MCP_EVENTS_OAUTH_JWKS_URL"] = down.URL + "/jwks"
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, []string{"project:webhooks.read", "project:webhooks.write", "project:rows.read"})
	list := `{"jsonrpc":"2.0","id":1,"method":"events/list","params":{}}`
	for i := range 2 {
		status, hdr, body, raw := post(t, "POST", url, tok, list, nil)
		retry, err := strconv.Atoi(hdr.Get("Retry-After"))
		if status != http.StatusServiceUnavailable || err != nil || retry < 1 || retry > 10 || hdr.Get("WWW-Authenticate") != "" {
			t.Fatalf("request %d: %d Retry-After %q WWW-Authenticate %q: %s", i, status, hdr.Get("Retry-After"), hdr.Get("WWW-Authenticate"), raw)
		}
		desc, _ := body["error_description"].(string)
		if body["error"] != "temporarily_unavailable" || !strings.Contains(desc, "JWKS") || !strings.Contains(desc, "HTTP 503") || !strings.HasSuffix(desc, "retry later") {
			t.Fatalf("request %d: %s", i, raw)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Fatalf("two requests within the refresh interval fetched the JWKS %d times, want 1", n)
	}
	if status, _, body, raw := post(t, "POST", url, "not.a.jwt", list, nil); status != http.StatusUnauthorized || body["error"] != "invalid_token" {
		t.Fatalf("malformed token during the outage: %d %s", status, raw)
	}
}
