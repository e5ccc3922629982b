package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func savedPage(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/duckduckgo/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The saved pages follow the markup of html.duckduckgo.com/html and lite.duckduckgo.com/lite: results in
// div.result (ads marked result--ad), titles in a.result__a, snippets in .result__snippet, links through
// //duckduckgo.com/l/?uddg=<target>; the lite page's a.result-link and td.result-snippet rows.
func TestParseDuckDuckGoResultsPage(t *testing.T) {
	got, err := ParseDuckDuckGo(savedPage(t, "results.html"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []SearchResult{
		{"Realtime - Docs - Appwrite", "https://appwrite.io/docs/apis/realtime",
			"Appwrite Realtime allows you to listen to any events on the server-side in realtime using the subscribe method. Instead of requesting new data via HTTP, the subscription will receive new data every time it changes & any connected client receives that update within milliseconds."},
		{"appwrite/docs/services/realtime.md at main · appwrite/appwrite · GitHub", "https://github.com/appwrite/appwrite/blob/main/docs/services/realtime.md?plain=1#L10",
			"The Realtime service allows you to listen to any events on the server-side in realtime using the subscribe method."},
		{"How we made Appwrite Realtime 3x faster \u2013 Appwrite blog", "https://appwrite.io/blog/post/realtime-speed",
			"Mar 11, 2025 · A look at the changes behind the new Realtime server: fewer allocations, batched fan-out, and smarter subscriptions."},
		{"javascript - Appwrite realtime not working with Next.js - Stack Overflow", "https://stackoverflow.com/questions/71234567/appwrite-realtime-not-working", ""},
		{"Build a realtime chat in 10 minutes with Appwrite - DEV Community", "https://dev.to/appwrite/realtime-chat-in-10-minutes-4b2k",
			"Learn how to use Appwrite Realtime <subscriptions> to build a chat app."},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%#v\nwant\n%#v", got, want)
	}
}

func TestParseDuckDuckGoLitePage(t *testing.T) {
	got, err := ParseDuckDuckGo(savedPage(t, "lite.html"), &url.URL{Scheme: "https", Host: "lite.duckduckgo.com", Path: "/lite/"})
	if err != nil {
		t.Fatal(err)
	}
	want := []SearchResult{
		{"The Go Programming Language", "https://go.dev/", "Go is an open source programming language that makes it simple to build secure, scalable systems."},
		{"Go (programming language) - Wikipedia", "https://en.wikipedia.org/wiki/Go_(programming_language)", "Go is a statically typed, compiled high-level programming language designed at Google."},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%#v\nwant\n%#v", got, want)
	}
}

func TestParseDuckDuckGoNoResultsChallengeAndLayoutChange(t *testing.T) {
	if got, err := ParseDuckDuckGo(savedPage(t, "noresults.html"), nil); err != nil || got != nil {
		t.Fatalf("no results: %v %v", got, err)
	}
	if _, err := ParseDuckDuckGo(savedPage(t, "challenge.html"), nil); !errors.Is(err, ErrSearchBlocked) {
		t.Fatalf("challenge: %v", err)
	}
	if _, err := ParseDuckDuckGo("<html><body><p>Welcome to our new search!</p></body></html>", nil); err == nil ||
		!strings.Contains(err.Error(), "layout may have changed") {
		t.Fatalf("unknown layout: %v", err)
	}
	// Links that lead back to DuckDuckGo or are not web links are not results.
	got, err := ParseDuckDuckGo(`<div class="result"><a class="result__a" href="/html/?q=more">More</a>`+
		`<a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fduckduckgo.com%2Fabout">About</a>`+
		`<a class="result__a" href="//duckduckgo.com/l/?uddg=javascript%3Aalert(1)">JS</a>`+
		`<a class="result__a" href="//duckduckgo.com/l/?rut=x">No target</a>`+
		`<a class="result__a" href="mailto:a@b.c">Mail</a>`+
		`<a class="result__a" href="http://example.org/plain">Plain http</a></div>`, nil)
	if err != nil || !reflect.DeepEqual(got, []SearchResult{{"Plain http", "http://example.org/plain", ""}}) {
		t.Fatalf("links: %#v %v", got, err)
	}
}

// fakeDuckDuckGo serves a saved page (status 200, or the given status) at /html/ and records the query.
func fakeDuckDuckGo(t *testing.T, status int, body string) (Web, *atomic.Value) {
	var q atomic.Value
	srv, web := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q.Store(r.Clone(context.Background()))
		if r.URL.Path != "/html/" {
			w.WriteHeader(404)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	web.Search = SearchConfig{DuckDuckGoURL: srv.URL + "/html/"}
	return web, &q
}

func runErr(t *testing.T, tool WebSearch, args any) error {
	t.Helper()
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := tool.Run(ctx, b)
	if err == nil {
		t.Fatalf("Run(%s) = %q, want an error", b, out)
	}
	return err
}

func TestWebSearchDuckDuckGoIsTheKeylessDefault(t *testing.T) {
	web, last := fakeDuckDuckGo(t, 200, savedPage(t, "results.html"))
	out := run(t, WebSearch{Web: web}, map[string]any{"query": "appwrite realtime", "max_results": 2})
	want := "query='appwrite realtime' status=200 count=2 provider=duckduckgo\n\n" +
		"1. Realtime - Docs - Appwrite\n   https://appwrite.io/docs/apis/realtime\n   Appwrite Realtime allows you to listen to any events on the server-side in realtime using the subscribe method. Instead of requesting new data via HTTP, the subscription will receive new data every time it changes & any connected client receives that update within milliseconds.\n" +
		"2. appwrite/docs/services/realtime.md at main · appwrite/appwrite · GitHub\n   https://github.com/appwrite/appwrite/blob/main/docs/services/realtime.md?plain=1#L10\n   The Realtime service allows you to listen to any events on the server-side in realtime using the subscribe method."
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	r := last.Load().(*http.Request)
	if r.URL.Query().Get("q") != "appwrite realtime" || !strings.HasPrefix(r.Header.Get("Accept"), "text/html") || r.Header.Get("X-Subscription-Token") != "" {
		t.Fatalf("request %v %v", r.URL, r.Header)
	}
	if got := (SearchConfig{}).Providers(); !reflect.DeepEqual(got, []string{ProviderDuckDuckGo}) {
		t.Fatalf("default providers %v", got)
	}

	web, _ = fakeDuckDuckGo(t, 200, savedPage(t, "noresults.html"))
	if out := run(t, WebSearch{Web: web}, map[string]any{"query": "zqxjvkwpfh"}); out !=
		"query='zqxjvkwpfh' status=200 count=0 provider=duckduckgo\n\nNo results. Try other words, or fetch a known URL with browser_fetch." {
		t.Fatalf("no results: %q", out)
	}
}

func TestWebSearchFallsBackAndFailsWithTheFailurePrefix(t *testing.T) {
	// Brave is configured but rate-limited: DuckDuckGo answers, and the answer says so.
	_, brave, _ := fakeBrave(t, 429)
	ddg, _ := fakeDuckDuckGo(t, 200, savedPage(t, "lite.html"))
	web := brave
	web.Search.DuckDuckGoURL = ddg.Search.DuckDuckGoURL
	if got := web.Search.Providers(); !reflect.DeepEqual(got, []string{ProviderBrave, ProviderDuckDuckGo}) {
		t.Fatalf("providers %v", got)
	}
	out := run(t, WebSearch{Web: web}, map[string]any{"query": "go"})
	if !strings.HasPrefix(out, "query='go' status=200 count=2 provider=duckduckgo\n"+
		`(answered by duckduckgo after: brave: the search API answered HTTP 429: {"type":"ErrorResponse","error":{"detail":"Rate limit exceeded"}})`+
		"\n\n1. The Go Programming Language\n   https://go.dev/\n") {
		t.Fatalf("fallback:\n%s", out)
	}

	// Nothing works: the error carries every provider's failure and, with the engine's "Error: ", starts
	// with a prefix the planner fallback recognizes.
	blocked, _ := fakeDuckDuckGo(t, 202, savedPage(t, "challenge.html"))
	web.Search.DuckDuckGoURL = blocked.Search.DuckDuckGoURL
	err := runErr(t, WebSearch{Web: web}, map[string]any{"query": "go"})
	msg := "Error: " + err.Error()
	if !strings.HasPrefix(msg, "Error: "+MsgSearchFailed+" (brave: the search API answered HTTP 429") ||
		!strings.Contains(msg, "; duckduckgo: "+ErrSearchBlocked.Error()+")") || !strings.HasPrefix(strings.ToLower(msg), "error:") {
		t.Fatalf("all failed: %s", msg)
	}

	// A challenge served with 200 is recognised from the page itself; a 5xx is a failure too.
	for status, body := range map[int]string{200: savedPage(t, "challenge.html"), 503: "<html>down</html>"} {
		w, _ := fakeDuckDuckGo(t, status, body)
		err := runErr(t, WebSearch{Web: w}, map[string]any{"query": "go"})
		if !strings.HasPrefix(err.Error(), MsgSearchFailed+" (duckduckgo: ") {
			t.Fatalf("status %d: %v", status, err)
		}
	}

	// Every provider switched off.
	err = runErr(t, WebSearch{Web: Web{Search: SearchConfig{NoDuckDuckGo: true}}}, map[string]any{"query": "go"})
	if err.Error() != MsgNoProvider || !strings.HasPrefix(MsgNoProvider, "web search failed") {
		t.Fatalf("no provider: %v", err)
	}
}

// TestWebSearchDuckDuckGoGoesThroughTheSSRFPolicy: the results page is fetched with the same policy as
// the other web tools: without the loopback allowlist the fake is never reached.
func TestWebSearchDuckDuckGoGoesThroughTheSSRFPolicy(t *testing.T) {
	web, last := fakeDuckDuckGo(t, 200, savedPage(t, "results.html"))
	strict := web
	strict.Policy.AllowPrivate, strict.Policy.AllowHTTP = nil, false
	strict.Search.DuckDuckGoURL = strings.Replace(web.Search.DuckDuckGoURL, "http://", "https://", 1)
	err := runErr(t, WebSearch{Web: strict}, map[string]any{"query": "x"})
	if err.Error() != MsgSearchFailed+" (duckduckgo: host '127.0.0.1' is not allowed (local/private)). Use browser_fetch or http_get on a known URL instead." {
		t.Fatalf("%v", err)
	}
	if r, _ := last.Load().(*http.Request); r != nil {
		t.Fatal("the fake was reached without the allowlist")
	}
}

func FuzzParseDuckDuckGo(f *testing.F) {
	for _, name := range []string{"results.html", "lite.html", "noresults.html", "challenge.html"} {
		f.Add(savedPage(f, name))
	}
	f.Fuzz(func(t *testing.T, s string) {
		res, err := ParseDuckDuckGo(s, nil)
		if err != nil && res != nil {
			t.Fatal("results with an error")
		}
		for _, r := range res {
			u, perr := url.Parse(r.URL)
			if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || isDuckDuckGo(u.Hostname()) {
				t.Fatalf("bad result URL %q", r.URL)
			}
		}
	})
}
