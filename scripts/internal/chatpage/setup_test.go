package chatpage

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"appwrite-agent/scripts/internal/stack"
	"appwrite-agent/scripts/internal/staging"
	"appwrite-agent/shared/devkit/scriptedllm"
)

// needPage skips a test that needs the built page (under -short, with CHAT_WEB_UNBUILT, or before
// scripts/build-chat-web ran) and returns the repository root and axe-core's script (a dev dependency of the
// page, installed by scripts/build-chat-web).
func needPage(t *testing.T) (root, axe string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the whole stack and a browser")
	}
	if why := os.Getenv("CHAT_WEB_UNBUILT"); why != "" {
		t.Skip(why)
	}
	root, err := staging.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(root, "functions", "chat", "web")
	if _, err := os.Stat(filepath.Join(web, "dist", "index.html")); err != nil {
		t.Skip("the chat page is not built (scripts/build-chat-web builds it; scripts/test runs it first)")
	}
	js, err := os.ReadFile(filepath.Join(web, "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core (a dev dependency of the page, installed by scripts/build-chat-web): %v", err)
	}
	return root, string(js)
}

// modelEnv is the configuration of a function that calls the scripted model as model m (a request tells
// which function sent it by its model).
func modelEnv(model *scriptedllm.Server, m string) []string {
	return []string{"LLM_API_KEY=scripted", "LLM_MODEL=" + m, "LLM_BASE_URL=" + model.BaseURL()}
}

// startStack runs the stack for one test: stopped when the test ends, its output printed when it failed.
func startStack(t *testing.T, opts stack.Options) *stack.Stack {
	t.Helper()
	var logs bytes.Buffer
	opts.Output = &logs
	st, err := stack.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Stop()
		if t.Failed() {
			t.Logf("stack output:\n%s", logs.String())
		}
	})
	return st
}
