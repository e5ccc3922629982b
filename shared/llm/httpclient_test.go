package llm

import (
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"appwrite-agent/shared/turnrequest"
)

// userEnv resolves settings for a per-request base_url under env.
func userEnv(t *testing.T, env Env, baseURL string) Settings {
	t.Helper()
	s, err := Resolve(env, &turnrequest.LLM{APIKey: "user-key", BaseURL: baseURL})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestUserPolicyIsReadOnce: the SSRF policy and the CA file of a per-request base_url are read with the
// Env, once; later HTTPClient calls neither read the environment nor parse the file again (it is gone, and
// so are the variables, yet both calls reach the TLS server the file trusts).
func TestUserPolicyIsReadOnce(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SAFEHTTP_ALLOW", "127.0.0.0/8")
	t.Setenv("SAFEHTTP_CA_FILE", ca)
	env := EnvFromOS()
	t.Setenv("SAFEHTTP_ALLOW", "")
	t.Setenv("SAFEHTTP_CA_FILE", filepath.Join(t.TempDir(), "missing.pem"))
	s := userEnv(t, env, srv.URL)
	for i := range 2 {
		c, release, err := HTTPClient(s, 5*time.Second)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		_ = resp.Body.Close()
		release()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("call %d: status %d", i, resp.StatusCode)
		}
		if i == 0 {
			if err := os.Remove(ca); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestUserPolicyRefusals: a bad SAFEHTTP_ALLOW or an unreadable CA file refuses every per-request
// base_url with a message naming the variable; an http:// base_url is ErrUserURLScheme; the environment's
// own endpoint is never judged by that policy.
func TestUserPolicyRefusals(t *testing.T) {
	t.Setenv("SAFEHTTP_CA_FILE", "")
	t.Setenv("SAFEHTTP_ALLOW", "not-a-prefix")
	badAllow := EnvFromOS()
	t.Setenv("SAFEHTTP_ALLOW", "")
	missing := filepath.Join(t.TempDir(), "missing.pem")
	t.Setenv("SAFEHTTP_CA_FILE", missing)
	badCA := EnvFromOS()
	t.Setenv("SAFEHTTP_CA_FILE", "")
	plain := EnvFromOS()
	for _, c := range []struct {
		name string
		env  Env
		url  string
		want string
	}{
		{"bad allow list", badAllow, "https://llm.example.com/v1", "the SSRF policy for llm.base_url is misconfigured: SAFEHTTP_ALLOW: "},
		{"missing CA file", badCA, "https://llm.example.com/v1", "the SSRF policy for llm.base_url is misconfigured: SAFEHTTP_CA_FILE: open " + missing},
		{"plain http", plain, "http://llm.example.com/v1", ErrUserURLScheme.Error()},
	} {
		_, _, err := HTTPClient(userEnv(t, c.env, c.url), time.Second)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: got %v, want prefix %q", c.name, err, c.want)
		}
		if c.name == "plain http" && !errors.Is(err, ErrUserURLScheme) {
			t.Errorf("%s: %v is not ErrUserURLScheme", c.name, err)
		}
		own := c.env
		own.APIKey = "server-key"
		s, err := Resolve(own, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, release, err := HTTPClient(s, time.Second); err != nil {
			t.Errorf("%s: the environment's endpoint was refused: %v", c.name, err)
		} else {
			release()
		}
	}
}
