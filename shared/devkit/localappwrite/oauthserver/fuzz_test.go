package oauthserver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"appwrite-agent/shared/devkit/localappwrite"
)

// FuzzOAuthRegister: any registration body gets 201 with a client id and no secret, or 400 with an RFC 7591
// error code; never another status.
func FuzzOAuthRegister(f *testing.F) {
	for _, s := range []string{`{"redirect_uris":["https://a.example/cb"]}`, `{"redirect_uris":["http://127.0.0.1/cb"],"grant_types":["authorization_code","refresh_token"],"token_endpoint_auth_method":"none"}`,
		`{}`, `[]`, `null`, `{"redirect_uris":"x"}`, `{"redirect_uris":[1]}`, `{"redirect_uris":["https://a/cb"],"scope":5}`,
		`{"redirect_uris":["https://a/cb"],"client_secret":"s"}`, "\x00", `{"redirect_uris":["https://a/cb"],"response_types":["token"]}`} {
		f.Add(s)
	}
	s := localappwrite.New(localappwrite.Options{Logf: func(string, ...any) {}, SigningKey: signingKey()})
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
