package runtimebuild

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// handlerTree writes a small handler module into a new folder and returns it.
func handlerTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func key(t *testing.T, dir string, env ...string) string {
	t.Helper()
	k, err := cacheKey(context.Background(), dir, env)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// The key is the build's inputs and nothing else: the same files in another folder share it; a changed
// byte, a new file, an executable bit or a go setting does not.
func TestCacheKeyIsTheBuildsInputs(t *testing.T) {
	files := map[string]string{"go.mod": "module openruntimes/handler\n", "main.go": "package handler\n", "lib/a.go": "package lib\n"}
	base := key(t, handlerTree(t, files))
	if got := key(t, handlerTree(t, files)); got != base {
		t.Errorf("the same files in another folder: key %s, want %s", got, base)
	}
	changed := map[string]string{}
	for k, v := range files {
		changed[k] = v
	}
	changed["lib/a.go"] = "package lib \n"
	if key(t, handlerTree(t, changed)) == base {
		t.Error("a changed file kept the key")
	}
	changed = map[string]string{"extra.txt": ""}
	for k, v := range files {
		changed[k] = v
	}
	if key(t, handlerTree(t, changed)) == base {
		t.Error("a new empty file kept the key")
	}
	dir := handlerTree(t, files)
	if err := os.Rename(filepath.Join(dir, "lib", "a.go"), filepath.Join(dir, "lib", "b.go")); err != nil {
		t.Fatal(err)
	}
	if key(t, dir) == base {
		t.Error("a renamed file kept the key")
	}
	dir = handlerTree(t, files)
	if err := os.Chmod(filepath.Join(dir, "main.go"), 0o755); err != nil {
		t.Fatal(err)
	}
	if key(t, dir) == base {
		t.Error("an executable bit kept the key")
	}
	if key(t, handlerTree(t, files), "CGO_ENABLED=1") == key(t, handlerTree(t, files), "CGO_ENABLED=0") {
		t.Error("CGO_ENABLED did not change the key")
	}
	if key(t, handlerTree(t, files), "GOEXPERIMENT=") == key(t, handlerTree(t, files), "GOEXPERIMENT=loopvar") {
		t.Error("GOEXPERIMENT did not change the key")
	}
}

// A kept server comes back byte for byte as an executable, and the cache keeps no more than cacheEntries.
func TestCacheKeepsAndTrims(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	bin := filepath.Join(dir, "server")
	if err := os.WriteFile(bin, []byte("\x7fELF a server"), 0o755); err != nil {
		t.Fatal(err)
	}
	if fromCache("k0", filepath.Join(dir, "copy")) {
		t.Fatal("an empty cache had a server")
	}
	toCache("k0", bin)
	out := filepath.Join(dir, "out", "server")
	if !fromCache("k0", out) {
		t.Fatal("the kept server was not found")
	}
	got, err := os.ReadFile(out)
	if err != nil || string(got) != "\x7fELF a server" {
		t.Fatalf("copied server = %q, %v", got, err)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Fatalf("copied server mode: %v, %v", st.Mode(), err)
	}
	for i := 1; i <= cacheEntries+3; i++ {
		toCache("k"+strings.Repeat("x", i), bin)
	}
	entries, err := os.ReadDir(cacheDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != cacheEntries {
		t.Errorf("cache holds %d servers, want %d", len(entries), cacheEntries)
	}
}

// Builds take turns: a second lock waits for the first, and a wait whose context ends gives up with its
// error (the lock it would have had is released when granted).
func TestBuildsTakeTurns(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockBuilds(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() {
		_, err := lockBuilds(ctx, dir)
		waited <- err
	}()
	cancel()
	if err := <-waited; err != context.Canceled {
		t.Fatalf("a wait whose context ended: %v, want context.Canceled", err)
	}
	unlock()
	second := make(chan func(), 1)
	go func() {
		u, err := lockBuilds(context.Background(), dir)
		if err != nil {
			t.Error(err)
			u = func() {}
		}
		second <- u
	}()
	(<-second)()
}
