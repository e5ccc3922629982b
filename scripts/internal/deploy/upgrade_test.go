package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/tables"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/functions"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

// fakeMain is the handler every fake function deploys: /health answers its deployment (as the real
// functions do), /env the variables the test checks. version changes the code.
const fakeMain = `package handler

// %s version %d

import (
	"os"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

func Main(c openruntimes.Context) openruntimes.Response {
	if c.Req.Path == "/health" {
		return c.Res.Json(map[string]any{"status": "ok", "build_id": os.Getenv("APPWRITE_FUNCTION_DEPLOYMENT")})
	}
	return c.Res.Json(map[string]any{"seal": os.Getenv("SEAL_KEYS"), "llm_model": os.Getenv("LLM_MODEL")})
}
`

// fakeStage stages a small handler per function instead of the product (the mechanics of deploy are the
// same; the end-to-end test in scripts/internal/deploye2e deploys the real functions): bump changes one
// function's code.
type fakeStage struct {
	mu       sync.Mutex
	versions map[string]int
}

func (f *fakeStage) bump(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.versions[name]++
}

func (f *fakeStage) stage(_ context.Context, _, name, dir string) error {
	f.mu.Lock()
	v := f.versions[name]
	f.mu.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module openruntimes/handler\n\ngo 1.25.5\n\nrequire github.com/open-runtimes/types-for-go/v4 v4.0.8\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "main.go"), []byte(fmt.Sprintf(fakeMain, name, v)), 0o644)
}

func needGo(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds deployments")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is needed to build deployments")
	}
}

func mustRun(t *testing.T, o Options, log *bytes.Buffer) *Summary {
	t.Helper()
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("deploy: %v\n%s", err, log.String())
	}
	return sum
}

func statuses(s *Summary) map[string]string {
	out := map[string]string{}
	for name, f := range s.Functions {
		out[name] = f.Status
	}
	return out
}

