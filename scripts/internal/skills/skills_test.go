package skills

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

type entry struct {
	name, body string
	typ        byte
}

func tarball(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: typ}
		if typ != tar.TypeReg {
			h.Size, h.Linkname = 0, "/etc/passwd"
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(e.body))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

const skillGo = "---\nname: appwrite-go\ndescription: Go SDK\n---\n# Go\n"

func goodArchive(t *testing.T) []byte {
	return tarball(t,
		entry{name: "appwrite-agent-skills-8927121/", typ: tar.TypeDir},
		entry{name: "appwrite-agent-skills-8927121/README.md", body: "readme"},
		entry{name: "appwrite-agent-skills-8927121/LICENSE", body: "BSD-3-Clause text"},
		entry{name: "appwrite-agent-skills-8927121/skills/appwrite-go/SKILL.md", body: skillGo},
		entry{name: "appwrite-agent-skills-8927121/skills/appwrite-dart/SKILL.md", body: "---\nname: appwrite-dart\ndescription: Dart\n---\nbody"},
		entry{name: "appwrite-agent-skills-8927121/skills/appwrite-go/extra.md", body: "ignored"},
		entry{name: "appwrite-agent-skills-8927121/skills/evil/SKILL.md", body: "x", typ: tar.TypeSymlink},
	)
}

// fakeGitHub serves the two API calls the command makes; latest says whether a release exists.
func fakeGitHub(t *testing.T, archive []byte, latest bool) (*httptest.Server, *[]string) {
	var (
		mu   sync.Mutex
		seen []string
		srv  *httptest.Server
	)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" auth="+r.Header.Get("Authorization"))
		mu.Unlock()
		switch r.URL.Path {
		case "/repos/appwrite/agent-skills/releases/latest":
			if !latest {
				http.NotFound(w, r)
				return
			}
			json.NewEncoder(w).Encode(map[string]string{"tag_name": "0.2.1", "tarball_url": srv.URL + "/repos/appwrite/agent-skills/tarball/0.2.1"})
		case "/repos/appwrite/agent-skills/tarball/0.2.1", "/repos/appwrite/agent-skills/tarball", "/repos/appwrite/agent-skills/tarball/v9":
			http.Redirect(w, r, "/codeload/archive.tar.gz", http.StatusFound)
		case "/codeload/archive.tar.gz":
			w.Write(archive)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func opts(srv *httptest.Server, out string) Options {
	return Options{Out: out, Repo: "appwrite/agent-skills", BaseURL: srv.URL, Token: "tok", Timeout: 10 * time.Second}
}

func TestInstallsTheLatestRelease(t *testing.T) {
	srv, seen := fakeGitHub(t, goodArchive(t), true)
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "README.md"), []byte("keep me"), 0o644)
	os.MkdirAll(filepath.Join(out, "appwrite-old"), 0o755)
	os.WriteFile(filepath.Join(out, "appwrite-old", "SKILL.md"), []byte("old"), 0o644)
	var log bytes.Buffer
	if err := Install(context.Background(), opts(srv, out), &log); err != nil {
		t.Fatal(err)
	}
	if got := log.String(); got != "installed 2 skills from appwrite/agent-skills@0.2.1 into "+out+": appwrite-dart, appwrite-go\n" {
		t.Fatalf("log %q", got)
	}
	for file, want := range map[string]string{
		"appwrite-go/SKILL.md": skillGo, "LICENSE": "BSD-3-Clause text", "README.md": "keep me",
	} {
		if b, err := os.ReadFile(filepath.Join(out, file)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", file, b, err)
		}
	}
	for _, gone := range []string{"appwrite-old", "evil", "appwrite-go/extra.md"} {
		if _, err := os.Stat(filepath.Join(out, gone)); err == nil {
			t.Errorf("%s should not be there", gone)
		}
	}
	if (*seen)[0] != "/repos/appwrite/agent-skills/releases/latest auth=Bearer tok" {
		t.Errorf("requests %v", *seen)
	}
}

func TestFallsBackToTheDefaultBranchAndHonoursRef(t *testing.T) {
	srv, seen := fakeGitHub(t, goodArchive(t), false)
	var log bytes.Buffer
	if err := Install(context.Background(), opts(srv, t.TempDir()), &log); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(log.String(), "appwrite/agent-skills has no release; using its default branch\ninstalled 2 skills") {
		t.Fatalf("log %q", log.String())
	}
	o := opts(srv, t.TempDir())
	o.Ref = "v9"
	if err := Install(context.Background(), o, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(*seen, "\n"), "/repos/appwrite/agent-skills/tarball/v9") {
		t.Fatalf("requests %v", *seen)
	}
}

func TestRefusesBadArchivesWithoutTouchingTheFolder(t *testing.T) {
	for name, archive := range map[string][]byte{
		"not gzip":       []byte("<html>rate limited</html>"),
		"no skills":      tarball(t, entry{name: "top/README.md", body: "x"}),
		"traversal name": tarball(t, entry{name: "top/skills/..hidden/SKILL.md", body: skillGo}),
		"no front":       tarball(t, entry{name: "top/skills/appwrite-go/SKILL.md", body: "# no front matter"}),
		"too large":      tarball(t, entry{name: "top/skills/appwrite-go/SKILL.md", body: "---\ndescription: x\n---\n" + strings.Repeat("x", maxSkillBytes)}),
	} {
		srv, _ := fakeGitHub(t, archive, true)
		out := t.TempDir()
		os.MkdirAll(filepath.Join(out, "appwrite-go"), 0o755)
		os.WriteFile(filepath.Join(out, "appwrite-go", "SKILL.md"), []byte("installed"), 0o644)
		if err := Install(context.Background(), opts(srv, out), &bytes.Buffer{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if b, _ := os.ReadFile(filepath.Join(out, "appwrite-go", "SKILL.md")); string(b) != "installed" {
			t.Errorf("%s: the installed skills changed", name)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403) }))
	defer srv.Close()
	if err := Install(context.Background(), opts(srv, t.TempDir()), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "HTTP 403") {
		t.Errorf("API refusal: %v", err)
	}
}
