package localappwrite

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
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

// TestFunctionDomainOverHTTPS: with Options.HTTPS, Start also serves the server over https (a self-signed
// certificate for the loopback address, Running.CertPEM), so a function domain has an https URL, as on
// Appwrite: a client that trusts the certificate reaches the function; one that does not is refused by TLS.
func TestFunctionDomainOverHTTPS(t *testing.T) {
	rt := runtimeStub(t, 200)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := Start(ctx, "127.0.0.1:0", Options{SigningKey: testKey(), Logf: t.Logf, HTTPS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		if err := run.Shutdown(sctx); err != nil {
			t.Error(err)
		}
	}()
	if err := run.Server.SeedProject(ProjectSpec{ID: testProject}); err != nil {
		t.Fatal(err)
	}
	if err := run.Server.RegisterFunction(testProject, FunctionSpec{ID: "hook", URL: rt.ts.URL, Execute: []string{"any"}}); err != nil {
		t.Fatal(err)
	}
	u := run.SecureDomainURL("hook")
	if !strings.HasPrefix(u, "https://127.0.0.1:") || !strings.HasSuffix(u, "/_local/domains/hook") {
		t.Fatalf("secure domain URL %q", u)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(run.CertPEM) {
		t.Fatal("CertPEM holds no certificate")
	}
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}, Timeout: 20 * time.Second}
	res, err := trusting.Post(u+"/cb", "text/plain", strings.NewReader("over tls"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "echo:over tls" {
		t.Fatalf("%d %q", res.StatusCode, body)
	}
	if _, err := (&http.Client{Timeout: 20 * time.Second}).Get(u + "/cb"); err == nil {
		t.Fatal("a client that does not trust the certificate got through")
	}
	if plain, _ := Start(ctx, "127.0.0.1:0", Options{SigningKey: testKey(), Logf: t.Logf}); plain.SecureURL != "" || plain.SecureDomainURL("hook") != "" {
		t.Fatalf("https without Options.HTTPS: %q", plain.SecureURL)
	}
}
