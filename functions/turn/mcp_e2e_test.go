package handler_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	handler "appwrite-agent/functions/turn"
	"appwrite-agent/functions/turn/mcptools"
	"appwrite-agent/functions/turn/timeline/timelinetest"
	"appwrite-agent/shared/devkit/scriptedllm"

	mgmcp "github.com/mark3labs/mcp-go/mcp"
	mgserver "github.com/mark3labs/mcp-go/server"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// mcpServer is a loopback MCP server (built with the official Go SDK, or with mcp-go) behind a bearer
// check, with the OAuth documents a refresh needs: protected-resource metadata naming an authorization
// server on the same host, its metadata, and a token endpoint.
type mcpServer struct {
	t   testing.TB
	srv *httptest.Server

	mu            sync.Mutex
	validToken    string
	wantRefresh   string
	refreshFail   bool
	refreshes     int
	refreshForms  []string
	unauthorized  int
	revokeOnCall  bool
	methods       []string
	protocols     []string
	authHeaders   []string
	toolCallPOSTs int
	callsByTool   map[string]int
	resources     map[string]string
	// hold, when set, keeps every authorized MCP request waiting until it is closed or the client gives up.
	hold chan struct{}
	// listDelay is waited before answering tools/list (the latency of a benchmark's MCP server).
	listDelay time.Duration
	// refreshed, when set, is closed after the first successful refresh.
	refreshed chan struct{}
}

// newSDKServer serves appwrite_search_tools and appwrite_call_tool (a small Appwrite stand-in) with the
// official MCP Go SDK, stateless like the hosted Appwrite server (so it speaks 2026-07-28).
func newSDKServer(t testing.TB) *mcpServer { return newSDKServerWith(t, true) }

// newSDKServerWith builds the SDK server stateless or stateful (the SDK's default, which answers
// server/discover with the legacy versions only); versions restricts the versions it speaks.
func newSDKServerWith(t testing.TB, stateless bool, versions ...string) *mcpServer {
	m, s := newSDKPeer(t, versions...)
	m.start(sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return s }, &sdkmcp.StreamableHTTPOptions{Stateless: stateless}))
	return m
}

// newSplitSDKServer is one SDK server behind two of the SDK's handlers: server/discover is answered by the
// stateless one (which offers 2026-07-28), everything else by the stateful one (which refuses it). A
// deployment in the middle of a migration, or a proxy in front of several, looks like this to a client.
func newSplitSDKServer(t testing.TB) *mcpServer {
	m, s := newSDKPeer(t)
	get := func(*http.Request) *sdkmcp.Server { return s }
	stateless := sdkmcp.NewStreamableHTTPHandler(get, &sdkmcp.StreamableHTTPOptions{Stateless: true})
	stateful := sdkmcp.NewStreamableHTTPHandler(get, nil)
	m.start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "server/discover" {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	}))
	return m
}

