package clipush_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/nodepeers"
	"appwrite-agent/scripts/internal/staging"
	"appwrite-agent/shared/devkit/localappwrite"
)

// cliVersion is the Appwrite CLI the deploy path is proven with (docs/deploy.md); scripts/internal/nodepeers'
// package-lock.json pins it, and the test checks that the installed CLI is this one.
const cliVersion = "12.0.1"

const projectID = "clipush"

// appwriteJSON is the part of appwrite.json the test reads; the file itself is copied with every key.
type appwriteJSON struct {
	Functions []struct {
		ID      string   `json:"$id"`
		Name    string   `json:"name"`
		Runtime string   `json:"runtime"`
		Events  []string `json:"events"`
		Scopes  []string `json:"scopes"`
		Execute []string `json:"execute"`
		Timeout int      `json:"timeout"`
		Path    string   `json:"path"`
	} `json:"functions"`
}

// lockedBuffer collects the stand-in's log lines from several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) printf(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintf(&b.buf, format+"\n", args...)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestPushFunctionsWithAppwriteCLI deploys the five functions with the real Appwrite CLI against the local
// stand-in and calls each one's /health over its function domain.
func TestPushFunctionsWithAppwriteCLI(t *testing.T) {
	p, err := nodepeers.Locate()
	if err != nil {
		t.Skip(err.Error())
	}
	if testing.Short() {
		t.Skip("-short: the CLI push builds five functions")
	}
	var installed struct {
		Version string `json:"version"`
	}
	if data, err := os.ReadFile(filepath.Join(filepath.Dir(p.AppwriteCLI), "package.json")); err != nil || json.Unmarshal(data, &installed) != nil || installed.Version != cliVersion {
		t.Fatalf("the installed appwrite-cli is %q (%v), want %s: run scripts/install-node-peers", installed.Version, err, cliVersion)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := staging.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}

	// The stand-in, listening on loopback, with the project, an API key and the five functions created
	// beforehand (push then takes its update path: creating a function needs a console session).
	var standinLog lockedBuffer
	run, err := localappwrite.Start(context.Background(), "127.0.0.1:0", localappwrite.Options{Logf: standinLog.printf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		_ = run.Shutdown(sctx)
	})
	s := run.Server
	if err := s.SeedProject(localappwrite.ProjectSpec{ID: projectID, Name: "CLI push"}); err != nil {
		t.Fatal(err)
	}
	key, err := s.CreateKey(projectID, []string{"functions.read", "functions.write", "rules.read"})
	if err != nil {
		t.Fatal(err)
	}
	repoJSON, err := os.ReadFile(filepath.Join(root, "appwrite.json"))
	if err != nil {
		t.Fatal(err)
	}
	// What scripts/stage writes to build/appwrite.json: staged paths, title on the conversations table only.
	raw, err := staging.StagedAppwriteJSON(repoJSON, staging.DefaultChatDatabase)
	if err != nil {
		t.Fatal(err)
	}
	var cfg appwriteJSON
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Functions) != len(staging.Functions) {
		t.Fatalf("appwrite.json has %d functions, staging knows %d", len(cfg.Functions), len(staging.Functions))
	}
	for _, fn := range cfg.Functions {
		if err := s.RegisterFunction(projectID, localappwrite.FunctionSpec{ID: fn.ID, Name: fn.Name, Runtime: fn.Runtime,
			Events: fn.Events, Scopes: fn.Scopes, Execute: fn.Execute, Timeout: fn.Timeout}); err != nil {
			t.Fatal(err)
		}
	}

	// The CLI's folder: appwrite.json with projectId and endpoint set, and the staged functions at their paths.
	work := t.TempDir()
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["projectId"] = projectID
	doc["endpoint"] = s.Endpoint()
	out, err := json.MarshalIndent(doc, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "appwrite.json"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	stageStart := time.Now()
	for _, fn := range cfg.Functions {
		// The test fixture's skills, so that a clean checkout (no scripts/update-skills) pushes a turn with skills.
		opts := staging.Options{Skills: filepath.Join(root, "functions", "turn", "testdata", "skills")}
		if err := staging.StageWith(ctx, root, fn.ID, filepath.Join(work, filepath.FromSlash(fn.Path)), opts); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("staged %d functions in %s", len(cfg.Functions), time.Since(stageStart).Round(time.Millisecond))

	// The CLI keeps its global config (~/.appwrite/prefs.json) in a temporary HOME.
	home := filepath.Join(work, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1", "CI=1"}
	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, p.Node, append([]string{p.AppwriteCLI}, args...)...)
		cmd.Dir = work
		cmd.Env = env
		cmd.WaitDelay = 5 * time.Second
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("appwrite %s: %v\n%s\nstand-in log:\n%s", strings.Join(args, " "), err, b, standinLog.String())
		}
		return string(b)
	}
	cli("client", "--endpoint", s.Endpoint(), "--project-id", projectID, "--key", key)
	pushStart := time.Now()
	pushOut := cli("push", "functions", "--all", "--force")
	t.Logf("appwrite push functions --all --force (%s):\n%s", time.Since(pushStart).Round(time.Millisecond), pushOut)
	if !strings.Contains(pushOut, fmt.Sprintf("Successfully pushed %d functions", len(cfg.Functions))) {
		t.Errorf("push did not report every function pushed and deployed")
	}

	for _, fn := range cfg.Functions {
		if fn.ID == "title" && (len(fn.Events) != 1 || fn.Events[0] != staging.TitleEvent(staging.DefaultChatDatabase)) {
			t.Errorf("the pushed appwrite.json registers title for %v", fn.Events)
		}
	}
	client := &http.Client{Timeout: 30 * time.Second}
	for _, fn := range cfg.Functions {
		dep, err := s.ActiveDeployment(projectID, fn.ID)
		if err != nil || dep == "" {
			t.Errorf("%s: no active deployment (%v)", fn.ID, err)
			continue
		}
		status, logs, err := s.DeploymentStatus(projectID, fn.ID, dep)
		if err != nil || status != "ready" {
			t.Errorf("%s: deployment %s is %q (%v); build logs:\n%s", fn.ID, dep, status, err, logs)
			continue
		}
		res, err := client.Get(s.DomainURL(fn.ID) + "/health")
		if err != nil {
			t.Errorf("%s: GET /health: %v", fn.ID, err)
			continue
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var health map[string]any
		_ = json.Unmarshal(body, &health)
		if res.StatusCode != http.StatusOK || health["status"] != "ok" || health["build_id"] != dep || len(health) != 2 {
			t.Errorf("%s: GET /health = %d %s, want 200 {\"status\":\"ok\",\"build_id\":%q}", fn.ID, res.StatusCode, body, dep)
			continue
		}
		t.Logf("%s: deployment %s ready, %s/health = %s", fn.ID, dep, s.DomainURL(fn.ID), bytes.TrimSpace(body))
	}
	// The CLI's packing leaves no archive behind, and the user's real config was never used.
	if left, _ := filepath.Glob(filepath.Join(work, "functions-*-code.tar.gz")); len(left) > 0 {
		t.Errorf("archives left in the config folder: %v", left)
	}
	if _, err := os.Stat(filepath.Join(home, ".appwrite", "prefs.json")); err != nil {
		t.Errorf("the CLI did not keep its config in the temporary HOME: %v", err)
	}
}
