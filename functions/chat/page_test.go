package handler

import (
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"appwrite-agent/shared/devkit/fnhttptest"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

func serveSite(site fstest.MapFS, endpoint string) func(openruntimes.Context) openruntimes.Response {
	return func(rt openruntimes.Context) openruntimes.Response {
		return serve(rt, Config{PublicEndpoint: endpoint}, site, time.Now)
	}
}

func TestPageNotBuiltIsA503Page(t *testing.T) {
	srv := fnhttptest.Serve(t, serveSite(fstest.MapFS{".keep": {}}, "https://cloud.example/v1"))
	for _, p := range []string{"/", "/index.html", "/oauth/mcp/callback", "/.keep"} {
		res, body := fnhttptest.Do(t, "GET", srv.URL+p, nil, nil)
		if res.StatusCode != http.StatusServiceUnavailable || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(string(body), "scripts/stage") {
			t.Fatalf("GET %s: %d %s %q", p, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}
	// The API does not depend on the page.
	res, body := fnhttptest.Do(t, "GET", srv.URL+"/api/config", nil, nil)
	if res.StatusCode != 200 || !strings.Contains(string(body), `"endpoint":"https://cloud.example/v1"`) {
		t.Fatalf("config: %d %s", res.StatusCode, body)
	}
}

func TestPageServesAssetsAndIndexWithBase(t *testing.T) {
	site := fstest.MapFS{
		"index.html":       {Data: []byte(`<!doctype html><html><head><meta charset="utf-8"><script type="module" src="./assets/app-1.js"></script></head><body></body></html>`)},
		"assets/app-1.js":  {Data: []byte(`console.log(1)`)},
		"assets/app-1.css": {Data: []byte(`body{}`)},
		"favicon.svg":      {Data: []byte(`<svg/>`)},
	}
	srv := fnhttptest.Serve(t, serveSite(site, "http://127.0.0.1:17080/v1"))
	for p, base := range map[string]string{"/": "./", "/index.html": "./", "/c": "./", "/oauth/mcp/callback": "../../", "/a/b/c/d": "../../../"} {
		res, body := fnhttptest.Do(t, "GET", srv.URL+p, nil, nil)
		want := `<head><base href="` + base + `"><meta`
		if res.StatusCode != 200 || !strings.Contains(string(body), want) || res.Header.Get("Cache-Control") != "no-cache" {
			t.Fatalf("GET %s: %d %s, want %s", p, res.StatusCode, body, want)
		}
		csp := res.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self';") || !strings.Contains(csp, "frame-ancestors 'none'") ||
			!strings.Contains(csp, "connect-src 'self' https: wss: http: ws:;") {
			t.Fatalf("CSP %q", csp)
		}
	}
	res, body := fnhttptest.Do(t, "GET", srv.URL+"/assets/app-1.js", nil, nil)
	if res.StatusCode != 200 || string(body) != "console.log(1)" || !strings.Contains(res.Header.Get("Content-Type"), "javascript") ||
		res.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Fatalf("asset: %d %v %q", res.StatusCode, res.Header, body)
	}
	res, _ = fnhttptest.Do(t, "GET", srv.URL+"/favicon.svg", nil, nil)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "image/svg+xml") || res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("favicon: %d %v", res.StatusCode, res.Header)
	}
	// Path tricks stay inside the site: a cleaned path that is no file is the page.
	res, body = fnhttptest.Do(t, "GET", srv.URL+"/assets/%2e%2e/%2e%2e/go.mod", nil, nil)
	if res.StatusCode != 200 || !strings.Contains(string(body), "<base href=") {
		t.Fatalf("traversal: %d %q", res.StatusCode, body)
	}
	res, body = fnhttptest.Do(t, "HEAD", srv.URL+"/", nil, nil)
	if res.StatusCode != 200 || len(body) != 0 {
		t.Fatalf("HEAD: %d %q", res.StatusCode, body)
	}
	res, body = fnhttptest.Do(t, "POST", srv.URL+"/", nil, strings.NewReader("{}"))
	if res.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(body), `"error":"method_not_allowed"`) {
		t.Fatalf("POST /: %d %s", res.StatusCode, body)
	}
	// On an https endpoint the page may not talk plain http.
	srv = fnhttptest.Serve(t, serveSite(site, "https://cloud.example/v1"))
	res, _ = fnhttptest.Do(t, "GET", srv.URL+"/", nil, nil)
	if csp := res.Header.Get("Content-Security-Policy"); strings.Contains(csp, "http:") {
		t.Fatalf("CSP allows http on an https deployment: %q", csp)
	}
}

