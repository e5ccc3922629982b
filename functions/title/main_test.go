package handler_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	handler "appwrite-agent/functions/title"
	"appwrite-agent/shared/localruntime"
)

// serve runs the function behind the local open-runtimes server, as the platform calls it.
func serve(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(localruntime.New(handler.Main, localruntime.Options{Secret: "s", LogDir: t.TempDir()}))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("x-open-runtimes-secret", "s")
	req.Header.Set("x-open-runtimes-timeout", "15")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, body
}

func TestHealth(t *testing.T) {
	t.Setenv("APPWRITE_FUNCTION_DEPLOYMENT", "dep-1")
	status, body := get(t, serve(t).URL+"/health")
	var h struct{ Status, BuildID string }
	if err := json.Unmarshal(body, &struct {
		Status  *string `json:"status"`
		BuildID *string `json:"build_id"`
	}{&h.Status, &h.BuildID}); err != nil || status != 200 || h.Status != "ok" || h.BuildID != "dep-1" {
		t.Fatalf("%d %s", status, body)
	}
}

func TestUnknownPathIsAJSON404(t *testing.T) {
	status, body := get(t, serve(t).URL+"/nope")
	var e struct{ Error string }
	if status != 404 || json.Unmarshal(body, &e) != nil || e.Error != "not_found" {
		t.Fatalf("%d %s", status, body)
	}
}
