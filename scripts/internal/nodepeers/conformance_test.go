package nodepeers_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/nodepeers"
	"appwrite-agent/scripts/internal/stack"
	"appwrite-agent/shared/devkit/localappwrite"
)

// startStack runs the staged product with env added to mcp-events.
func startStack(t *testing.T, ctx context.Context, env []string, opts localappwrite.Options) *stack.Stack {
	t.Helper()
	st, err := stack.Start(ctx, stack.Options{StateDir: t.TempDir(), Env: map[string][]string{"mcp-events": env}, Appwrite: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Stop)
	return st
}

// TestConformance runs the official MCP conformance suite's server scenarios against the staged mcp-events.
// The suite sends no token, so it talks to a proxy that adds the demo user's and forwards the suite's Host.
// Nothing is listed in MCP_EVENTS_ALLOWED_ORIGINS: the dns-rebinding-protection scenario's valid Origin is the
// proxy's own loopback host, which the loopback server owns (docs/events.md §2, "Origin"), and its foreign one
// evil.example.com. Scenarios that do not apply to this server (the suite's "everything
// server" fixtures: tools, prompts and resources it does not have) are in conformance-baseline.yml with the
// reason; the suite fails on an unexpected failure and on a baseline entry that passes.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the whole stack and Node")
	}
	p, err := nodepeers.Locate()
	if err != nil {
		t.Skip(err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxyURL := "http://" + ln.Addr().String()
	st := startStack(t, ctx, nil, localappwrite.Options{})
	target, _ := url.Parse(st.URLs["mcp-events"])
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the suite's Host (localhost or evil.example.com) reaches the function
		r.Out.Header.Set("Authorization", "Bearer "+st.Demo.OAuthToken)
	}}
	srv := &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }() // ends with srv.Close below
	defer srv.Close()

	out := t.TempDir()
	cmd := exec.CommandContext(ctx, p.Node, p.Conformance, "server", "--url", proxyURL+"/mcp",
		"--expected-failures", "conformance-baseline.yml", "-o", out)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err = cmd.Run()
	t.Logf("conformance suite (results in %s):\n%s", out, buf.String())
	if err != nil {
		t.Fatalf("conformance suite: %v", err)
	}
	// The scenarios that apply ran and passed (the summary has one line per scenario).
	for _, s := range []string{"server-initialize: 1 passed, 0 failed", "ping: 1 passed, 0 failed", "tools-list: 1 passed, 0 failed",
		"dns-rebinding-protection: 2 passed, 0 failed", "logging-set-level: 1 passed, 0 failed",
		"resources-list: 1 passed, 0 failed", "prompts-list: 1 passed, 0 failed"} {
		if !strings.Contains(buf.String(), "✓ "+s) {
			t.Fatalf("the summary lacks %q", s)
		}
	}
}
