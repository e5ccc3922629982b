// Package fnhttptest checks the HTTP surface every function shares (package fnhttp) the way the platform
// calls it: through the local open-runtimes server, with the executor's headers.
package fnhttptest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/fnhttp"
)

// secret is the x-open-runtimes-secret of the test server.
const secret = "fnhttptest-secret"

// Serve runs main behind the local open-runtimes server (with a secret, as Appwrite's executor does) until
// the test ends.
func Serve(t testing.TB, main localruntime.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(localruntime.New(main, localruntime.Options{Secret: secret, LogDir: t.TempDir()}))
	t.Cleanup(srv.Close)
	return srv
}

// Get sends GET url with the executor's headers and returns the status and body.
func Get(t testing.TB, url string) (int, []byte) {
	t.Helper()
	res, body := Do(t, http.MethodGet, url, nil, nil)
	return res.StatusCode, body
}

// CheckHealthAndNotFound asserts that GET /health answers 200 {"status":"ok","build_id":<the
// deployment>} and that an unknown path answers a JSON 404. It sets APPWRITE_FUNCTION_DEPLOYMENT for the
// test.
func CheckHealthAndNotFound(t *testing.T, main localruntime.Handler) {
	t.Helper()
	t.Setenv("APPWRITE_FUNCTION_DEPLOYMENT", "dep-fnhttptest")
	srv := Serve(t, main)
	status, body := Get(t, srv.URL+"/health")
	var h fnhttp.HealthStatus
	if err := json.Unmarshal(body, &h); err != nil || status != http.StatusOK || h.Status != "ok" || h.BuildID != "dep-fnhttptest" {
		t.Fatalf("GET /health: %d %s", status, body)
	}
	status, body = Get(t, srv.URL+"/no/such/path")
	var e fnhttp.ErrorBody
	if err := json.Unmarshal(body, &e); err != nil || status != http.StatusNotFound || e.Error != "not_found" {
		t.Fatalf("GET /no/such/path: %d %s", status, body)
	}
}

// Do sends method url with the executor's headers plus header and returns the response (body read). A
// "Host" in header is the request's Host (the domain the function is reached at).
func Do(t testing.TB, method, url string, header map[string]string, body io.Reader) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-open-runtimes-secret", secret)
	req.Header.Set("x-open-runtimes-timeout", "15")
	for k, v := range header {
		if http.CanonicalHeaderKey(k) == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// CheckCORS asserts a function's CORS behaviour (fnhttp.CORS) through the local runtime, with setting (the
// function's origins variable) set for the test: with nothing configured no answer carries a CORS header;
// with two origins configured, a preflight from an allowed origin gets 204 with the allowed methods and
// headers, one from another origin a JSON 403; every other answer, errors included (a keyed POST to path
// without a key, an unknown path), carries Access-Control-Allow-Origin for an allowed origin only, and
// Vary: Origin. It sets AGENT_API_KEY so that path answers 401. newMain builds the function from the
// environment as it is when called (handler.New(handler.LoadConfig())), after each setting is made.
func CheckCORS(t *testing.T, newMain func() localruntime.Handler, setting, path string) {
	t.Helper()
	t.Setenv("AGENT_API_KEY", "cors-test-key")
	const allowed, other = "https://console.example.com", "https://evil.example.net"
	preflight := map[string]string{"Origin": allowed, "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "content-type, x-session-api-key"}
	corsHeaders := func(res *http.Response) []string {
		var out []string
		for k := range res.Header {
			if strings.HasPrefix(k, "Access-Control-") {
				out = append(out, k)
			}
		}
		return out
	}

	t.Setenv(setting, "")
	srv := Serve(t, newMain())
	res, _ := Do(t, http.MethodOptions, srv.URL+path, preflight, nil)
	if h := corsHeaders(res); len(h) > 0 || res.StatusCode == http.StatusNoContent {
		t.Fatalf("%s unset: preflight answered %d with %v", setting, res.StatusCode, h)
	}
	res, _ = Do(t, http.MethodGet, srv.URL+"/health", map[string]string{"Origin": allowed}, nil)
	if h := corsHeaders(res); len(h) > 0 || res.Header.Get("Vary") != "" {
		t.Fatalf("%s unset: GET /health has %v, Vary %q", setting, h, res.Header.Get("Vary"))
	}

	t.Setenv(setting, allowed+", http://localhost:5173/")
	srv = Serve(t, newMain())
	res, body := Do(t, http.MethodOptions, srv.URL+path, preflight, nil)
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != allowed ||
		res.Header.Get("Access-Control-Allow-Methods") != fnhttp.CORSMethods ||
		res.Header.Get("Access-Control-Allow-Headers") != fnhttp.CORSHeaders || res.Header.Get("Access-Control-Max-Age") == "" ||
		res.Header.Get("Vary") != "Origin" || len(body) != 0 {
		t.Fatalf("preflight from %s: %d %v %q", allowed, res.StatusCode, res.Header, body)
	}
	local := map[string]string{"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"}
	if res, _ = Do(t, http.MethodOptions, srv.URL+path, local, nil); res.StatusCode != http.StatusNoContent ||
		res.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" {
		t.Fatalf("preflight from localhost: %d %v", res.StatusCode, res.Header)
	}
	preflight["Origin"] = other
	res, body = Do(t, http.MethodOptions, srv.URL+path, preflight, nil)
	var e fnhttp.ErrorBody
	if res.StatusCode != http.StatusForbidden || len(corsHeaders(res)) > 0 || json.Unmarshal(body, &e) != nil || e.Error != "origin_not_allowed" {
		t.Fatalf("preflight from %s: %d %v %s", other, res.StatusCode, res.Header, body)
	}

	// A refused request (no session key) still carries the header, so the page can read the error.
	res, body = Do(t, http.MethodPost, srv.URL+path, map[string]string{"Origin": allowed, "Content-Type": "application/json"}, nil)
	if res.StatusCode != http.StatusUnauthorized || res.Header.Get("Access-Control-Allow-Origin") != allowed || res.Header.Get("Vary") != "Origin" {
		t.Fatalf("POST %s without a key from %s: %d %v %s", path, allowed, res.StatusCode, res.Header, body)
	}
	for _, tc := range []struct{ path, origin, want string }{
		{"/health", allowed, allowed}, {"/no/such/path", allowed, allowed}, {"/health", other, ""}, {"/health", "", ""},
	} {
		h := map[string]string{}
		if tc.origin != "" {
			h["Origin"] = tc.origin
		}
		res, _ = Do(t, http.MethodGet, srv.URL+tc.path, h, nil)
		if res.Header.Get("Access-Control-Allow-Origin") != tc.want || res.Header.Get("Vary") != "Origin" {
			t.Fatalf("GET %s from %q: Access-Control-Allow-Origin %q, Vary %q", tc.path, tc.origin,
				res.Header.Get("Access-Control-Allow-Origin"), res.Header.Get("Vary"))
		}
	}
}
