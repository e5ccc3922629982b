package handler

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"appwrite-agent/shared/devkit/fnhttptest"
)

// TestClientMetadataDocument: chat serves its OAuth client metadata document at /client-metadata.json, whose
// client_id is the URL it was asked at (the domain as the request reached the function, https behind the
// platform's TLS: X-Forwarded-Proto) and whose one redirect URI is the page's callback on that root
// (paths.ts callbackURL: {root}oauth/mcp/callback), a public client. The query is not part of the id; HEAD
// answers the headers; other methods are refused like the page's.
func TestClientMetadataDocument(t *testing.T) {
	srv := fnhttptest.Serve(t, serveSite(fstest.MapFS{".keep": {}}, "https://cloud.example/v1"))
	get := func(method, path string) (*http.Response, []byte) {
		return fnhttptest.Do(t, method, srv.URL+path, map[string]string{"Host": "chat.example", "X-Forwarded-Proto": "https"}, nil)
	}
	res, body := get("GET", "/client-metadata.json?x=1")
	var doc map[string]any
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") || json.Unmarshal(body, &doc) != nil {
		t.Fatalf("GET: %d %v %s", res.StatusCode, res.Header, body)
	}
	want := map[string]any{
		"client_id":                  "https://chat.example/client-metadata.json",
		"client_name":                "Appwrite agent chat",
		"client_uri":                 "https://chat.example/",
		"redirect_uris":              []any{"https://chat.example/oauth/mcp/callback"},
		"grant_types":                []any{"authorization_code", "refresh_token"},
		"response_types":             []any{"code"},
		"token_endpoint_auth_method": "none",
		"application_type":           "web",
	}
	got, _ := json.Marshal(doc)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Fatalf("document\n got %s\nwant %s", got, exp)
	}
	if res.Header.Get("Cache-Control") != "public, max-age=3600" {
		t.Fatalf("Cache-Control %q", res.Header.Get("Cache-Control"))
	}
	if res, body := get("HEAD", "/client-metadata.json"); res.StatusCode != 200 || len(body) != 0 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("HEAD: %d %q", res.StatusCode, body)
	}
	if res, _ := get("POST", "/client-metadata.json"); res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", res.StatusCode)
	}
}
