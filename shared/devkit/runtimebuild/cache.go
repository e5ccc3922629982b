package runtimebuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"appwrite-agent/shared/devkit/localruntime"
)

// The server cache. A build is a pure function of the handler module's files, the server module this
// package writes, and the go command's settings: BuildServer keeps each server it links under the hash of
// those (cacheKey), and a later build of the same inputs copies that binary instead of running go get and go
// build again. The test suite builds the same five staged functions in half a dozen places (the stand-in's
// deployments from the CLI and from scripts/deploy, scripts/stage -build, the local stack), in parallel
// processes: each paid go get, the compilation of its packages and a link, and on an empty build cache the
// standard library and the modules too. A build that fails is never kept, so every
// failure is a real one; Appwrite itself builds each deployment from scratch (docs/local-appwrite.md).

// cacheEntries is how many servers the cache keeps (each 10 to 25 MB); the least recently used go first.
const cacheEntries = 40

// cacheDir is where servers are kept: the user's cache folder (as the go command keeps its own), or the
// temporary folder when there is none.
func cacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "appwrite-agent", "runtimebuild")
}

// goSettings are the go command's settings that decide what a build links.
var goSettings = []string{"GOVERSION", "GOROOT", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "GOEXPERIMENT", "GOFLAGS", "CGO_ENABLED", "CC", "GOPROXY", "GONOSUMDB", "GOPRIVATE", "GOTOOLCHAIN"}

// cacheKey hashes everything a build of handlerDir depends on: each file's path, mode and content (links by
// their target), the server module's source, and goSettings as `go env` reports them with the build's env.
func cacheKey(ctx context.Context, handlerDir string, env []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "runtimebuild 1\n%s\n%s\n%s\n%s\n", ServerModule, GoDirective, TypesForGoVersion, ServerMain)
	if err := hashTree(h, os.DirFS(handlerDir), "handler"); err != nil {
		return "", err
	}
	if err := hashTree(h, localruntime.Source, "localruntime"); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"env"}, goSettings...)...)
	cmd.Dir = handlerDir
	cmd.Env = append(append(os.Environ(), env...), "GOWORK=off", "GOFLAGS=-mod=mod")
	cmd.WaitDelay = 5 * time.Second
	settings, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	h.Write(settings)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashTree writes every entry of fsys into h, in lexical order, under prefix.
func hashTree(h io.Writer, fsys fs.FS, prefix string) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s/%s %v ", prefix, p, info.Mode().Type()|info.Mode().Perm()&0o111)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(fsys, p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "-> %q\n", target)
		case d.Type().IsRegular():
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%d\n", len(data))
			h.Write(data)
		default:
			fmt.Fprintln(h)
		}
		return nil
	})
}

// fromCache puts the server kept under key at binPath, and reports whether there was one.
func fromCache(key, binPath string) bool {
	src := filepath.Join(cacheDir(), key)
	if _, err := os.Stat(src); err != nil {
		return false
	}
	if err := copyFile(src, binPath); err != nil {
		return false
	}
	now := time.Now()
	_ = os.Chtimes(src, now, now) // its use, for the trim
	return true
}

// toCache keeps the server at binPath under key, then trims the cache to cacheEntries. A cache that cannot
// be written only costs the next build its time.
func toCache(key, binPath string) {
	dir := cacheDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.%d", key, os.Getpid()))
	if err := copyFile(binPath, tmp); err != nil {
		_ = os.Remove(tmp)
		return
	}
	if err := os.Rename(tmp, filepath.Join(dir, key)); err != nil {
		_ = os.Remove(tmp)
		return
	}
	trim(dir)
}

// trim removes the least recently used servers beyond cacheEntries.
func trim(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type kept struct {
		name string
		used time.Time
	}
	var all []kept
	for _, e := range entries {
		if info, err := e.Info(); err == nil && e.Type().IsRegular() && e.Name()[0] != '.' {
			all = append(all, kept{e.Name(), info.ModTime()})
		}
	}
	if len(all) <= cacheEntries {
		return
	}
	slices.SortFunc(all, func(a, b kept) int { return b.used.Compare(a.used) })
	for _, k := range all[cacheEntries:] {
		_ = os.Remove(filepath.Join(dir, k.name))
	}
}

// copyFile copies src to an executable dst, written to a temporary name first so no reader sees half a file.
func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".part"
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