// TestDeployLifecycle deploys small handlers from an empty project, one run after the other (each build
// costs seconds, so one project goes through every case; the end-to-end test deploys the real functions and
// changes one of them):
//   - a dry run changes nothing;
//   - a first run that fails at a variable write says what was done and what was not; the next run finishes
//     it: everything created, the variables that must agree agreeing, the secrets stored as secrets;
//   - a run with nothing changed is up to date and uploads nothing;
//   - a function whose variable was changed in the Console keeps the user's value and is the only one
//     redeployed (Appwrite reports it not live);
//   - a deployment that fails to upload leaves the others deployed, and the next run deploys it alone;
//   - -rotate-keys prepends a key to the three key lists, keeps the old ones, and redeploys the functions
//     that hold them; from a machine without the copy of the keys it needs their current value.
func TestDeployLifecycle(t *testing.T) {
	needGo(t)
	s := startStandIn(t, localappwrite.Options{Builds: 5})
	var log bytes.Buffer
	fake := &fakeStage{versions: map[string]int{}}
	o := s.options(t, &log)
	o.Stage, o.LLMAPIKey, o.LLMModel = fake.stage, "sk-test-key", "gpt-test"

	o.DryRun = true
	dry := mustRun(t, o, &log)
	for name, st := range statuses(dry) {
		if st != StatusWillDeploy {
			t.Errorf("dry run: %s is %q", name, st)
		}
	}
	for _, want := range []string{"(dry run: nothing was changed)", "turn             create (go-1.26, timeout 900 s", "SEAL_KEYS (secret)  [create: generated once]",
		"chat/conversations             create (row security on, no table permission", "upload (2 files"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the plan lacks %q:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String(), "sk-test-key") {
		t.Fatal("the plan printed LLM_API_KEY")
	}
	if fns := s.functionsOf(t); len(fns) != 0 {
		t.Fatalf("a dry run created %v", fns)
	}

	o.DryRun = false
	aw := s.run.Server
	failedVariables(t, o, aw)
	first := mustRun(t, o, &log)
	if len(first.Uploaded) != 5 {
		t.Fatalf("first run uploaded %v", first.Uploaded)
	}
	for _, name := range functionNames {
		f := first.Functions[name]
		if f.Status != StatusDeployed || !strings.HasPrefix(f.URL, "http://") || !strings.Contains(f.URL, ".functions.localhost:") {
			t.Errorf("%s: %+v", name, f)
		}
		if active, _ := aw.ActiveDeployment(testProject, name); active != f.Deployment || len(active) != 36 {
			t.Errorf("%s: active deployment %q, summary %q", name, active, f.Deployment)
		}
		if d := aw.RuleDomains(testProject, name); len(d) != 1 || !strings.HasSuffix(d[0], ".functions.localhost") {
			t.Errorf("%s's domains %v", name, d)
		}
	}
	vars := func(fn string) map[string]string {
		v, err := aw.Variables(testProject, fn)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ingress, mcp, chat, turn, title := vars("webhook-ingress"), vars("mcp-events"), vars("chat"), vars("turn"), vars("title")
	if !strings.HasPrefix(mcp["SEAL_KEYS"], "k1:") || mcp["SEAL_KEYS"] != ingress["SEAL_KEYS"] ||
		mcp["APPWRITE_WEBHOOK_SECRET_KEYS"] != ingress["APPWRITE_WEBHOOK_SECRET_KEYS"] || mcp["SEAL_KEYS"] == mcp["APPWRITE_WEBHOOK_SECRET_KEYS"] {
		t.Fatalf("the event functions' keys do not agree: %v / %v", mcp, ingress)
	}
	if turn["AGENT_API_KEY"] == "" || turn["AGENT_API_KEY"] != title["AGENT_API_KEY"] || turn["AGENT_API_KEY"] != chat["AGENT_API_KEY"] {
		t.Fatal("AGENT_API_KEY differs")
	}
	if mcp["MCP_EVENTS_INGRESS_URL"] != first.Functions["webhook-ingress"].URL || ingress["MCP_EVENTS_INGRESS_URL"] != mcp["MCP_EVENTS_INGRESS_URL"] ||
		mcp["MCP_EVENTS_PUBLIC_URL"] != first.Functions["mcp-events"].URL || mcp["MCP_EVENTS_ALLOWED_ORIGINS"] != strings.TrimSuffix(first.ChatURL, "/") ||
		mcp["MCP_EVENTS_OAUTH_ISSUER"] != aw.Endpoint()+"/oauth2/console" || mcp["MCP_EVENTS_ENABLED"] != "true" {
		t.Fatalf("mcp-events %v", mcp)
	}
	if turn["TURN_PROGRESS_DATABASE"] != "chat" || chat["TURN_PROGRESS_TABLE"] != turn["TURN_PROGRESS_TABLE"] || title["TITLE_DATABASE_ID"] != "chat" ||
		title["TITLE_TABLE_ID"] != "conversations" || chat["CHAT_DATABASE_ID"] != "chat" || !strings.HasPrefix(chat["CHAT_SEAL_KEYS"], "k1:") {
		t.Fatalf("turn %v title %v chat %v", turn, title, chat)
	}
	if turn["LLM_API_KEY"] != "sk-test-key" || title["LLM_MODEL"] != "gpt-test" || turn["SAFEHTTP_ALLOW"] != localAllow || chat["SAFEHTTP_ALLOW_HTTP"] != "true" {
		t.Fatalf("turn %v", turn)
	}
	for fn, want := range map[string][]string{"turn": {"AGENT_API_KEY", "LLM_API_KEY"}, "mcp-events": {"APPWRITE_WEBHOOK_SECRET_KEYS", "SEAL_KEYS"},
		"chat": {"AGENT_API_KEY", "CHAT_SEAL_KEYS"}} {
		if got, _ := aw.SecretVariables(testProject, fn); !slices.Equal(got, want) {
			t.Errorf("%s's secret variables %v, want %v", fn, got, want)
		}
	}
	db := tablesdb.New(appwrite.NewClient(appwrite.WithEndpoint(aw.Endpoint()), appwrite.WithProject(testProject), appwrite.WithKey(s.key)))
	for _, tb := range append(tables.Chat(), tables.Progress(tables.DefaultProgressTable)) {
		got, err := db.GetTable("chat", tb.ID)
		if err != nil || !got.RowSecurity || len(got.Permissions) != 0 || len(got.Columns) != len(tb.Columns) {
			t.Errorf("table %s: %+v %v", tb.ID, got, err)
		}
	}
	raw, _ := json.Marshal(first)
	var shape map[string]json.RawMessage
	_ = json.Unmarshal(raw, &shape)
	if len(shape) != 3 || shape["functions"] == nil || shape["chat_url"] == nil || shape["manual_steps"] == nil {
		t.Fatalf("the JSON summary %s", raw)
	}
	if len(first.ManualSteps) != 1 || !strings.Contains(first.ManualSteps[0], "Add a Web platform") ||
		!strings.Contains(first.ManualSteps[0], "/console/project-default-"+testProject+"/overview/platforms") {
		t.Fatalf("manual steps %q", first.ManualSteps)
	}
	state, err := os.ReadFile(filepath.Join(o.StateDir, strings.ReplaceAll(strings.TrimPrefix(s.run.URL, "http://"), ":", "_")+"_"+testProject+".json"))
	if err != nil || strings.Contains(string(state), "sk-test-key") || !strings.Contains(string(state), mcp["SEAL_KEYS"]) {
		t.Fatalf("this machine's copy of the secrets: %v\n%s", err, state)
	}
	if info, _ := os.Stat(filepath.Join(o.StateDir)); info.Mode().Perm() != 0o700 {
		t.Fatalf("state folder mode %v", info.Mode())
	}
	for _, secret := range []string{mcp["SEAL_KEYS"], turn["AGENT_API_KEY"], chat["CHAT_SEAL_KEYS"], "sk-test-key"} {
		if strings.Contains(log.String(), secret) {
			t.Fatal("a secret was printed")
		}
	}

	// Nothing changed: nothing is uploaded or changed.
	second := mustRun(t, o, &log)
	if len(second.Uploaded) != 0 || second.Changes != 0 {
		t.Fatalf("second run uploaded %v, %d changes\n%s", second.Uploaded, second.Changes, log.String())
	}
	for name, f := range second.Functions {
		if f.Status != StatusUpToDate || f.Deployment != first.Functions[name].Deployment {
			t.Errorf("second run: %s %+v", name, f)
		}
	}

	// A variable changed in the Console: the user's value is kept, and the function is redeployed so that it
	// runs with it (Appwrite marks it not live).
	fs := functions.New(appwrite.NewClient(appwrite.WithEndpoint(aw.Endpoint()), appwrite.WithProject(testProject), appwrite.WithKey(s.key)))
	list, err := fs.ListVariables("turn")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range list.Variables {
		if v.Key == "LLM_MODEL" {
			if _, err := fs.UpdateVariable("turn", v.Id, "LLM_MODEL", fs.WithUpdateVariableValue("mine")); err != nil {
				t.Fatal(err)
			}
		}
	}
	o.LLMModel = ""
	third := mustRun(t, o, &log)
	if !slices.Equal(third.Uploaded, []string{"turn"}) || vars("turn")["LLM_MODEL"] != "mine" || !strings.Contains(log.String(), "(Appwrite reports it not live)") {
		t.Fatalf("after a Console change: %v, LLM_MODEL %q", third.Uploaded, vars("turn")["LLM_MODEL"])
	}

	failedUpload(t, o, aw, fake, &log)
	rotateKeys(t, o, aw, &log)
	if os.Getenv("DEPLOY_TEST_LOG") != "" {
		t.Log(log.String())
	}
}

// failedVariables runs deploy on the empty project with chat's first variable write failing: the functions and
// their domains are made, nothing is deployed, and the error says so.
func failedVariables(t *testing.T, o Options, aw *localappwrite.Server) {
	t.Helper()
	aw.FailRequests("POST", "/v1/functions/chat/variables", 1)
	sum, err := Run(context.Background(), o)
	var inc *Incomplete
	if !errors.As(err, &inc) {
		t.Fatalf("want an incomplete run, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"stopped halfway: set chat's variables", "Done:\n  ✓ create function turn", "✓ set webhook-ingress's variables",
		"Not done:\n  · set chat's variables", "· create database chat", "· deploy turn (new function)", "Run the same command again to finish"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q:\n%s", want, msg)
		}
	}
	if sum == nil || sum.Functions["turn"].Status != StatusNotReached {
		t.Fatalf("summary %+v", sum)
	}
}

// failedUpload changes chat and mcp-events and fails chat's upload once: mcp-events is deployed, chat is not,
// and the error says so; the next run deploys chat alone.
func failedUpload(t *testing.T, o Options, aw *localappwrite.Server, fake *fakeStage, log *bytes.Buffer) {
	t.Helper()
	fake.bump("chat")
	fake.bump("mcp-events")
	aw.FailRequests("POST", "/v1/functions/chat/deployments", 1)
	sum, err := Run(context.Background(), o)
	var inc *Incomplete
	if !errors.As(err, &inc) {
		t.Fatalf("want an incomplete run, got %v", err)
	}
	if st := statuses(sum); st["chat"] != StatusFailed || st["mcp-events"] != StatusDeployed || st["turn"] != StatusUpToDate {
		t.Fatalf("statuses %v", st)
	}
	if !slices.Contains(inc.Done, "deploy mcp-events (deployment "+sum.Functions["mcp-events"].Deployment+")") ||
		!slices.ContainsFunc(inc.NotDone, func(s string) bool {
			return strings.HasPrefix(s, "deploy chat (code changed since deployment") && strings.Contains(s, "HTTP 500")
		}) {
		t.Fatalf("done %q\nnot done %q", inc.Done, inc.NotDone)
	}
	sum = mustRun(t, o, log)
	if !slices.Equal(sum.Uploaded, []string{"chat"}) || sum.Functions["chat"].Status != StatusDeployed {
		t.Fatalf("the next run %v %v", sum.Uploaded, statuses(sum))
	}
}

// rotateKeys: -rotate-keys prepends a new key to the three key lists and keeps the old ones, on every
// function that holds them, which are then redeployed; from a machine without the copy of the keys it needs
// their current value in the environment.
func rotateKeys(t *testing.T, o Options, aw *localappwrite.Server, log *bytes.Buffer) {
	t.Helper()
	before, _ := aw.Variables(testProject, "mcp-events")
	chatBefore, _ := aw.Variables(testProject, "chat")

	o.RotateKeys = true
	sum := mustRun(t, o, log)
	if !slices.Equal(sum.Uploaded, []string{"mcp-events", "webhook-ingress", "chat"}) {
		t.Fatalf("rotation redeployed %v", sum.Uploaded)
	}
	after, _ := aw.Variables(testProject, "mcp-events")
	ingress, _ := aw.Variables(testProject, "webhook-ingress")
	chatAfter, _ := aw.Variables(testProject, "chat")
	for _, k := range []string{"SEAL_KEYS", "APPWRITE_WEBHOOK_SECRET_KEYS"} {
		if !strings.HasPrefix(after[k], "k2:") || !strings.HasSuffix(after[k], ","+before[k]) || ingress[k] != after[k] {
			t.Errorf("%s: %q → %q (ingress %q)", k, before[k], after[k], ingress[k])
		}
	}
	if !strings.HasSuffix(chatAfter["CHAT_SEAL_KEYS"], ","+chatBefore["CHAT_SEAL_KEYS"]) || chatAfter["AGENT_API_KEY"] != chatBefore["AGENT_API_KEY"] {
		t.Fatalf("chat %q → %q", chatBefore["CHAT_SEAL_KEYS"], chatAfter["CHAT_SEAL_KEYS"])
	}
	// The domain of mcp-events runs the new keys.
	if code, env := getJSON(t, sum.Functions["mcp-events"].URL+"/env"); code != 200 || env["seal"] != after["SEAL_KEYS"] {
		t.Fatalf("mcp-events runs with %d %v", code, env)
	}

	// Another machine (no copy of the keys) cannot keep the old keys without being told them.
	o.StateDir = t.TempDir()
	_, err := Run(context.Background(), o)
	var r *Refusal
	if !errors.As(err, &r) || !strings.Contains(err.Error(), "-rotate-keys keeps the current keys of SEAL_KEYS, and Appwrite never returns a secret variable's value: this machine has no copy of it") ||
		!strings.Contains(err.Error(), "Set SEAL_KEYS in deploy's environment") {
		t.Fatalf("rotation without a copy: %v", err)
	}
	current := map[string]string{"SEAL_KEYS": after["SEAL_KEYS"], "APPWRITE_WEBHOOK_SECRET_KEYS": after["APPWRITE_WEBHOOK_SECRET_KEYS"], "CHAT_SEAL_KEYS": chatAfter["CHAT_SEAL_KEYS"]}
	o.Getenv = func(k string) string { return current[k] }
	o.DryRun, o.LLMAPIKey = true, "" // nor does it know LLM_API_KEY: given again, it would be written again

	log2 := &bytes.Buffer{}
	o.Log = log2
	if sum := mustRun(t, o, log2); sum.Functions["mcp-events"].Status != StatusWillDeploy || sum.Functions["turn"].Status != StatusUpToDate ||
		!strings.Contains(log2.String(), "SEAL_KEYS (secret)  [update: a new key first, the old ones kept (-rotate-keys; from SEAL_KEYS in the environment)]") {
		t.Fatalf("rotation with the keys in the environment: %v\n%s", statuses(sum), log2.String())
	}
}
