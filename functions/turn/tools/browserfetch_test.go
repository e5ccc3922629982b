package tools

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"appwrite-agent/shared/devkit/testclock"
)

const articlePage = `<!doctype html>
<html><head><title>Ignored Head Title</title><style>.x{color:red}</style>
<script>window.tracking = "SCRIPT-TEXT";</script></head>
<body>
<header><a href="/">Site logo home</a> <a href="/pricing">Pricing page</a></header>
<nav><ul><li><a href="/nav-one">NAV-ONE link</a></li><li><a href="/nav-two">NAV-TWO link</a></li></ul></nav>
<main>
<article>
<h1>Realtime in Appwrite</h1>
<p>Appwrite Realtime lets clients subscribe to changes of databases, storage and accounts. Every event carries the
payload of the changed resource, so a client can update its state without polling the REST API again.</p>
<h2>Channels</h2>
<p>Subscribe to channels such as <code>databases.*.tables.*.rows</code> to receive row events. Read the
<a href="/docs/apis/realtime">Realtime API reference</a> and the <a href="https://example.org/guide#part">external guide</a>
for details about authentication and permissions, which apply to realtime events as they do to REST calls.</p>
<ul><li>Create events</li><li>Update events</li><li>Delete events</li></ul>
<p>More details: <a href="#top">top</a>, <a href="javascript:alert(1)">bad js link</a>, <a href="/docs/apis/realtime">Realtime API reference</a>.</p>
<script>document.write("INLINE-SCRIPT")</script>
</article>
<aside>ASIDE-TEXT <a href="/aside-link">Aside link text</a></aside>
</main>
<footer>FOOTER-TEXT <a href="/terms">Terms of service</a></footer>
</body></html>`

func TestBrowserFetchReadableMarkdownAndLinks(t *testing.T) {
	srv, web := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, articlePage)
	}))
	out := run(t, BrowserFetch{Web: web}, map[string]any{"url": srv.URL + "/docs/realtime"})
	head := fmt.Sprintf("status=200 final_url=%s/docs/realtime host=127.0.0.1\n\n", srv.URL)
	if !strings.HasPrefix(out, head) {
		t.Fatalf("header: %q", out[:min(len(out), 200)])
	}
	body := strings.TrimPrefix(out, head)
	for _, want := range []string{
		"Realtime in Appwrite",
		"Appwrite Realtime lets clients subscribe",
		"## Channels",
		"`databases.*.tables.*.rows`",
		"[Realtime API reference](" + srv.URL + "/docs/apis/realtime)",
		"- Create events",
		"\n\n### Links\n",
		"- Realtime API reference → " + srv.URL + "/docs/apis/realtime",
		"- external guide → https://example.org/guide",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %q in\n%s", want, body)
		}
	}
	for _, bad := range []string{"SCRIPT-TEXT", "INLINE-SCRIPT", "NAV-ONE", "FOOTER-TEXT", "ASIDE-TEXT", "color:red", "javascript:", "Pricing page"} {
		if strings.Contains(body, bad) {
			t.Errorf("%q should be dropped:\n%s", bad, body)
		}
	}
	if strings.Index(body, "Appwrite Realtime lets") > strings.Index(body, "### Links") {
		t.Error("main content comes before the links")
	}
	if strings.Count(body, "- Realtime API reference →") != 1 {
		t.Error("links are listed once each")
	}
}

func TestBrowserFetchLimits(t *testing.T) {
	var long strings.Builder
	long.WriteString("<html><head><title>Long</title></head><body><main>")
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&long, "<p>Paragraph %d of a very long page with enough words to be readable text for the extractor.</p>", i)
		if i < 60 {
			fmt.Fprintf(&long, `<p><a href="/p/%d">Link number %d of the page</a></p>`, i, i)
		}
	}
	long.WriteString("</main></body></html>")
	srv, web := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/long":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, long.String())
		case "/shell":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><title>App</title></head><body><div id="root">Loading…</div><script src="/app.js"></script></body></html>`)
		case "/latin1":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<html><head><meta charset="windows-1252"><title>Caf` + "\xe9" + `</title></head><body><main><p>` +
				strings.Repeat("Le caf\xe9 est servi chaque matin dans la grande salle du premier \xe9tage. ", 5) + `</p></main></body></html>`))
		case "/text":
			w.Header().Set("Content-Type", "text/markdown")
			fmt.Fprint(w, "# Raw markdown\n\nbody")
		case "/zip":
			w.Header().Set("Content-Type", "application/zip")
			fmt.Fprint(w, "PK\x03\x04")
		}
	}))
	b := BrowserFetch{Web: web}

	out := run(t, b, map[string]any{"url": srv.URL + "/long"})
	_, body, _ := strings.Cut(out, "\n\n")
	if n := utf8.RuneCountInString(body); n > BrowserTextLimit {
		t.Errorf("body %d characters, limit %d", n, BrowserTextLimit)
	}
	if !strings.Contains(body, "…[truncated]\n\n### Links\n") {
		t.Errorf("the cut is marked and the links survive it:\n%s", body[max(0, len(body)-4500):])
	}
	if n := strings.Count(body, "\n- Link number"); n == 0 || n > BrowserMaxLinks {
		t.Errorf("%d links listed, want 1..%d", n, BrowserMaxLinks)
	}

	out = run(t, b, map[string]any{"url": srv.URL + "/shell"})
	if !strings.Contains(out, "\n\nPage rendered little readable text (possible bot wall") || !strings.HasSuffix(out, "Snippet:\nLoading…") {
		t.Errorf("shell page: %q", out)
	}
	if out = run(t, b, map[string]any{"url": srv.URL + "/latin1"}); !strings.Contains(out, "Le café est servi") || !strings.Contains(out, "# Café") {
		t.Errorf("charset from the meta tag: %q", out)
	}
	if out = run(t, b, map[string]any{"url": srv.URL + "/text"}); !strings.HasSuffix(out, "\n\n# Raw markdown\n\nbody") {
		t.Errorf("text page: %q", out)
	}
	if out = run(t, b, map[string]any{"url": srv.URL + "/zip"}); !strings.HasSuffix(out, "(binary or non-text content-type 'application/zip'; not a readable page. Use http_get for raw data.)") {
		t.Errorf("binary: %q", out)
	}
}

