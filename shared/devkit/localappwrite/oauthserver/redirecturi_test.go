package oauthserver

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzRedirectURI: the registration's redirect URI check never panics, and what it accepts is an absolute
// URL without a fragment, with no script scheme, plain http only on loopback, and matching itself.
func FuzzRedirectURI(f *testing.F) {
	for _, s := range []string{"https://chat.example.com/cb", "http://127.0.0.1:8976/cb", "http://localhost/cb",
		"http://[::1]:1/x?y=1", "com.example.app:/oauth", "javascript:alert(1)", "http://example.com/cb", "https://a/b#c",
		"//no-scheme", "", "HTTP://127.0.0.1/cb", "https://", "data:text/html,x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if checkRedirectURI(raw) != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || !u.IsAbs() || u.Fragment != "" || strings.Contains(raw, "#") {
			t.Fatalf("accepted %q", raw)
		}
		switch strings.ToLower(u.Scheme) {
		case "javascript", "data", "vbscript", "file":
			t.Fatalf("accepted a script scheme: %q", raw)
		case "http":
			if !isLoopbackHost(u.Hostname()) {
				t.Fatalf("accepted plain http off loopback: %q", raw)
			}
		}
		if !redirectMatches(raw, raw) {
			t.Fatalf("%q does not match itself", raw)
		}
	})
}
