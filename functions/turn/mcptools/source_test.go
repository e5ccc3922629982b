package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/turnrequest"

	"github.com/mark3labs/mcp-go/mcp"
	mgserver "github.com/mark3labs/mcp-go/server"
)

// gatedServer is a peer serving ping whose every request waits until gate is closed (or the client gives
// up); arrived is called once, when its first request comes in.
func gatedServer(t *testing.T, gate <-chan struct{}, arrived func()) *httptest.Server {
	var once sync.Once
	return newPeer(t, func(r *http.Request) bool {
		once.Do(arrived)
		select {
		case <-gate:
			return true
		case <-r.Context().Done():
			return false
		}
	}, ping).srv
}

func loopbackSource() *Source {
	return &Source{HTTP: safehttp.Options{AllowHTTP: true, AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, Budget: 10 * time.Second}
}

func tok() json.RawMessage { return json.RawMessage(`{"access_token":"t"}`) }

// Connections load in parallel, and one that hangs is skipped after ConnectTimeout without holding the
// others up.
func TestLoadIsParallelAndBounded(t *testing.T) {
	// a and b answer only once all three servers have their first request: loaded one after the other,
	// the first would wait for the others, run out of ConnectTimeout and be skipped. hung never answers.
	var pending sync.WaitGroup
	pending.Add(3)
	open, never := make(chan struct{}), make(chan struct{})
	go func() { pending.Wait(); close(open) }()
	a, b := gatedServer(t, open, pending.Done), gatedServer(t, open, pending.Done)
	hung := gatedServer(t, never, pending.Done)
	src := loopbackSource()
	src.ConnectTimeout = 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	out := src.Load(ctx, &request.Turn{MCPConnections: []turnrequest.MCPConnection{
		{ID: "aaa", URL: a.URL, Tokens: tok()}, {ID: "bbb", URL: b.URL, Tokens: tok()}, {ID: "hung", URL: hung.URL, Tokens: tok()},
	}}, map[string]bool{})
	defer out.Close()
	if took := time.Since(start); took < src.ConnectTimeout {
		t.Fatalf("took %s: the hung connection was not waited for", took)
	}
	if len(out.Tools) != 2 || out.Tools[0].Name() != "ping" || out.Tools[1].Name() != "bbb_ping" {
		t.Fatalf("tools %v, notices %q", out.Tools, out.Notices)
	}
	if len(out.Notices) != 1 || out.Notices[0] != "MCP connection 'hung' skipped: the server did not answer within 2s" {
		t.Fatalf("notices %q", out.Notices)
	}
	res, err := out.Tools[1].Run(ctx, json.RawMessage(`{}`))
	if err != nil || res != "pong" {
		t.Fatalf("call %q %v", res, err)
	}
	// The turn's deadline bounds everything too: with a minute of ConnectTimeout, a 300 ms turn still ends.
	src.ConnectTimeout = time.Minute
	short, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	start = time.Now()
	out2 := src.Load(short, &request.Turn{MCPConnections: []turnrequest.MCPConnection{{ID: "hung", URL: hung.URL, Tokens: tok()}}}, nil)
	out2.Close()
	// A safety net only, far below the minute.
	if took := time.Since(start); took > 20*time.Second || len(out2.Notices) != 1 || out2.Notices[0] != "MCP connection 'hung' skipped: the turn's time ran out before the server answered" {
		t.Fatalf("took %s, notices %q", took, out2.Notices)
	}
}

// A load the turn cancels (its answer needed no tools) is not a server's fault: the connection is
// reported as not needed, and logged as information rather than as an error.
func TestCancelledLoadIsNotAnError(t *testing.T) {
	arrived, never := make(chan struct{}), make(chan struct{})
	hung := gatedServer(t, never, func() { close(arrived) })
	var errs, infos []string
	var mu sync.Mutex
	src := loopbackSource()
	src.ConnectTimeout = time.Minute
	src.Log = func(s string) { mu.Lock(); errs = append(errs, s); mu.Unlock() }
	src.Info = func(s string) { mu.Lock(); infos = append(infos, s); mu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }() // the turn ends while the server holds the request
	out := src.Load(ctx, &request.Turn{MCPConnections: []turnrequest.MCPConnection{{ID: "hung", URL: hung.URL, Tokens: tok()}}}, nil)
	out.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(out.Notices) != 1 || out.Notices[0] != "MCP connection 'hung' skipped: the turn no longer needed its tools" {
		t.Fatalf("notices %q", out.Notices)
	}
	if len(errs) != 0 || len(infos) != 1 || infos[0] != `mcp: connection "hung" not loaded: the turn no longer needed its tools` {
		t.Fatalf("error log %q, info log %q", errs, infos)
	}
}

func TestMisconfiguredPolicySkipsEverything(t *testing.T) {
	src := &Source{HTTPErr: errString("SAFEHTTP_ALLOW: bad")}
	out := src.Load(context.Background(), &request.Turn{MCPConnections: []turnrequest.MCPConnection{{ID: "appwrite", Tokens: tok()}}}, nil)
	out.Close()
	if len(out.Notices) != 1 || !strings.Contains(out.Notices[0], "the SSRF policy is misconfigured: SAFEHTTP_ALLOW: bad") || len(out.Credentials) != 0 {
		t.Fatalf("%+v", out)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// peer is an mcp-go server (an implementation independent of the client) with the given tools, on loopback;
// every request's Mcp-Method and Mcp-Protocol-Version headers are recorded.
type peer struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []string // "<method> <protocol>"
}

// newPeer starts a peer. wait, when set, is called with each request before the server sees it (its body
// already read, which lets the server notice the client going away); the request is answered only when
// wait returns true.
func newPeer(t *testing.T, wait func(*http.Request) bool, tools ...mgserver.ServerTool) *peer {
	s := mgserver.NewMCPServer("peer", "1.0.0", mgserver.WithToolCapabilities(false))
	s.AddTools(tools...)
	h := mgserver.NewStreamableHTTPServer(s)
	p := &peer{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.requests = append(p.requests, r.Method+" "+r.Header.Get("Mcp-Method")+" "+r.Header.Get("Mcp-Protocol-Version"))
		p.mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if wait != nil && !wait(r) {
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// ping answers pong.
var ping = mgserver.ServerTool{Tool: mcp.NewTool("ping"), Handler: result(mcp.NewToolResultText("pong"))}

func (p *peer) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

func result(r *mcp.CallToolResult) mgserver.ToolHandlerFunc {
	return func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return r, nil }
}

// A tool result reaches the model as text: the text parts and embedded text resources joined by newlines,
// a note for images, audio, resource links and binary resources, the structured content when nothing
// else came, and "Tool execution failed" for an isError result without text.
func TestResultText(t *testing.T) {
	p := newPeer(t, nil,
		mgserver.ServerTool{Tool: mcp.NewTool("mixed"), Handler: result(&mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewTextContent("first"),
			mcp.NewImageContent("aGk=", "image/png"),
			mcp.NewAudioContent("aGk=", "audio/wav"),
			mcp.NewResourceLink("file:///report.pdf", "report", "", "application/pdf"),
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "embedded notes"}),
			mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "file:///x.bin", Blob: "aGk="}),
			mcp.NewTextContent("last"),
		}})},
		mgserver.ServerTool{Tool: mcp.NewTool("structured"), Handler: result(&mcp.CallToolResult{Content: []mcp.Content{},
			StructuredContent: map[string]any{"rows": []any{"a", "b"}, "total": 2}})},
		mgserver.ServerTool{Tool: mcp.NewTool("failing"), Handler: result(&mcp.CallToolResult{Content: []mcp.Content{}, IsError: true})},
		mgserver.ServerTool{Tool: mcp.NewTool("refusing"), Handler: result(mcp.NewToolResultError("no such row"))},
	)
	src := loopbackSource()
	ctx := context.Background()
	out := src.Load(ctx, &request.Turn{MCPConnections: []turnrequest.MCPConnection{{ID: "peer", URL: p.srv.URL, Tokens: tok()}}}, nil)
	defer out.Close()
	if len(out.Tools) != 4 {
		t.Fatalf("tools %v, notices %q", out.Tools, out.Notices)
	}
	run := map[string]func() (string, error){}
	for _, tl := range out.Tools {
		run[tl.Name()] = func() (string, error) { return tl.Run(ctx, json.RawMessage(`{}`)) }
	}
	want := "first\n[image content, image/png, not shown]\n[audio content, audio/wav, not shown]\n[resource file:///report.pdf]\n" +
		"embedded notes\n[embedded resource, not shown]\nlast"
	if got, err := run["mixed"](); err != nil || got != want {
		t.Errorf("mixed: %q %v", got, err)
	}
	if got, err := run["structured"](); err != nil || got != `{"rows":["a","b"],"total":2}` {
		t.Errorf("structured: %q %v", got, err)
	}
	var te *toolError
	if got, err := run["failing"](); !errors.As(err, &te) || err.Error() != "Tool execution failed" || got != "" {
		t.Errorf("failing: %q %v", got, err)
	}
	if _, err := run["refusing"](); !errors.As(err, &te) || err.Error() != "no such row" {
		t.Errorf("refusing: %v", err)
	}
}

