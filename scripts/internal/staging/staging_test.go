package staging_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/staging"
	"appwrite-agent/shared/devkit/scriptedllm"
)

// fixtureSkills stages turn with the test fixture's two skills, so the tests pass on a clean checkout
// (no scripts/update-skills) and never depend on what a developer installed.
func fixtureSkills(root string) staging.Options {
	return staging.Options{Skills: filepath.Join(root, "functions", "turn", "testdata", "skills")}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := staging.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// treeHash hashes every file path and content under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// The chat page's installed packages are npm's, not ours (and the page's checks, running beside
			// the Go tests, write vitest's cache there).
			if d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestStageIsDeterministicAndLeavesSourcesAlone(t *testing.T) {
	root := repoRoot(t)
	before := treeHash(t, filepath.Join(root, "functions")) + treeHash(t, filepath.Join(root, "shared"))
	ctx := context.Background()
	for _, name := range staging.Functions {
		a, b := filepath.Join(t.TempDir(), name), filepath.Join(t.TempDir(), name)
		if err := staging.StageWith(ctx, root, name, a, fixtureSkills(root)); err != nil {
			t.Fatal(err)
		}
		if err := staging.StageWith(ctx, root, name, b, fixtureSkills(root)); err != nil {
			t.Fatal(err)
		}
		if ha, hb := treeHash(t, a), treeHash(t, b); ha != hb {
			t.Errorf("%s: two stagings differ (%s vs %s)", name, ha, hb)
		}
		checkStaged(t, name, a)
	}
	if after := treeHash(t, filepath.Join(root, "functions")) + treeHash(t, filepath.Join(root, "shared")); after != before {
		t.Fatal("staging changed functions/ or shared/")
	}
}

// TestStageTurnNeedsSkills: staging turn without any skill fails with a message that says to run
// scripts/update-skills; AllowNoSkills stages it with a warning; Skills stages another folder's skills in
// place of the installed ones (and their LICENSE), leaving the repository alone.
func TestStageTurnNeedsSkills(t *testing.T) {
	root := repoRoot(t)
	ctx := context.Background()
	empty := t.TempDir()
	err := staging.StageWith(ctx, root, "turn", filepath.Join(t.TempDir(), "turn"), staging.Options{Skills: empty})
	if !errors.Is(err, staging.ErrNoSkills) || !strings.Contains(err.Error(), "run scripts/update-skills") || !strings.Contains(err.Error(), "-allow-no-skills") {
		t.Fatalf("no skills: %v", err)
	}
	// On a checkout without installed skills, the plain Stage refuses the same way.
	if installed, _ := filepath.Glob(filepath.Join(root, "functions", "turn", "skills", "*", "SKILL.md")); len(installed) == 0 {
		if err := staging.Stage(ctx, root, "turn", filepath.Join(t.TempDir(), "turn")); !errors.Is(err, staging.ErrNoSkills) {
			t.Fatalf("clean checkout: %v", err)
		}
	}
	var warn bytes.Buffer
	out := filepath.Join(t.TempDir(), "turn")
	if err := staging.StageWith(ctx, root, "turn", out, staging.Options{Skills: empty, AllowNoSkills: true, Warn: &warn}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(warn.String(), "warning: turn is staged without Appwrite skills") || !strings.Contains(warn.String(), "scripts/update-skills") {
		t.Fatalf("warning %q", warn.String())
	}
	if n, _ := filepath.Glob(filepath.Join(out, "skills", "*", "SKILL.md")); len(n) != 0 {
		t.Fatalf("skills staged from an empty folder: %v", n)
	}
	if _, err := os.Stat(filepath.Join(out, "skills", "skills.go")); err != nil {
		t.Fatalf("the skills package itself is staged: %v", err)
	}

	out = filepath.Join(t.TempDir(), "turn")
	warn.Reset()
	opts := fixtureSkills(root)
	opts.Warn = &warn
	if err := staging.StageWith(ctx, root, "turn", out, opts); err != nil || warn.Len() != 0 {
		t.Fatalf("fixture: %v %q", err, warn.String())
	}
	got, _ := filepath.Glob(filepath.Join(out, "skills", "*", "SKILL.md"))
	for i := range got {
		got[i], _ = filepath.Rel(filepath.Join(out, "skills"), got[i])
	}
	if strings.Join(got, ",") != "appwrite-fixture-go/SKILL.md,appwrite-fixture-web/SKILL.md" {
		t.Fatalf("staged skills %v", got)
	}
	if _, err := os.Stat(filepath.Join(out, "skills", "LICENSE")); err == nil {
		t.Fatal("the installed skills' LICENSE is staged with other skills")
	}
	// Other functions ignore the skill options.
	if err := staging.StageWith(ctx, root, "title", filepath.Join(t.TempDir(), "title"), staging.Options{Skills: empty}); err != nil {
		t.Fatal(err)
	}
}

// checkStaged asserts the staged folder is a self-contained openruntimes/handler module.
func checkStaged(t *testing.T, name, dir string) {
	t.Helper()
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(mod), "module openruntimes/handler\n\ngo "+staging.GoDirective+"\n") {
		t.Errorf("%s: go.mod starts %q", name, string(mod[:min(len(mod), 60)]))
	}
	if strings.Contains(string(mod), "replace") {
		t.Errorf("%s: staged go.mod has a replace directive", name)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.sum")); err != nil {
		t.Errorf("%s: no go.sum: %v", name, err)
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(path, "_test.go") {
			t.Errorf("%s: test file staged: %s", name, path)
		}
		if strings.HasSuffix(path, ".go") {
			// Imports only: string constants may well mention appwrite-agent/ (domain-separation labels).
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return nil
			}
			for _, imp := range f.Imports {
				if strings.HasPrefix(strings.Trim(imp.Path.Value, "`\""), "appwrite-agent/") {
					t.Errorf("%s: %s still imports a workspace module (%s)", name, path, imp.Path.Value)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "main.go")); err != nil || !bytes.Contains(data, []byte("package handler")) {
		t.Errorf("%s: main.go is not package handler", name)
	}
}

// TestStagedFunctionsBuildAndServeLikeTheRuntime builds every staged function exactly as the open-runtimes
// Go image does and calls the binary over HTTP with the executor's headers.
func TestStagedFunctionsBuildAndServeLikeTheRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four binaries")
	}
	root := repoRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel) // after the parallel subtests, which run once this function has returned
	for _, name := range staging.Functions {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each in its own folders; the builds overlap instead of leaving a core idle
			tmp := t.TempDir()
			staged := filepath.Join(tmp, "build")
			if err := staging.StageWith(ctx, root, name, staged, fixtureSkills(root)); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(tmp, "server")
			if err := staging.BuildServer(ctx, root, staged, filepath.Join(tmp, "src"), bin); err != nil {
				t.Fatal(err)
			}
			env := []string{
				"OPEN_RUNTIMES_SECRET=open_runtime_secret",
				"OPEN_RUNTIMES_ENV=production",
				"OPEN_RUNTIMES_LOG_DIR=" + filepath.Join(tmp, "logs"),
				"APPWRITE_FUNCTION_DEPLOYMENT=dep-" + name,
				"AGENT_API_KEY=stage-key",
			}
			var model *scriptedllm.Server
			if name == "turn" {
				// A model on a busy day: a 429 asking for a one-second wait, a reset connection, and a 503 in the
				// middle of the subagent.
				soon := map[string]string{"retry-after-ms": "1"}
				model = scriptedllm.New(
					scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 429, Type: "rate_limit_exceeded", Message: "slow down"}, Header: map[string]string{"Retry-After": "1"}},
					scriptedllm.Reply{Reset: true},
					scriptedllm.Reply{JSON: `{"next":"platform","reason":"time","final_answer":""}`},
					scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{{ID: "a", Name: "current_time"}, {ID: "b", Name: "current_time"}}},
					scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 503, Message: "overloaded"}, Header: soon},
					scriptedllm.Reply{Content: "It is noon."})
				t.Cleanup(model.Close)
				env = append(env, "LLM_API_KEY=k", "LLM_MODEL=gpt-4o-mini", "LLM_BASE_URL="+model.BaseURL())
			}
			base := startBinary(t, ctx, bin, env)
			if name == "turn" {
				// The staged turn answers through the model's faults (retried by shared/llm); the two tool calls
				// of one answer each get their result back under their own id.
				req, _ := http.NewRequest("POST", base+"/", strings.NewReader(`{"message":"time?","history":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`))
				req.Header.Set("x-open-runtimes-secret", "open_runtime_secret")
				req.Header.Set("x-open-runtimes-timeout", "15")
				req.Header.Set("X-Session-API-Key", "stage-key")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				out, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 200 || !bytes.Contains(out, []byte(`"answer":"It is noon."`)) || bytes.Count(out, []byte(`"type":"tool_end"`)) != 2 {
					t.Fatalf("staged turn: %d %s", res.StatusCode, out)
				}
				reqs := model.Requests()
				if len(reqs) != 6 || !bytes.Contains(reqs[5].Body, []byte(`"tool_call_id":"a"`)) || !bytes.Contains(reqs[5].Body, []byte(`"tool_call_id":"b"`)) {
					t.Fatalf("%d model requests", len(reqs))
				}
				// The 429's Retry-After was honoured: the retry came at least a second after it (a lower bound the
				// function's own wait sets, not a race with the test's clock).
				if gap := reqs[1].Time.Sub(reqs[0].Time); gap < time.Second {
					t.Fatalf("the retry after a 429 with Retry-After: 1 came %v after it", gap)
				}

				// The staged skills are the ones the built binary embeds and names in its platform prompt.
				status, body, _ := call(t, base+"/meta", "open_runtime_secret", "X-Session-API-Key", "stage-key")
				var meta struct {
					Agents []struct{ Name, Prompt string } `json:"agents"`
				}
				if err := json.Unmarshal([]byte(body), &meta); err != nil || status != 200 {
					t.Fatalf("/meta: %d %q", status, body)
				}
				listed := false
				for _, a := range meta.Agents {
					listed = listed || a.Name == "platform" && strings.Contains(a.Prompt, "\n- appwrite-fixture-go: Fixture Go skill for tests.") &&
						strings.Contains(a.Prompt, "\n- appwrite-fixture-web: ")
				}
				if !listed {
					t.Fatalf("the staged turn's platform prompt does not list the fixture skills: %s", body)
				}
			}

			status, body, ct := call(t, base+"/health", "open_runtime_secret")
			if status != 200 || !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("/health: %d %s %q", status, ct, body)
			}
			var health struct {
				Status  string `json:"status"`
				BuildID string `json:"build_id"`
			}
			if err := json.Unmarshal([]byte(body), &health); err != nil || health.Status != "ok" || health.BuildID != "dep-"+name {
				t.Fatalf("/health body %q (%v)", body, err)
			}

			// chat answers every other GET with its page (client routes), so its unknown paths are the API's.
			unknown := "/no/such/path"
			if name == "chat" {
				unknown = "/api/no/such/path"
			}
			status, body, _ = call(t, base+unknown, "open_runtime_secret")
			var notFound struct{ Error, Message string }
			if status != 404 || json.Unmarshal([]byte(body), &notFound) != nil || notFound.Error != "not_found" {
				t.Fatalf("unknown path: %d %q", status, body)
			}

			status, body, _ = call(t, base+"/health", "wrong")
			if status != 500 || !strings.Contains(body, "x-open-runtimes-secret") {
				t.Fatalf("wrong secret: %d %q", status, body)
			}
		})
	}
}

func call(t *testing.T, url, secret string, header ...string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	req.Header.Set("x-open-runtimes-secret", secret)
	req.Header.Set("x-open-runtimes-timeout", "15")
	req.Header.Set("x-open-runtimes-logging", "enabled")
	req.Header.Set("x-open-runtimes-log-id", "test")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body), res.Header.Get("content-type")
}

// startBinary runs a runtime server binary on a free loopback port and waits for its start line.
func startBinary(t *testing.T, ctx context.Context, bin string, env []string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.CommandContext(ctx, bin, "-listen", addr)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	started := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ok := false
		for sc.Scan() {
			if strings.Contains(sc.Text(), "HTTP server successfully started!") && !ok {
				ok = true
				started <- true
			}
		}
		if !ok {
			started <- false
		}
	}()
	select {
	case ok := <-started:
		if !ok {
			t.Fatal("server exited before it started")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server did not start within 20 s")
	}
	return "http://" + addr
}
