package localappwrite

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"appwrite-agent/shared/loopback"

	"github.com/appwrite/sdk-for-go/functions"
)

// TestFunctionRules: POST /v1/proxy/rules/function makes a function domain under _APP_DOMAIN_FUNCTIONS
// (verified at once), refuses what Proxy/Action.php refuses, and the domain serves the function by host name;
// GET /v1/proxy/rules lists it with its active deployment. A function created through the API has no rule
// until one is created.
func TestFunctionRules(t *testing.T) {
	f := newFixture(t, Options{})
	runtime := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, r.Method+" "+r.URL.RequestURI()+" trigger="+r.Header.Get("x-appwrite-trigger"))
	}))
	defer runtime.Close()
	fs := functions.New(f.sdk(f.key))
	if _, err := fs.Create("api-made", "API made", "go-1.26", fs.WithCreateExecute([]string{"any"})); err != nil {
		t.Fatal(err)
	}
	if err := f.s.RegisterFunction(testProject, FunctionSpec{ID: "seeded", URL: runtime.URL, Execute: []string{"any"}}); err != nil {
		t.Fatal(err)
	}
	list := func(queries ...string) map[string]any {
		t.Helper()
		out, err := callJSON(t, f.sdk(f.key), "GET", "/proxy/rules", map[string]any{"queries": queries})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	byAPI := `{"method":"equal","attribute":"deploymentResourceId","values":["api-made"]}`
	if got := list(byAPI); got["total"] != 0.0 {
		t.Fatalf("a function created through the API has a rule: %v", got)
	}

	for _, c := range []struct {
		domain, function string
		status           int
		typ, msg         string
	}{
		{"http://x.functions.localhost", "seeded", 400, ErrGeneralArgumentInvalid, "Invalid `domain` param: Value must be a valid domain"},
		{"x.functions.localhost:8080", "seeded", 400, ErrGeneralArgumentInvalid, "Invalid `domain` param: Value must be a valid domain"},
		{"a.b.functions.localhost", "seeded", 400, ErrGeneralArgumentInvalid, "This domain name is not allowed. Please use a different domain."},
		{"functions.localhost", "seeded", 400, ErrGeneralArgumentInvalid, "This domain name is not allowed. Please use a different domain."},
		{"localhost", "seeded", 400, ErrGeneralArgumentInvalid, "This domain name is not allowed. Please use a different domain."},
		{"x.functions.localhost", "missing", 404, ErrRuleResourceNotFound, errorCatalog[ErrRuleResourceNotFound].message},
	} {
		code, body := f.rawCall(t, "POST", "/proxy/rules/function", map[string]any{"domain": c.domain, "functionId": c.function}, nil)
		if code != c.status || body["type"] != c.typ || body["message"] != c.msg {
			t.Errorf("%s → %s: %d %v, want %d %s %q", c.domain, c.function, code, body, c.status, c.typ, c.msg)
		}
	}

	code, body := f.rawCall(t, "POST", "/proxy/rules/function", map[string]any{"domain": "seeded1.functions.localhost", "functionId": "seeded"}, nil)
	if code != 201 || body["status"] != "verified" || body["deploymentResourceType"] != "function" || body["deploymentResourceId"] != "seeded" ||
		body["type"] != "deployment" || body["trigger"] != "manual" || body["domain"] != "seeded1.functions.localhost" {
		t.Fatalf("create: %d %v", code, body)
	}
	if code, body := f.rawCall(t, "POST", "/proxy/rules/function", map[string]any{"domain": "seeded1.functions.localhost", "functionId": "api-made"}, nil); code != 409 || body["type"] != ErrRuleAlreadyExists {
		t.Fatalf("a domain in use: %d %v", code, body)
	}
	code, body = f.rawCall(t, "POST", "/proxy/rules/function", map[string]any{"domain": "chat.example.com", "functionId": "api-made"}, nil)
	if code != 201 || body["status"] != "unverified" || body["logs"] == "" || body["deploymentId"] != "" {
		t.Fatalf("a custom domain: %d %v", code, body)
	}
	if code, body := f.rawCall(t, "POST", "/proxy/rules/function", map[string]any{"domain": "x.functions.localhost", "functionId": "seeded"},
		map[string]string{"X-Appwrite-Key": mustKey(t, f, "rules.read")}); code != 401 || body["type"] != ErrGeneralUnauthorizedScope {
		t.Fatalf("without rules.write: %d %v", code, body)
	}
	got := list(byAPI)
	rules, _ := got["rules"].([]any)
	if got["total"] != 1.0 || len(rules) != 1 || rules[0].(map[string]any)["domain"] != "chat.example.com" {
		t.Fatalf("rules of api-made: %v", got)
	}
	if seeded := list(`{"method":"equal","attribute":"deploymentResourceId","values":["seeded"]}`); seeded["total"] != 2.0 {
		t.Fatalf("the seeded function's rules (derived and created): %v", seeded)
	}
	if got := f.s.RuleDomains(testProject, "seeded"); len(got) != 1 || got[0] != "seeded1.functions.localhost" {
		t.Fatalf("RuleDomains %v", got)
	}

	// The domain serves the function by host name, path and query included, as an HTTP execution.
	u, _ := url.Parse(f.ts.URL)
	res, err := loopback.Client(time.Minute).Get("http://seeded1.functions.localhost:" + u.Port() + "/hello?x=1")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || string(b) != "GET /hello?x=1 trigger=http" || res.Header.Get("x-appwrite-execution-id") == "" {
		t.Fatalf("domain: %d %q", res.StatusCode, b)
	}
	// An unknown host is the API's as before.
	res2, err := loopback.Client(time.Minute).Get("http://unknown.functions.localhost:" + u.Port() + "/v1/health/version")
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	if b, _ := io.ReadAll(res2.Body); res2.StatusCode != 200 || !strings.Contains(string(b), `"version"`) {
		t.Fatalf("an unknown host: %d %s", res2.StatusCode, b)
	}
}

func mustKey(t *testing.T, f *fixture, scopes ...string) string {
	t.Helper()
	k, err := f.s.CreateKey(testProject, scopes)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