// newSDKPeer is the recorder and the SDK server of newSDKServerWith, not yet served.
func newSDKPeer(t testing.TB, versions ...string) (*mcpServer, *sdkmcp.Server) {
	m := &mcpServer{t: t, validToken: "good-token", callsByTool: map[string]int{}, resources: map[string]string{}}
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "appwrite-test", Version: "1.0.0"}, &sdkmcp.ServerOptions{SupportedProtocolVersions: versions})
	s.AddTool(&sdkmcp.Tool{Name: "appwrite_search_tools", Description: "Search the Appwrite tool catalog.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}}},
		func(_ context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			return sdkText("databases_create, databases_get, tablesdb_list_rows", false), nil
		})
	s.AddTool(&sdkmcp.Tool{Name: "appwrite_call_tool", Description: "Call an Appwrite tool.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"tool_name": map[string]any{"type": "string"}, "arguments": map[string]any{"type": "object"},
			"project_id": map[string]any{"type": "string"}}}},
		func(_ context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			var p struct {
				ToolName  string         `json:"tool_name"`
				Arguments map[string]any `json:"arguments"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &p)
			return m.appwrite(p.ToolName, p.Arguments), nil
		})
	return m, s
}

// newMCPGoServer serves current_time (which collides with the built-in tool) and "lookup.v2" (not a
// valid function name) with mcp-go's server.
func newMCPGoServer(t *testing.T) *mcpServer {
	m := &mcpServer{t: t, validToken: "good-token", callsByTool: map[string]int{}, resources: map[string]string{}}
	s := mgserver.NewMCPServer("extra-test", "1.0.0", mgserver.WithToolCapabilities(false))
	s.AddTool(mgmcp.NewTool("current_time", mgmcp.WithDescription("The server's clock.")),
		func(context.Context, mgmcp.CallToolRequest) (*mgmcp.CallToolResult, error) {
			return mgmcp.NewToolResultText("server time 12:00"), nil
		})
	s.AddTool(mgmcp.NewTool("lookup.v2", mgmcp.WithDescription("Look a key up."), mgmcp.WithString("key", mgmcp.Required())),
		func(_ context.Context, req mgmcp.CallToolRequest) (*mgmcp.CallToolResult, error) {
			key := req.GetString("key", "")
			if key == "missing" {
				return mgmcp.NewToolResultError("no such key: missing"), nil
			}
			return mgmcp.NewToolResultText("value of " + key), nil
		})
	m.start(mgserver.NewStreamableHTTPServer(s))
	return m
}

func sdkText(text string, isErr bool) *sdkmcp.CallToolResult {
	return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: text}}, IsError: isErr}
}

// appwrite answers appwrite_call_tool like the hosted server: creates store a resource (a second create
// of the same id is a 409), gets read it, anything else echoes its arguments.
func (m *mcpServer) appwrite(tool string, args map[string]any) *sdkmcp.CallToolResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.callsByTool[tool]++
	id := ""
	for _, k := range []string{"database_id", "table_id", "user_id"} {
		if s, _ := args[k].(string); s != "" && id == "" {
			id = s
		}
	}
	switch {
	case strings.Contains(tool, "_create"):
		if _, ok := m.resources[id]; ok {
			return sdkText("Request failed: Database with the requested ID already exists. (code=409, type=database_already_exists)", true)
		}
		name, _ := args["name"].(string)
		m.resources[id] = fmt.Sprintf(`{"$id":%q,"name":%q}`, id, name)
		return sdkText(m.resources[id], false)
	case strings.Contains(tool, "_get"):
		if r, ok := m.resources[id]; ok {
			return sdkText(r, false)
		}
		return sdkText("Request failed: not found (code=404)", true)
	default:
		b, _ := json.Marshal(args)
		return sdkText(tool+" "+string(b), false)
	}
}

func (m *mcpServer) start(mcpHandler http.Handler) {
	mux := http.NewServeMux()
	prm := func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"resource": m.url(), "authorization_servers": []string{m.srv.URL + "/as"},
			"bearer_methods_supported": []string{"header"}})
	}
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", prm)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", prm)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server/as", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"issuer": m.srv.URL + "/as", "token_endpoint": m.srv.URL + "/as/token"})
	})
	mux.HandleFunc("POST /as/token", m.token)
	mux.Handle("/mcp", m.guard(mcpHandler))
	m.srv = httptest.NewServer(mux)
	m.t.Cleanup(m.srv.Close)
}

func (m *mcpServer) url() string { return m.srv.URL + "/mcp" }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// token is the refresh_token grant: it wants the expected refresh token, client id and resource.
func (m *mcpServer) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refreshes++
	m.refreshForms = append(m.refreshForms, r.PostForm.Encode())
	f := r.PostForm
	if m.refreshFail || f.Get("grant_type") != "refresh_token" || f.Get("refresh_token") != m.wantRefresh ||
		f.Get("client_id") != "client-1" || f.Get("resource") != m.url() {
		writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "refresh token revoked"})
		return
	}
	m.validToken = "refreshed-token"
	if m.refreshed != nil {
		close(m.refreshed)
		m.refreshed = nil
	}
	writeJSON(w, 200, map[string]any{"access_token": "refreshed-token", "token_type": "bearer", "expires_in": 3600,
		"refresh_token": "refresh-2", "scope": "projects.read"})
}

// guard checks the bearer token of every MCP request and records what came in.
func (m *mcpServer) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		m.mu.Lock()
		if r.Method == http.MethodDelete {
			m.methods = append(m.methods, "DELETE")
		}
		if r.Method == http.MethodPost {
			m.methods = append(m.methods, msg.Method)
			if msg.Method == "tools/call" {
				m.toolCallPOSTs++
			}
		}
		m.protocols = append(m.protocols, r.Header.Get("Mcp-Protocol-Version"))
		m.authHeaders = append(m.authHeaders, r.Header.Get("Authorization"))
		ok := r.Header.Get("Authorization") == "Bearer "+m.validToken && !(m.revokeOnCall && msg.Method == "tools/call")
		if !ok {
			m.unauthorized++
		}
		hold, delay := m.hold, time.Duration(0)
		if msg.Method == "tools/list" {
			delay = m.listDelay
		}
		m.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="Authentication required", resource_metadata="`+
				m.srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			writeJSON(w, 401, map[string]string{"error": "invalid_token", "error_description": "Authentication required"})
			return
		}
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// serverStats is what a server saw.
type serverStats struct {
	refreshes, unauthorized, toolCallPOSTs        int
	methods, protocols, authHeaders, refreshForms []string
	callsByTool                                   map[string]int
}

func (m *mcpServer) snapshot() serverStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := serverStats{refreshes: m.refreshes, unauthorized: m.unauthorized, toolCallPOSTs: m.toolCallPOSTs,
		methods: append([]string(nil), m.methods...), protocols: append([]string(nil), m.protocols...),
		authHeaders: append([]string(nil), m.authHeaders...), refreshForms: append([]string(nil), m.refreshForms...),
		callsByTool: map[string]int{}}
	for k, v := range m.callsByTool {
		c.callsByTool[k] = v
	}
	return c
}

