package tools

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// DefaultDuckDuckGoURL is DuckDuckGo's HTML results page (no JavaScript, no API key).
const DefaultDuckDuckGoURL = "https://html.duckduckgo.com/html/"

// duckDuckGoUserAgent names us; the HTML endpoint serves it like a browser without JavaScript.
const duckDuckGoUserAgent = "Mozilla/5.0 (compatible; AppwriteAgent/1.0; +https://appwrite.io; web_search)"

// ErrSearchBlocked is a results page that is a bot check instead of results.
var ErrSearchBlocked = errors.New("the search engine answered with a bot check instead of results")

func (s WebSearch) duckduckgo(ctx context.Context, f *fetcher, q string, n int) (int, []SearchResult, error) {
	base := s.Web.Search.DuckDuckGoURL
	if base == "" {
		base = DefaultDuckDuckGoURL
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return 0, nil, errors.New("DUCKDUCKGO_URL is not a URL")
	}
	v := u.Query()
	v.Set("q", q)
	u.RawQuery = v.Encode()
	p, err := f.get(ctx, fetchReq{url: u.String(), accept: "text/html,application/xhtml+xml", userAgent: duckDuckGoUserAgent,
		limit: searchMaxBytes, onRedirectBlocked: func(_ string, err error) error { return &policyError{"redirect blocked: " + err.Error()} }})
	if err != nil {
		var pe *policyError
		if errors.As(err, &pe) {
			return 0, nil, errors.New(pe.msg)
		}
		return 0, nil, err
	}
	// DuckDuckGo answers a suspected bot with 202 and a challenge page.
	if p.status == 202 {
		return p.status, nil, ErrSearchBlocked
	}
	if p.status < 200 || p.status > 299 {
		return p.status, nil, fmt.Errorf("the results page answered HTTP %d", p.status)
	}
	_, label := mediaType(p.contentType)
	results, err := ParseDuckDuckGo(decodeText(p.body, label), p.finalURL)
	if err != nil {
		return p.status, nil, err
	}
	if len(results) > n {
		results = results[:n]
	}
	return p.status, results, nil
}

// ParseDuckDuckGo reads the organic results of a DuckDuckGo HTML results page (html.duckduckgo.com/html,
// or the lite page), in page order: title, target URL (DuckDuckGo's /l/?uddg= redirect links unwrapped)
// and snippet. Ads are skipped. A bot-check page is ErrSearchBlocked; a page with neither results nor a
// "no results" notice is an error, so that a changed layout is reported rather than read as "nothing
// found". base resolves relative links (nil: https://duckduckgo.com/).
func ParseDuckDuckGo(page string, base *url.URL) ([]SearchResult, error) {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return nil, fmt.Errorf("the results page is not HTML: %w", err)
	}
	if base == nil {
		base = &url.URL{Scheme: "https", Host: "duckduckgo.com", Path: "/"}
	}
	var (
		out       []SearchResult
		noResults bool
		blocked   bool
		current   *SearchResult // the result whose title was seen last (its snippet follows)
		walk      func(n *html.Node, inAd bool)
	)
	walk = func(n *html.Node, inAd bool) {
		if n.Type == html.ElementNode {
			cls := classes(n)
			switch {
			case cls["result--ad"] || cls["result--ad--small"] || cls["result-sponsored"] || cls["badge--ad"]:
				inAd = true
			case cls["no-results"] || cls["result--no-result"]:
				noResults = true
			case cls["anomaly-modal__modal"] || cls["anomaly-modal"] || attr(n, "id") == "challenge-form":
				blocked = true
			}
			switch {
			case n.DataAtom == atom.A && (cls["result__a"] || cls["result-link"]):
				current = nil
				if inAd {
					return
				}
				target := resultTarget(attr(n, "href"), base)
				if target == "" {
					return
				}
				out = append(out, SearchResult{Title: collapseSpace(textOf(n)), URL: target})
				current = &out[len(out)-1]
				return
			case cls["result__snippet"] || cls["result-snippet"]:
				if current != nil && !inAd && current.Snippet == "" {
					current.Snippet = collapseSpace(textOf(n))
				}
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inAd)
		}
	}
	walk(doc, false)
	switch {
	case len(out) > 0:
		return out, nil
	case blocked:
		return nil, ErrSearchBlocked
	case noResults:
		return nil, nil
	}
	return nil, errors.New("the results page has no results DuckDuckGo's layout would show (the page layout may have changed)")
}

// resultTarget returns the absolute http(s) URL a result link points at: DuckDuckGo's own redirect
// (/l/?uddg=<target>) is unwrapped, its ad redirect (/y.js) and other links to DuckDuckGo itself give "".
func resultTarget(href string, base *url.URL) string {
	href = strings.TrimSpace(href)
	if href == "" {
		return ""
	}
	u, err := base.Parse(href)
	if err != nil {
		return ""
	}
	if isDuckDuckGo(u.Hostname()) {
		if u.Path != "/l/" && u.Path != "/l" {
			return ""
		}
		target := u.Query().Get("uddg")
		if target == "" {
			return ""
		}
		if u, err = url.Parse(target); err != nil {
			return ""
		}
		if isDuckDuckGo(u.Hostname()) {
			return ""
		}
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.String()
}

func isDuckDuckGo(host string) bool {
	host = strings.ToLower(host)
	return host == "duckduckgo.com" || strings.HasSuffix(host, ".duckduckgo.com")
}

// classes returns the set of an element's class names.
func classes(n *html.Node) map[string]bool {
	c := attr(n, "class")
	if c == "" {
		return nil
	}
	m := map[string]bool{}
	for _, f := range strings.Fields(c) {
		m[f] = true
	}
	return m
}
