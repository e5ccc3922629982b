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
	"sync"

	"appwrite-agent/shared/pyjson"
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
	MsgSearchDisabled = "web_search is disabled. Set WEB_SEARCH_ENABLED=true to enable it."
	MsgEmptyQuery     = "Error: query is empty"
	// MsgSearchFailed starts the answer when no provider answered. It is an error (tool_end failed:true,
	// "Error: " in front), so its text starts with a failure prefix the planner fallback recognizes.
	MsgSearchFailed = "web search failed, no search provider answered"
	// MsgNoProvider is the answer when every provider is switched off.
	MsgNoProvider = "web search failed, no search provider is configured: set DUCKDUCKGO_ENABLED=true, " +
		"BRAVE_SEARCH_API_KEY or SEARXNG_URL. Until then, use browser_fetch or http_get on a known URL."
)

// Search providers, as web_search names them.
const (
	ProviderBrave      = "brave"
	ProviderSearXNG    = "searxng"
	ProviderDuckDuckGo = "duckduckgo"
)

// SearchConfig says which search providers web_search asks, in this order: the Brave Search API when a
// key is set, a SearXNG instance when a URL is set, then DuckDuckGo's HTML results page (no key) unless it
// is switched off. The first provider that answers wins; one that fails hands over to the next.
type SearchConfig struct {
	// BraveKey is the Brave Search API subscription token.
	BraveKey string
	// BraveURL is the Brave endpoint (DefaultBraveURL when empty).
	BraveURL string
	// SearXNGURL is the base URL of a SearXNG instance (its /search endpoint with format=json is used).
	SearXNGURL string
	// DuckDuckGoURL is the results page (DefaultDuckDuckGoURL when empty).
	DuckDuckGoURL string
	// NoDuckDuckGo leaves DuckDuckGo out (DUCKDUCKGO_ENABLED=false).
	NoDuckDuckGo bool
	// Disabled switches the tool off (WEB_SEARCH_ENABLED=false).
	Disabled bool
}

// Providers lists the providers web_search asks, in order.
func (c SearchConfig) Providers() []string {
	var out []string
	if c.BraveKey != "" {
		out = append(out, ProviderBrave)
	}
	if c.SearXNGURL != "" {
		out = append(out, ProviderSearXNG)
	}
	if !c.NoDuckDuckGo {
		out = append(out, ProviderDuckDuckGo)
	}
	return out
}

// WebSearch is the web_search tool: a query through the configured providers (SearchConfig), every
// request through the SSRF-safe client, results in the reference's shape with the provider that answered.
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
		"Keep queries short and specific; site:example.com restricts the search to one site."
}

// Parameters implements toolapi.Tool.
func (WebSearch) Parameters() json.RawMessage {
	return schema([][2]string{
		{"query", prop("string", "What to search for.", "")},
		{"max_results", prop("integer", "How many results to return (1 to 10).", `"default":8`)},
	}, "query")
}

// Run implements toolapi.Tool. The answer's first line names the query, the HTTP status, the result count
// and the provider that answered; a provider that failed before it is noted on the next line. When no
// provider answers, Run returns an error starting with MsgSearchFailed and every provider's failure.
func (s WebSearch) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var a struct {
		Query      string `json:"query"`
		MaxResults optInt `json:"max_results"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	cfg := s.Web.Search
	if cfg.Disabled {
		return MsgSearchDisabled, nil
	}
	providers := cfg.Providers()
	if len(providers) == 0 {
		//lint:ignore ST1005 the text is the tool's answer to the model ("Error: " + text), worded as a sentence
		return "", errors.New(MsgNoProvider)
	}
	q := strings.TrimSpace(a.Query)
	if q == "" {
		return MsgEmptyQuery, nil
	}
	n := int(clamp(a.MaxResults.or(SearchDefaultResults), 1, SearchMaxResults))
	f := newFetcher(s.Web)
	var failures []string
	for _, name := range providers {
		if err := ctx.Err(); err != nil {
			failures = append(failures, name+": "+fetchErr(err).Error())
			break
		}
		var (
			status  int
			results []SearchResult
			err     error
		)
		switch name {
		case ProviderBrave:
			status, results, err = s.brave(ctx, f, q, n)
		case ProviderSearXNG:
			status, results, err = s.searxng(ctx, f, q, n)
		default:
			status, results, err = s.duckduckgo(ctx, f, q, n)
		}
		if err != nil {
			failures = append(failures, name+": "+err.Error())
			continue
		}
		return formatResults(q, status, name, failures, tidyResults(results, n)), nil
	}
	//lint:ignore ST1005 the text is the tool's answer to the model ("Error: " + text), worded as sentences
	return "", fmt.Errorf("%s (%s). Use browser_fetch or http_get on a known URL instead.", MsgSearchFailed, strings.Join(failures, "; "))
}

// formatResults writes the answer: the header line, a note on the providers that failed first, then the
// numbered results.
func formatResults(q string, status int, provider string, failures []string, results []SearchResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "query=%s status=%d count=%d provider=%s\n", pyjson.ReprString(q), status, len(results), provider)
	if len(failures) > 0 {
		fmt.Fprintf(&b, "(answered by %s after: %s)\n", provider, strings.Join(failures, "; "))
	}
	b.WriteString("\n")
	if len(results) == 0 {
		b.WriteString("No results. Try other words, or fetch a known URL with browser_fetch.")
		return b.String()
	}
	for i, r := range results {
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, r.Title, r.URL)
		if r.Snippet != "" {
			fmt.Fprintf(&b, "   %s\n", r.Snippet)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// SearchResult is one web search result.
type SearchResult struct {
	Title, URL, Snippet string
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

func (s WebSearch) brave(ctx context.Context, f *fetcher, q string, n int) (int, []SearchResult, error) {
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
	var out []SearchResult
	for _, x := range r.Web.Results {
		out = append(out, SearchResult{x.Title, x.URL, x.Description})
	}
	return status, out, nil
}

func (s WebSearch) searxng(ctx context.Context, f *fetcher, q string, n int) (int, []SearchResult, error) {
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
	var out []SearchResult
	for _, x := range r.Results {
		out = append(out, SearchResult{x.Title, x.URL, x.Content})
	}
	return status, out, nil
}

var tagRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<[^>]*>`) })

// cleanSnippet removes markup (Brave marks matches with <strong>) and entities, and collapses space.
func cleanSnippet(s string) string {
	return collapseSpace(html.UnescapeString(tagRE().ReplaceAllString(s, "")))
}

// tidyResults keeps http(s) results with a title, each URL once, titles cut to 180 and snippets to 320
// characters, at most n.
func tidyResults(in []SearchResult, n int) []SearchResult {
	var out []SearchResult
	seen := map[string]bool{}
	for _, r := range in {
		u, err := url.Parse(strings.TrimSpace(r.URL))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || seen[u.String()] {
			continue
		}
		title := cleanSnippet(r.Title)
		if title == "" {
			continue
		}
		seen[u.String()] = true
		if t, cut := cutRunes(title, searchTitleChars); cut {
			title = t + "…"
		}
		snip := cleanSnippet(r.Snippet)
		if t, cut := cutRunes(snip, searchSnippetChars); cut {
			snip = t + "…"
		}
		out = append(out, SearchResult{title, u.String(), snip})
		if len(out) == n {
			break
		}
	}
	return out
}