// mcpEnv is env with the SSRF allowlist opened to loopback, as tests and local development do.
func mcpEnv(t *testing.T) (*scriptedllm.Server, *httptest.Server) {
	model, srv := env(t)
	t.Setenv("SAFEHTTP_ALLOW", "127.0.0.0/8")
	t.Setenv("SAFEHTTP_ALLOW_HTTP", "true")
	return model, srv
}

func conn(id, url, access string, extra map[string]any) map[string]any {
	c := map[string]any{"id": id, "url": url, "tokens": map[string]any{"access_token": access, "token_type": "Bearer"}}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

func call(name, args string) scriptedllm.ToolCall {
	return scriptedllm.ToolCall{Name: name, Arguments: args}
}

// script makes the model route to platform, make the given tool calls one per step, then answer.
func script(model *scriptedllm.Server, calls ...scriptedllm.ToolCall) {
	model.Reset()
	model.SetHandler(func(r scriptedllm.Request, i int) scriptedllm.Reply {
		switch {
		case i == 0:
			return route("platform", "Project work", "")
		case i-1 < len(calls):
			return scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{calls[i-1]}}
		default:
			return scriptedllm.Reply{Content: "All done."}
		}
	})
}

func toolNames(t *testing.T, r scriptedllm.Request) []string {
	t.Helper()
	var out []string
	tools, _ := r.JSON()["tools"].([]any)
	for _, tl := range tools {
		fn, _ := tl.(map[string]any)["function"].(map[string]any)
		name, _ := fn["name"].(string)
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func statuses(evs []timelinetest.Decoded) []string {
	var out []string
	for _, e := range find(evs, "status") {
		out = append(out, e.Str("message"))
	}
	return out
}

func credentials(t *testing.T, evs []timelinetest.Decoded) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	cs := find(evs, "mcp_credentials")
	if len(cs) == 0 {
		return out
	}
	for _, c := range cs[0]["credentials"].([]any) {
		m := c.(map[string]any)
		out[m["id"].(string)] = m
	}
	return out
}

// TestMCPToolsListedAndCalled: an official-SDK server (protocol 2026-07-28) and an mcp-go server load in
// one turn; their tools reach the model under safe, unique names, calls and isError results flow into
// tool_start/tool_end, and the stored tokens are echoed in mcp_credentials.
func TestMCPToolsListedAndCalled(t *testing.T) {
	model, srv := mcpEnv(t)
	aw, extra := newSDKServer(t), newMCPGoServer(t)
	script(model,
		call("appwrite_search_tools", `{"query": "databases"}`),
		call("extra_current_time", `{}`),
		call("extra_lookup_v2", `{"key":"a"}`),
		call("extra_lookup_v2", `{"key":"missing"}`),
		call("current_time", `{}`))
	evs := turn(t, srv, map[string]any{"message": "list my databases", "mcp_connections": []any{
		conn("appwrite", aw.url(), "good-token", map[string]any{"name": "Appwrite", "client_info": map[string]any{"client_id": "client-1"}}),
		conn("Extra", extra.url(), "good-token", nil),
	}})
	// The connections load while the router decides: their credentials follow the routing status.
	if got := types(evs); !strings.HasPrefix(got, "status,mcp_credentials,route,subagent_start,tool_start,tool_end") {
		t.Fatalf("types %s", got)
	}
	creds := credentials(t, evs)
	a := creds["appwrite"]
	if a["url"] != aw.url() || a["name"] != "Appwrite" || a["client_info"].(map[string]any)["client_id"] != "client-1" {
		t.Fatalf("appwrite credential %v", a)
	}
	if tok, _ := json.Marshal(a["tokens"]); string(tok) != `{"access_token":"good-token","expires_in":null,"refresh_token":null,"scope":null,"token_type":"Bearer"}` {
		t.Fatalf("tokens %s", tok)
	}
	if e := creds["extra"]; e == nil || e["name"] != "extra" || e["client_info"] != nil {
		t.Fatalf("extra credential %v (ids are lower-cased, name defaults to the id)", e)
	}
	// The MCP tools reach the model next to the built-in ones.
	got := strings.Join(toolNames(t, model.Requests()[1]), ",")
	for _, w := range []string{"appwrite_call_tool", "appwrite_search_tools", "current_time", "extra_current_time", "extra_lookup_v2"} {
		if !strings.Contains(","+got+",", ","+w+",") {
			t.Fatalf("tools %s lack %s", got, w)
		}
	}
	ends := find(evs, "tool_end")
	outs := []string{"databases_create, databases_get, tablesdb_list_rows", "server time 12:00", "value of a", "Error: no such key: missing"}
	for i, w := range outs {
		if ends[i].Str("output") != w {
			t.Fatalf("tool_end %d: %v", i, ends[i])
		}
	}
	if ends[3]["failed"] != true || ends[0]["failed"] != nil {
		t.Fatalf("failed flags %v %v", ends[3], ends[0])
	}
	if ends[4].Str("tool") != "current_time" || strings.Contains(ends[4].Str("output"), "server time") {
		t.Fatalf("the built-in current_time was shadowed: %v", ends[4])
	}
	if st := find(evs, "tool_start"); st[0].Str("input") != `{"query":"databases"}` {
		t.Fatalf("tool_start %v", st[0])
	}
	for _, s := range []*mcpServer{aw, extra} {
		snap := s.snapshot()
		if snap.methods[0] != "server/discover" || snap.protocols[len(snap.protocols)-1] != "2026-07-28" {
			t.Fatalf("methods %v protocols %v", snap.methods, snap.protocols)
		}
		for _, h := range snap.authHeaders {
			if h != "Bearer good-token" {
				t.Fatalf("authorization %q", h)
			}
		}
	}
}

// TestMCPLegacyServer: servers without 2026-07-28 are spoken to with the initialize handshake: one that
// restricts its versions, the SDK's stateful handler (server/discover offers the legacy versions only),
// and a server whose server/discover offers 2026-07-28 while the rest of it refuses the new protocol (the
// connection is made again, legacy only, before any tool call).
func TestMCPLegacyServer(t *testing.T) {
	model, srv := mcpEnv(t)
	for name, legacy := range map[string]*mcpServer{"restricted": newSDKServerWith(t, true, "2025-11-25"), "stateful": newSDKServerWith(t, false),
		"split": newSplitSDKServer(t)} {
		script(model, call("appwrite_search_tools", `{}`))
		evs := turn(t, srv, map[string]any{"message": "m", "mcp_connections": []any{conn("old", legacy.url(), "good-token", nil)}})
		if ends := find(evs, "tool_end"); len(ends) != 1 || ends[0].Str("output") != "databases_create, databases_get, tablesdb_list_rows" {
			t.Fatalf("%s: tool_end %v %v", name, ends, statuses(evs))
		}
		snap := legacy.snapshot()
		joined := strings.Join(snap.methods, ",")
		if !strings.Contains(joined, "initialize,notifications/initialized,tools/list,tools/call") || snap.protocols[len(snap.protocols)-1] != "2025-11-25" {
			t.Fatalf("%s: methods %v protocols %v", name, snap.methods, snap.protocols)
		}
		// The split server's tools/list at 2026-07-28 was refused, then the connection was made again.
		if name == "split" && !strings.HasPrefix(joined, "server/discover,tools/list,initialize,") {
			t.Fatalf("%s: methods %v protocols %v", name, snap.methods, snap.protocols)
		}
	}
}

// TestMCPConnectionsThatFail: invalid, down, token-less, unauthorised, duplicate and SSRF-refused
// connections are skipped with a status notice each; the good one still loads and the turn completes.
func TestMCPConnectionsThatFail(t *testing.T) {
	model, srv := mcpEnv(t)
	good, wantsAuth := newSDKServer(t), newSDKServer(t)
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL + "/mcp"
	down.Close()
	script(model, call("appwrite_search_tools", `{}`))
	evs := turn(t, srv, map[string]any{"message": "m", "mcp_connections": []any{
		conn("bad id!", good.url(), "good-token", nil),
		conn("noscheme", "ftp://example.com/", "good-token", nil),
		conn("down", downURL, "good-token", nil),
		map[string]any{"id": "notoken", "url": good.url()},
		conn("authy", wantsAuth.url(), "stale-token", nil),
		conn("good", good.url(), "good-token", nil),
		conn("GOOD", good.url(), "good-token", nil),
	}})
	got := statuses(evs)
	want := []string{
		"Routing request…", // the connections load while the router decides: their notices follow
		"MCP connection 'bad id!' skipped: " + mcptools.MsgBadID,
		"MCP connection 'noscheme' skipped: " + mcptools.MsgBadURL,
		"MCP connection 'down' skipped: could not connect to " + downURL + ": ",
		"MCP connection 'notoken' skipped: no access token; connect it again",
		"MCP connection 'authy' skipped: the server refused the access token (HTTP 401) and there is no refresh token; connect it again",
		"MCP connection 'good' skipped: another connection has the same id",
	}
	if len(got) != len(want) {
		t.Fatalf("statuses %q", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("status %d: %q, want %q", i, got[i], want[i])
		}
	}
	if creds := credentials(t, evs); len(creds) != 1 || creds["good"] == nil {
		t.Fatalf("credentials %v", creds)
	}
	if ends := find(evs, "tool_end"); len(ends) != 1 || ends[0]["failed"] != nil {
		t.Fatalf("tool_end %v", ends)
	}
	if find(evs, "done") == nil {
		t.Fatal("no done")
	}

	// Without the loopback allowlist the SSRF-safe client refuses the same server.
	t.Setenv("SAFEHTTP_ALLOW", "")
	script(model)
	evs = turn(t, srv, map[string]any{"message": "m", "mcp_connections": []any{conn("good", good.url(), "good-token", nil)}})
	if s := statuses(evs); len(s) != 2 || !strings.Contains(s[1], "destination refused by the SSRF policy") {
		t.Fatalf("statuses %q", s)
	}
}

func jwtWithExp(exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(fmt.Sprintf(`{"sub":"u","exp":%d}`, exp.Unix()))) + ".sig"
}

