// Package snapshot pins a surface the project promises to keep (a tool's name, description and schema,
// the event catalog, a protocol answer) in one file under the test's testdata/, one file per surface,
// and fails a test when the surface changes, like github-mcp-server's toolsnaps.
//
// There is one switch for every snapshot and golden file of the repository: run the tests with
// UPDATE_SNAPSHOTS=1 (for example `UPDATE_SNAPSHOTS=1 go test ./...` in a module) to rewrite the files
// from what the code produces now, then review the diff. The switch is an environment variable, not a
// test flag, so it applies to every package of a `go test ./...` run without each package having to
// define it.
package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// EnvUpdate is the switch: when it is set to a non-empty value other than "0" or "false", Check writes
// the snapshots instead of comparing them.
const EnvUpdate = "UPDATE_SNAPSHOTS"

// Update reports whether this test run rewrites snapshots (EnvUpdate).
func Update() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvUpdate))) {
	case "", "0", "false":
		return false
	}
	return true
}

// Check compares got with the file at path. When Update is on it writes got to path instead (creating
// its folder). A missing file or a difference fails t with the first differing line and how to accept
// the change.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if Update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("snapshot %s: %v (run the test with %s=1 to create it)", path, err, EnvUpdate)
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("snapshot %s changed: %s\nIf the change is deliberate, rerun with %s=1 and review the diff. Got:\n%s",
			path, firstDifference(want, got), EnvUpdate, got)
	}
}

// JSON is Check of v encoded as indented JSON: two spaces, no HTML escaping, a final newline.
func JSON(t testing.TB, path string, v any) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatalf("snapshot %s: encode: %v", path, err)
	}
	Check(t, path, buf.Bytes())
}

// firstDifference describes the first line where got and want differ.
func firstDifference(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return fmt.Sprintf("line %d is %q, was %q", i+1, gl, wl)
		}
	}
	return "same lines, different bytes"
}

// Tool is the pinned surface of one tool the model sees: what it is called, what it says it does and the
// JSON Schema of its arguments. Each tool has its own snapshot file.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// CheckTool is JSON of the tool's surface; the parameters must be a JSON Schema object.
func CheckTool(t testing.TB, path string, tool Tool) {
	t.Helper()
	var schema map[string]any
	if err := json.Unmarshal(tool.Parameters, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("snapshot %s: the parameters of %s are not a JSON Schema object (%v): %s", path, tool.Name, err, tool.Parameters)
		return
	}
	JSON(t, path, tool)
}
