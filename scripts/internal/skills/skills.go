// Package skills installs the Appwrite agent skills of an appwrite/agent-skills release into
// functions/turn/skills/<name>/SKILL.md (plus the repository's LICENSE), where the turn function embeds them
// at build time. scripts/update-skills runs it, and scripts/deploy when no skill is installed.
//
// Without a ref it asks the GitHub API for the latest release (falling back to the default branch when the
// repository has no release). The archive is checked before anything is written: skill names must be plain
// folder names, each SKILL.md at most 1 MiB with YAML front matter, at least one skill; then the installed
// skills are replaced as a set (README.md and other files in the folder are kept).
package skills

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Defaults of Options.
const (
	DefaultRepo    = "appwrite/agent-skills"
	DefaultBaseURL = "https://api.github.com"
)

// Options say what to install where.
type Options struct {
	// Out is the skills folder (functions/turn/skills of the repository).
	Out string
	// Repo is the GitHub repository, owner/name (DefaultRepo when empty).
	Repo string
	// Ref is a tag, branch or commit; empty is the latest release.
	Ref string
	// BaseURL is the GitHub API's (DefaultBaseURL when empty; tests point it at a local server).
	BaseURL string
	// Token, when set, is sent to the API to lift its rate limit (GITHUB_TOKEN).
	Token string
	// Timeout bounds the whole installation (2 minutes when zero).
	Timeout time.Duration
}

// Limits of the download and of the archive's contents.
const (
	maxArchiveBytes = 64 << 20
	maxSkillBytes   = 1 << 20
	maxSkills       = 200
	maxLicenseBytes = 64 << 10
)

var skillName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// Install downloads the skills of o.Repo at o.Ref (the latest release when empty) and replaces the skills
// installed in o.Out with them, saying what it installed on stdout. The archive is checked before anything
// is written (see the package comment); o.Timeout bounds the whole (2 minutes when zero).
func Install(ctx context.Context, o Options, stdout io.Writer) error {
	if o.Repo == "" {
		o.Repo = DefaultRepo
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	base := strings.TrimRight(o.BaseURL, "/")
	client := &http.Client{}
	ref, tarball := o.Ref, ""
	if ref == "" {
		var rel struct {
			TagName    string `json:"tag_name"`
			TarballURL string `json:"tarball_url"`
		}
		status, body, err := get(ctx, client, base+"/repos/"+o.Repo+"/releases/latest", o.Token, 1<<20)
		switch {
		case err != nil:
			return err
		case status == http.StatusNotFound:
			fmt.Fprintf(stdout, "%s has no release; using its default branch\n", o.Repo)
			ref, tarball = "default branch", base+"/repos/"+o.Repo+"/tarball"
		case status != http.StatusOK:
			return fmt.Errorf("latest release of %s: HTTP %d", o.Repo, status)
		default:
			if err := json.Unmarshal(body, &rel); err != nil || rel.TarballURL == "" {
				return fmt.Errorf("latest release of %s: unexpected answer", o.Repo)
			}
			ref, tarball = rel.TagName, rel.TarballURL
		}
	} else {
		tarball = base + "/repos/" + o.Repo + "/tarball/" + ref
	}
	status, archive, err := get(ctx, client, tarball, o.Token, maxArchiveBytes)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("download %s: HTTP %d", tarball, status)
	}
	files, license, err := unpack(archive)
	if err != nil {
		return fmt.Errorf("%s@%s: %w", o.Repo, ref, err)
	}
	if err := install(o.Out, files, license); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(stdout, "installed %d skills from %s@%s into %s: %s\n", len(names), o.Repo, ref, o.Out, strings.Join(names, ", "))
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
