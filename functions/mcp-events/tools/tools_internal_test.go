package tools

import (
	"context"
	"testing"

	"appwrite-agent/functions/mcp-events/oauth"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPanicIsAToolError: a tool that panics answers a tool error ("internal error", nothing of the panic)
// and is observed as a fault carrying the panic's value, instead of ending the process: the SDK runs the
// tool on its own goroutine, outside the function's recover.
func TestPanicIsAToolError(t *testing.T) {
	var seen []Result
	tl := New(nil, nil, 0, func(_ context.Context, r Result) { seen = append(seen, r) })
	h := tl.handle(GetUser, func(context.Context, *oauth.Principal, map[string]string) (any, error) {
		panic("boom")
	})
	ctx := WithPrincipal(context.Background(), &oauth.Principal{Subject: "u"})
	res, out, err := h(ctx, nil, map[string]string{"project_id": "p1", "user_id": "u1"})
	if err != nil || out != nil || res == nil || !res.IsError {
		t.Fatalf("got %+v, %v, %v; want a tool error", res, out, err)
	}
	if tc, ok := res.Content[0].(*sdk.TextContent); !ok || tc.Text != "internal error" {
		t.Fatalf("the caller was told %+v", res.Content)
	}
	if len(seen) != 1 || !seen[0].Fault() || seen[0].Reason != "panic" || seen[0].Detail != "boom" ||
		seen[0].Text != "internal error" || seen[0].ProjectID != "p1" {
		t.Fatalf("observed %+v", seen)
	}
}
