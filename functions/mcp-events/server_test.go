package handler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
	"appwrite-agent/shared/devkit/fakesentry"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/faultreport"
)

func TestAuthentication(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))

	r := eventstest.RPC(t, url, "", "events/list", map[string]any{})
	if r.Status != 401 {
		t.Fatalf("no token: %d", r.Status)
	}
	chal := r.Header.Get("WWW-Authenticate")
	if !strings.HasPrefix(chal, "Bearer ") || !strings.Contains(chal, `resource_metadata="`+eventstest.PublicURL+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("challenge %q", chal)
	}
	if strings.Contains(chal, "error=") {
		t.Fatalf("a request without credentials got an error code (RFC 6750 §3.1): %q", chal)
	}
	var body map[string]string
	_ = json.Unmarshal(r.Raw, &body)
	if body["error"] != "unauthorized" {
		t.Fatalf("401 body %s", r.Raw)
	}

	// Expired: minted two hours ago with a one-hour lifetime.
	st.Clock.Advance(-2 * time.Hour)
	expired, err := st.LA.MintToken(eventstest.UserID, eventstest.PublicURL+"/mcp", eventstest.AllScopes, time.Hour)
	st.Clock.Advance(2 * time.Hour)
	eventstest.Must(t, err)
	wrongAud, err := st.LA.MintToken(eventstest.UserID, "https://other.example/mcp", eventstest.AllScopes, time.Hour)
	eventstest.Must(t, err)
	for _, c := range []struct{ name, token, desc string }{
		{"expired", expired, "token expired"},
		{"wrong audience", wrongAud, "audience"},
		{"garbage", "not-a-jwt", "malformed"},
	} {
		r := eventstest.RPC(t, url, c.token, "events/list", map[string]any{})
		if r.Status != 401 || !strings.Contains(r.Header.Get("WWW-Authenticate"), c.desc) {
			t.Fatalf("%s: %d %q", c.name, r.Status, r.Header.Get("WWW-Authenticate"))
		}
	}

	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(url + path)
		eventstest.Must(t, err)
		var meta map[string]any
		eventstest.Must(t, json.NewDecoder(resp.Body).Decode(&meta))
		resp.Body.Close()
		want := eventstest.PublicURL // exactly the URL the client uses: no slash added (RFC 9728 §3.3)
		if strings.HasSuffix(path, "/mcp") {
			want = eventstest.PublicURL + "/mcp"
		}
		if meta["resource"] != want || fmt.Sprint(meta["authorization_servers"]) != "["+st.LA.Issuer()+"]" {
			t.Fatalf("%s: %v", path, meta)
		}
	}
}

// TestTwoInstancesAndRestart: two instances with the same configuration serve one client alternately, and
// an instance built after the subscribe (a restart) refreshes it unchanged.
func TestTwoInstancesAndRestart(t *testing.T) {
	st := eventstest.NewStack(t)
	a := st.Instance(st.Server(handler.Options{}))
	b := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	cb := st.Recv.URL("/alt")
	p := eventstest.SubParams("storage.file.created", map[string]any{"project_id": eventstest.ProjectID, "bucket_id": eventstest.BucketID}, cb, secret, nil)

	r1 := eventstest.RPC(t, a, tok, "events/subscribe", p)
	r2 := eventstest.RPC(t, b, tok, "events/subscribe", p)
	if r1.Error != nil || r2.Error != nil || r1.Result["id"] != r2.Result["id"] {
		t.Fatalf("alternate: %s / %s", r1.Raw, r2.Raw)
	}
	restarted := st.Instance(st.Server(handler.Options{}))
	r3 := eventstest.RPC(t, restarted, tok, "events/subscribe", p)
	if r3.Error != nil || r3.Result["id"] != r1.Result["id"] {
		t.Fatalf("after restart: %s", r3.Raw)
	}
	if n := len(st.Recv.Received()); n != 1 {
		t.Fatalf("callback verified %d times across instances", n)
	}
	if n := len(st.Webhooks(eventstest.ProjectID)); n != 1 {
		t.Fatalf("%d webhooks", n)
	}
	r4 := eventstest.RPC(t, b, tok, "events/unsubscribe", map[string]any{"name": "storage.file.created", "arguments": p["arguments"], "delivery": map[string]any{"url": cb}})
	if r4.Error != nil {
		t.Fatalf("unsubscribe on the other instance: %s", r4.Raw)
	}
}

