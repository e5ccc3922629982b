// Package fnhttptest checks the HTTP surface every function shares (package fnhttp) the way the platform
// calls it: through the local open-runtimes server, with the executor's headers.
package fnhttptest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
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
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-open-runtimes-secret", secret)
	req.Header.Set("x-open-runtimes-timeout", "15")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
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