// A server that never answers server/discover is spoken to with the initialize handshake once the probe's
// own deadline has passed, well within the connection's time.
func TestDiscoverTimeoutFallsBackToInitialize(t *testing.T) {
	p := newPeer(t, func(r *http.Request) bool {
		if r.Header.Get("Mcp-Method") == "server/discover" {
			<-r.Context().Done() // never answered
			return false
		}
		return true
	}, ping)
	src := loopbackSource()
	src.ConnectTimeout, src.DiscoverTimeout = time.Minute, 200*time.Millisecond
	ctx := context.Background()
	out := src.Load(ctx, &request.Turn{MCPConnections: []turnrequest.MCPConnection{{ID: "peer", URL: p.srv.URL, Tokens: tok()}}}, nil)
	defer out.Close()
	if len(out.Tools) != 1 || len(out.Notices) != 0 {
		t.Fatalf("tools %v, notices %q", out.Tools, out.Notices)
	}
	if got, err := out.Tools[0].Run(ctx, json.RawMessage(`{}`)); err != nil || got != "pong" {
		t.Fatalf("call %q %v", got, err)
	}
	seen := strings.Join(p.seen(), ",")
	if !strings.HasPrefix(seen, "POST server/discover 2026-07-28,POST  ,POST  2025-11-25,POST  2025-11-25,POST  2025-11-25") {
		t.Fatalf("requests %s", seen)
	}
}