func TestBrowserFetchRefusals(t *testing.T) {
	var hits atomic.Int32
	srv, _ := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "https://10.0.0.8/internal", http.StatusFound)
	}))
	strict := BrowserFetch{Cache: NewPageCache(0, 0)}
	for url, want := range map[string]string{
		"https://127.0.0.1:1/":   "Error: host '127.0.0.1' is not allowed (local/private)",
		"https://192.168.1.1/":   "Error: host '192.168.1.1' is not allowed (local/private)",
		srv.URL:                  "Error: only https:// URLs with a hostname are allowed",
		"https:///no-host":       "Error: only https:// URLs with a hostname are allowed",
		"https://[fd00::1]/page": "Error: host 'fd00::1' is not allowed (local/private)",
	} {
		if out := run(t, strict, map[string]any{"url": url}); out != want {
			t.Errorf("%s: got %q, want %q", url, out, want)
		}
	}
	if hits.Load() != 0 {
		t.Fatal("the local server was reached without the allowlist")
	}
	_, web := plainServer(t, http.NotFoundHandler())
	if out := run(t, BrowserFetch{Web: web}, map[string]any{"url": srv.URL}); out != "Error: redirect landed on blocked host '10.0.0.8'" {
		t.Errorf("redirect: %q", out)
	}
}

func TestBrowserFetchCachesPerURL(t *testing.T) {
	var hits atomic.Int32
	srv, web := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, articlePage)
	}))
	cache := NewPageCache(0, 0)
	b := BrowserFetch{Web: web, Cache: cache}
	first := run(t, b, map[string]any{"url": srv.URL + "/a"})
	second := run(t, b, map[string]any{"url": srv.URL + "/a#section"})
	if first != second || hits.Load() != 1 {
		t.Fatalf("second fetch of the same URL: %d hits", hits.Load())
	}
	run(t, b, map[string]any{"url": srv.URL + "/b"})
	if hits.Load() != 2 {
		t.Fatalf("another URL is fetched: %d hits", hits.Load())
	}
	// The same URL under a stricter policy is refused, not served from the cache.
	if out := run(t, BrowserFetch{Cache: cache}, map[string]any{"url": srv.URL + "/a"}); !strings.HasPrefix(out, "Error: ") {
		t.Fatalf("cache bypassed the policy: %q", out[:40])
	}
}

func TestPageCacheBoundsAndTTL(t *testing.T) {
	c := NewPageCache(time.Minute, 8)
	clk := testclock.New(time.Unix(1_000_000, 0))
	c.now = clk.Now
	for i := 0; i < 8; i++ {
		c.Put(fmt.Sprint(i), "v")
		clk.Advance(time.Second)
	}
	c.Put("new", "v") // full: the 2 oldest (8/4) go
	if c.Len() != 7 {
		t.Fatalf("len %d", c.Len())
	}
	if _, ok := c.Get("0"); ok {
		t.Error("oldest entry kept")
	}
	if _, ok := c.Get("2"); !ok {
		t.Error("young entry evicted")
	}
	clk.Advance(time.Minute)
	if _, ok := c.Get("new"); ok {
		t.Error("expired entry served")
	}
	d := NewPageCache(0, 0)
	if d.ttl != PageCacheTTL || d.max != PageCacheEntries || d.evict != PageCacheEvict {
		t.Errorf("defaults %v %d %d", d.ttl, d.max, d.evict)
	}
	// Concurrent use (run with -race).
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := fmt.Sprint(g*1000 + i)
				d.Put(k, k)
				d.Get(k)
			}
		}(g)
	}
	wg.Wait()
	if d.Len() > PageCacheEntries {
		t.Fatalf("cache grew to %d", d.Len())
	}
}
