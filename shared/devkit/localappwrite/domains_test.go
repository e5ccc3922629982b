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

// A function domain runs the function only when execute includes "any" or "guests" (general.php:364-370):
// else 401 with Appwrite's message in the HTML error view, and the runtime is not called.
func TestFunctionDomainNeedsAnyOrGuests(t *testing.T) {
	f := newFixture(t, Options{})
	rt := runtimeStub(t, 200)
	for id, execute := range map[string][]string{"none": nil, "users": {"users"}, "guests": {"guests"}, "any": {"any", "users"}} {
		if err := f.s.RegisterFunction(testProject, FunctionSpec{ID: id, URL: rt.ts.URL, Execute: execute, Timeout: 15}); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]int{"none": 401, "users": 401, "guests": 200, "any": 200} {
		res, err := http.Post(f.s.DomainURL(id)+"/", "text/plain", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("%s: %d %s", id, res.StatusCode, body)
		}
		if want == 401 && (!strings.Contains(string(body), "To execute function using domain, execute permissions must include &#34;any&#34; or &#34;guests&#34;.") ||
			!strings.HasPrefix(res.Header.Get("content-type"), "text/html")) {
			t.Fatalf("%s: %q", id, body)
		}
	}
	if n := len(rt.all()); n != 2 {
		t.Fatalf("the runtime ran %d times, want 2", n)
	}
}
