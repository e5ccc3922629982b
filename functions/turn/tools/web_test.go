package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"crypto/tls"
	"crypto/x509"

	"appwrite-agent/shared/safehttp"
)

// loopback is the allowlist every web test uses: only this machine is ever reached.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// tlsServer starts a local https server and returns it with a Web whose policy allows loopback and
// trusts the server's certificate.
func tlsServer(t *testing.T, h http.Handler) (*httptest.Server, Web) {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv, Web{Policy: safehttp.Options{AllowPrivate: loopback, TLSConfig: &tls.Config{RootCAs: pool}}}
}

// plainServer starts a local http server and returns it with a Web that allows loopback over http (what
// SAFEHTTP_ALLOW=127.0.0.0/8 and SAFEHTTP_ALLOW_HTTP=true give).
func plainServer(t *testing.T, h http.Handler) (*httptest.Server, Web) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, Web{Policy: safehttp.Options{AllowPrivate: loopback, AllowHTTP: true}}
}

func run(t *testing.T, tool interface {
	Run(context.Context, json.RawMessage) (string, error)
}, args any) string {
	t.Helper()
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := tool.Run(ctx, b)
	if err != nil {
		t.Fatalf("Run(%s): %v", b, err)
	}
	return out
}

func TestHttpGetSuccessOverTLS(t *testing.T) {
	var hdr http.Header
	srv, web := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":true}`)
	}))
	out := run(t, HTTPGet{Web: web}, map[string]any{"url": srv.URL + "/data?x=1"})
	want := fmt.Sprintf("status=200 final_url=%s/data?x=1 host=127.0.0.1 content_type=application/json\n\n{\"ok\":true}", srv.URL)
	if out != want {
		t.Fatalf("got\n%q\nwant\n%q", out, want)
	}
	if hdr.Get("User-Agent") != httpGetUserAgent || hdr.Get("Accept") != httpGetAccept {
		t.Fatalf("headers %v", hdr)
	}
}

func TestHttpGetDecodesCharsetsAndDescribesBinary(t *testing.T) {
	srv, web := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte("caf\xe9"))
		case "/bad-utf8":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("a\xffb"))
		case "/none":
			w.Header()["Content-Type"] = nil
			w.Write([]byte("plain words"))
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n0000000000"))
		case "/missing":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(404)
			fmt.Fprint(w, "no such page")
		}
	}))
	h := HTTPGet{Web: web}
	for path, want := range map[string]string{
		"/latin1":   "content_type=text/plain; charset=iso-8859-1\n\ncafé",
		"/bad-utf8": "\n\na\uFFFDb",
		"/none":     "content_type=unknown\n\nplain words",
		"/png":      "content_type=image/png\n\n(binary or non-text content-type 'image/png'; 18 bytes not returned as text.",
		"/missing":  "status=404 ",
	} {
		out := run(t, h, map[string]any{"url": srv.URL + path})
		if !strings.Contains(out, want) {
			t.Errorf("%s: %q does not contain %q", path, out, want)
		}
	}
	if out := run(t, h, map[string]any{"url": srv.URL + "/missing"}); !strings.HasSuffix(out, "no such page") {
		t.Errorf("an HTTP error status still returns its body: %q", out)
	}
}

func TestHttpGetClampsAndMarksTruncation(t *testing.T) {
	body := strings.Repeat("abcdefghij", 60_000) // 600000 bytes
	srv, web := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, body)
	}))
	h := HTTPGet{Web: web}
	for _, c := range []struct {
		max  any
		want int
	}{{nil, 200_000}, {10, 1000}, {1500, 1500}, {"2500", 2500}, {9_000_000, 500_000}} {
		args := map[string]any{"url": srv.URL}
		if c.max != nil {
			args["max_bytes"] = c.max
		}
		out := run(t, h, args)
		_, got, _ := strings.Cut(out, "\n\n")
		mark := fmt.Sprintf("\n\n… truncated at %d bytes", c.want)
		if !strings.HasSuffix(got, mark) || len(got)-len(mark) != c.want || got[:c.want] != body[:c.want] {
			t.Errorf("max_bytes %v: body %d bytes, tail %q", c.max, len(got), got[max(0, len(got)-40):])
		}
	}
	small := run(t, h, map[string]any{"url": srv.URL, "max_bytes": 600_000})
	if strings.Count(small, "truncated") != 1 {
		t.Error("a body over the clamp is marked once")
	}
}

