// Command update-skills installs the Appwrite agent skills of the current appwrite/agent-skills release
// into functions/turn/skills/<name>/SKILL.md (plus the repository's LICENSE), where the turn function
// embeds them at build time. Run it before staging a deploy.
//
// Usage:
//
//	scripts/update-skills [-ref TAG] [-out functions/turn/skills] [-repo appwrite/agent-skills] [-base-url https://api.github.com]
//
// Without -ref it asks the GitHub API for the latest release (falling back to the default branch when the
// repository has no release). GITHUB_TOKEN, when set, is sent to the API to lift its rate limit. The
// archive is checked before anything is written: skill names must be plain folder names, each SKILL.md at
// most 1 MiB with YAML front matter, at least one skill; then the installed skills are replaced as a set
// (README.md and other files in the folder are kept).
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"appwrite-agent/scripts/internal/staging"
)

// Limits of the download and of the archive's contents.
const (
	maxArchiveBytes = 64 << 20
	maxSkillBytes   = 1 << 20
	maxSkills       = 200
	maxLicenseBytes = 64 << 10
)

var skillName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// options are the command's flags.
type options struct {
	out, repo, ref, baseURL, token string
	timeout                        time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", "", "skills folder (default <repo>/functions/turn/skills)")
	flag.StringVar(&o.repo, "repo", "appwrite/agent-skills", "GitHub repository owner/name")
	flag.StringVar(&o.ref, "ref", "", "tag, branch or commit (default: the latest release)")
	flag.StringVar(&o.baseURL, "base-url", "https://api.github.com", "GitHub API base URL (tests point it at a local server)")
	flag.DurationVar(&o.timeout, "timeout", 2*time.Minute, "overall time limit")
	flag.Parse()
	o.token = os.Getenv("GITHUB_TOKEN")
	if o.out == "" {
		root, err := staging.FindRoot(".")
		if err != nil {
			fmt.Fprintln(os.Stderr, "update-skills:", err)
			os.Exit(1)
		}
		o.out = filepath.Join(root, "functions", "turn", "skills")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "update-skills:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	base := strings.TrimRight(o.baseURL, "/")
	client := &http.Client{}
	ref, tarball := o.ref, ""
	if ref == "" {
		var rel struct {
			TagName    string `json:"tag_name"`
			TarballURL string `json:"tarball_url"`
		}
		status, body, err := get(ctx, client, base+"/repos/"+o.repo+"/releases/latest", o.token, 1<<20)
		switch {
		case err != nil:
			return err
		case status == http.StatusNotFound:
			fmt.Fprintf(stdout, "%s has no release; using its default branch\n", o.repo)
			ref, tarball = "default branch", base+"/repos/"+o.repo+"/tarball"
		case status != http.StatusOK:
			return fmt.Errorf("latest release of %s: HTTP %d", o.repo, status)
		default:
			if err := json.Unmarshal(body, &rel); err != nil || rel.TarballURL == "" {
				return fmt.Errorf("latest release of %s: unexpected answer", o.repo)
			}
			ref, tarball = rel.TagName, rel.TarballURL
		}
	} else {
		tarball = base + "/repos/" + o.repo + "/tarball/" + ref
	}
	status, archive, err := get(ctx, client, tarball, o.token, maxArchiveBytes)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("download %s: HTTP %d", tarball, status)
	}
	files, license, err := unpack(archive)
	if err != nil {
		return fmt.Errorf("%s@%s: %w", o.repo, ref, err)
	}
	if err := install(o.out, files, license); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(stdout, "installed %d skills from %s@%s into %s: %s\n", len(names), o.repo, ref, o.out, strings.Join(names, ", "))
	return nil
}

// get fetches u (following redirects; Go drops the Authorization header when a redirect leaves the
// host) and reads at most limit bytes.
func get(ctx context.Context, c *http.Client, u, token string, limit int64) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("User-Agent", "appwrite-agent-update-skills")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return 0, nil, err
	}
	if int64(len(body)) > limit {
		return 0, nil, fmt.Errorf("%s: answer larger than %d bytes", u, limit)
	}
	return res.StatusCode, body, nil
}

// unpack reads a GitHub tarball (one top folder) and returns skills/<name>/SKILL.md contents by name and
// the top-level LICENSE. Anything else is ignored; bad names, oversized files and skills without front
// matter are errors.
func unpack(archive []byte) (map[string][]byte, []byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, nil, fmt.Errorf("not a gzip archive: %w", err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	var license []byte
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("bad archive: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		parts := strings.Split(path.Clean(strings.TrimPrefix(h.Name, "./")), "/")
		if len(parts) < 2 {
			continue
		}
		rel := parts[1:]
		switch {
		case len(rel) == 1 && rel[0] == "LICENSE":
			if h.Size > maxLicenseBytes {
				return nil, nil, errors.New("LICENSE is too large")
			}
			if license, err = io.ReadAll(tr); err != nil {
				return nil, nil, err
			}
		case len(rel) == 3 && rel[0] == "skills" && rel[2] == "SKILL.md":
			name := rel[1]
			if !skillName.MatchString(name) {
				return nil, nil, fmt.Errorf("skill folder %q is not a plain name", name)
			}
			if h.Size > maxSkillBytes {
				return nil, nil, fmt.Errorf("skill %s is larger than %d bytes", name, maxSkillBytes)
			}
			data, err := io.ReadAll(io.LimitReader(tr, maxSkillBytes+1))
			if err != nil {
				return nil, nil, err
			}
			if !bytes.HasPrefix(bytes.TrimLeft(data, "\ufeff"), []byte("---")) || !bytes.Contains(data, []byte("\ndescription:")) {
				return nil, nil, fmt.Errorf("skill %s has no front matter with a description", name)
			}
			files[name] = data
			if len(files) > maxSkills {
				return nil, nil, fmt.Errorf("more than %d skills", maxSkills)
			}
		}
	}
	if len(files) == 0 {
		return nil, nil, errors.New("no skills/<name>/SKILL.md in the archive")
	}
	return files, license, nil
}

// install replaces the installed skills in dir (every sub-folder holding a SKILL.md) with files, and
// writes LICENSE when the archive had one.
func install(dir string, files map[string][]byte, license []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "SKILL.md")); err == nil {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	for name, data := range files {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name, "SKILL.md"), data, 0o644); err != nil {
			return err
		}
	}
	if license != nil {
		return os.WriteFile(filepath.Join(dir, "LICENSE"), license, 0o644)
	}
	return nil
}
