package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
)

// web_search limits, as in the reference.
const (
	SearchDefaultResults = 8
	SearchMaxResults     = 10
	searchTitleChars     = 180
	searchSnippetChars   = 320
	searchMaxBytes       = 2 << 20
	searchUserAgent      = "AppwriteAgent/1.0 (+https://appwrite.io; web_search)"
)

// web_search messages.
const (
	MsgSearchNotConfigured = "web_search is not configured. Set BRAVE_SEARCH_API_KEY (Brave Search API) or SEARXNG_URL " +
		"(a SearXNG instance with JSON output) to enable it. Until then, use browser_fetch or http_get on a known URL."
	MsgSearchDisabled = "web_search is disabled. Set WEB_SEARCH_ENABLED=true and configure BRAVE_SEARCH_API_KEY or SEARXNG_URL to enable it."
	MsgEmptyQuery     = "Error: query is empty"
)

// SearchConfig says which search API web_search uses: Brave when a key is set, else SearXNG when a URL is
// set, else none.
type SearchConfig struct {
	// BraveKey is the Brave Search API subscription token.
	BraveKey string
	// BraveURL is the Brave endpoint (DefaultBraveURL when empty).
	BraveURL string
	// SearXNGURL is the base URL of a SearXNG instance (its /search endpoint with format=json is used).
	SearXNGURL string
	// Disabled switches the tool off (WEB_SEARCH_ENABLED=false).
	Disabled bool
}

// WebSearch is the web_search tool: a query through a configured search API (Brave Search API by key, or
// a SearXNG instance by URL), fetched through the SSRF-safe client, results in the reference's shape.
type WebSearch struct {
	// Web is the SSRF policy and the search configuration.
	Web Web
}

// Name implements toolapi.Tool.
func (WebSearch) Name() string { return "web_search" }

// Description implements toolapi.Tool.
func (WebSearch) Description() string {
	return "Search the web and get a numbered list of results (title, URL, snippet). Use it to find pages about " +
		"news, products, docs or anything not in your knowledge, then read the best results with browser_fetch. " +
		"Keep queries short and specific."
}

// Parameters implements toolapi.Tool.
func (WebSearch) Parameters() json.RawMessage {
	return schema([][2]string{
		{"query", prop("string", "What to search for.", "")},
		{"max_results", prop("integer", "How many results to return (1 to 10).", `"default":8`)},
	}, "query")
}

// searchResult is one result.
type searchResult struct{ title, url, snippet string }

