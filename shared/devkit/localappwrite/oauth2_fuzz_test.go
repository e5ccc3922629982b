package localappwrite

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
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

// FuzzOAuthRegister: any registration body gets 201 with a client id and no secret, or 400 with an RFC 7591
// error code; never another status.
func FuzzOAuthRegister(f *testing.F) {
	for _, s := range []string{`{"redirect_uris":["https://a.example/cb"]}`, `{"redirect_uris":["http://127.0.0.1/cb"],"grant_types":["authorization_code","refresh_token"],"token_endpoint_auth_method":"none"}`,
		`{}`, `[]`, `null`, `{"redirect_uris":"x"}`, `{"redirect_uris":[1]}`, `{"redirect_uris":["https://a/cb"],"scope":5}`,
		`{"redirect_uris":["https://a/cb"],"client_secret":"s"}`, "\x00", `{"redirect_uris":["https://a/cb"],"response_types":["token"]}`} {
		f.Add(s)
	}
	s := New(Options{Logf: func(string, ...any) {}, SigningKey: testKey()})
	f.Cleanup(func() { _ = s.Close() })
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/oauth2/console/register", strings.NewReader(body)))
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("HTTP %d, not JSON: %q", rec.Code, rec.Body.String())
		}
		switch rec.Code {
		case http.StatusCreated:
			if id, _ := out["client_id"].(string); id == "" || out["client_secret"] != nil {
				t.Fatalf("registration answer %v", out)
			}
		case http.StatusBadRequest:
			if e := out["error"]; e != "invalid_client_metadata" && e != "invalid_redirect_uri" {
				t.Fatalf("error %v", out)
			}
		default:
			t.Fatalf("HTTP %d %v", rec.Code, out)
		}
	})
}
