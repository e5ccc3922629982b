// Package staging turns a function module of this workspace into what Appwrite builds: a self-contained Go
// module named openruntimes/handler, with the shared packages it imports copied in and their imports
// rewritten, and a complete go.mod/go.sum. It also builds a staged folder the way the open-runtimes Go
// image does (a separate openruntimes/server module that replaces openruntimes/handler with the folder and
// calls handler.Main), so that what is staged is what is tested.
package staging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"appwrite-agent/shared/devkit/runtimebuild"
)

// Module paths of this workspace and of the deployed function.
const (
	SharedModule   = "appwrite-agent/shared"
	FunctionPrefix = "appwrite-agent/functions/"
	HandlerModule  = runtimebuild.HandlerModule
	ServerModule   = runtimebuild.ServerModule
	// GoDirective is the go line of every staged module; it must not exceed the runtime image's Go.
	GoDirective = runtimebuild.GoDirective
)

// Functions lists the deployable functions, by folder name under functions/.
var Functions = []string{"turn", "title", "mcp-events", "webhook-ingress", "chat"}

// pkg is the part of `go list -json` output staging reads.
type pkg struct {
	ImportPath     string
	Dir            string
	Standard       bool
	GoFiles        []string
	IgnoredGoFiles []string
	SFiles         []string // assembly for this GOOS/GOARCH (refused by CheckPlain unless excused)
	HFiles         []string
	// IgnoredOtherFiles holds the assembly of other architectures, staged too: the build may be for one
	// that the staging machine is not.
	IgnoredOtherFiles []string
	EmbedFiles        []string
	CgoFiles          []string
	Imports           []string
	Module            *struct {
		Path    string
		Version string
		Replace *struct{ Path, Version string }
	}
}

// SkillsPackage is the turn function's package that embeds the installed Appwrite skills.
const SkillsPackage = FunctionPrefix + "turn/skills"

// Options change what Stage stages.
type Options struct {
	// Skills, when set, is a folder of <name>/SKILL.md staged as the turn function's skills instead of those
	// installed in functions/turn/skills (tests stage functions/turn/testdata/skills, so that a clean
	// checkout stages a turn with skills).
	Skills string
	// AllowNoSkills stages turn even when it has no skill: a warning goes to Warn instead of the error.
	AllowNoSkills bool
	// Warn receives warnings, one line each (os.Stderr when nil).
	Warn io.Writer
}

// ErrNoSkills is the error of staging turn without any Appwrite skill.
var ErrNoSkills = errors.New("no Appwrite skills are installed in functions/turn/skills: run scripts/update-skills " +
	"to install them before a deploy (or stage with -allow-no-skills to deploy without them)")

// Stage is StageWith without options: staging turn without installed skills fails with ErrNoSkills.
func Stage(ctx context.Context, root, name, outDir string) error {
	return StageWith(ctx, root, name, outDir, Options{})
}

