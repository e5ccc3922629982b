package deploy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A first deploy installs Appwrite's agent skills when none is installed, and only then; a download that
// fails is refused with what to do, before anything is staged or changed.
func TestSkillsInstalledOnAFirstDeploy(t *testing.T) {
	dir := func(root string) string { return filepath.Join(root, "functions", "turn", "skills") }
	var installs []string
	install := func(_ context.Context, into string, log io.Writer) error {
		installs = append(installs, into)
		if err := os.MkdirAll(filepath.Join(into, "appwrite-go"), 0o755); err != nil {
			return err
		}
		_, _ = io.WriteString(log, "installed 1 skills\n")
		return os.WriteFile(filepath.Join(into, "appwrite-go", "SKILL.md"), []byte("---\ndescription: Go\n---\n"), 0o644)
	}
	root := t.TempDir()
	var log bytes.Buffer
	d := &deployer{opts: Options{Root: root, InstallSkills: install, stagesProduct: true}, log: &log}
	if err := d.ensureSkills(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(installs) != 1 || installs[0] != dir(root) || !strings.Contains(log.String(), "installing Appwrite's agent skills") {
		t.Fatalf("installs %v, log %q", installs, log.String())
	}
	if err := d.ensureSkills(context.Background()); err != nil || len(installs) != 1 {
		t.Fatalf("with skills installed: %v, installs %v", err, installs)
	}
	// Not with another folder's skills, nor when a turn without them is allowed, nor for a staging of the
	// tests' own (which never embeds the repository's skills).
	for _, o := range []Options{{Skills: "elsewhere", stagesProduct: true}, {AllowNoSkills: true, stagesProduct: true}, {}} {
		o.Root, o.InstallSkills = t.TempDir(), install
		if err := (&deployer{opts: o, log: io.Discard}).ensureSkills(context.Background()); err != nil || len(installs) != 1 {
			t.Fatalf("%+v: %v, installs %v", o, err, installs)
		}
	}

	failing := func(context.Context, string, io.Writer) error {
		return errors.New("GET https://api.github.com/...: dial tcp: no route to host")
	}
	err := (&deployer{opts: Options{Root: t.TempDir(), InstallSkills: failing, stagesProduct: true}, log: io.Discard}).ensureSkills(context.Background())
	var r *Refusal
	if !errors.As(err, &r) || !strings.Contains(r.Reason, "no route to host") || !strings.Contains(r.Reason, "-allow-no-skills") || !strings.Contains(r.Reason, "scripts/update-skills") {
		t.Fatalf("a failed download: %v", err)
	}
}
