package staging

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The kinds of code that shipped code does without (docs/CONVENTIONS.md "Plain code" and "Configuration").
const (
	KindUnsafe   = "imports unsafe"
	KindAssembly = "carries assembly"
	KindPool     = "uses sync.Pool"
	// KindEnv is a file other than a function's own config.go (ConfigFile) that names a function of the
	// standard library that reads or changes the process environment (envFuncs), called or not: passing
	// os.Getenv along reads the environment as surely as calling it. It has no exceptions.
	KindEnv = "reads the environment"
)

// envFuncs are, per standard library package, its functions that read or change the process environment.
var envFuncs = map[string]map[string]bool{
	"os":      {"Getenv": true, "LookupEnv": true, "Environ": true, "ExpandEnv": true, "Setenv": true, "Unsetenv": true, "Clearenv": true},
	"syscall": {"Getenv": true, "Environ": true, "Setenv": true, "Unsetenv": true, "Clearenv": true},
}

// ConfigFile reports whether rel (a path relative to the repository root, with slashes) is a function's
// config.go: the file at the root of functions/<name>, the only shipped code that reads the environment. It
// reads it once per process and passes what it read down; shared packages take a getenv argument from it
// (the platform's own variables: shared/platform).
func ConfigFile(rel string) bool {
	dir, file, ok := strings.Cut(strings.TrimPrefix(rel, "functions/"), "/")
	return ok && strings.HasPrefix(rel, "functions/") && dir != "" && file == "config.go"
}

// Finding is one shipped file that is not plain: File is relative to the repository root, with slashes.
type Finding struct {
	File, Kind string
}

func (f Finding) String() string { return f.File + " " + f.Kind }

// PlainExceptionsHeading is the docs/CONVENTIONS.md section whose bullets excuse a Finding: each bullet names the
// file in backticks and the kind, then gives the figure a user can feel that the exception buys, e.g.
//
//   - `shared/x/x.go` imports unsafe: the first turn answers 200 ms sooner (docs/benchmarks.md, "…").
const PlainExceptionsHeading = "## Exceptions to plain code"

