package fnhttp_test

import (
	"net/http"
	"testing"

	"appwrite-agent/shared/fnhttp"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

func corsCall(c fnhttp.CORS, method string, headers map[string]string) openruntimes.Response {
	rt := openruntimes.NewContext(openruntimes.Logger{})
	rt.Req.Method, rt.Req.Path, rt.Req.Headers = method, "/", headers
	return c.Wrap(func(rt openruntimes.Context) openruntimes.Response {
		return fnhttp.Error(rt, http.StatusTeapot, "teapot", "short and stout")
	})(rt)
}

func TestParseCORS(t *testing.T) {
	c, err := fnhttp.ParseCORS("TURN_CORS_ORIGINS", " HTTPS://Console.Example.com/ ,http://localhost:5173 ftp://x.example, https://a.example/path, null")
	if err == nil || err.Error() != `TURN_CORS_ORIGINS: ignored "ftp://x.example", "https://a.example/path", "null" (an origin is scheme://host[:port] with http or https, or *)` {
		t.Fatalf("error %v", err)
	}
	for origin, want := range map[string]string{
		"https://console.example.com": "https://console.example.com",
		"https://CONSOLE.example.com": "https://CONSOLE.example.com", // echoed as sent
		"http://localhost:5173":       "http://localhost:5173",
		"http://console.example.com":  "", // another scheme is another origin
		"https://localhost:5173":      "",
		"https://a.example":           "",
		"null":                        "",
	} {
		res := corsCall(c, http.MethodGet, map[string]string{"origin": origin})
		if got := res.Headers["access-control-allow-origin"]; got != want || res.StatusCode != http.StatusTeapot {
			t.Errorf("origin %q: allow %q (want %q), status %d", origin, got, want, res.StatusCode)
		}
	}
	// The valid entries apply even when others were refused.
	if !c.Enabled() {
		t.Fatal("not enabled")
	}

	anyOrigin, err := fnhttp.ParseCORS("X", "*")
	if err != nil {
		t.Fatal(err)
	}
	res := corsCall(anyOrigin, http.MethodOptions, map[string]string{"origin": "https://anyone.example", "access-control-request-method": "POST"})
	if res.StatusCode != http.StatusNoContent || res.Headers["access-control-allow-origin"] != "*" {
		t.Fatalf("* preflight %d %v", res.StatusCode, res.Headers)
	}
	// OPTIONS without Access-Control-Request-Method is not a preflight: the function answers it.
	if res := corsCall(anyOrigin, http.MethodOptions, map[string]string{"origin": "https://anyone.example"}); res.StatusCode != http.StatusTeapot {
		t.Fatalf("plain OPTIONS %d", res.StatusCode)
	}

	none, err := fnhttp.ParseCORS("X", " , ")
	if err != nil || none.Enabled() {
		t.Fatalf("empty list: %v %v", none.Enabled(), err)
	}
	res = corsCall(none, http.MethodOptions, map[string]string{"origin": "https://a.example", "access-control-request-method": "POST"})
	if res.StatusCode != http.StatusTeapot || len(res.Headers) != 1 {
		t.Fatalf("nothing configured must add nothing: %d %v", res.StatusCode, res.Headers)
	}
}