// TestMCPExpiredTokenRefreshedOnce: an expired access token is refreshed before connecting (the server
// never sees it), once, and the new tokens come back in mcp_credentials.
func TestMCPExpiredTokenRefreshedOnce(t *testing.T) {
	model, srv := mcpEnv(t)
	aw := newSDKServer(t)
	aw.validToken, aw.wantRefresh = "refreshed-token", "refresh-1"
	script(model, call("appwrite_search_tools", `{}`))
	expired := jwtWithExp(time.Now().Add(-time.Minute))
	c := conn("appwrite", aw.url(), expired, map[string]any{"client_info": map[string]any{"client_id": "client-1", "client_name": "Console"}})
	c["tokens"].(map[string]any)["refresh_token"] = "refresh-1"
	before := time.Now().Unix()
	evs := turn(t, srv, map[string]any{"message": "m", "mcp_connections": []any{c}})
	snap := aw.snapshot()
	if snap.refreshes != 1 || snap.unauthorized != 0 {
		t.Fatalf("refreshes %d, 401s %d", snap.refreshes, snap.unauthorized)
	}
	if !strings.Contains(snap.refreshForms[0], "grant_type=refresh_token") || !strings.Contains(snap.refreshForms[0], "client_id=client-1") {
		t.Fatalf("refresh form %s", snap.refreshForms[0])
	}
	cred := credentials(t, evs)["appwrite"]
	tok := cred["tokens"].(map[string]any)
	if tok["access_token"] != "refreshed-token" || tok["refresh_token"] != "refresh-2" || tok["expires_in"] != 3600.0 ||
		tok["scope"] != "projects.read" || tok["token_type"] != "Bearer" {
		t.Fatalf("tokens %v", tok)
	}
	if at, _ := tok["expires_at"].(float64); int64(at) < before+3600 || int64(at) > time.Now().Unix()+3600 {
		t.Fatalf("expires_at %v", tok["expires_at"])
	}
	if cred["client_info"].(map[string]any)["client_name"] != "Console" {
		t.Fatalf("client_info %v", cred["client_info"])
	}
	if ends := find(evs, "tool_end"); len(ends) != 1 || ends[0]["failed"] != nil {
		t.Fatalf("tool_end %v", ends)
	}
}

