package staging

import (
	"bufio"
	"context"
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

// The kinds of code that shipped code does without (docs/CONVENTIONS.md "Plain code").
const (
	KindUnsafe   = "imports unsafe"
	KindAssembly = "carries assembly"
	KindPool     = "uses sync.Pool"
)

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
// unsafe, carry assembly (for any architecture) or use sync.Pool, sorted.
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
				out = append(out, Finding{rel(f), k})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// goFileKinds parses a Go file and reports whether it imports unsafe and whether it names sync.Pool (under any
// import name of sync).
func goFileKinds(file string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	var kinds []string
	syncNames := map[string]bool{}
	for _, spec := range f.Imports {
		path, _ := strconv.Unquote(spec.Path.Value)
		switch path {
		case "unsafe":
			kinds = append(kinds, KindUnsafe)
		case "sync":
			name := "sync"
			if spec.Name != nil {
				name = spec.Name.Name
			}
			syncNames[name] = true
		}
	}
	pool := false
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Pool" {
			if id, ok := sel.X.(*ast.Ident); ok && syncNames[id.Name] {
				pool = true
			}
		}
		return !pool
	})
	if pool {
		kinds = append(kinds, KindPool)
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

// CheckPlain fails with every finding of Unplain, over the given functions, that docs/CONVENTIONS.md does not excuse,
// one line per file.
func CheckPlain(ctx context.Context, root string, names []string) error {
	excused, err := PlainExceptions(root)
	if err != nil {
		return err
	}
	seen := map[Finding]bool{}
	var bad []string
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
			bad = append(bad, fmt.Sprintf("%s (shipped by %s)", f, name))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("shipped code must not import unsafe, carry assembly or use sync.Pool "+
			"(an exception needs a line under %q in docs/CONVENTIONS.md with a figure a user can feel):\n\t%s",
			PlainExceptionsHeading, strings.Join(bad, "\n\t"))
	}
	return nil
}