// TestMCPGoClientPeer: mcp-go's client, an implementation independent of the official SDK the server is
// built on, connects with server/discover (2026-07-28) and with the legacy initialize handshake, sees the
// events extension, lists the tools with their annotations and reads a user; bad arguments and a missing
// user are tool errors it can show.
func TestMCPGoClientPeer(t *testing.T) {
	st := eventstest.NewStack(t)
	w := eventstest.SeedToolWorld(t, st)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	for _, legacy := range []bool{false, true} {
		t.Run(map[bool]string{false: "server/discover", true: "initialize"}[legacy], func(t *testing.T) { mcpGoPeer(t, url, tok, w, legacy) })
	}
}

func mcpGoPeer(t *testing.T, url, tok string, w eventstest.ToolWorld, legacy bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	tr, err := transport.NewStreamableHTTP(url+"/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + tok}),
		transport.WithHTTPLogger(slog.New(slog.DiscardHandler)))
	eventstest.Must(t, err)
	var opts []client.ClientOption
	if legacy {
		//lint:ignore SA1019 the legacy handshake is what this half of the test is about
		opts = append(opts, client.WithLegacyProtocolOnly())
	}
	c := client.NewClient(tr, opts...)
	t.Cleanup(func() { _ = c.Close() })
	eventstest.Must(t, c.Start(ctx))
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "mcp-go-peer", Version: "1"}
	res, err := c.Initialize(ctx, init)
	eventstest.Must(t, err)
	if modern := res.ProtocolVersion >= "2026-07-28"; modern == legacy {
		t.Fatalf("legacy=%v: negotiated %s", legacy, res.ProtocolVersion)
	}
	if _, ok := c.GetServerCapabilities().Extensions[handler.ExtensionID]; !ok {
		t.Fatalf("legacy=%v: no events extension in %+v", legacy, c.GetServerCapabilities())
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	eventstest.Must(t, err)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Annotations.ReadOnlyHint == nil || !*tool.Annotations.ReadOnlyHint || tool.Annotations.Title == "" {
			t.Fatalf("legacy=%v: %s annotations %+v", legacy, tool.Name, tool.Annotations)
		}
	}
	if got := strings.Join(names, ","); got != "get_execution,get_file,get_row,get_user,list_subscriptions" {
		t.Fatalf("legacy=%v: tools %s", legacy, got)
	}
	call := func(args map[string]any) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "get_user", args
		r, err := c.CallTool(ctx, req)
		eventstest.Must(t, err)
		return r
	}
	text := func(r *mcp.CallToolResult) string {
		if len(r.Content) == 0 {
			return ""
		}
		tc, _ := mcp.AsTextContent(r.Content[0])
		if tc == nil {
			return ""
		}
		return tc.Text
	}
	if r := call(map[string]any{"project_id": eventstest.ProjectID, "user_id": w.UserID}); r.IsError || !strings.Contains(text(r), "c1@example.com") {
		t.Fatalf("legacy=%v: get_user: %+v", legacy, r)
	}
	if r := call(map[string]any{"project_id": eventstest.ProjectID, "user_id": "../x"}); !r.IsError || !strings.Contains(text(r), "user_id") {
		t.Fatalf("legacy=%v: bad id: %q", legacy, text(r))
	}
	if r := call(map[string]any{"project_id": eventstest.ProjectID, "user_id": "ghost"}); !r.IsError || !strings.HasPrefix(text(r), "Not found: user ghost") {
		t.Fatalf("legacy=%v: missing user: %q", legacy, text(r))
	}
}