// TestFinishDoesNotWaitForMCP: the connections load while the router decides, and a FINISH answer does not
// wait for them. The server here keeps every MCP request waiting (it never answers unless the client gives
// up), yet the turn answers and ends; the load is cancelled, its notices dropped, and the tokens it
// refreshed before it was cut still reach the client, in mcp_credentials after done.
func TestFinishDoesNotWaitForMCP(t *testing.T) {
	model, srv := mcpEnv(t)
	aw := newSDKServer(t)
	aw.validToken, aw.wantRefresh = "refreshed-token", "refresh-1"
	aw.hold = make(chan struct{})
	t.Cleanup(func() { close(aw.hold) })
	// The router answers once the load has refreshed the token (so that there is something to echo); the
	// load then waits on the held server.
	refreshed := make(chan struct{})
	aw.refreshed = refreshed
	model.SetHandler(func(scriptedllm.Request, int) scriptedllm.Reply {
		<-refreshed
		return route("FINISH", "greeting", "Hello!")
	})
	expired := jwtWithExp(time.Now().Add(-time.Minute))
	c := conn("appwrite", aw.url(), expired, map[string]any{"client_info": map[string]any{"client_id": "client-1"}})
	c["tokens"].(map[string]any)["refresh_token"] = "refresh-1"
	evs := turn(t, srv, map[string]any{"message": "hi", "history": history, "mcp_connections": []any{c}})
	if got := types(evs); got != "status,route,answer_start,token,done,mcp_credentials,complete" {
		t.Fatalf("types %s", got)
	}
	if tok := credentials(t, evs)["appwrite"]["tokens"].(map[string]any); tok["refresh_token"] != "refresh-2" {
		t.Fatalf("tokens %v", tok)
	}
	if s := statuses(evs); len(s) != 1 {
		t.Fatalf("statuses %q", s)
	}
	if snap := aw.snapshot(); snap.refreshes != 1 {
		t.Fatalf("refreshes %d", snap.refreshes)
	}

}

