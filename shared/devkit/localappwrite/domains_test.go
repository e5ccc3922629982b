package localappwrite

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestFunctionDomain(t *testing.T) {
	f := newFixture(t, Options{})
	rt := runtimeStub(t, 201)
	if err := f.s.RegisterFunction(testProject, FunctionSpec{ID: "hook", URL: rt.ts.URL, Secret: "rt", Scopes: []string{"executions.write"}, Execute: []string{"any"}, Timeout: 60}); err != nil {
		t.Fatal(err)
	}
	url := f.s.DomainURL("hook")
	if url != f.ts.URL+"/_local/domains/hook" {
		t.Fatalf("domain url %q", url)
	}
	req, _ := http.NewRequest("POST", url+"/appwrite/webhooks/w1?x=1", strings.NewReader("payload"))
	req.Header.Set("X-Appwrite-User-Id", "spoofed")
	req.Header.Set("X-Appwrite-Event", "spoofed.event")
	req.Header.Set("X-Custom-In", "kept")
	req.SetBasicAuth("user", "pass")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 201 || string(body) != "echo:payload" || res.Header.Get("x-custom") != "yes" || res.Header.Get("x-appwrite-execution-id") == "" {
		t.Fatalf("%d %q %v", res.StatusCode, body, res.Header)
	}
	got := rt.all()[0]
	h := got.Header
	if got.Method != "POST" || got.Path != "/appwrite/webhooks/w1?x=1" || h.Get("x-appwrite-trigger") != "http" ||
		h.Get("x-appwrite-user-id") != "" || h.Get("x-appwrite-event") != "" || !strings.HasPrefix(h.Get("x-appwrite-key"), "dynamic_") ||
		h.Get("x-custom-in") != "kept" || h.Get("x-open-runtimes-secret") != "rt" || h.Get("x-open-runtimes-timeout") != "30" {
		t.Fatalf("runtime got %s %s %v", got.Method, got.Path, h)
	}
	// The client's Authorization reaches the function (the executor's Basic opr: only fills an empty one).
	if u, p, ok := (&http.Request{Header: http.Header{"Authorization": {h.Get("authorization")}}}).BasicAuth(); !ok || u != "user" || p != "pass" {
		t.Fatalf("authorization %q", h.Get("authorization"))
	}

	// An error status with an empty body becomes Appwrite's HTML page.
	rt.mu.Lock()
	rt.reply = func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(404) }
	rt.mu.Unlock()
	res, err = http.Get(url + "/missing")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 404 || !strings.HasPrefix(res.Header.Get("content-type"), "text/html") || !strings.Contains(string(body), "<html>") {
		t.Fatalf("%d %s %q", res.StatusCode, res.Header.Get("content-type"), body)
	}
	res, _ = http.Get(f.ts.URL + "/_local/domains/nope/x")
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Fatalf("unknown function: %d", res.StatusCode)
	}
}