// TestForeignOriginRefused: the Streamable HTTP transport says servers MUST validate Origin. A request whose
// Origin is not listed in MCP_EVENTS_ALLOWED_ORIGINS is refused with 403 before anything else is looked at
// (even a valid token does not help); a listed origin and a request without Origin (server-side clients
// such as ChatGPT's) are served.
func TestForeignOriginRefused(t *testing.T) {
	st := eventstest.NewStack(t)
	st.Env["MCP_EVENTS_ALLOWED_ORIGINS"] = "https://Chat.Example.com, http://localhost:6274"
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	ping := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, c := range []struct {
		origin string
		tok    string
		want   int
	}{
		{"http://evil.example.com", tok, http.StatusForbidden},
		{"null", tok, http.StatusForbidden},
		{"https://chat.example.com.evil.example", tok, http.StatusForbidden},
		{"http://chat.example.com", tok, http.StatusForbidden}, // another scheme is another origin
		{"http://evil.example.com", "", http.StatusForbidden},  // before the 401
		{"https://chat.example.com", tok, http.StatusOK},
		{"HTTP://LOCALHOST:6274", tok, http.StatusOK},
		{"", tok, http.StatusOK},
		{"https://chat.example.com", "", http.StatusUnauthorized},
	} {
		hdr := map[string]string{}
		if c.origin != "" {
			hdr["Origin"] = c.origin
		}
		status, h, m, raw := eventstest.Post(t, "POST", url, c.tok, ping, hdr)
		if status != c.want {
			t.Fatalf("Origin %q: HTTP %d %s, want %d", c.origin, status, raw, c.want)
		}
		if status == http.StatusForbidden {
			if eventstest.RPCCode(m) != -32600 || !strings.Contains(string(raw), "MCP_EVENTS_ALLOWED_ORIGINS") || h.Get("WWW-Authenticate") != "" {
				t.Fatalf("Origin %q: %s", c.origin, raw)
			}
		}
	}
	// Unset, every Origin is foreign.
	delete(st.Env, "MCP_EVENTS_ALLOWED_ORIGINS")
	url = st.Instance(st.Server(handler.Options{}))
	if status, _, _, raw := eventstest.Post(t, "POST", url, tok, ping, map[string]string{"Origin": "https://chat.example.com"}); status != http.StatusForbidden {
		t.Fatalf("no allowed origins: %d %s", status, raw)
	}
}

// TestOwnOriginServed: a page of the server's own origin is served without being listed. The own origin is
// the public URL's (default port or not, any case); a loopback server (public URL on 127.0.0.1, reached
// through a local proxy on another port, as the conformance suite does) also owns the request's own loopback
// host. A DNS-rebinding request (Host and Origin both the attacker's name) and every other origin get the
// 403 of a foreign origin; the listed ones are still served.
func TestOwnOriginServed(t *testing.T) {
	st := eventstest.NewStack(t)
	st.Env["MCP_EVENTS_ALLOWED_ORIGINS"] = "https://chat.example.com"
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	check := func(t *testing.T, url string, c originCase) {
		t.Helper()
		hdr := map[string]string{"Origin": c.origin}
		if c.host != "" {
			hdr["Host"] = c.host
		}
		status, h, m, raw := eventstest.Post(t, "POST", url, tok, list, hdr)
		if status != c.want {
			t.Fatalf("Host %q, Origin %q: HTTP %d %s, want %d", c.host, c.origin, status, raw, c.want)
		}
		if status == http.StatusForbidden {
			want := `"Forbidden: Origin \"` + c.origin + `\" is not allowed (list it in MCP_EVENTS_ALLOWED_ORIGINS)"`
			if eventstest.RPCCode(m) != -32600 || !strings.Contains(string(raw), want) || h.Get("Access-Control-Allow-Origin") != "" {
				t.Fatalf("Origin %q: %v %s", c.origin, h, raw)
			}
		} else if h.Get("Access-Control-Allow-Origin") != c.origin || len(m["result"].(map[string]any)["tools"].([]any)) == 0 {
			t.Fatalf("Origin %q: %v %s", c.origin, h, raw)
		}
	}
	// A deployed server: its public URL is its origin, whatever Host the platform forwards.
	for _, c := range []originCase{
		{"", eventstest.PublicURL, http.StatusOK},
		{"", "HTTPS://MCP-Events.test", http.StatusOK},
		{"", "https://mcp-events.test:443", http.StatusOK},
		{"mcp-events.test", eventstest.PublicURL, http.StatusOK},
		{"", "https://chat.example.com", http.StatusOK},
		{"", "http://mcp-events.test", http.StatusForbidden},       // another scheme
		{"", "https://mcp-events.test:8443", http.StatusForbidden}, // another port
		{"", "https://mcp-events.test.evil.example", http.StatusForbidden},
		{"evil.example.com", "http://evil.example.com", http.StatusForbidden}, // the request's own host is not enough
		{"localhost:6274", "http://localhost:6274", http.StatusForbidden},     // nor a loopback one, on a public server
	} {
		check(t, url, c)
	}

	// A loopback server, reached on another local port than its public URL's.
	st.Env["MCP_EVENTS_PUBLIC_URL"] = "http://127.0.0.1:13031"
	st.Env["MCP_EVENTS_OAUTH_AUDIENCE"] = eventstest.PublicURL + "/mcp" // the stack's tokens
	url = st.Instance(st.Server(handler.Options{}))
	for _, c := range []originCase{
		{"", "http://127.0.0.1:13031", http.StatusOK},
		{"localhost:13032", "http://localhost:13032", http.StatusOK},
		{"LOCALHOST:13032", "http://localhost:13032", http.StatusOK},
		{"127.0.0.1:13033", "http://127.0.0.1:13033", http.StatusOK},
		{"[::1]:13034", "http://[::1]:13034", http.StatusOK},
		{"localhost:13032", "http://localhost:13099", http.StatusForbidden}, // another local port is another origin
		{"localhost:13032", "http://127.0.0.1:13032", http.StatusForbidden}, // and another name
		{"evil.example.com", "http://evil.example.com", http.StatusForbidden},
		{"evil.example.com:13032", "http://evil.example.com:13032", http.StatusForbidden},
		{"localhost:13032", "http://evil.example.com", http.StatusForbidden},
		{"", "https://chat.example.com", http.StatusOK},
	} {
		check(t, url, c)
	}
}