// Unplain lists the files of what Stage would copy for function name (a folder under root/functions) that import
// unsafe, carry assembly (for any architecture), use sync.Pool or read the environment outside the function's
// config.go, sorted.
func Unplain(ctx context.Context, root, name string) ([]Finding, error) {
	fnDir := filepath.Join(root, "functions", name)
	pkgs, err := listDeps(ctx, fnDir)
	if err != nil {
		return nil, fmt.Errorf("plain %s: %w", name, err)
	}
	var out []Finding
	for _, p := range pkgs {
		if _, copied := stagedPath(name, p.ImportPath); !copied {
			continue
		}
		rel := func(f string) string {
			r, err := filepath.Rel(root, filepath.Join(p.Dir, f))
			if err != nil {
				return filepath.Join(p.Dir, f)
			}
			return filepath.ToSlash(r)
		}
		for _, f := range append(append([]string{}, p.SFiles...), p.IgnoredOtherFiles...) {
			if strings.HasSuffix(f, ".s") {
				out = append(out, Finding{rel(f), KindAssembly})
			}
		}
		for _, f := range append(append([]string{}, p.GoFiles...), p.IgnoredGoFiles...) {
			kinds, err := goFileKinds(filepath.Join(p.Dir, f))
			if err != nil {
				return nil, fmt.Errorf("plain %s: %w", name, err)
			}
			for _, k := range kinds {
				if k == KindEnv && ConfigFile(rel(f)) {
					continue
				}
				out = append(out, Finding{rel(f), k})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// goFileKinds parses a Go file and reports whether it imports unsafe, whether it names sync.Pool and whether it
// names a function of envFuncs (under any import name of its package, a dot import included).
func goFileKinds(file string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	var kinds []string
	syncNames := map[string]bool{}
	envNames := map[string]map[string]bool{} // import name -> the env functions of that package
	var dotEnv []map[string]bool             // the env functions of dot-imported packages
	for _, spec := range f.Imports {
		path, _ := strconv.Unquote(spec.Path.Value)
		name := path
		if spec.Name != nil {
			name = spec.Name.Name
		}
		switch {
		case path == "unsafe":
			kinds = append(kinds, KindUnsafe)
		case path == "sync":
			syncNames[name] = true
		case envFuncs[path] != nil && name == ".":
			dotEnv = append(dotEnv, envFuncs[path])
		case envFuncs[path] != nil:
			envNames[name] = envFuncs[path]
		}
	}
	pool, env := false, false
	var visit func(ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				pool = pool || (n.Sel.Name == "Pool" && syncNames[id.Name])
				env = env || envNames[id.Name][n.Sel.Name]
			} else {
				ast.Inspect(n.X, visit)
			}
			return false // the selected name (n.Sel) is no unqualified identifier
		case *ast.Ident:
			for _, fns := range dotEnv {
				env = env || fns[n.Name]
			}
		}
		return true
	}
	ast.Inspect(f, visit)
	if pool {
		kinds = append(kinds, KindPool)
	}
	if env {
		kinds = append(kinds, KindEnv)
	}
	return kinds, nil
}

// PlainExceptions reads the excused findings from the PlainExceptionsHeading section of root/docs/CONVENTIONS.md.
// A bullet that names no file in backticks, no known kind or no figure after a colon is an error.
func PlainExceptions(root string) (map[Finding]bool, error) {
	name := filepath.Join(root, "docs", "CONVENTIONS.md")
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[Finding]bool{}
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == PlainExceptionsHeading
			continue
		}
		if !in || !strings.HasPrefix(line, "- ") {
			continue
		}
		_, rest, ok := strings.Cut(line, "`")
		file, rest, ok2 := strings.Cut(rest, "`")
		kind, figure, ok3 := strings.Cut(strings.TrimSpace(rest), ":")
		if !ok || !ok2 || !ok3 || (kind != KindUnsafe && kind != KindAssembly && kind != KindPool) || strings.TrimSpace(figure) == "" {
			return nil, fmt.Errorf("%s:%d: an exception reads \"- `file` %s|%s|%s: the figure a user feels\", not %q",
				name, n, KindUnsafe, KindAssembly, KindPool, line)
		}
		out[Finding{file, kind}] = true
	}
	return out, sc.Err()
}

// CheckPlain fails with every finding of Unplain, over the given functions, that docs/CONVENTIONS.md does not excuse
// (a file that reads the environment has no excuse), one line per file.
func CheckPlain(ctx context.Context, root string, names []string) error {
	excused, err := PlainExceptions(root)
	if err != nil {
		return err
	}
	seen := map[Finding]bool{}
	var bad, env []string
	for _, name := range names {
		found, err := Unplain(ctx, root, name)
		if err != nil {
			return err
		}
		for _, f := range found {
			if seen[f] || excused[f] {
				continue
			}
			seen[f] = true
			line := fmt.Sprintf("%s (shipped by %s)", f, name)
			if f.Kind == KindEnv {
				env = append(env, line)
			} else {
				bad = append(bad, line)
			}
		}
	}
	var msgs []string
	if len(bad) > 0 {
		msgs = append(msgs, fmt.Sprintf("shipped code must not import unsafe, carry assembly or use sync.Pool "+
			"(an exception needs a line under %q in docs/CONVENTIONS.md with a figure a user can feel):\n\t%s",
			PlainExceptionsHeading, strings.Join(bad, "\n\t")))
	}
	if len(env) > 0 {
		msgs = append(msgs, fmt.Sprintf("shipped code reads the environment only in functions/<name>/config.go, which "+
			"passes what it read down (shared packages take a getenv argument; docs/CONVENTIONS.md \"Configuration\"):\n\t%s",
			strings.Join(env, "\n\t")))
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "\n"))
	}
	return nil
}
