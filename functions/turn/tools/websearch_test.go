package tools

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeBrave is a local stand-in for the Brave Search API (GET /res/v1/web/search?q&count with
// X-Subscription-Token; answer {"web":{"results":[{title,url,description}]}}).
func fakeBrave(t *testing.T, status int) (string, Web, *atomic.Value) {
	var last atomic.Value
	srv, web := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		last.Store(r.Clone(r.Context()))
		if r.URL.Path != "/res/v1/web/search" || r.Header.Get("X-Subscription-Token") != "brave-key" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":"bad token"}`)
			return
		}
		if status != 200 {
			w.WriteHeader(status)
			fmt.Fprint(w, `{"type":"ErrorResponse","error":{"detail":"Rate limit exceeded"}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"web": map[string]any{"results": []map[string]string{
			{"title": "Appwrite <strong>Realtime</strong>", "url": "https://appwrite.io/docs/apis/realtime", "description": "Subscribe to <strong>events</strong> &amp; more."},
			{"title": "Duplicate", "url": "https://appwrite.io/docs/apis/realtime", "description": "same URL"},
			{"title": "Not web", "url": "javascript:alert(1)", "description": "dropped"},
			{"title": "", "url": "https://example.com/untitled", "description": "no title"},
			{"title": strings.Repeat("T", 200), "url": "https://example.com/long", "description": strings.Repeat("s", 400)},
			{"title": "Third", "url": "https://example.com/third"},
		}}})
	}))
	web.Search = SearchConfig{BraveKey: "brave-key", BraveURL: srv.URL + "/res/v1/web/search"}
	return srv.URL, web, &last
}

func TestWebSearchBrave(t *testing.T) {
	_, web, last := fakeBrave(t, 200)
	out := run(t, WebSearch{Web: web}, map[string]any{"query": "  appwrite realtime  ", "max_results": 50})
	want := "query='appwrite realtime' status=200 count=3 provider=brave\n\n" +
		"1. Appwrite Realtime\n   https://appwrite.io/docs/apis/realtime\n   Subscribe to events & more.\n" +
		"2. " + strings.Repeat("T", 180) + "…\n   https://example.com/long\n   " + strings.Repeat("s", 320) + "…\n" +
		"3. Third\n   https://example.com/third"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	r := last.Load().(*http.Request)
	if q := r.URL.Query(); q.Get("q") != "appwrite realtime" || q.Get("count") != "10" || r.Header.Get("Accept") != "application/json" {
		t.Fatalf("request %v %v", r.URL, r.Header)
	}
	out = run(t, WebSearch{Web: web}, map[string]any{"query": "x", "max_results": 0})
	if !strings.HasPrefix(out, "query='x' status=200 count=1 provider=brave\n\n1. Appwrite Realtime") || last.Load().(*http.Request).URL.Query().Get("count") != "1" {
		t.Fatalf("max_results 0 is clamped to 1: %q", out)
	}
}

func TestWebSearchSearXNG(t *testing.T) {
	var got atomic.Value
	srv, web := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.URL.String())
		if r.URL.Path != "/searx/search" || r.URL.Query().Get("format") != "json" {
			w.WriteHeader(404)
			return
		}
		fmt.Fprint(w, `{"query":"go","results":[{"title":"The Go Programming Language","url":"https://go.dev/","content":"Go is an open source language."},{"title":"Go docs","url":"https://go.dev/doc/","content":""}]}`)
	}))
	web.Search = SearchConfig{SearXNGURL: srv.URL + "/searx/"}
	out := run(t, WebSearch{Web: web}, map[string]any{"query": "go"})
	want := "query='go' status=200 count=2 provider=searxng\n\n1. The Go Programming Language\n   https://go.dev/\n   Go is an open source language.\n2. Go docs\n   https://go.dev/doc/"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	if u := got.Load().(string); u != "/searx/search?format=json&q=go" {
		t.Fatalf("request %s", u)
	}
}

func TestWebSearchMessagesAndRefusals(t *testing.T) {
	if out := run(t, WebSearch{Web: Web{Search: SearchConfig{Disabled: true, BraveKey: "k"}}}, map[string]any{"query": "x"}); out != MsgSearchDisabled {
		t.Errorf("disabled: %q", out)
	}
	_, web, last := fakeBrave(t, 429)
	if out := run(t, WebSearch{Web: web}, map[string]any{"query": " "}); out != "Error: query is empty" {
		t.Errorf("empty: %q", out)
	}
	web.Search.NoDuckDuckGo = true // Brave alone
	if err := runErr(t, WebSearch{Web: web}, map[string]any{"query": "x"}); err.Error() != MsgSearchFailed+` (brave: the search API answered HTTP 429: {"type":"ErrorResponse","error":{"detail":"Rate limit exceeded"}}). Use browser_fetch or http_get on a known URL instead.` {
		t.Errorf("API error: %v", err)
	}
	last.Store((*http.Request)(nil))
	strict := web
	strict.Policy.AllowPrivate, strict.Policy.AllowHTTP = nil, false
	strict.Search.BraveURL = strings.Replace(web.Search.BraveURL, "http://", "https://", 1)
	if err := runErr(t, WebSearch{Web: strict}, map[string]any{"query": "x"}); !strings.HasPrefix(err.Error(), MsgSearchFailed+" (brave: host '127.0.0.1' is not allowed (local/private))") {
		t.Errorf("without the allowlist: %v", err)
	}
	if r, _ := last.Load().(*http.Request); r != nil {
		t.Error("the fake was reached without the allowlist")
	}
	srv, web2 := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `not json`) }))
	web2.Search = SearchConfig{SearXNGURL: srv.URL, NoDuckDuckGo: true}
	if err := runErr(t, WebSearch{Web: web2}, map[string]any{"query": "x"}); !strings.HasPrefix(err.Error(), MsgSearchFailed+" (searxng: the search API answer is not the expected JSON)") {
		t.Errorf("bad JSON: %v", err)
	}
	srv3, web3 := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"results":[]}`) }))
	web3.Search = SearchConfig{SearXNGURL: srv3.URL}
	if out := run(t, WebSearch{Web: web3}, map[string]any{"query": "it's"}); out != "query=\"it's\" status=200 count=0 provider=searxng\n\nNo results. Try other words, or fetch a known URL with browser_fetch." {
		t.Errorf("no results: %q", out)
	}
}

func TestWebSearchKeyStaysOnItsHost(t *testing.T) {
	var leaked atomic.Bool
	other, _ := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != "" {
			leaked.Store(true)
		}
		fmt.Fprint(w, `{"web":{"results":[]}}`)
	}))
	srv, web := plainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	web.Search = SearchConfig{BraveKey: "brave-key", BraveURL: srv.URL}
	if out := run(t, WebSearch{Web: web}, map[string]any{"query": "x"}); !strings.HasPrefix(out, "query='x' status=200 count=0 provider=brave") {
		t.Fatalf("%q", out)
	}
	if leaked.Load() {
		t.Fatal("the API key followed a redirect to another host")
	}
}