// StageWith writes the deployable module of function name (a folder under root/functions) into outDir,
// replacing whatever was there. It reads root/functions/<name> and root/shared (and opts.Skills) and
// never writes to them. The result depends only on those sources: staging twice gives the same bytes.
// The turn function must have at least one Appwrite skill (ErrNoSkills) unless opts.AllowNoSkills.
func StageWith(ctx context.Context, root, name, outDir string, opts Options) error {
	fnDir := filepath.Join(root, "functions", name)
	if _, err := os.Stat(filepath.Join(fnDir, "go.mod")); err != nil {
		return fmt.Errorf("stage %s: no function module at %s: %w", name, fnDir, err)
	}
	pkgs, err := listDeps(ctx, fnDir)
	if err != nil {
		return fmt.Errorf("stage %s: %w", name, err)
	}
	fnModule := FunctionPrefix + name
	rewrite := func(path string) (string, bool) { return stagedPath(name, path) }

	if err := checkShips(pkgs); err != nil {
		return fmt.Errorf("stage %s: %w", name, err)
	}
	if err := os.RemoveAll(outDir); err != nil {
		return fmt.Errorf("stage %s: clear %s: %w", name, outDir, err)
	}
	requires := map[string]string{}
	for _, p := range pkgs {
		if p.Standard || p.Module == nil {
			continue
		}
		target, ours := rewrite(p.ImportPath)
		if !ours {
			if p.Module.Replace != nil {
				return fmt.Errorf("stage %s: dependency %s is replaced (%s); a deployed function can only use published modules", name, p.Module.Path, p.Module.Replace.Path)
			}
			requires[p.Module.Path] = p.Module.Version
			continue
		}
		if len(p.CgoFiles) > 0 {
			return fmt.Errorf("stage %s: package %s uses cgo, which the runtime image does not build", name, p.ImportPath)
		}
		if target != HandlerModule && strings.HasPrefix(p.ImportPath, fnModule+"/shared") {
			return fmt.Errorf("stage %s: function sub-package %s collides with the staged shared/ folder", name, p.ImportPath)
		}
		dst := filepath.Join(outDir, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(target, HandlerModule), "/")))
		embeds := p.EmbedFiles
		if p.ImportPath == SkillsPackage && opts.Skills != "" {
			if embeds, err = replaceSkills(embeds, opts.Skills, dst); err != nil {
				return fmt.Errorf("stage %s: %w", name, err)
			}
		}
		files := append(append(append([]string{}, p.GoFiles...), p.IgnoredGoFiles...), embeds...)
		files = append(append(files, p.SFiles...), p.HFiles...)
		for _, f := range p.IgnoredOtherFiles {
			if strings.HasSuffix(f, ".s") || strings.HasSuffix(f, ".h") {
				files = append(files, f)
			}
		}
		sort.Strings(files)
		for _, f := range files {
			if err := copyFile(filepath.Join(p.Dir, f), filepath.Join(dst, f), rewrite); err != nil {
				return fmt.Errorf("stage %s: %w", name, err)
			}
		}
		if p.ImportPath == SkillsPackage {
			n, err := countSkills(dst)
			if err != nil {
				return fmt.Errorf("stage %s: %w", name, err)
			}
			if n == 0 {
				if !opts.AllowNoSkills {
					return fmt.Errorf("stage %s: %w", name, ErrNoSkills)
				}
				warn := opts.Warn
				if warn == nil {
					warn = os.Stderr
				}
				fmt.Fprintln(warn, "warning: turn is staged without Appwrite skills (the agent falls back to the docs); "+
					"run scripts/update-skills before a deploy")
			}
		}
	}
	if _, err := os.Stat(filepath.Join(outDir, "main.go")); err != nil {
		return fmt.Errorf("stage %s: the function has no main.go at its root (appwrite.json names it as entrypoint)", name)
	}

	var mod bytes.Buffer
	fmt.Fprintf(&mod, "module %s\n\ngo %s\n", HandlerModule, GoDirective)
	if len(requires) > 0 {
		paths := make([]string, 0, len(requires))
		for p := range requires {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		mod.WriteString("\nrequire (\n")
		for _, p := range paths {
			fmt.Fprintf(&mod, "\t%s %s\n", p, requires[p])
		}
		mod.WriteString(")\n")
	}
	if err := os.WriteFile(filepath.Join(outDir, "go.mod"), mod.Bytes(), 0o644); err != nil {
		return fmt.Errorf("stage %s: %w", name, err)
	}
	if out, err := goCmd(ctx, outDir, "mod", "tidy"); err != nil {
		return fmt.Errorf("stage %s: go mod tidy in %s: %w\n%s", name, outDir, err, out)
	}
	return nil
}

// stagedPath maps the import path of a package that Stage copies into function name's deployment (the
// function's own packages and shared/) to its path in the staged handler module; ok is false for every other
// package, which the deployment requires as a published module.
func stagedPath(name, path string) (staged string, ok bool) {
	fnModule := FunctionPrefix + name
	switch {
	case path == fnModule:
		return HandlerModule, true
	case strings.HasPrefix(path, fnModule+"/"):
		return HandlerModule + strings.TrimPrefix(path, fnModule), true
	case path == SharedModule || strings.HasPrefix(path, SharedModule+"/"):
		return HandlerModule + "/shared" + strings.TrimPrefix(path, SharedModule), true
	}
	return "", false
}