// A connection that fails says what failed in one line: the HTTP status, the refusal of the HTTP client,
// what the server sent instead of MCP; a tools/call the server answers with a JSON-RPC error gives its
// code and message.
func TestFailuresSayWhatFailed(t *testing.T) {
	for _, c := range []struct {
		name string
		h    http.HandlerFunc
		want string
	}{
		{"forbidden", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "forbidden here", http.StatusForbidden) }, "the server answered HTTP 403: forbidden here"},
		// The MCP spec's step-up (RFC 6750 §3.1): the scope the server asks for, and what the user can do.
		{"stepup", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="https://x.example/prm"`)
			http.Error(w, `{"error":"insufficient_scope"}`, http.StatusForbidden)
		}, `the server needs more access than the connection was granted (HTTP 403 insufficient_scope, scope "mcp:basic mcp:write"): connect it again to grant it`},
		{"notfound", http.NotFound, `sending "initialize": Not Found`},
		{"broken", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) }, `sending "initialize": Internal Server Error`},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://169.254.169.254/", http.StatusTemporaryRedirect)
		}, "redirects are not followed"},
		{"html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html></html>"))
		}, `sending "initialize": unsupported content type "text/html"`},
		{"garbage", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("{nope"))
		}, `sending "initialize": failed to decode response: unmarshaling jsonrpc message: json: expected '"' at the beginning of a string value: nope`},
	} {
		s := httptest.NewServer(c.h)
		out := loopbackSource().Load(context.Background(), &request.Turn{MCPConnections: []turnrequest.MCPConnection{{ID: c.name, URL: s.URL, Tokens: tok()}}}, nil)
		out.Close()
		s.Close()
		prefix := Notice(c.name, "could not connect to "+s.URL+": ")
		if len(out.Notices) != 1 || !strings.HasPrefix(out.Notices[0], prefix) || !strings.HasSuffix(out.Notices[0], c.want) {
			t.Errorf("%s: notices %q, want %s…%s", c.name, out.Notices, prefix, c.want)
		}
	}

	p := newPeer(t, nil, ping)
	out := loopbackSource().Load(context.Background(), &request.Turn{MCPConnections: []turnrequest.MCPConnection{{ID: "peer", URL: p.srv.URL, Tokens: tok()}}}, nil)
	defer out.Close()
	if len(out.Tools) != 1 {
		t.Fatalf("tools %v, notices %q", out.Tools, out.Notices)
	}
	_, err := out.Tools[0].(*remoteTool).sess.call(context.Background(), "gone", nil)
	if err == nil || !strings.HasPrefix(err.Error(), "MCP server 'peer': the server answered error -32602: ") {
		t.Fatalf("unknown tool: %v", err)
	}
}
