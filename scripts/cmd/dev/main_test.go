package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/stack"
	"appwrite-agent/scripts/internal/staging"
	"appwrite-agent/shared/devkit/localappwrite"

	"github.com/appwrite/sdk-for-go/appwrite"
)

// freePort is a port for dev's processes to listen on, reserved until the test ends (stack.ReservePort:
// no stack of the tests running beside this one picks it, and it is outside the range that their outgoing
// connections take their local ports from).
func freePort(t *testing.T) int {
	t.Helper()
	p, release, err := stack.ReservePort()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return p
}

// TestDevServesHealthOnEveryPort runs the dev command on free ports and calls each function's /health.
func TestDevServesHealthOnEveryPort(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts five binaries")
	}
	ports := map[string]int{}
	for _, name := range staging.Functions {
		ports[name] = freePort(t)
	}
	// A session key in the shell is the one turn and title run with (as LLM_API_KEY is).
	t.Setenv("AGENT_API_KEY", "shell-session-key-for-dev")
	appwriteAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	done := make(chan error, 1)
	// dev's output (the functions' own lines among it) is shown when the test fails: a function that never
	// listens says why there.
	var out lockedBuffer
	go func() {
		done <- run(ctx, &out, "127.0.0.1", ports, appwriteAddr, localappwrite.Options{Profile: localappwrite.ProfileCloud}, false, true)
	}()
	defer func() {
		// dev prints the stack once stack.Start has returned, which is after the functions answer /health
		// (the stand-in's demo data comes last): stopping it before then would stop it while starting.
		// The wait ends when dev prints that, when dev returns (it failed to start), or at a safety ceiling.
		waitCtx, stopWaiting := context.WithTimeout(ctx, 2*time.Minute)
		go func() {
			select {
			case err := <-done:
				done <- err
				stopWaiting()
			case <-waitCtx.Done():
			}
		}()
		out.waitFor(waitCtx, "running (Ctrl-C stops everything)")
		stopWaiting()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("dev returned %v", err)
		}
		// With -model scripted it says so, and prints the chat page's URL and how to sign in (read once dev
		// has returned: it prints after the functions are healthy).
		for _, want := range []string{"chat page        http://" + appwriteAddr + "/_local/domains/chat/   sign in as demo@example.com / demo-password",
			"scripted demo model at http://127.0.0.1:",
			"connect a client MCP server URL http://127.0.0.1:" + strconv.Itoa(ports["mcp-events"]) + "/mcp; sign in as demo@example.com / demo-password"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("dev did not print %q", want)
			}
		}
		if t.Failed() {
			t.Logf("dev's output:\n%s", out.String())
		}
	}()

	for _, name := range staging.Functions {
		url := "http://127.0.0.1:" + strconv.Itoa(ports[name]) + "/health"
		if err := stack.WaitHealthy(ctx, url, 2*time.Minute); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Status  string `json:"status"`
			BuildID string `json:"build_id"`
		}
		err = json.NewDecoder(res.Body).Decode(&h)
		res.Body.Close()
		if err != nil || h.Status != "ok" || h.BuildID == "" {
			t.Fatalf("%s /health: %+v %v", name, h, err)
		}
	}

	for _, name := range []string{"turn", "title"} {
		for key, want := range map[string]int{"shell-session-key-for-dev": http.StatusOK, "not-the-key": http.StatusUnauthorized} {
			path := "/meta"
			method := http.MethodGet
			if name == "title" { // title has no /meta: a POST without a body is 400 once the key passes
				path, method = "/", http.MethodPost
				if want == http.StatusOK {
					want = http.StatusBadRequest
				}
			}
			req, _ := http.NewRequest(method, "http://127.0.0.1:"+strconv.Itoa(ports[name])+path, nil)
			req.Header.Set("X-Session-API-Key", key)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != want {
				t.Fatalf("%s %s with key %q: %d, want %d", name, path, key, res.StatusCode, want)
			}
		}
	}

	// The stand-in runs seeded, and .dev/stack.json says how to reach it.
	root, _ := staging.FindRoot(".")
	stack, err := localappwrite.ReadStackJSON(filepath.Join(root, ".dev", "stack.json"))
	if err != nil {
		t.Fatal(err)
	}
	if stack.Endpoint != "http://"+appwriteAddr+"/v1" || stack.Functions["turn"] != "http://127.0.0.1:"+strconv.Itoa(ports["turn"]) || stack.OAuthToken == "" || stack.APIKey == "" {
		t.Fatalf("stack.json: %+v", stack)
	}
	client := appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(stack.Endpoint), appwrite.WithProject(stack.ProjectID), appwrite.WithKey(stack.APIKey))
	table, err := appwrite.NewTablesDB(client).GetTable(stack.DatabaseID, stack.TableID)
	if err != nil || table.Id != stack.TableID {
		t.Fatalf("seeded table: %+v %v", table, err)
	}
	// turn's progress table: row security on, no table permission (each row names its reader).
	prog, err := appwrite.NewTablesDB(client).GetTable(stack.DatabaseID, stack.ProgressTableID)
	if err != nil || !prog.RowSecurity || len(prog.Permissions) != 0 || len(prog.Columns) != 5 || stack.UserSession == "" {
		t.Fatalf("progress table: %+v %v", prog, err)
	}
	// dev prints the stack once its own health checks pass, which may be after this test's: wait for the
	// last line before stopping it.
	if !out.waitFor(ctx, "X-Session-API-Key for turn and title") {
		t.Error("dev never printed the stack")
	}
}

// TestDemoPrintsAVerifiedDelivery runs scripts/dev -demo: ChatGPT's flow against the local stack, ending in a
// delivered event whose signature the Standard Webhooks library verifies.
func TestDemoPrintsAVerifiedDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	ports := map[string]int{}
	for _, name := range staging.Functions {
		ports[name] = freePort(t)
	}
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, &out, "127.0.0.1", ports, "127.0.0.1:"+strconv.Itoa(freePort(t)), localappwrite.Options{Profile: localappwrite.ProfileCloud}, true, false); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	// The demo writes to a table of no function's: chat adds required columns to conversations when it first
	// runs (its schedule may run it during the demo), and a row without them is refused.
	for _, want := range []string{"server/discover", "create a row in main/support_tickets", "tablesdb.row.created, tablesdb.row.updated", "the receiver answered the signed challenge", `"name": "tablesdb.row.created"`, "signature verified with the Standard Webhooks library: yes"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}

// sdkTimeout bounds the tests' Appwrite SDK calls: the SDK's 10 s default was exceeded on a loaded machine (load
// average 33) by calls that carry megabytes or run a function. A safety net, not a measure.
const sdkTimeout = 2 * time.Minute

// lockedBuffer is a bytes.Buffer safe for dev's writers and the test's read; waitFor waits on its writes.
type lockedBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	wake chan struct{} // closed (and dropped) by the next write, for waitFor
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.b.Write(p)
	if l.wake != nil {
		close(l.wake)
		l.wake = nil
	}
	return n, err
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor waits until the output holds s (true) or ctx ends (false).
func (l *lockedBuffer) waitFor(ctx context.Context, s string) bool {
	for {
		l.mu.Lock()
		if strings.Contains(l.b.String(), s) {
			l.mu.Unlock()
			return true
		}
		if l.wake == nil {
			l.wake = make(chan struct{})
		}
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		}
	}
}