func TestAPIRefusesWithoutAJWT(t *testing.T) {
	srv := fnhttptest.Serve(t, serveSite(fstest.MapFS{}, "https://cloud.example/v1"))
	for _, c := range []struct {
		method, path, auth string
		status             int
		code               string
	}{
		{"GET", "/api/conversations", "", 401, "unauthorized"},
		{"GET", "/api/conversations", "Basic abc", 401, "unauthorized"},
		{"GET", "/api/conversations", "Bearer ", 401, "unauthorized"},
		{"POST", "/api/conversations", "Bearer x", 405, "method_not_allowed"},
		{"GET", "/api/nope", "Bearer x", 404, "not_found"},
		{"GET", "/api", "", 404, "not_found"},
		// Configured nowhere: a JWT cannot even be checked.
		{"GET", "/api/me", "Bearer x", 503, "not_configured"},
	} {
		h := map[string]string{}
		if c.auth != "" {
			h["Authorization"] = c.auth
		}
		res, body := fnhttptest.Do(t, c.method, srv.URL+c.path, h, nil)
		if res.StatusCode != c.status || !strings.Contains(string(body), `"error":"`+c.code+`"`) {
			t.Errorf("%s %s (%q): %d %s, want %d %s", c.method, c.path, c.auth, res.StatusCode, body, c.status, c.code)
		}
	}
}

// TestAPIRoutes: the API's ServeMux routes a path with its slashes at either end trimmed; an unknown path is 404
// not_found, a route's path with another method (HEAD included: no API route answers HEAD) 405
// method_not_allowed, both before the JWT is read. A routed request here stops at 503 not_configured (no
// endpoint), which proves it was routed. A path with a "." or ".." segment names no route (it could otherwise
// reach another Appwrite path through an id).
func TestAPIRoutes(t *testing.T) {
	srv := fnhttptest.Serve(t, serveSite(fstest.MapFS{}, "https://cloud.example/v1"))
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/api/me", 503, "not_configured"},
		{"GET", "/api/me/", 503, "not_configured"},
		{"GET", "/api/conversations/abc", 503, "not_configured"},
		{"GET", "/api/conversations/a%20b", 503, "not_configured"},
		{"PATCH", "/api/conversations/abc", 503, "not_configured"},
		{"GET", "/api/turns/t1/events", 503, "not_configured"},
		{"POST", "/api/turns/t1/stop", 503, "not_configured"},
		{"DELETE", "/api/mcp/connections/aw", 503, "not_configured"},
		{"GET", "/api/config/", 200, ""},
		{"GET", "/api/conversations/abc/more", 404, "not_found"},
		{"GET", "/api/turns//events", 404, "not_found"},
		{"GET", "/api/conversations/..", 404, "not_found"},
		{"GET", "/api/conversations/./abc", 404, "not_found"},
		{"DELETE", "/api/nope", 404, "not_found"},
		{"GET", "/api/", 404, "not_found"},
		{"PUT", "/api/conversations", 405, "method_not_allowed"},
		{"POST", "/api/turns/t1/events", 405, "method_not_allowed"},
		{"GET", "/api/turns", 405, "method_not_allowed"},
		{"POST", "/api/config", 405, "method_not_allowed"},
		{"HEAD", "/api/me", 405, ""},
	} {
		res, body := fnhttptest.Do(t, c.method, srv.URL+c.path, map[string]string{"Authorization": "Bearer x"}, nil)
		if res.StatusCode != c.status || !strings.Contains(string(body), `"error":"`+c.code+`"`) && c.code != "" {
			t.Errorf("%s %s: %d %s, want %d %s", c.method, c.path, res.StatusCode, body, c.status, c.code)
		}
		if c.code == "not_found" && !strings.Contains(string(body), "no route for "+c.method) {
			t.Errorf("%s %s: %s, want the route named", c.method, c.path, body)
		}
	}
}
