package runtimebuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type entry struct {
	hdr  tar.Header
	data string
}

func tarGz(t *testing.T, entries ...entry) *bytes.Reader {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := e.hdr
		h.Size = int64(len(e.data))
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(buf.Bytes())
}

func TestUnpack(t *testing.T) {
	dir := t.TempDir()
	err := Unpack(tarGz(t,
		entry{hdr: tar.Header{Name: "./sub/", Typeflag: tar.TypeDir, Mode: 0o755}},
		entry{hdr: tar.Header{Name: "main.go"}, data: "package handler\n"},
		entry{hdr: tar.Header{Name: "sub/run.sh", Mode: 0o755}, data: "#!/bin/sh\n"},
		entry{hdr: tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "sub/run.sh"}},
	), dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); string(b) != "package handler\n" {
		t.Fatalf("main.go = %q", b)
	}
	if st, err := os.Stat(filepath.Join(dir, "sub", "run.sh")); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("run.sh: %v %v", st, err)
	}
	for name, r := range map[string]*bytes.Reader{
		"parent":        tarGz(t, entry{hdr: tar.Header{Name: "../evil.go"}, data: "x"}),
		"absolute link": tarGz(t, entry{hdr: tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}),
		"escaping link": tarGz(t, entry{hdr: tar.Header{Name: "a/l", Typeflag: tar.TypeSymlink, Linkname: "../../x"}}),
		"empty":         tarGz(t),
		"not gzip":      bytes.NewReader([]byte("plain")),
	} {
		if err := Unpack(r, t.TempDir()); err == nil {
			t.Errorf("%s: unpacked", name)
		}
	}
	if err := Unpack(tarGz(t), t.TempDir()); err == nil || err.Error() != "No source code found" {
		t.Errorf("empty archive: %v", err)
	}
}

func TestWriteServerModuleAndRunCommands(t *testing.T) {
	work, handler := t.TempDir(), t.TempDir()
	if err := WriteServerModule(work, handler); err != nil {
		t.Fatal(err)
	}
	mod, _ := os.ReadFile(filepath.Join(work, "go.mod"))
	if !strings.Contains(string(mod), "module openruntimes/server\n") || !strings.Contains(string(mod), "replace openruntimes/handler v0.0.0 => "+handler+"\n") {
		t.Fatalf("go.mod:\n%s", mod)
	}
	files, _ := filepath.Glob(filepath.Join(work, "localruntime", "*.go"))
	if len(files) == 0 {
		t.Fatal("no localruntime sources written")
	}
	for _, f := range files {
		if base := filepath.Base(f); strings.HasSuffix(base, "_test.go") || base == "source.go" {
			t.Errorf("copied %s", base)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(work, "main.go")); string(b) != ServerMain {
		t.Fatalf("main.go:\n%s", b)
	}

	var out bytes.Buffer
	if err := RunCommands(context.Background(), handler, "echo \"$GREETING\" > out.txt; echo done", []string{"GREETING=hi"}, &out); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(handler, "out.txt")); string(b) != "hi\n" || out.String() != "done\n" {
		t.Fatalf("out.txt %q, output %q", b, out.String())
	}
	if err := RunCommands(context.Background(), handler, "exit 7", nil, &out); err == nil {
		t.Fatal("a failing command succeeded")
	}
	if err := RunCommands(context.Background(), handler, "  ", nil, &out); err != nil {
		t.Fatal(err)
	}
}