// originCase is one request of TestOwnOriginServed: its Host ("" for the test server's own address), its
// Origin and the status it gets.
type originCase struct {
	host, origin string
	want         int
}

// TestLegacyResultsCarryNoNewerFields: in a 2025-11-25 session, ping answers exactly {} and initialize and
// tools/list carry no resultType (a 2026-07-28 field the TypeScript SDK's strict ping schema refuses); a
// 2026-07-28 request (which has no ping) still gets resultType "complete".
func TestLegacyResultsCarryNoNewerFields(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	for _, c := range []struct{ version, body string }{
		{"", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
		{"2025-06-18", `{"jsonrpc":"2.0","id":3,"method":"ping","params":{}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}`},
	} {
		status, _, m, raw := eventstest.Post(t, "POST", url, tok, c.body, map[string]string{"MCP-Protocol-Version": c.version})
		res, ok := m["result"].(map[string]any)
		if status != http.StatusOK || !ok {
			t.Fatalf("%s: %d %s", c.body, status, raw)
		}
		if _, has := res["resultType"]; has {
			t.Fatalf("%s: a %s result carries resultType: %s", c.body, c.version, raw)
		}
		if strings.Contains(c.body, `"ping"`) && len(res) != 0 {
			t.Fatalf("ping: %s, want an empty result", raw)
		}
	}
	modern := eventstest.RawPost(t, url, tok, `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, "2026-07-28")
	if !strings.Contains(string(modern), `"resultType":"complete"`) {
		t.Fatalf("2026-07-28 tools/list: %s", modern)
	}
	// The official SDK's ping in a 2025-11-25 session.
	cs := eventstest.Connect(t, url, tok, "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cs.Ping(ctx, &sdk.PingParams{}); err != nil {
		t.Fatalf("SDK ping: %v", err)
	}
}

// TestBrowserCORS: a page of a listed origin (the chat page) can run the MCP authorization discovery from
// the browser: its preflight is answered without a token, the 401 lets it read WWW-Authenticate, and the
// protected-resource metadata is readable from any origin (a public document without credentials). A page
// of another origin gets the 403 and no CORS header, preflight included, so the browser shows it nothing.
func TestBrowserCORS(t *testing.T) {
	st := eventstest.NewStack(t)
	st.Env["MCP_EVENTS_ALLOWED_ORIGINS"] = "https://chat.example.com"
	url := st.Instance(st.Server(handler.Options{}))
	preflight := map[string]string{"Origin": "https://chat.example.com", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization, content-type"}
	status, h, _, raw := eventstest.Post(t, "OPTIONS", url, "", "", preflight)
	if status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "https://chat.example.com" ||
		!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") {
		t.Fatalf("preflight of a listed origin: %d %v %s", status, h, raw)
	}
	preflight["Origin"] = "https://evil.example.com"
	if status, h, _, raw := eventstest.Post(t, "OPTIONS", url, "", "", preflight); status != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight of a foreign origin: %d %v %s", status, h, raw)
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	status, h, _, raw = eventstest.Post(t, "POST", url, "", ping, map[string]string{"Origin": "https://chat.example.com"})
	if status != http.StatusUnauthorized || h.Get("Access-Control-Allow-Origin") != "https://chat.example.com" ||
		!strings.Contains(h.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") || !strings.Contains(h.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("401 to a listed origin: %d %v %s", status, h, raw)
	}
	if status, h, _, raw := eventstest.Post(t, "POST", url, "", ping, map[string]string{"Origin": "https://evil.example.com"}); status != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a foreign origin: %d %v %s", status, h, raw)
	}
	req, _ := http.NewRequest(http.MethodGet, url+"/.well-known/oauth-protected-resource/mcp", nil)
	req.Header.Set("Origin", "https://anyone.example.com")
	res, err := http.DefaultClient.Do(req)
	eventstest.Must(t, err)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("protected-resource metadata: %d %v", res.StatusCode, res.Header)
	}
}

// TestScopeStepUp: a subscribe or unsubscribe the token lacks scopes for is answered HTTP 403 with an
// insufficient_scope challenge naming exactly the scopes the call needs; with them, it succeeds.
func TestScopeStepUp(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	cb := st.Recv.URL("/stepup")
	narrow := st.Token(eventstest.UserID, []string{"project:webhooks.read", "project:webhooks.write", "project:tables.read"})

	r := eventstest.RPC(t, url, narrow, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil))
	want := `Bearer error="insufficient_scope", scope="project:rows.read", resource_metadata="` + eventstest.PublicURL + `/.well-known/oauth-protected-resource/mcp"`
	if r.Status != http.StatusForbidden || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), want) {
		t.Fatalf("subscribe without rows.read: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	if r.Error == nil || r.Error.Code != -32012 || !strings.Contains(r.Error.Message, "rows.read") {
		t.Fatalf("body: %s", r.Raw)
	}
	if n := len(st.Recv.Received()); n != 0 {
		t.Fatalf("a refused subscribe contacted the callback %d times", n)
	}

	full := st.Token(eventstest.UserID, eventstest.AllScopes)
	if r := eventstest.RPC(t, url, full, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil)); r.Error != nil {
		t.Fatalf("after step-up: %s", r.Raw)
	}
	readOnly := st.Token(eventstest.UserID, []string{"project:webhooks.read", "project:tables.read", "project:rows.read"})
	un := map[string]any{"name": "tablesdb.row.created", "arguments": eventstest.RowArgs(), "delivery": map[string]any{"url": cb}}
	r = eventstest.RPC(t, url, readOnly, "events/unsubscribe", un)
	if r.Status != http.StatusForbidden || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="project:webhooks.write"`) {
		t.Fatalf("unsubscribe without webhooks.write: %d %q %s", r.Status, r.Header.Get("WWW-Authenticate"), r.Raw)
	}
	if n := len(st.Webhooks(eventstest.ProjectID)); n != 1 {
		t.Fatalf("a refused unsubscribe changed the webhooks: %d", n)
	}
	if r := eventstest.RPC(t, url, full, "events/unsubscribe", un); r.Error != nil {
		t.Fatalf("unsubscribe: %s", r.Raw)
	}
}

// TestIssuerOutageIsRetryable: while the issuer's JWKS answers 503, a well-formed token whose key the
// server has not cached cannot be checked. That is HTTP 503 with Retry-After (when the next fetch may run)
// and error temporarily_unavailable, not a 401 that would send the user through authorization again; the
// second request within the refresh interval fetches nothing; a malformed token is still a 401.
func TestIssuerOutageIsRetryable(t *testing.T) {
	st := eventstest.NewStack(t)
	var fetches atomic.Int64
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	st.Env["MCP_EVENTS_OAUTH_JWKS_URL"] = down.URL + "/jwks"
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, []string{"project:webhooks.read", "project:webhooks.write", "project:rows.read"})
	list := `{"jsonrpc":"2.0","id":1,"method":"events/list","params":{}}`
	for i := range 2 {
		status, hdr, body, raw := eventstest.Post(t, "POST", url, tok, list, nil)
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
	if status, _, body, raw := eventstest.Post(t, "POST", url, "not.a.jwt", list, nil); status != http.StatusUnauthorized || body["error"] != "invalid_token" {
		t.Fatalf("malformed token during the outage: %d %s", status, raw)
	}
}

// TestCloudScopeNames: the protected-resource metadata advertises what the authorization server publishes in
// its discovery document (Appwrite Cloud's project:<scope> names), the 401 challenge asks for the Cloud
// names of what the events need, and MCP_EVENTS_OAUTH_SCOPES, when set, is advertised instead.
func TestCloudScopeNames(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))

	getJSON := func(u string) map[string]any {
		t.Helper()
		resp, err := http.Get(u)
		eventstest.Must(t, err)
		defer resp.Body.Close()
		var m map[string]any
		eventstest.Must(t, json.NewDecoder(resp.Body).Decode(&m))
		return m
	}
	published := getJSON(st.LA.Issuer() + "/.well-known/openid-configuration")["scopes_supported"].([]any)
	if !slices.Contains(published, any("project:webhooks.write")) || !slices.Contains(published, any("project:all")) || slices.Contains(published, any("webhooks.write")) {
		t.Fatalf("the stand-in's discovery does not publish Cloud's names: %v", published)
	}
	meta := getJSON(url + "/.well-known/oauth-protected-resource/mcp")
	if got, _ := json.Marshal(meta["scopes_supported"]); string(got) != mustJSON(t, published) {
		t.Fatalf("scopes_supported %s, want the authorization server's %s", got, mustJSON(t, published))
	}
	r := eventstest.RPC(t, url, "", "events/list", map[string]any{})
	chal := r.Header.Get("WWW-Authenticate")
	want := `scope="project:webhooks.read project:webhooks.write project:tables.read project:rows.read project:buckets.read project:files.read project:users.read project:functions.read project:executions.read project:sites.read"`
	if r.Status != http.StatusUnauthorized || !strings.Contains(chal, want) {
		t.Fatalf("401 challenge %d %q", r.Status, chal)
	}

	// A token with exactly the names the challenge asked for can use every event.
	asked := strings.Fields(strings.TrimSuffix(strings.SplitN(chal, `scope="`, 2)[1], `"`))
	lr := eventstest.RPC(t, url, st.Token(eventstest.UserID, asked), "events/list", map[string]any{})
	if lr.Error != nil || len(lr.Result["events"].([]any)) != 8 {
		t.Fatalf("events/list with the challenged scopes: %s", lr.Raw)
	}

	// Configured scopes win over discovery.
	st.Env["MCP_EVENTS_OAUTH_SCOPES"] = "project:all"
	configured := st.Instance(st.Server(handler.Options{}))
	if got := getJSON(configured + "/.well-known/oauth-protected-resource")["scopes_supported"]; mustJSON(t, got) != `["project:all"]` {
		t.Fatalf("configured scopes_supported: %v", got)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	eventstest.Must(t, err)
	return string(b)
}