// TestMCPUnauthorisedRefreshedOnce: a token the server refuses (401 before any tool call) is refreshed
// once through the challenge's metadata and the connection retried; a tool call that gets a 401 later is
// reported and never sent again.
func TestMCPUnauthorisedRefreshedOnce(t *testing.T) {
	model, srv := mcpEnv(t)
	aw := newSDKServer(t)
	aw.wantRefresh = "refresh-1"
	script(model, call("appwrite_search_tools", `{}`), call("appwrite_call_tool", `{"tool_name":"databases_create","arguments":{"database_id":"shop"}}`))
	c := conn("appwrite", aw.url(), "revoked-token", map[string]any{"client_info": map[string]any{"client_id": "client-1"}})
	c["tokens"].(map[string]any)["refresh_token"] = "refresh-1"
	aw.mu.Lock()
	aw.validToken = "something-else"
	aw.mu.Unlock()
	evs := turn(t, srv, map[string]any{"message": "m", "mcp_connections": []any{c}})
	snap := aw.snapshot()
	if snap.refreshes != 1 || snap.authHeaders[0] != "Bearer revoked-token" || snap.authHeaders[len(snap.authHeaders)-1] != "Bearer refreshed-token" {
		t.Fatalf("refreshes %d, auth %v", snap.refreshes, snap.authHeaders)
	}
	if tok := credentials(t, evs)["appwrite"]["tokens"].(map[string]any); tok["access_token"] != "refreshed-token" {
		t.Fatalf("tokens %v", tok)
	}
	if ends := find(evs, "tool_end"); len(ends) != 2 || ends[0]["failed"] != nil || ends[1]["failed"] != nil {
		t.Fatalf("tool_end %v", ends)
	}

	// Revoked between tools/list and tools/call: one POST, an error, no refresh, no second send.
	aw2 := newSDKServer(t)
	aw2.wantRefresh = "refresh-1"
	aw2.revokeOnCall = true
	script(model, call("appwrite_call_tool", `{"tool_name":"databases_create","arguments":{"database_id":"shop"}}`))
	c = conn("appwrite", aw2.url(), "good-token", map[string]any{"client_info": map[string]any{"client_id": "client-1"}})
	c["tokens"].(map[string]any)["refresh_token"] = "refresh-1"
	evs = turn(t, srv, map[string]any{"message": "m", "mcp_connections": []any{c}})
	snap = aw2.snapshot()
	ends := find(evs, "tool_end")
	if len(ends) != 1 || ends[0].Str("output") != "Error: MCP server 'appwrite' refused the access token (HTTP 401); the call was not retried" || ends[0]["failed"] != true {
		t.Fatalf("tool_end %v", ends)
	}
	if snap.toolCallPOSTs != 1 || snap.refreshes != 0 || snap.callsByTool["databases_create"] != 0 {
		t.Fatalf("tools/call POSTs %d, refreshes %d, creates %d", snap.toolCallPOSTs, snap.refreshes, snap.callsByTool["databases_create"])
	}
}