// Run implements toolapi.Tool.
func (s WebSearch) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var a struct {
		Query      string `json:"query"`
		MaxResults optInt `json:"max_results"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	cfg := s.Web.Search
	switch {
	case cfg.Disabled:
		return MsgSearchDisabled, nil
	case cfg.BraveKey == "" && cfg.SearXNGURL == "":
		return MsgSearchNotConfigured, nil
	}
	q := strings.TrimSpace(a.Query)
	if q == "" {
		return MsgEmptyQuery, nil
	}
	n := int(clamp(a.MaxResults.or(SearchDefaultResults), 1, SearchMaxResults))
	f := newFetcher(s.Web)
	var (
		status  int
		results []searchResult
		err     error
	)
	if cfg.BraveKey != "" {
		status, results, err = s.brave(ctx, f, q, n)
	} else {
		status, results, err = s.searxng(ctx, f, q, n)
	}
	if err != nil {
		return "Error running web search: " + err.Error(), nil
	}
	results = tidyResults(results, n)
	var b strings.Builder
	fmt.Fprintf(&b, "query=%s status=%d count=%d\n\n", pyRepr(q), status, len(results))
	if len(results) == 0 {
		b.WriteString("No results. Try other words, or fetch a known URL with browser_fetch.")
		return b.String(), nil
	}
	for i, r := range results {
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, r.title, r.url)
		if r.snippet != "" {
			fmt.Fprintf(&b, "   %s\n", r.snippet)
		}
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// searchGet fetches a search API URL (secret headers only to its host); a non-2xx answer is an error
// with the API's words.
func searchGet(ctx context.Context, f *fetcher, u string, secret map[string]string) (int, []byte, error) {
	p, err := f.get(ctx, fetchReq{url: u, accept: "application/json", userAgent: searchUserAgent, limit: searchMaxBytes, secret: secret,
		onRedirectBlocked: func(_ string, err error) error { return &policyError{"redirect blocked: " + err.Error()} }})
	if err != nil {
		var pe *policyError
		if errors.As(err, &pe) {
			return 0, nil, errors.New(pe.msg)
		}
		return 0, nil, err
	}
	if p.truncated {
		return p.status, nil, errors.New("the search API answer is too large")
	}
	if p.status < 200 || p.status > 299 {
		msg, _ := cutRunes(collapseSpace(string(p.body)), 200)
		return p.status, nil, fmt.Errorf("the search API answered HTTP %d: %s", p.status, msg)
	}
	return p.status, p.body, nil
}

func (s WebSearch) brave(ctx context.Context, f *fetcher, q string, n int) (int, []searchResult, error) {
	base := s.Web.Search.BraveURL
	if base == "" {
		base = DefaultBraveURL
	}
	u, err := url.Parse(base)
	if err != nil {
		return 0, nil, errors.New("BRAVE_SEARCH_URL is not a URL")
	}
	v := u.Query()
	v.Set("q", q)
	v.Set("count", fmt.Sprint(n))
	u.RawQuery = v.Encode()
	key := s.Web.Search.BraveKey
	status, body, err := searchGet(ctx, f, u.String(), map[string]string{"X-Subscription-Token": key})
	if err != nil {
		return status, nil, err
	}
	var r struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return status, nil, errors.New("the search API answer is not the expected JSON")
	}
	var out []searchResult
	for _, x := range r.Web.Results {
		out = append(out, searchResult{x.Title, x.URL, x.Description})
	}
	return status, out, nil
}

func (s WebSearch) searxng(ctx context.Context, f *fetcher, q string, n int) (int, []searchResult, error) {
	u, err := url.Parse(strings.TrimRight(s.Web.Search.SearXNGURL, "/") + "/search")
	if err != nil {
		return 0, nil, errors.New("SEARXNG_URL is not a URL")
	}
	v := url.Values{"q": {q}, "format": {"json"}}
	u.RawQuery = v.Encode()
	status, body, err := searchGet(ctx, f, u.String(), nil)
	if err != nil {
		return status, nil, err
	}
	var r struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return status, nil, errors.New("the search API answer is not the expected JSON")
	}
	var out []searchResult
	for _, x := range r.Results {
		out = append(out, searchResult{x.Title, x.URL, x.Content})
	}
	return status, out, nil
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// cleanSnippet removes markup (Brave marks matches with <strong>) and entities, and collapses space.
func cleanSnippet(s string) string {
	return collapseSpace(html.UnescapeString(tagRE.ReplaceAllString(s, "")))
}

// tidyResults keeps http(s) results with a title, each URL once, titles cut to 180 and snippets to 320
// characters, at most n.
func tidyResults(in []searchResult, n int) []searchResult {
	var out []searchResult
	seen := map[string]bool{}
	for _, r := range in {
		u, err := url.Parse(strings.TrimSpace(r.url))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || seen[u.String()] {
			continue
		}
		title := cleanSnippet(r.title)
		if title == "" {
			continue
		}
		seen[u.String()] = true
		if t, cut := cutRunes(title, searchTitleChars); cut {
			title = t + "…"
		}
		snip := cleanSnippet(r.snippet)
		if t, cut := cutRunes(snip, searchSnippetChars); cut {
			snip = t + "…"
		}
		out = append(out, searchResult{title, u.String(), snip})
		if len(out) == n {
			break
		}
	}
	return out
}