// TestOfficialSDKDiscoverAndInitialize: the official MCP Go SDK reaches the server with server/discover
// (2026-07-28) and with legacy initialize, and sees the events extension both times; then the events flow
// runs as raw JSON-RPC (as ChatGPT sends it) against the same endpoint.
func TestOfficialSDKDiscoverAndInitialize(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)

	modern := eventstest.Connect(t, url, tok, "2026-07-28")
	res := modern.InitializeResult()
	if res == nil || res.Capabilities == nil || res.Capabilities.Extensions[handler.ExtensionID] == nil {
		t.Fatalf("discover: %+v", res)
	}
	legacy := eventstest.Connect(t, url, tok, "2025-11-25")
	res = legacy.InitializeResult()
	if res == nil || res.ProtocolVersion != "2025-11-25" || res.Capabilities.Extensions[handler.ExtensionID] == nil {
		t.Fatalf("initialize: %+v", res)
	}

	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("users.user.created", map[string]any{"project_id": eventstest.ProjectID}, st.Recv.URL("/sdk"), secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe after SDK handshake: %s", r.Raw)
	}
}

// TestSnapshotDiscoverAndCatalog pins the server/discover result (capabilities in both shapes) and the
// events/list catalog (UPDATE_SNAPSHOTS=1 rewrites testdata/, shared/devkit/snapshot).
func TestSnapshotDiscoverAndCatalog(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)

	discover := eventstest.RawPost(t, url, tok, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientInfo":{"name":"snapshot","version":"1"},`+
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`, "2026-07-28")
	eventstest.Golden(t, "discover.golden.json", discover)

	list := eventstest.RPC(t, url, tok, "events/list", map[string]any{})
	eventstest.Golden(t, "events_list.golden.json", list.Raw)

	initialize := eventstest.RawPost(t, url, tok, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"snapshot","version":"1"},"capabilities":{}}}`, "")
	eventstest.Golden(t, "initialize.golden.json", initialize)
}

