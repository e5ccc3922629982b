package nodepeers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
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

// TestConformance runs every server scenario of the official MCP conformance suite (--suite all: the active
// scenarios and the pending ones) against the staged mcp-events. The suite sends no token, so it talks to a
// proxy that adds the demo user's and forwards the suite's Host. Nothing is listed in
// MCP_EVENTS_ALLOWED_ORIGINS: the dns-rebinding-protection scenario's valid Origin is the proxy's own loopback
// host, which the loopback server owns (docs/events.md §2, "Origin"), and its foreign one evil.example.com.
// Scenarios that do not apply to this server are in conformance-baseline.yml, each with its reason; the suite
// fails on a failure not listed there and on a listed scenario that passes. This test also fails when a
// scenario the suite lists (conformance list --server) did not run, when one outside the baseline passed no
// check, and when the baseline names a scenario the suite does not have.
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
	scenarios := serverScenarios(t, ctx, p)
	baseline := readBaseline(t, "conformance-baseline.yml", "server")
	for name := range baseline {
		if !slices.Contains(scenarios, name) {
			t.Fatalf("conformance-baseline.yml lists %q, which the suite does not have (scenarios: %v)", name, scenarios)
		}
	}

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
	cmd := exec.CommandContext(ctx, p.Node, p.Conformance, "server", "--url", proxyURL+"/mcp", "--suite", "all",
		"--expected-failures", "conformance-baseline.yml", "-o", out)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err = cmd.Run()
	t.Logf("conformance suite:\n%s", buf.String())
	logFailedChecks(t, out)
	if err != nil {
		t.Fatalf("conformance suite: %v", err)
	}
	// Every scenario ran (the summary has one line per scenario); those that apply passed at least one check.
	summary := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^([✓✗]) ([a-z0-9-]+): (\d+) passed, (\d+) failed$`).FindAllStringSubmatch(buf.String(), -1) {
		summary[m[2]] = m[0]
	}
	passed := 0
	for _, name := range scenarios {
		line, ran := summary[name]
		switch {
		case !ran:
			t.Errorf("scenario %s did not run", name)
		case baseline[name]:
		case !strings.HasPrefix(line, "✓ ") || strings.Contains(line, ": 0 passed"):
			t.Errorf("scenario %s applies and did not pass a check: %s", name, line)
		default:
			passed++
		}
	}
	t.Logf("%d of %d server scenarios apply and pass; %d do not apply (conformance-baseline.yml)", passed, len(scenarios), len(baseline))
}

// serverScenarios is what the suite lists as its server scenarios (conformance list --server).
func serverScenarios(t *testing.T, ctx context.Context, p nodepeers.Peers) []string {
	t.Helper()
	b, err := exec.CommandContext(ctx, p.Node, p.Conformance, "list", "--server").Output()
	if err != nil {
		t.Fatalf("conformance list --server: %v", err)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^  - ([a-z0-9-]+) \[`).FindAllStringSubmatch(string(b), -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		t.Fatalf("conformance list --server named no scenario:\n%s", b)
	}
	return names
}

// readBaseline is the set of scenarios a baseline file lists under section ("server" or "client": the
// "  - name" lines under "server:" or "client:"); every entry must carry its reason in a comment above it.
func readBaseline(t *testing.T, path, section string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	in, commented := false, false
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case line == section+":":
			in, commented = true, false
		case in && strings.HasPrefix(trimmed, "#"):
			commented = true
		case in && strings.HasPrefix(trimmed, "- "):
			if !commented {
				t.Fatalf("%s: %q has no reason (a comment above it)", path, trimmed)
			}
			out[strings.TrimPrefix(trimmed, "- ")] = true
		case trimmed != "" && !strings.HasPrefix(line, " ") && !strings.HasPrefix(trimmed, "#"):
			in = false
		}
	}
	return out
}

// logFailedChecks logs every check that did not succeed, scenario by scenario, from the suite's results
// (out/server-<scenario>-<time>/checks.json): what a failure or a baseline entry is about.
func logFailedChecks(t *testing.T, out string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(out, "server-*", "checks.json"))
	var lines []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var checks []struct {
			ID, Status, ErrorMessage string
		}
		if json.Unmarshal(b, &checks) != nil {
			continue
		}
		for _, c := range checks {
			if c.Status == "FAILURE" || c.Status == "WARNING" {
				lines = append(lines, fmt.Sprintf("%s: %s %s: %s", filepath.Base(filepath.Dir(f)), c.Status, c.ID, c.ErrorMessage))
			}
		}
	}
	sort.Strings(lines)
	t.Logf("checks that did not succeed:\n%s", strings.Join(lines, "\n"))
}
