package snapshot_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"appwrite-agent/shared/devkit/snapshot"
)

// recorder is a testing.TB that records a failure instead of stopping the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	if r.failed == "" {
		r.failed = fmt.Sprintf(format, args...)
	}
}
func (r *recorder) Fatal(args ...any) { r.failed = "fatal" }

func TestCheckComparesAndUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "surface.json")
	t.Setenv(snapshot.EnvUpdate, "")
	r := &recorder{TB: t}
	snapshot.Check(r, path, []byte("a\n"))
	if !strings.Contains(r.failed, "UPDATE_SNAPSHOTS=1") {
		t.Fatalf("a missing snapshot must fail and say how to create it: %q", r.failed)
	}

	t.Setenv(snapshot.EnvUpdate, "1")
	snapshot.JSON(t, path, map[string]string{"html": "<b>&"})
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "{\n  \"html\": \"<b>&\"\n}\n" {
		t.Fatalf("written %q, %v", data, err)
	}

	t.Setenv(snapshot.EnvUpdate, "0")
	r = &recorder{TB: t}
	snapshot.JSON(r, path, map[string]string{"html": "<b>&"})
	if r.failed != "" {
		t.Fatalf("an equal surface failed: %q", r.failed)
	}
	snapshot.JSON(r, path, map[string]string{"html": "<i>"})
	if !strings.Contains(r.failed, "changed") || !strings.Contains(r.failed, `line 2 is`) {
		t.Fatalf("a changed surface must fail with the first differing line: %q", r.failed)
	}
}

func TestUpdateSwitch(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "FALSE": false, "1": true, "true": true, "yes": true} {
		t.Setenv(snapshot.EnvUpdate, v)
		if got := snapshot.Update(); got != want {
			t.Errorf("%s=%q: Update() = %v", snapshot.EnvUpdate, v, got)
		}
	}
}
