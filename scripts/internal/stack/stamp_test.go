package stack

import (
	"os"
	"path/filepath"
	"testing"
)

func TestBuildStampFollowsTheStagedFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stamp := func() string {
		t.Helper()
		s, err := buildStamp(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	write("go.mod", "module openruntimes/handler\n")
	write("main.go", "package handler\n")
	first := stamp()
	if again := stamp(); again != first {
		t.Fatal("the stamp of an unchanged folder changed")
	}
	for _, change := range []func(){
		func() { write("main.go", "package handler // changed\n") },
		func() { write("sub/extra.go", "package sub\n") },
		func() { _ = os.Rename(filepath.Join(dir, "sub", "extra.go"), filepath.Join(dir, "sub", "other.go")) },
	} {
		before := stamp()
		change()
		if stamp() == before {
			t.Fatal("a change to the staged files kept the stamp")
		}
	}
	t.Setenv("GOFLAGS", "-tags=other")
	if stamp() == first {
		t.Fatal("a change of GOFLAGS kept the stamp")
	}

	bin := filepath.Join(t.TempDir(), "fn")
	if upToDate(bin, first) {
		t.Fatal("a missing binary is up to date")
	}
	if err := os.WriteFile(bin, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	if upToDate(bin, first) {
		t.Fatal("a binary without a stamp is up to date")
	}
	if err := os.WriteFile(bin+".stamp", []byte(first+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !upToDate(bin, first) || upToDate(bin, stamp()) {
		t.Fatal("the stamp file is not what decides")
	}
}
