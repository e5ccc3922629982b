package deploy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// localState is what deploy keeps on this machine about one project's secret variables (mode 0600, in
// Options.StateDir): Appwrite stores them as secrets, which it never returns, so this copy is what lets a later
// run rotate the server keys (-rotate-keys keeps the old keys), give a function that lacks one the value the
// others have, and tell whether LLM_API_KEY changed. Each entry records the $updatedAt of every variable that
// holds it: a variable changed since (in the Console, by another machine) no longer matches, and deploy then
// trusts nothing of this copy for it.
type localState struct {
	Endpoint string                  `json:"endpoint"`
	Project  string                  `json:"project"`
	Secrets  map[string]*stateSecret `json:"secrets"`
}

// stateSecret is one secret variable's record.
type stateSecret struct {
	// Value is kept for the server keys (AGENT_API_KEY and the key lists), which deploy generated; empty for
	// a value the user gave (LLM_API_KEY), whose SHA-256 is kept instead.
	Value string `json:"value,omitempty"`
	// SHA256 is the hex SHA-256 of the value.
	SHA256 string `json:"sha256"`
	// Stored maps each function to the $updatedAt of its variable holding the value.
	Stored map[string]string `json:"stored"`
}

// statePath is the state file of the run's project: <StateDir>/<host>_<project>.json.
func (d *deployer) statePath() string {
	host := strings.NewReplacer(":", "_", "[", "", "]", "").Replace(d.endpointURL().Host)
	return filepath.Join(d.opts.StateDir, host+"_"+d.opts.Project+".json")
}

// loadState reads the state file, or an empty state when there is none.
func (d *deployer) loadState() (*localState, error) {
	st := &localState{Endpoint: d.opts.Endpoint, Project: d.opts.Project, Secrets: map[string]*stateSecret{}}
	raw, err := os.ReadFile(d.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, st); err != nil {
		return nil, fmt.Errorf("%s: %w (move it away to start without it)", d.statePath(), err)
	}
	if st.Secrets == nil {
		st.Secrets = map[string]*stateSecret{}
	}
	return st, nil
}

// saveState writes the state file (0600, in a 0700 folder), replacing it atomically.
func (d *deployer) saveState(st *localState) error {
	if err := os.MkdirAll(d.opts.StateDir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(d.opts.StateDir, 0o700); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(d.opts.StateDir, ".state-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), d.statePath())
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// matches reports whether the record still describes what the functions hold: every function of present
// has its variable with the recorded $updatedAt.
func (s *stateSecret) matches(present map[string]string) bool {
	if s == nil || len(present) == 0 {
		return false
	}
	for fn, updated := range present {
		if s.Stored[fn] != updated {
			return false
		}
	}
	return true
}
