package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/deploy"
	"appwrite-agent/shared/devkit/localappwrite"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/functions"
)

// TestAppwriteOnly: -appwrite-only starts the stand-in alone with an empty project and a key with deploy's
// scopes, writes stack.json (endpoint, projectId, apiKey) and prints the deploy line with them; the key passes
// deploy's checks, and the project has no function.
func TestAppwriteOnly(t *testing.T) {
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var out lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- runAppwriteOnly(ctx, &out, addr, dir, localappwrite.Options{Profile: localappwrite.ProfileCloud}, false)
	}()
	waitCtx, stopWaiting := context.WithTimeout(ctx, time.Minute) // a safety ceiling on the signal wait
	defer stopWaiting()
	if !out.waitFor(waitCtx, "running (Ctrl-C") {
		cancel()
		t.Fatalf("no start: %v\n%s", <-done, out.String())
	}
	raw, err := os.ReadFile(filepath.Join(dir, "stack.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Endpoint, ProjectID, APIKey string }
	if err := json.Unmarshal(raw, &st); err != nil || st.Endpoint != "http://"+addr+"/v1" || st.ProjectID != "deploy" || st.APIKey == "" {
		t.Fatalf("stack.json %s", raw)
	}
	if info, _ := os.Stat(filepath.Join(dir, "stack.json")); info.Mode().Perm() != 0o600 {
		t.Fatalf("stack.json mode %v", info.Mode())
	}
	line := "scripts/deploy -endpoint " + st.Endpoint + " -project deploy -key " + st.APIKey
	if !strings.Contains(out.String(), line) {
		t.Fatalf("dev did not print %q:\n%s", line, out.String())
	}
	// The key passes deploy's checks; a refusal would come before any staging, so a dry run that gets as far
	// as staging proves it (the staging itself is made to stop there).
	o := deploy.Options{Endpoint: st.Endpoint, Project: st.ProjectID, Key: st.APIKey, Log: &lockedBuffer{}, StateDir: t.TempDir(), DryRun: true,
		Stage: func(context.Context, string, string, string) error { return errStop }}
	if _, err := deploy.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), errStop.Error()) {
		t.Fatalf("deploy's checks with the key: %v", err)
	}
	fs := functions.New(appwrite.NewClient(appwrite.WithEndpoint(st.Endpoint), appwrite.WithProject(st.ProjectID), appwrite.WithKey(st.APIKey)))
	if _, err := fs.Get("turn"); err == nil {
		t.Fatal("the project is not empty")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// errStop ends a deploy at its staging.
var errStop = stopErr("the test stops deploy before staging")

type stopErr string

func (e stopErr) Error() string { return string(e) }
