package handler_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEngineKnowsToolsOnlyThroughTheirInterface holds the turn's layering: the engine (domain) imports
// no concrete tool, MCP or wiring package; the tool packages import neither the engine nor each other;
// builtins and main.go do the wiring (docs/CONVENTIONS.md "Follow one request").
func TestEngineKnowsToolsOnlyThroughTheirInterface(t *testing.T) {
	const mod = "appwrite-agent/functions/turn"
	forbidden := map[string][]string{
		"engine":   {mod, mod + "/builtins", mod + "/tools", mod + "/skills", mod + "/mcptools", mod + "/progress"},
		"mcptools": {mod, mod + "/builtins", mod + "/engine", mod + "/tools", mod + "/progress"},
		"tools":    {mod, mod + "/builtins", mod + "/engine", mod + "/mcptools", mod + "/progress"},
		"toolapi":  {mod, mod + "/builtins", mod + "/engine", mod + "/tools", mod + "/mcptools"},
	}
	for dir, bad := range forbidden {
		imports := nonTestImports(t, dir)
		if len(imports) == 0 {
			t.Fatalf("%s: no imports read", dir)
		}
		for _, b := range bad {
			if file, ok := imports[b]; ok {
				t.Errorf("%s imports %s (%s)", dir, b, file)
			}
		}
	}
}

// nonTestImports maps every import path of the package in dir (test files left out) to a file using it.
func nonTestImports(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[p] = name
		}
	}
	return out
}