// TestMCPRefreshFails: a refused refresh skips the connection with the reason; nothing is echoed.
func TestMCPRefreshFails(t *testing.T) {
	model, srv := mcpEnv(t)
	aw := newSDKServer(t)
	aw.wantRefresh, aw.refreshFail = "refresh-1", true
	script(model)
	expired := jwtWithExp(time.Now().Add(-time.Hour))
	c := conn("appwrite", aw.url(), expired, map[string]any{"client_info": map[string]any{"client_id": "client-1"}})
	c["tokens"].(map[string]any)["refresh_token"] = "refresh-1"
	evs := turn(t, srv, map[string]any{"message": "m", "mcp_connections": []any{c}})
	want := "MCP connection 'appwrite' skipped: the access token expired and could not be refreshed: the authorization server refused the refresh (HTTP 400, invalid_grant: refresh token revoked)"
	if s := statuses(evs); len(s) != 2 || s[1] != want {
		t.Fatalf("statuses %q", s)
	}
	if len(find(evs, "mcp_credentials")) != 0 || aw.snapshot().refreshes != 1 || aw.snapshot().unauthorized != 0 {
		t.Fatalf("credentials %v, snapshot %+v", find(evs, "mcp_credentials"), aw.snapshot().refreshes)
	}
	// A 401 whose refresh fails, and a connection without client_info.
	aw.mu.Lock()
	aw.validToken = "other"
	aw.mu.Unlock()
	script(model)
	c = conn("appwrite", aw.url(), "t", nil)
	c["tokens"].(map[string]any)["refresh_token"] = "refresh-1"
	evs = turn(t, srv, map[string]any{"message": "m", "mcp_connections": []any{c}})
	want = "MCP connection 'appwrite' skipped: the server refused the access token (HTTP 401) and the refresh failed: client_info has no client_id to refresh with"
	if s := statuses(evs); len(s) != 2 || s[1] != want {
		t.Fatalf("statuses %q", s)
	}
}

// TestMCPWriteGuard: through a real server, a create the model retries runs once, a 409 is recovered
// through the get tool, unique() is expanded with the same id for the same slot, queries are normalised
// and an attachment goes inline.
func TestMCPWriteGuard(t *testing.T) {
	model, srv := mcpEnv(t)
	aw := newSDKServer(t)
	aw.resources["legacy"] = `{"$id":"legacy","name":"Old"}`
	create := `{"tool_name":"databases_create","project_id":"p1","arguments":{"database_id":"shop","name":"Shop"}}`
	script(model,
		call("appwrite_call_tool", create),
		call("appwrite_call_tool", create),
		call("appwrite_call_tool", `{"tool_name":"databases_create","project_id":"p1","arguments":{"database_id":"legacy","name":"Old"}}`),
		call("appwrite_call_tool", `{"tool_name":"tablesdb_list_rows","arguments":{"queries":["limit(5)","status = 'open'"],"file":"notes.txt"}}`))
	evs := turn(t, srv, map[string]any{"message": "m",
		"attachments":     []any{map[string]any{"name": "notes.txt", "content_base64": base64.StdEncoding.EncodeToString([]byte("hi"))}},
		"mcp_connections": []any{conn("appwrite", aw.url(), "good-token", nil)}})
	ends := find(evs, "tool_end")
	if len(ends) != 4 {
		t.Fatalf("types %s", types(evs))
	}
	if ends[0].Str("output") != `{"$id":"shop","name":"Shop"}` {
		t.Fatalf("create %v", ends[0])
	}
	if ends[1].Str("output") != "Blocked duplicate databases_create for the same id in this turn.\nPrevious result:\n{\"$id\":\"shop\",\"name\":\"Shop\"}\n\n"+
		"This create did NOT run again. Use the previous result. Do not claim a new resource was created." {
		t.Fatalf("retry %v", ends[1])
	}
	if ends[2].Str("output") != "Create completed successfully. Resource is ready (id=legacy).\n\n{\"$id\":\"legacy\",\"name\":\"Old\"}\n\n"+
		"Report this as a successful create to the user. Do not create again." || ends[2]["failed"] != nil {
		t.Fatalf("409 %v", ends[2])
	}
	if ends[3].Str("output") != `tablesdb_list_rows {"file":{"content":"aGk=","encoding":"base64","filename":"notes.txt","mime_type":"text/plain"},"queries":["{\"method\":\"limit\",\"values\":[5]}","{\"method\":\"equal\",\"attribute\":\"status\",\"values\":[\"open\"]}"]}` {
		t.Fatalf("normalised %v", ends[3])
	}
	snap := aw.snapshot()
	if snap.callsByTool["databases_create"] != 2 || snap.callsByTool["databases_get"] != 1 {
		t.Fatalf("calls %v", snap.callsByTool)
	}
}