func reporter(t *testing.T, fake *fakesentry.Server) *faultreport.Reporter {
	t.Helper()
	r, err := faultreport.New(faultreport.Options{DSN: fake.DSN, Function: "mcp-events"})
	eventstest.Must(t, err)
	return r
}

// TestSentryReportsServerFaultsOnly: with a DSN, Appwrite failing during a subscribe and during a tool
// call reaches Sentry (the fake checks the envelope) with the function, event, project, outcome and reason
// tags and no token or secret; a caller's bad input, a missing scope and a subscriber's failing endpoint
// send nothing.
func TestSentryReportsServerFaultsOnly(t *testing.T) {
	st := eventstest.NewStack(t)
	fake := fakesentry.New()
	defer fake.Close()
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)

	// Not server faults, on a working stack.
	healthy := st.Instance(st.Server(handler.Options{Faults: reporter(t, fake)}))
	eventstest.RPC(t, healthy, tok, "events/subscribe", eventstest.SubParams("row.exploded", eventstest.RowArgs(), st.Recv.URL("/a"), secret, nil))
	eventstest.RPC(t, healthy, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), "https://localhost./a", secret, nil))
	eventstest.RPC(t, healthy, st.Token(eventstest.UserID, []string{"project:webhooks.read"}), "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), st.Recv.URL("/a"), secret, nil))
	st.Recv.SetMode("500")
	if r := eventstest.RPC(t, healthy, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), st.Recv.URL("/failing"), secret, nil)); r.Error == nil || r.Error.Code != -32015 {
		t.Fatalf("subscriber failure: %s", r.Raw)
	}
	st.Recv.SetMode("answer")
	eventstest.CallTool(t, eventstest.Connect(t, healthy, tok, "2025-11-25"), "get_user", map[string]any{"project_id": eventstest.ProjectID, "user_id": "ghost"})
	if n := len(fake.Events()); n != 0 {
		t.Fatalf("bad input or a subscriber's failure was reported: %+v", fake.Events())
	}

	// Appwrite failing: server faults.
	st.AppwriteDown()
	broken := st.Instance(st.Server(handler.Options{Faults: reporter(t, fake)}))
	if r := eventstest.RPC(t, broken, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), st.Recv.URL("/b"), secret, nil)); r.Error == nil || r.Error.Code != -32603 {
		t.Fatalf("subscribe with Appwrite down: %s", r.Raw)
	}
	eventstest.CallTool(t, eventstest.Connect(t, broken, tok, "2026-07-28"), "get_execution", map[string]any{"project_id": eventstest.ProjectID, "function_id": eventstest.FunctionID, "execution_id": "e1"})

	evs := fake.Events()
	if len(evs) != 2 || len(fake.Problems()) != 0 {
		t.Fatalf("events %+v, problems %v", evs, fake.Problems())
	}
	for i, want := range []map[string]string{
		{"function": "mcp-events", "operation": "events/subscribe", "event": "tablesdb.row.created", "project_id": eventstest.ProjectID, "outcome": "error", "reason": "appwrite_503"},
		{"function": "mcp-events", "operation": "tools/call get_execution", "project_id": eventstest.ProjectID, "outcome": "unavailable", "reason": "appwrite_503"},
	} {
		for k, v := range want {
			if evs[i].Tags[k] != v {
				t.Errorf("report %d: tag %s = %q, want %q (%v)", i, k, evs[i].Tags[k], v, evs[i].Tags)
			}
		}
		for _, secret := range []string{tok, tok[:40], secret, secret[6:], "whsec_"} {
			if strings.Contains(evs[i].Raw, secret) {
				t.Errorf("report %d carries a secret: %s", i, evs[i].Raw)
			}
		}
	}
}

