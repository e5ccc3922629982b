package stack

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"

	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/runtimebuild"
)

// buildStamp identifies everything a staged function's binary is built from: the staged folder (its path,
// which the server module's replace directive names, and every file in it), the runtime server module
// (runtimebuild's constants and the embedded localruntime source) and the toolchain settings. Staging is
// deterministic, so an unchanged stamp means the binary beside it is what a new build would produce.
func buildStamp(stagedDir string) (string, error) {
	h := sha256.New()
	abs, err := filepath.Abs(stagedDir)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "staged %s\n", abs)
	for _, k := range []string{"GOFLAGS", "GOOS", "GOARCH", "GOAMD64", "CGO_ENABLED", "GOEXPERIMENT", "GOTOOLCHAIN", "GOPROXY"} {
		fmt.Fprintf(h, "env %s=%s\n", k, os.Getenv(k))
	}
	fmt.Fprintf(h, "go %s %s/%s\nserver %s %s %s %s\n%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH,
		runtimebuild.HandlerModule, runtimebuild.ServerModule, runtimebuild.GoDirective, runtimebuild.TypesForGoVersion, runtimebuild.ServerMain)
	if err := hashTree(h, localruntime.Source, "localruntime"); err != nil {
		return "", err
	}
	if err := hashTree(h, os.DirFS(abs), "staged"); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashTree writes every regular file of fsys (path, size, content) into h, in path order.
func hashTree(h io.Writer, fsys fs.FS, label string) error {
	var paths []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			paths = append(paths, p)
		} else if !d.IsDir() {
			return fmt.Errorf("%s: %s is not a regular file", label, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	for _, p := range paths {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %s %d\n", label, p, len(data))
		_, _ = h.Write(data)
	}
	return nil
}

// upToDate reports whether bin exists and was built from stamp.
func upToDate(bin, stamp string) bool {
	if _, err := os.Stat(bin); err != nil {
		return false
	}
	got, err := os.ReadFile(bin + ".stamp")
	return err == nil && bytes.Equal(bytes.TrimSpace(got), []byte(stamp))
}
