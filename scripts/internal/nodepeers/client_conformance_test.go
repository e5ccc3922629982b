package nodepeers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/nodepeers"
	"appwrite-agent/scripts/internal/staging"
)

// check is one check of a scenario's checks.json.
type check struct {
	ID           string         `json:"id"`
	Status       string         `json:"status"`
	Description  string         `json:"description"`
	ErrorMessage string         `json:"errorMessage"`
	Details      map[string]any `json:"details"`
}

// failed is a check that fails its scenario (the suite counts FAILURE and WARNING alike).
func (c check) failed() bool { return c.Status == "FAILURE" || c.Status == "WARNING" }

// clientRun is one run of the suite's client scenarios: every scenario the suite lists, and the checks of
// each that ran.
type clientRun struct {
	scenarios []string
	checks    map[string][]check
}

// has reports whether scenario has a check id with status.
func (r clientRun) has(scenario, id, status string) bool {
	return slices.ContainsFunc(r.checks[scenario], func(c check) bool { return c.ID == id && c.Status == status })
}

// clientParallel is how many scenarios run at once: the suite's own --suite mode starts all of them
// together (26 servers and clients), which on a loaded two-core machine can hold a client past its
// connection timeout.
const clientParallel = 3

// runClientSuite runs the client scenarios the suite lists (core, back-compatibility, draft and extension
// scenarios) for which runs is true, with command as the client, in env, and reads their checks. Without
// suites each runs as `conformance client --scenario`, clientParallel at a time; with suites, each named suite
// runs as `conformance client --suite` (its scenarios at once), one suite after the other, and runs must be
// true exactly for their scenarios. It fails the test when a scenario that ran left no results, or when
// baseline names a scenario the suite does not have.
func runClientSuite(t *testing.T, ctx context.Context, p nodepeers.Peers, command string, env []string, baseline string, suites []string, runs func(scenario string) bool) clientRun {
	t.Helper()
	b, err := exec.CommandContext(ctx, p.Node, p.Conformance, "list", "--client").Output()
	if err != nil {
		t.Fatalf("conformance list --client: %v", err)
	}
	var run clientRun
	for _, m := range regexp.MustCompile(`(?m)^  - ([a-z0-9/_-]+) \[`).FindAllStringSubmatch(string(b), -1) {
		run.scenarios = append(run.scenarios, m[1])
	}
	if len(run.scenarios) == 0 {
		t.Fatalf("conformance list --client named no scenario:\n%s", b)
	}
	for name := range readBaseline(t, baseline, "client") {
		if !slices.Contains(run.scenarios, name) {
			t.Fatalf("%s lists %q, which the suite does not have (scenarios: %v)", baseline, name, run.scenarios)
		}
	}
	out := t.TempDir()
	// The suite's exit status is not the verdict (judgeClientRun is): it also fails a scenario on a check the
	// machine's load decides, which judgeClientRun tells apart.
	conformance := func(args ...string) string {
		// --timeout: the suite gives a client 30 s by default, which a loaded machine running a suite's
		// scenarios at once can exceed; the clients bound their own time (turn's budget, the page's flow).
		cmd := exec.CommandContext(ctx, p.Node, append([]string{p.Conformance, "client", "--command", command,
			"--timeout", "120000", "--expected-failures", baseline, "-o", out}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		b, err := cmd.CombinedOutput()
		return fmt.Sprintf("== conformance client %s (exit: %v)\n%s", strings.Join(args, " "), err, b)
	}
	outputs := make([]string, len(run.scenarios))
	if suites != nil {
		for _, suite := range suites {
			o := conformance("--suite", suite)
			for i := range outputs {
				outputs[i] += o
			}
		}
	} else {
		sem := make(chan struct{}, clientParallel)
		var wg sync.WaitGroup
		for i, name := range run.scenarios {
			if !runs(name) {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				outputs[i] = conformance("--scenario", name)
			}()
		}
		wg.Wait()
	}
	run.checks = map[string][]check{}
	for i, name := range run.scenarios {
		if !runs(name) {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(out, name+"-*", "checks.json"))
		if len(files) != 1 {
			t.Errorf("scenario %s left %d checks.json files, want 1:\n%s", name, len(files), outputs[i])
			continue
		}
		raw, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		var cs []check
		if err := json.Unmarshal(raw, &cs); err != nil {
			t.Fatalf("%s: %v", files[0], err)
		}
		run.checks[name] = cs
		for _, stream := range []string{"stdout", "stderr"} {
			if b, err := os.ReadFile(filepath.Join(filepath.Dir(files[0]), stream+".txt")); err == nil && len(b) > 0 {
				t.Logf("%s: the client's %s:\n%s", name, stream, b)
			}
		}
	}
	return run
}

// judgeClientRun applies the baseline as the suite does: a scenario outside it passes every check, at least
// one of them a success, and a scenario in it fails (an entry that passes is stale). One kind of check is
// judged apart: sse-retry's timing of the reconnection (client-sse-retry-timing), which fails when the client
// reconnects more than 200 ms after the server's `retry` on a machine too loaded to wake it in time; a late
// reconnection is logged, an early one (the client ignored `retry`) fails. It returns how many scenarios
// apply and passed.
func judgeClientRun(t *testing.T, run clientRun, baseline string) int {
	t.Helper()
	expected := readBaseline(t, baseline, "client")
	passed := 0
	for _, name := range run.scenarios {
		cs, ok := run.checks[name]
		if !ok {
			continue // not run, or reported by runClientSuite
		}
		var failures []string
		successes := 0
		for _, c := range cs {
			switch {
			case c.Status == "SUCCESS":
				successes++
			case c.failed() && c.ID == "client-sse-retry-timing" && c.Details["tooEarly"] == false:
				t.Logf("%s: %s %s (the reconnection came late; not judged on a loaded machine)", name, c.Status, c.ErrorMessage)
				successes++
			case c.failed():
				failures = append(failures, fmt.Sprintf("%s %s: %s", c.Status, c.ID, firstNonEmpty(c.ErrorMessage, c.Description)))
			}
		}
		sort.Strings(failures)
		switch {
		case expected[name] && len(failures) == 0:
			t.Errorf("%s passes but %s lists it as not applying: remove the entry", name, baseline)
		case expected[name]:
			t.Logf("%s does not apply (%s); its failed checks:\n  %s", name, baseline, strings.Join(failures, "\n  "))
		case len(failures) > 0:
			t.Errorf("%s applies and failed:\n  %s", name, strings.Join(failures, "\n  "))
		case successes == 0:
			t.Errorf("%s applies and passed no check", name)
		default:
			passed++
		}
	}
	return passed
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// buildTurnClient builds scripts/cmd/turnmcp, turn's MCP connection code as a conformance client command,
// with the race detector: the suite's own -race compilation of turn's packages is reused (a plain build
// compiled them all again), and a data race in turn's MCP code makes the client fail its scenario.
func buildTurnClient(t *testing.T, ctx context.Context) string {
	t.Helper()
	root, err := staging.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "turnmcp")
	cmd := exec.CommandContext(ctx, "go", "build", "-race", "-o", bin, "./scripts/cmd/turnmcp")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -race ./scripts/cmd/turnmcp: %v\n%s", err, out)
	}
	return bin
}

// TestTurnClientConformance runs every client scenario of the official MCP conformance suite against turn's
// own MCP connection code (functions/turn/mcptools, through scripts/cmd/turnmcp), with turn's SSRF policy
// opened to the suite's loopback servers as tests and scripts/dev open it. The scenarios that apply
// (initialize, tools_call, sse-retry: SEP-1699's retry field and Last-Event-ID, and auth/pre-registration:
// turn's refresh with pre-registered credentials) pass; the others are in client-turn-baseline.yml with
// their reasons. Most of those need an interactive authorization, which turn never runs (its caller hands it
// the tokens); they still measure turn's token refresh, which follows the same discovery: turn starts each
// auth/* scenario with an expired access token and a refresh token, and this test checks that it found the
// authorization server and refreshed in every one (a token request), then used the new token (a request the
// scenario's server accepted), and that it refused, before any token request, metadata naming another
// resource (auth/resource-mismatch).
func TestTurnClientConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs Node and the suite's servers")
	}
	p, err := nodepeers.Locate()
	if err != nil {
		t.Skip(err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bin := buildTurnClient(t, ctx)
	const baseline = "client-turn-baseline.yml"
	run := runClientSuite(t, ctx, p, bin, []string{"SAFEHTTP_ALLOW=127.0.0.0/8,::1/128", "SAFEHTTP_ALLOW_HTTP=1", "GORACE=atexit_sleep_ms=0 exitcode=66"}, baseline, nil, func(string) bool { return true })
	passed := judgeClientRun(t, run, baseline)
	t.Logf("%d of %d client scenarios apply to turn and pass; %d do not apply (%s)", passed, len(run.scenarios), len(readBaseline(t, baseline, "client")), baseline)

	// The token endpoints of these scenarios refuse a refresh_token grant (they expect client credentials or
	// a token exchange), or their server never checks the token it is sent (scope-retry-limit answers every
	// call 403): turn refreshed, and had no use of the answer.
	noUse := []string{"auth/client-credentials-jwt", "auth/client-credentials-basic", "auth/cross-app-access-complete-flow", "auth/scope-retry-limit"}
	for _, name := range run.scenarios {
		if !strings.HasPrefix(name, "auth/") {
			continue
		}
		refreshed := run.has(name, "token-request", "SUCCESS")
		switch {
		case name == "auth/resource-mismatch":
			if refreshed {
				t.Errorf("%s: turn sent its refresh token for metadata naming another resource", name)
			}
		case !refreshed:
			t.Errorf("%s: turn's refresh did not reach the token endpoint", name)
		case !slices.Contains(noUse, name) && !run.has(name, "valid-bearer-token", "SUCCESS"):
			t.Errorf("%s: turn refreshed but did not call the server with the new token", name)
		}
	}
}

// TestChatOAuthConformance runs the suite's auth/* client scenarios against the chat page's own MCP OAuth
// client: functions/chat/web/src/lib/mcp-oauth.ts, built into one ES module by the page's bundler
// (chatoauth-build.mjs) and driven from Node by chatoauth.mjs, which plays the browser around it (the page's
// URL, sessionStorage, the redirect to the authorization server and back to the callback) and then turn's use
// of the tokens (initialize, tools/list, tools/call), handing a 403 insufficient_scope back to the module as a
// step-up. Every scenario that applies passes: metadata discovery in its four layouts, Client ID Metadata
// Documents, scope selection, the step-up and its retry limit, the token endpoint's authentication
// methods, pre-registered credentials, the 2025-03-26 fallbacks, a resource mismatch, offline_access. The
// others are in client-chat-baseline.yml with their reasons: the protocol scenarios (initialize, tools_call,
// sse-retry, elicitation) are not run here (the page is not an MCP client: turn is, TestTurnClientConformance),
// and this test fails when one of them is missing from the baseline.
func TestChatOAuthConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs Node and the suite's servers")
	}
	p, err := nodepeers.Locate()
	if err != nil {
		t.Skip(err.Error())
	}
	root, err := staging.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(root, "functions", "chat", "web")
	if _, err := os.Stat(filepath.Join(web, "node_modules", "vite", "package.json")); err != nil {
		t.Skipf("the chat page's node_modules are not installed (%v): run scripts/build-chat-web prepare (scripts/test does)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	module := t.TempDir()
	build := exec.CommandContext(ctx, p.Node, filepath.Join(root, "scripts", "internal", "nodepeers", "chatoauth-build.mjs"), web, module)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the page's mcp-oauth module: %v\n%s", err, out)
	}
	const baseline = "client-chat-baseline.yml"
	isAuth := func(name string) bool { return strings.HasPrefix(name, "auth/") }
	command := p.Node + " " + filepath.Join(root, "scripts", "internal", "nodepeers", "chatoauth.mjs")
	// The auth/* scenarios are the suite's auth, backcompat, draft and extensions suites; each runs its
	// scenarios at once (the page's module has no connection timeout a loaded machine could exceed).
	run := runClientSuite(t, ctx, p, command, []string{"CHAT_OAUTH_MODULE=" + filepath.Join(module, "mcp-oauth.mjs")}, baseline,
		[]string{"auth", "backcompat", "draft", "extensions"}, isAuth)
	expected := readBaseline(t, baseline, "client")
	for _, name := range run.scenarios {
		if !isAuth(name) && !expected[name] {
			t.Errorf("%s is not run against the page's OAuth client: %s must list it with its reason", name, baseline)
		}
	}
	passed := judgeClientRun(t, run, baseline)
	t.Logf("%d of %d client scenarios apply to the page's OAuth client and pass; %d do not apply (%s)", passed, len(run.scenarios), len(expected), baseline)
}
