package deploy

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// archive is a staged function folder packed as the tar.gz Appwrite builds a deployment from.
type archive struct {
	// Data is the tar.gz.
	Data []byte
	// SHA256 is the hex SHA-256 of the tar stream (before compression): the same files give the same hash,
	// whatever the machine, the checkout's timestamps or the gzip implementation.
	SHA256 string
	// Files counts the regular files.
	Files int
}

// archiveTime is every entry's modification time: the archive depends on the files' contents only.
var archiveTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pack packs dir deterministically: entries in lexical path order, directories 0755, files 0644 or 0755
// (when any execute bit is set), owner 0:0, archiveTime. Symbolic links and other special files are refused:
// a staged folder holds none.
func pack(dir string) (archive, error) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		name := filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		h := &tar.Header{Name: name, ModTime: archiveTime, Format: tar.FormatPAX}
		switch {
		case d.IsDir():
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, name+"/", 0o755
			return tw.WriteHeader(h)
		case info.Mode().IsRegular():
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, info.Size()
			if info.Mode()&0o111 != 0 {
				h.Mode = 0o755
			}
		default:
			return fmt.Errorf("%s is not a regular file or folder (%s)", path, info.Mode().Type())
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if n, err := io.Copy(tw, f); err != nil || n != h.Size {
			return fmt.Errorf("%s changed while it was packed: %v", path, err)
		}
		files++
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		return archive{}, fmt.Errorf("pack %s: %w", dir, err)
	}
	sum := sha256.Sum256(raw.Bytes())
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return archive{}, err
	}
	if err := zw.Close(); err != nil {
		return archive{}, err
	}
	return archive{Data: gz.Bytes(), SHA256: hex.EncodeToString(sum[:]), Files: files}, nil
}

// sourceIDPrefix is the part of a deployment id that names the code it was built from: "s" and the first 26
// hex digits (104 bits) of the archive's SHA-256, then "-". deploy uploads every deployment under an id of
// this form followed by 8 random hex digits (36 characters, Appwrite's custom-id limit), so the function's
// active deployment id says which code runs: the staged code is unchanged since that deployment exactly when
// the active id starts with the staged archive's prefix.
func sourceIDPrefix(sha string) string { return "s" + sha[:26] + "-" }

// newDeploymentID is a deployment id for the archive with hash sha.
func newDeploymentID(sha string, random io.Reader) (string, error) {
	b := make([]byte, 4)
	if _, err := io.ReadFull(random, b); err != nil {
		return "", err
	}
	return sourceIDPrefix(sha) + hex.EncodeToString(b), nil
}

// builtFrom reports whether a deployment id was made by newDeploymentID for the archive with hash sha.
func builtFrom(deploymentID, sha string) bool {
	return len(deploymentID) == 36 && strings.HasPrefix(deploymentID, sourceIDPrefix(sha))
}
