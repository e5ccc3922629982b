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
	root, write := workspace(t, "functions/fast", "functions/clean")
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

// TestCheckPlainRefusesEnvironmentReads builds a function whose config.go reads the environment (allowed) and
// whose other shipped files do, each in another way: os.LookupEnv under another import name, os.Getenv passed
// as a value inside a call, Getenv through a dot import of os, syscall.Environ, a config.go that is not the
// function's own (in a sub-package) and a shared package's file. Each is refused, file by file, with no
// exception in docs/CONVENTIONS.md able to excuse it; the same reads in test files pass.
func TestCheckPlainRefusesEnvironmentReads(t *testing.T) {
	root, write := workspace(t, "functions/envy", "functions/tidy", "shared")
	write("shared/settings/settings.go", "// Package settings reads.\npackage settings\n\nimport \"os\"\n\n// Key reads.\nfunc Key() string { return os.Getenv(\"KEY\") }\n\n// From reads through getenv.\nfunc From(getenv func(string) string) string { return getenv(\"KEY\") }\n")
	write("shared/settings/config.go", "package settings\n\nimport \"os\"\n\n// Env lists.\nfunc Env() []string { return os.Environ() }\n")
	write("functions/envy/config.go", "package handler\n\nimport (\n\t\"os\"\n\n\t\"appwrite-agent/functions/envy/inner\"\n\t\"appwrite-agent/shared/settings\"\n)\n\n"+
		"// Key is read once.\nvar Key = settings.From(os.Getenv) + os.Getenv(\"OTHER\") + inner.All()\n")
	write("functions/envy/main.go", "// Package handler reads.\npackage handler\n\nimport \"appwrite-agent/shared/settings\"\n\n// Main reads.\nfunc Main() string { return Key + settings.Key() + settings.Env()[0] }\n")
	write("functions/envy/inner/lookup.go", "// Package inner reads.\npackage inner\n\nimport sys \"os\"\n\n// Lookup reads.\nfunc Lookup() bool { _, ok := sys.LookupEnv(\"X\"); return ok }\n")
	write("functions/envy/inner/pass.go", "package inner\n\nimport (\n\t\"os\"\n\t\"strings\"\n)\n\nfunc apply(f func(string) string) func(string) string { return f }\n\n"+
		"// Passed hands os.Getenv on.\nfunc Passed() string { return strings.ToLower(apply(os.Getenv)(\"X\")) }\n")
	write("functions/envy/inner/dot.go", "package inner\n\nimport . \"os\"\n\n// Dot reads.\nfunc Dot() string { return Getenv(\"X\") }\n")
	write("functions/envy/inner/sys.go", "package inner\n\nimport \"syscall\"\n\n// Sys lists.\nfunc Sys() []string { return syscall.Environ() }\n")
	write("functions/envy/inner/config.go", "package inner\n\nimport \"os\"\n\n// All lists.\nfunc All() string { return os.Environ()[0] + Dot() + Passed() + Sys()[0] + os.Getenv(\"Y\") }\n\nvar _ = Lookup\n")
	write("functions/tidy/config.go", "package handler\n\nimport \"os\"\n\n// Key is read once.\nvar Key = os.Getenv(\"KEY\")\n")
	write("functions/tidy/main.go", "// Package handler is tidy.\npackage handler\n\nimport \"os\"\n\n// Main uses os for something else.\nfunc Main() string { h, _ := os.Hostname(); return Key + h }\n")
	write("functions/tidy/main_test.go", "package handler\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestX(t *testing.T) { _ = os.Getenv(\"X\") + os.Environ()[0] }\n")
	write("docs/CONVENTIONS.md", "# Conventions\n\n"+staging.PlainExceptionsHeading+"\n\nNone.\n")

	ctx := context.Background()
	if err := staging.CheckPlain(ctx, root, []string{"tidy"}); err != nil {
		t.Fatalf("a function that reads the environment in its config.go only (and in a test) refused: %v", err)
	}
	err := staging.CheckPlain(ctx, root, []string{"envy", "tidy"})
	if err == nil {
		t.Fatal("environment reads outside config.go passed")
	}
	for _, want := range []string{
		"functions/envy/inner/lookup.go reads the environment (shipped by envy)",
		"functions/envy/inner/pass.go reads the environment",
		"functions/envy/inner/dot.go reads the environment",
		"functions/envy/inner/sys.go reads the environment",
		"functions/envy/inner/config.go reads the environment",
		"shared/settings/settings.go reads the environment",
		"shared/settings/config.go reads the environment",
		"shipped code reads the environment only in functions/<name>/config.go",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal does not name %q:\n%v", want, err)
		}
	}
	for _, allowed := range []string{"functions/envy/config.go", "functions/envy/main.go", "tidy"} {
		if strings.Contains(err.Error(), allowed) {
			t.Errorf("refusal names %s: %v", allowed, err)
		}
	}
	if strings.Contains(err.Error(), "sync.Pool") {
		t.Errorf("an environment read is reported as unplain code: %v", err)
	}

	write("docs/CONVENTIONS.md", "# Conventions\n\n"+staging.PlainExceptionsHeading+"\n\n- `functions/envy/inner/sys.go` reads the environment: starts 1 s sooner.\n")
	if err := staging.CheckPlain(ctx, root, []string{"envy"}); err == nil || !strings.Contains(err.Error(), "an exception reads") {
		t.Fatalf("an exception for an environment read: got %v", err)
	}
}

// TestShippedCodeIsPlain is scripts/stage -plain over this repository, in every run of scripts/test.
func TestShippedCodeIsPlain(t *testing.T) {
	if err := staging.CheckPlain(context.Background(), repoRoot(t), staging.Functions); err != nil {
		t.Fatal(err)
	}
}

// workspace makes a repository in a temporary folder whose go.work uses modules (folders, each with a go.mod
// naming it appwrite-agent/<folder>), and returns its root and a writer of its files.
func workspace(t *testing.T, modules ...string) (string, func(rel, body string)) {
	root := t.TempDir()
	write := writer(t, root)
	work := "go " + staging.GoDirective + "\n\nuse (\n"
	for _, m := range modules {
		work += "\t./" + m + "\n"
		write(m+"/go.mod", "module appwrite-agent/"+m+"\n\ngo "+staging.GoDirective+"\n")
	}
	write("go.work", work+")\n")
	return root, write
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
