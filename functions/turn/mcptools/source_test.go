package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/mark3labs/mcp-go/mcp"
	mgserver "github.com/mark3labs/mcp-go/server"
)

// gatedServer is an mcp-go server whose every request waits until gate is closed (or the client gives up);
// arrived is called once, when its first request comes in.
func gatedServer(t *testing.T, gate <-chan struct{}, arrived func()) *httptest.Server {
	s := mgserver.NewMCPServer("slow", "1.0.0", mgserver.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("ping"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("pong"), nil
	})
	h := mgserver.NewStreamableHTTPServer(s)
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client going away.
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		once.Do(arrived)
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
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
	out := src.Load(ctx, &request.Turn{MCPConnections: []request.MCPConnection{
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
	out2 := src.Load(short, &request.Turn{MCPConnections: []request.MCPConnection{{ID: "hung", URL: hung.URL, Tokens: tok()}}}, nil)
	out2.Close()
	// A safety net only, far below the minute.
	if took := time.Since(start); took > 20*time.Second || len(out2.Notices) != 1 {
		t.Fatalf("took %s, notices %q", took, out2.Notices)
	}
}

func TestMisconfiguredPolicySkipsEverything(t *testing.T) {
	src := &Source{HTTPErr: errString("SAFEHTTP_ALLOW: bad")}
	out := src.Load(context.Background(), &request.Turn{MCPConnections: []request.MCPConnection{{ID: "appwrite", Tokens: tok()}}}, nil)
	out.Close()
	if len(out.Notices) != 1 || !strings.Contains(out.Notices[0], "the SSRF policy is misconfigured: SAFEHTTP_ALLOW: bad") || len(out.Credentials) != 0 {
		t.Fatalf("%+v", out)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