// TestMCPNoGoroutineOutlivesTheTurn: sessions (a legacy one with a session id too) and connections are
// closed when the turn ends.
func TestMCPNoGoroutineOutlivesTheTurn(t *testing.T) {
	model, _ := mcpEnv(t)
	modern, legacy := newSDKServer(t), newSDKServerWith(t, false)
	script(model, call("appwrite_search_tools", `{}`), call("old_appwrite_search_tools", `{}`))
	body, _ := json.Marshal(map[string]any{"message": "m", "history": []any{map[string]any{"role": "user", "content": "h"}},
		"mcp_connections": []any{conn("appwrite", modern.url(), "good-token", nil), conn("old", legacy.url(), "good-token", nil)}})
	h := handler.New(handler.LoadConfig())
	// Warm up the servers' own goroutines, then measure one turn.
	for round := 0; round < 2; round++ {
		script(model, call("appwrite_search_tools", `{}`), call("old_appwrite_search_tools", `{}`))
		run := func() {
			rt := openruntimes.NewContext(openruntimes.Logger{})
			rt.Req = openruntimes.ContextRequest{Method: "POST", Path: "/", Headers: map[string]string{"x-session-api-key": testKey}}
			rt.Req.SetBodyBinary(body)
			res := h(rt)
			if res.StatusCode != 200 || strings.Count(string(res.Body), `"type":"tool_end"`) != 2 || strings.Contains(string(res.Body), `"failed":true`) {
				t.Fatalf("%d %s", res.StatusCode, res.Body)
			}
		}
		if round == 0 {
			run()
			continue
		}
		noGoroutineOutlives(t, "MCP turn", run)
	}
	if snap := legacy.snapshot(); !strings.Contains(strings.Join(snap.methods, ","), "initialize") || snap.methods[len(snap.methods)-1] != "DELETE" {
		t.Fatalf("legacy methods %v", snap.methods)
	}
}

// TestMCPWriteGuardConcurrentCalls: the calls of one answer run at once, yet two identical creates in it
// reach the server once (the guard runs a connection's appwrite_call_tool calls one at a time and blocks
// the duplicate), while creates of two ids both run.
func TestMCPWriteGuardConcurrentCalls(t *testing.T) {
	model, srv := mcpEnv(t)
	aw := newSDKServer(t)
	create := func(call, id string) scriptedllm.ToolCall {
		return scriptedllm.ToolCall{ID: call, Name: "appwrite_call_tool",
			Arguments: `{"tool_name":"databases_create","project_id":"p1","arguments":{"database_id":"` + id + `","name":"Shop"}}`}
	}
	model.Reset()
	model.SetHandler(func(r scriptedllm.Request, i int) scriptedllm.Reply {
		switch i {
		case 0:
			return route("platform", "Project work", "")
		case 1:
			return scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{create("c1", "shop"), create("c2", "shop"), create("c3", "depot")}}
		default:
			return scriptedllm.Reply{Content: "All done."}
		}
	})
	evs := turn(t, srv, map[string]any{"message": "m", "mcp_connections": []any{conn("appwrite", aw.url(), "good-token", nil)}})
	_, ends := inCallOrder(t, evs)
	if len(ends) != 3 {
		t.Fatalf("types %s", types(evs))
	}
	var created, blocked int
	for _, e := range ends[:2] {
		switch out := e.Str("output"); {
		case out == `{"$id":"shop","name":"Shop"}`:
			created++
		case strings.HasPrefix(out, "Blocked duplicate databases_create for the same id in this turn."):
			blocked++
		default:
			t.Fatalf("tool_end %v", e)
		}
	}
	if created != 1 || blocked != 1 || ends[2].Str("output") != `{"$id":"depot","name":"Shop"}` {
		t.Fatalf("tool_end %v", ends)
	}
	if snap := aw.snapshot(); snap.callsByTool["databases_create"] != 2 {
		t.Fatalf("calls %v", snap.callsByTool)
	}
}
