package staging_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"appwrite-agent/scripts/internal/staging"
)

// TestCheckPlainNamesEachFile builds a function whose shipped code imports unsafe, uses sync.Pool under another
// import name and carries assembly for an architecture other than the machine's, and one whose test files do all
// that: the first is refused file by file, the second passes, and an exception in docs/CONVENTIONS.md excuses
// exactly the file and kind it names.
func TestCheckPlainNamesEachFile(t *testing.T) {
	root := t.TempDir()
	write := writer(t, root)
	write("go.work", "go "+staging.GoDirective+"\n\nuse (\n\t./functions/fast\n\t./functions/clean\n)\n")
	for _, fn := range []string{"fast", "clean"} {
		write("functions/"+fn+"/go.mod", "module appwrite-agent/functions/"+fn+"\n\ngo "+staging.GoDirective+"\n")
	}
	write("functions/fast/main.go", "// Package handler is fast.\npackage handler\n\nimport _ \"appwrite-agent/functions/fast/inner\"\n\n// Main does nothing.\nfunc Main() {}\n")
	write("functions/fast/inner/unsafe.go", "// Package inner is fast.\npackage inner\n\nimport \"unsafe\"\n\n// S converts.\nfunc S(b []byte) string { return unsafe.String(&b[0], len(b)) }\n")
	write("functions/fast/inner/pool.go", "package inner\n\nimport s \"sync\"\n\nvar p = s.Pool{}\n\n// Get gets.\nfunc Get() any { return p.Get() }\n")
	write("functions/fast/inner/asm_riscv64.s", "// assembly for an architecture this machine is not\n")
	write("functions/fast/inner/asm_decl.go", "//go:build never\n\npackage inner\n")
	write("functions/clean/main.go", "// Package handler is plain.\npackage handler\n\nimport \"sync\"\n\nvar mu sync.Mutex\n\n// Main locks.\nfunc Main() { mu.Lock(); mu.Unlock() }\n")
	write("functions/clean/main_test.go", "package handler\n\nimport (\n\t\"sync\"\n\t\"testing\"\n\t\"unsafe\"\n)\n\nvar p sync.Pool\n\nfunc TestX(t *testing.T) { _ = unsafe.Sizeof(p) }\n")
	write("docs/CONVENTIONS.md", "# Conventions\n\n"+staging.PlainExceptionsHeading+"\n\nNone.\n")

	ctx := context.Background()
	if err := staging.CheckPlain(ctx, root, []string{"clean"}); err != nil {
		t.Fatalf("plain code (and a test file that is not) refused: %v", err)
	}
	err := staging.CheckPlain(ctx, root, []string{"fast", "clean"})
	if err == nil {
		t.Fatal("unsafe, sync.Pool and assembly in shipped code passed")
	}
	for _, want := range []string{
		"functions/fast/inner/unsafe.go imports unsafe",
		"functions/fast/inner/pool.go uses sync.Pool",
		"functions/fast/inner/asm_riscv64.s carries assembly",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "clean") {
		t.Errorf("refusal names the plain function: %v", err)
	}

	write("docs/CONVENTIONS.md", "# Conventions\n\n"+staging.PlainExceptionsHeading+"\n\n"+
		"- `functions/fast/inner/unsafe.go` imports unsafe: pages open 2 s sooner.\n\n## Next\n\n- `x` not an exception\n")
	err = staging.CheckPlain(ctx, root, []string{"fast"})
	if err == nil || strings.Contains(err.Error(), "unsafe.go") || !strings.Contains(err.Error(), "pool.go uses sync.Pool") {
		t.Fatalf("with unsafe.go excused, got %v", err)
	}

	write("docs/CONVENTIONS.md", "# Conventions\n\n"+staging.PlainExceptionsHeading+"\n\n- `functions/fast/inner/unsafe.go` imports unsafe\n")
	if err := staging.CheckPlain(ctx, root, []string{"fast"}); err == nil || !strings.Contains(err.Error(), "an exception reads") {
		t.Fatalf("an exception without a figure: got %v", err)
	}
}

// TestShippedCodeIsPlain is the check scripts/test runs first (scripts/stage -plain), over this repository.
func TestShippedCodeIsPlain(t *testing.T) {
	if err := staging.CheckPlain(context.Background(), repoRoot(t), staging.Functions); err != nil {
		t.Fatal(err)
	}
}

// writer returns a function that writes body to the file rel below dir, making its folders.
func writer(t *testing.T, dir string) func(rel, body string) {
	return func(rel, body string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
