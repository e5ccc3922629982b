package staging_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"appwrite-agent/scripts/internal/staging"
)

func TestNeverShips(t *testing.T) {
	for path, want := range map[string]bool{
		"appwrite-agent/shared/devkit":                            true,
		"appwrite-agent/shared/devkit/localappwrite":              true,
		"appwrite-agent/functions/turn/timeline/timelinetest":     true,
		"appwrite-agent/functions/mcp-events/internal/testissuer": true,
		"appwrite-agent/shared/protocol/internal/prototest":       true,
		"testing":                                true,
		"testing/fstest":                         true,
		"net/http/httptest":                      true,
		"appwrite-agent/shared/devkitchen":       false,
		"appwrite-agent/functions/turn/request":  false,
		"appwrite-agent/functions/turn/timeline": false,
		"appwrite-agent/shared/fnhttp":           false,
		"internal/synctest":                      false, // the standard library's own
		"github.com/modelcontextprotocol/go-sdk/internal/testutil": false, // a dependency's, not ours
	} {
		if got := staging.NeverShips(path); got != want {
			t.Errorf("NeverShips(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestStageRefusesDevAndTestCode stages a function whose non-test code reaches dev or test code (directly
// or through one of its own packages) and expects a refusal that names the importer; the same function
// with the import only in a _test.go file stages.
func TestStageRefusesDevAndTestCode(t *testing.T) {
	shared := filepath.Join(repoRoot(t), "shared")
	for _, c := range []struct {
		name, imp, importer string
		inTest              bool
	}{
		{name: "devkit", imp: "appwrite-agent/shared/devkit/fnhttptest", importer: "appwrite-agent/functions/leaky"},
		{name: "testing", imp: "testing", importer: "appwrite-agent/functions/leaky"},
		{name: "own test support", imp: "appwrite-agent/functions/leaky/helpertest", importer: "appwrite-agent/functions/leaky"},
		{name: "through a sub-package", imp: "appwrite-agent/functions/leaky/inner", importer: "appwrite-agent/functions/leaky/inner"},
		{name: "test file only", imp: "appwrite-agent/shared/devkit/fnhttptest", inTest: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			fn := filepath.Join(root, "functions", "leaky")
			write := writer(t, fn)
			write("go.mod", "module appwrite-agent/functions/leaky\n\ngo "+staging.GoDirective+"\n\nrequire appwrite-agent/shared v0.0.0\n\nreplace appwrite-agent/shared => "+shared+"\n")
			if err := os.WriteFile(filepath.Join(root, "go.work"), []byte("go "+staging.GoDirective+"\n\nuse (\n\t./functions/leaky\n\t"+shared+"\n)\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			write("helpertest/helpertest.go", "// Package helpertest is test support.\npackage helpertest\n\n// X is a value.\nconst X = 1\n")
			write("inner/inner.go", "// Package inner reaches test code.\npackage inner\n\nimport _ \"testing\"\n")
			mainImp := c.imp
			if c.inTest {
				write("main_test.go", "package handler\n\nimport _ \""+c.imp+"\"\n")
				mainImp = "appwrite-agent/shared/fnhttp"
			}
			write("main.go", "// Package handler is a test function.\npackage handler\n\nimport _ \""+mainImp+"\"\n\n// Main does nothing.\nfunc Main() {}\n")
			err := staging.Stage(context.Background(), root, "leaky", filepath.Join(t.TempDir(), "out"))
			if c.inTest {
				if err != nil {
					t.Fatalf("an import in a test file refused: %v", err)
				}
				return
			}
			want := c.importer + " imports "
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "never ships") {
				t.Fatalf("got %v, want a refusal containing %q", err, want)
			}
		})
	}
}