// consentingClient is the OAuth side of an MCP client as the official SDK drives it (auth.OAuthHandler):
// on a 401 or 403 it reads the challenge with the SDK's own parser, checks the protected-resource metadata
// with the SDK's RFC 9728 check, and "asks the user" (mints a token from the stand-in issuer) for the
// scopes it already holds plus the ones the challenge names.
type consentingClient struct {
	t        *testing.T
	st       *eventstest.Stack
	instance string // where the metadata is really served (the public URL is not reachable in tests)

	mu         sync.Mutex
	token      string
	scopes     []string
	challenges []oauthex.Challenge
	statuses   []int
}

func (c *consentingClient) TokenSource(context.Context) (oauth2.TokenSource, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == "" {
		return nil, nil
	}
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: c.token, TokenType: "Bearer"}), nil
}

func (c *consentingClient) Authorize(ctx context.Context, _ *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	chs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil || len(chs) != 1 || chs[0].Scheme != "bearer" {
		c.t.Errorf("challenge %q: %v", resp.Header.Values("WWW-Authenticate"), err)
		return err
	}
	ch := chs[0]
	meta := ch.Params["resource_metadata"]
	if !strings.HasPrefix(meta, eventstest.PublicURL+"/.well-known/oauth-protected-resource") {
		c.t.Errorf("resource_metadata %q", meta)
	}
	if _, err := oauthex.GetProtectedResourceMetadata(ctx, c.instance+strings.TrimPrefix(meta, eventstest.PublicURL), eventstest.PublicURL+"/mcp", http.DefaultClient); err != nil {
		c.t.Errorf("the SDK's RFC 9728 check: %v", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.challenges = append(c.challenges, ch)
	c.statuses = append(c.statuses, resp.StatusCode)
	for _, s := range strings.Fields(ch.Params["scope"]) {
		if !slices.Contains(c.scopes, s) {
			c.scopes = append(c.scopes, s)
		}
	}
	c.token = c.st.Token(eventstest.UserID, c.scopes)
	return nil
}

// TestOfficialSDKStepsUp: the official MCP Go SDK, with an OAuth handler, meets the 401 challenge without
// an error code on its first request, gets a token for the advertised scopes minus what the user refuses
// (here: users.read), then meets the 403 insufficient_scope challenge on get_user, asks for exactly
// users.read, and its retried call succeeds.
func TestOfficialSDKStepsUp(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	c := &consentingClient{t: t, st: st, instance: url}
	// The user grants everything but users.read at first (a real consent screen may drop scopes).
	c.scopes = slices.DeleteFunc(slices.Clone(eventstest.AllScopes), func(s string) bool { return s == "project:users.read" })

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "sdk-stepup", Version: "1.0.0"}, nil)
	tr := &sdk.StreamableClientTransport{Endpoint: url + "/mcp", OAuthHandler: oneScopeDropped{c}, DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := client.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_user", Arguments: map[string]any{"project_id": eventstest.ProjectID, "user_id": "ghost"}})
	if err != nil {
		t.Fatalf("get_user after step-up: %v", err)
	}
	if !res.IsError || !strings.Contains(eventstest.ToolText(res), "Not found: user ghost") {
		t.Fatalf("get_user: %q", eventstest.ToolText(res))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.challenges) != 2 || c.statuses[0] != 401 || c.statuses[1] != 403 {
		t.Fatalf("challenges %v %+v", c.statuses, c.challenges)
	}
	if _, ok := c.challenges[0].Params["error"]; ok {
		t.Fatalf("the no-credentials challenge carries an error code: %+v", c.challenges[0])
	}
	if e, s := c.challenges[1].Params["error"], c.challenges[1].Params["scope"]; e != "insufficient_scope" || s != "project:users.read" {
		t.Fatalf("step-up challenge: %+v", c.challenges[1])
	}
	if !slices.Contains(c.scopes, "project:users.read") {
		t.Fatalf("scopes after step-up: %v", c.scopes)
	}
}

// oneScopeDropped wraps the client so that the first consent (after the 401) leaves out users.read, as a
// user unticking it would; later consents grant what the challenge asks for.
type oneScopeDropped struct{ c *consentingClient }

func (o oneScopeDropped) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return o.c.TokenSource(ctx)
}

