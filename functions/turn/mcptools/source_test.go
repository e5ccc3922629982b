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
	"testing"
	"time"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/shared/safehttp"

	"github.com/mark3labs/mcp-go/mcp"
	mgserver "github.com/mark3labs/mcp-go/server"
)

// slowServer is an mcp-go server whose every request waits delay (or until the client gives up).
func slowServer(t *testing.T, delay time.Duration) *httptest.Server {
	s := mgserver.NewMCPServer("slow", "1.0.0", mgserver.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("ping"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("pong"), nil
	})
	h := mgserver.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client going away.
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		select {
		case <-time.After(delay):
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
	const delay = 150 * time.Millisecond
	a, b := slowServer(t, delay), slowServer(t, delay)
	hung := slowServer(t, time.Hour)
	src := loopbackSource()
	src.ConnectTimeout = 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	out := src.Load(ctx, &request.Turn{MCPConnections: []request.MCPConnection{
		{ID: "aaa", URL: a.URL, Tokens: tok()}, {ID: "bbb", URL: b.URL, Tokens: tok()}, {ID: "hung", URL: hung.URL, Tokens: tok()},
	}}, map[string]bool{})
	defer out.Close()
	took := time.Since(start)
	// Each connection makes two delayed requests (server/discover, tools/list); three in a row would take
	// 2×delay×2 + the hung one's timeout.
	if took > src.ConnectTimeout+2*delay+time.Second || took < src.ConnectTimeout {
		t.Fatalf("took %s", took)
	}
	if len(out.Tools) != 2 || out.Tools[0].Name() != "ping" || out.Tools[1].Name() != "bbb_ping" {
		t.Fatalf("tools %v", out.Tools)
	}
	if len(out.Notices) != 1 || out.Notices[0] != "MCP connection 'hung' skipped: the server did not answer within 2s" {
		t.Fatalf("notices %q", out.Notices)
	}
	res, err := out.Tools[1].Run(ctx, json.RawMessage(`{}`))
	if err != nil || res != "pong" {
		t.Fatalf("call %q %v", res, err)
	}
	// The turn's deadline bounds everything too.
	short, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	start = time.Now()
	out2 := src.Load(short, &request.Turn{MCPConnections: []request.MCPConnection{{ID: "hung", URL: hung.URL, Tokens: tok()}}}, nil)
	out2.Close()
	if time.Since(start) > time.Second || len(out2.Notices) != 1 {
		t.Fatalf("took %s, notices %q", time.Since(start), out2.Notices)
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
