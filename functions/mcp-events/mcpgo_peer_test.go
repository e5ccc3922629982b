package handler_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestMCPGoClientPeer: mcp-go's client, an implementation independent of the official SDK the server is
// built on, connects with server/discover (2026-07-28) and with the legacy initialize handshake, sees the
// events extension, lists the tools with their annotations and reads a user; bad arguments and a missing
// user are tool errors it can show.
func TestMCPGoClientPeer(t *testing.T) {
	st := newStack(t)
	w := seedToolWorld(t, st)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	for _, legacy := range []bool{false, true} {
		t.Run(map[bool]string{false: "server/discover", true: "initialize"}[legacy], func(t *testing.T) { mcpGoPeer(t, url, tok, w, legacy) })
	}
}

func mcpGoPeer(t *testing.T, url, tok string, w toolWorld, legacy bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	tr, err := transport.NewStreamableHTTP(url+"/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + tok}),
		transport.WithHTTPLogger(slog.New(slog.DiscardHandler)))
	must(t, err)
	var opts []client.ClientOption
	if legacy {
		//lint:ignore SA1019 the legacy handshake is what this half of the test is about
		opts = append(opts, client.WithLegacyProtocolOnly())
	}
	c := client.NewClient(tr, opts...)
	t.Cleanup(func() { _ = c.Close() })
	must(t, c.Start(ctx))
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "mcp-go-peer", Version: "1"}
	res, err := c.Initialize(ctx, init)
	must(t, err)
	if modern := res.ProtocolVersion >= "2026-07-28"; modern == legacy {
		t.Fatalf("legacy=%v: negotiated %s", legacy, res.ProtocolVersion)
	}
	if _, ok := c.GetServerCapabilities().Extensions[handler.ExtensionID]; !ok {
		t.Fatalf("legacy=%v: no events extension in %+v", legacy, c.GetServerCapabilities())
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	must(t, err)
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
		must(t, err)
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
	if r := call(map[string]any{"project_id": projectID, "user_id": w.userID}); r.IsError || !strings.Contains(text(r), "c1@example.com") {
		t.Fatalf("legacy=%v: get_user: %+v", legacy, r)
	}
	if r := call(map[string]any{"project_id": projectID, "user_id": "../x"}); !r.IsError || !strings.Contains(text(r), "user_id") {
		t.Fatalf("legacy=%v: bad id: %q", legacy, text(r))
	}
	if r := call(map[string]any{"project_id": projectID, "user_id": "ghost"}); !r.IsError || !strings.HasPrefix(text(r), "Not found: user ghost") {
		t.Fatalf("legacy=%v: missing user: %q", legacy, text(r))
	}
}