// DevkitPrefix is the import path of the dev and test tooling (shared/devkit): it never ships.
const DevkitPrefix = SharedModule + "/devkit"

// NeverShips reports whether the package at import path must stay out of a deployment: the dev and test
// tooling under shared/devkit, the workspace's test-support packages, named as the standard library names
// them (timelinetest, prototest, testissuer, like httptest), and the standard library's testing packages
// (testing, testing/..., net/http/httptest).
func NeverShips(path string) bool {
	switch {
	case path == DevkitPrefix || strings.HasPrefix(path, DevkitPrefix+"/"):
		return true
	case path == "testing" || strings.HasPrefix(path, "testing/") || path == "net/http/httptest":
		return true
	case path == SharedModule || strings.HasPrefix(path, SharedModule+"/") || strings.HasPrefix(path, FunctionPrefix):
		last := path[strings.LastIndex(path, "/")+1:]
		return strings.HasPrefix(last, "test") || strings.HasSuffix(last, "test")
	}
	return false
}

// checkShips fails when the function's non-test import graph reaches a package that NeverShips, naming
// the package that imports it.
func checkShips(pkgs []pkg) error {
	var errs []error
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if NeverShips(imp) && !NeverShips(p.ImportPath) {
				errs = append(errs, fmt.Errorf("%s imports %s, which is dev or test code and never ships (see docs/CONVENTIONS.md)", p.ImportPath, imp))
			}
		}
	}
	return errors.Join(errs...)
}

// replaceSkills copies the <name>/SKILL.md files of dir into dst (the staged skills package) and returns
// the package's embedded files without the installed skills and their LICENSE.
func replaceSkills(embeds []string, dir, dst string) ([]string, error) {
	var keep []string
	for _, f := range embeds {
		if f == "LICENSE" || path.Base(f) == "SKILL.md" && strings.Count(f, "/") == 1 {
			continue
		}
		keep = append(keep, f)
	}
	found, err := filepath.Glob(filepath.Join(dir, "*", "SKILL.md"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("skills folder: %w", err)
	}
	for _, src := range found {
		data, err := os.ReadFile(src)
		if err != nil {
			return nil, err
		}
		out := filepath.Join(dst, filepath.Base(filepath.Dir(src)), "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			return nil, err
		}
	}
	return keep, nil
}

// countSkills counts the staged <name>/SKILL.md files of the skills package at dir.
func countSkills(dir string) (int, error) {
	found, err := filepath.Glob(filepath.Join(dir, "*", "SKILL.md"))
	return len(found), err
}

// listDeps lists the function's root package (what handler.Main needs) and everything it imports.
func listDeps(ctx context.Context, fnDir string) ([]pkg, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-json", ".")
	cmd.Dir = fnDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %w\n%s", fnDir, err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// copyFile copies src to dst; Go files get their workspace import paths rewritten.
func copyFile(src, dst string, rewrite func(string) (string, bool)) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if strings.HasSuffix(src, ".go") {
		if data, err = rewriteImports(src, data, rewrite); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

// rewriteImports replaces the import path literals that rewrite maps, leaving every other byte alone.
func rewriteImports(name string, src []byte, rewrite func(string) (string, bool)) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("parse imports of %s: %w", name, err)
	}
	var out bytes.Buffer
	last := 0
	for _, spec := range f.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: bad import %s", name, spec.Path.Value)
		}
		to, ok := rewrite(path)
		if !ok {
			continue
		}
		start := fset.Position(spec.Path.Pos()).Offset
		end := fset.Position(spec.Path.End()).Offset
		out.Write(src[last:start])
		out.WriteString(strconv.Quote(to))
		last = end
	}
	out.Write(src[last:])
	return out.Bytes(), nil
}

// goCmd runs the go command outside the workspace, as the runtime's builder does.
func goCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	return cmd.CombinedOutput()
}

// FindRoot returns the repository root: the nearest folder at or above dir that holds go.work.
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work found at or above the current folder: run this inside the repository")
		}
		dir = parent
	}
}