func TestHttpGetFollowsRedirectsAndChecksEachHop(t *testing.T) {
	srv, web := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hop":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/final":
			fmt.Fprint(w, "arrived")
		case "/to-metadata":
			// Never dialed: the policy refuses the literal address before any connection.
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-ftp":
			http.Redirect(w, r, "ftp://example.com/x", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		}
	}))
	h := HTTPGet{Web: web}
	if out := run(t, h, map[string]any{"url": srv.URL + "/hop"}); !strings.HasPrefix(out, "status=200 final_url="+srv.URL+"/final ") || !strings.HasSuffix(out, "arrived") {
		t.Errorf("redirect: %q", out)
	}
	for path, want := range map[string]string{
		"/to-metadata": "Error: redirect blocked: host '169.254.169.254' is not allowed (local/private)",
		"/to-ftp":      "Error: redirect blocked: only https:// URLs with a hostname are allowed",
		"/loop":        "Error fetching URL: too many redirects (more than 5)",
	} {
		if out := run(t, h, map[string]any{"url": srv.URL + path}); out != want {
			t.Errorf("%s: got %q, want %q", path, out, want)
		}
	}
}

func TestHttpGetRefusedWithoutTheAllowlist(t *testing.T) {
	var hits atomic.Int32
	srv, _ := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	strict := HTTPGet{} // the production policy: https, public addresses only
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	for url, want := range map[string]string{
		srv.URL:                           "Error: host '127.0.0.1' is not allowed (local/private)",
		"https://localhost" + port + "/":  "Error: host 'localhost' is not allowed (local/private)",
		"https://[::1]" + port + "/":      "Error: host '::1' is not allowed (local/private)",
		"https://10.1.2.3/":               "Error: host '10.1.2.3' is not allowed (local/private)",
		"https://169.254.169.254/latest/": "Error: host '169.254.169.254' is not allowed (local/private)",
		"https://0x7f000001/":             "Error: host '0x7f000001' is not allowed (non-canonical IPv4 notation)",
		"http://example.com/":             "Error: only https:// URLs with a hostname are allowed",
		"file:///etc/passwd":              "Error: only https:// URLs with a hostname are allowed",
		"not a url":                       "Error: only https:// URLs with a hostname are allowed",
		"https://user:pw@example.com/":    "Error: host 'example.com' is not allowed (user info in URL)",
	} {
		if out := run(t, strict, map[string]any{"url": url}); out != want {
			t.Errorf("%s: got %q, want %q", url, out, want)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the local server was reached %d times", hits.Load())
	}
	bad := HTTPGet{Web: Web{PolicyErr: errors.New("SAFEHTTP_ALLOW: bad prefix")}}
	if out := run(t, bad, map[string]any{"url": srv.URL}); out != "Error: outbound HTTP is misconfigured: SAFEHTTP_ALLOW: bad prefix" {
		t.Errorf("misconfigured: %q", out)
	}
}

func TestHttpGetHonoursTheDeadline(t *testing.T) {
	release := make(chan struct{})
	srv, web := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	out, err := HTTPGet{Web: web}.Run(ctx, json.RawMessage(`{"url":"`+srv.URL+`"}`))
	if err != nil || !strings.HasPrefix(out, "Error fetching URL: ") || time.Since(start) > 5*time.Second {
		t.Fatalf("got %q, %v after %v", out, err, time.Since(start))
	}
}