func (o oneScopeDropped) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	first := resp.StatusCode == http.StatusUnauthorized
	if err := o.c.Authorize(ctx, req, resp); err != nil {
		return err
	}
	if first {
		o.c.mu.Lock()
		o.c.scopes = slices.DeleteFunc(o.c.scopes, func(s string) bool { return s == "project:users.read" })
		o.c.token = o.c.st.Token(eventstest.UserID, o.c.scopes)
		o.c.mu.Unlock()
	}
	return nil
}

// TestToolCallsAreCounted: every tools/call writes one mcp_events_tool_calls_total line with its outcome.
func TestToolCallsAreCounted(t *testing.T) {
	st := eventstest.NewStack(t)
	logs := make(chan string, 16)
	ts := httptest.NewServer(localruntime.New(handler.New(st.Server(handler.Options{})), localruntime.Options{
		LogDir: t.TempDir(), OnLog: func(_, l, _ string) { logs <- l },
	}))
	defer ts.Close()
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_user","arguments":{"project_id":"` + eventstest.ProjectID + `","user_id":"ghost"}}}`
	if status, _, m, raw := eventstest.Post(t, "POST", ts.URL, st.Token(eventstest.UserID, eventstest.AllScopes), body, nil); status != 200 || m["result"] == nil {
		t.Fatalf("%d %s", status, raw)
	}
	select {
	case l := <-logs:
		if !strings.Contains(l, `{"metric":"mcp_events_tool_calls_total","outcome":"not_found","tool":"get_user","inc":1}`) {
			t.Fatalf("logs: %s", l)
		}
	default:
		// The runtime hands an execution's logs over before it answers (localruntime's finishLogs): the
		// line is there by the time the call returns, or never.
		t.Fatal("no counter line")
	}
}
