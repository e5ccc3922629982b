package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"appwrite-agent/shared/pyjson"
	"appwrite-agent/shared/safehttp"

	"golang.org/x/net/html/charset"
)

// Web tool settings shared by http_get, browser_fetch and web_search.
const (
	// FetchTimeout bounds one web tool call (all redirects included), as the reference's 15 s.
	FetchTimeout = 15 * time.Second
	// MaxRedirects is how many redirects a fetch follows; each hop is checked again by the SSRF policy.
	MaxRedirects = 5
	// clientBodyCap is the client-level body bound; each tool reads with its own, smaller limit.
	clientBodyCap = 64 << 20
)

// Messages of the fetch tools (after "Error: ").
const (
	MsgOnlyHTTPS = "only https:// URLs with a hostname are allowed"
)

// Web is the outbound side of the web tools: the SSRF policy (shared/safehttp options) and the search
// API configuration. The function reads it from its environment once (functions/turn/config.go); the zero value is the strict policy with no search API.
type Web struct {
	// Policy is the SSRF policy every request goes through (https only, public addresses only unless the
	// allowlist says otherwise).
	Policy safehttp.Options
	// PolicyErr, when set, is a configuration problem (a bad SAFEHTTP_ALLOW): every web tool then answers
	// with it instead of fetching. A bad SAFEHTTP_CA_FILE is found on first use (Policy.Roots; Err).
	PolicyErr error
	// Search is the configured search API.
	Search SearchConfig
}

// Environment variables of the web tools.
const (
	// EnvBraveKey is the Brave Search API subscription token.
	EnvBraveKey = "BRAVE_SEARCH_API_KEY"
	// EnvBraveURL overrides the Brave Search API endpoint (tests, proxies).
	EnvBraveURL = "BRAVE_SEARCH_URL"
	// EnvSearXNG is the base URL of a SearXNG instance with the JSON format enabled.
	EnvSearXNG = "SEARXNG_URL"
	// EnvWebSearchEnabled switches web_search off when false (the reference's WEB_SEARCH_ENABLED).
	EnvWebSearchEnabled = "WEB_SEARCH_ENABLED"
	// EnvDuckDuckGoEnabled leaves DuckDuckGo (the keyless default provider) out when false.
	EnvDuckDuckGoEnabled = "DUCKDUCKGO_ENABLED"
	// EnvDuckDuckGoURL overrides DuckDuckGo's results page (tests, proxies).
	EnvDuckDuckGoURL = "DUCKDUCKGO_URL"
)

// DefaultBraveURL is the Brave Search API web search endpoint.
const DefaultBraveURL = "https://api.search.brave.com/res/v1/web/search"

// Err is why outbound HTTP cannot be used: PolicyErr, or the error of loading Policy.Roots (which loads
// them, once per process, on the first call).
func (w Web) Err() error {
	if w.PolicyErr != nil {
		return w.PolicyErr
	}
	return w.Policy.Roots.Err()
}

// policyKey identifies the policy in cache keys, so a page fetched under one allowlist is never served
// under another.
func (w Web) policyKey() string {
	return fmt.Sprintf("%v|%v|%v", w.Policy.AllowHTTP, w.Policy.AllowPrivate, w.Policy.TLSConfig != nil || w.Policy.Roots != nil)
}

// fetcher makes GET requests through the SSRF-safe client and follows redirects itself, so every hop is
// validated (the safehttp client refuses redirects on its own).
type fetcher struct {
	web    Web
	client *http.Client
}

func newFetcher(w Web) *fetcher {
	opts := w.Policy
	opts.TotalTimeout = FetchTimeout
	opts.MaxResponseBytes = clientBodyCap
	c := safehttp.NewClient(opts)
	cc := *c
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &fetcher{web: w, client: &cc}
}

// policyError is a refusal of the URL policy; its text follows "Error: ".
type policyError struct{ msg string }

func (e *policyError) Error() string { return e.msg }

// page is a fetched response.
type page struct {
	status      int
	finalURL    *url.URL
	contentType string
	body        []byte
	truncated   bool
}

// checkURL validates a URL the model gave: scheme and host first (the reference's message), then the
// SSRF policy's static checks (literal addresses, ports, user info).
func (f *fetcher) checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Hostname() == "" || !(u.Scheme == "https" || u.Scheme == "http" && f.web.Policy.AllowHTTP) {
		return nil, &policyError{MsgOnlyHTTPS}
	}
	u.Fragment, u.RawFragment = "", ""
	if err := safehttp.CheckURL(u.String(), f.web.Policy); err != nil {
		return nil, blockedMessage(u.Hostname(), err)
	}
	return u, nil
}

// blockedMessage turns a safehttp refusal into the reference's wording.
func blockedMessage(host string, err error) error {
	var be *safehttp.BlockedError
	if errors.As(err, &be) {
		if be.Addr.IsValid() || strings.EqualFold(host, "localhost") {
			return &policyError{fmt.Sprintf("host %s is not allowed (local/private)", pyjson.ReprString(host))}
		}
		return &policyError{fmt.Sprintf("host %s is not allowed (%s)", pyjson.ReprString(host), be.Why)}
	}
	return err
}

// fetchReq describes one fetch.
type fetchReq struct {
	url       string
	accept    string
	userAgent string
	// secret headers (an API key) are sent only to the URL's original host.
	secret map[string]string
	// limit is the most body bytes read; truncated says there was more.
	limit int64
	// onRedirectBlocked words a refused redirect target.
	onRedirectBlocked func(host string, err error) error
}

// get performs r: the URL is checked, each redirect (at most MaxRedirects) is checked again, and the
// safehttp client checks every address it dials.
func (f *fetcher) get(ctx context.Context, r fetchReq) (*page, error) {
	if err := f.web.Err(); err != nil {
		return nil, &policyError{"outbound HTTP is misconfigured: " + err.Error()}
	}
	u, err := f.checkURL(r.url)
	if err != nil {
		return nil, err
	}
	origin := u.Host
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	defer f.client.CloseIdleConnections() // the client lives for one call; no connection outlives it
	for hop := 0; ; hop++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Close = true // nothing outlives the call
		req.Header.Set("User-Agent", r.userAgent)
		req.Header.Set("Accept", r.accept)
		if u.Host == origin {
			for k, v := range r.secret {
				req.Header.Set(k, v)
			}
		}
		resp, err := f.client.Do(req)
		if err != nil {
			if errors.Is(err, safehttp.ErrBlocked) {
				if hop > 0 {
					return nil, r.onRedirectBlocked(u.Hostname(), blockedMessage(u.Hostname(), err))
				}
				return nil, blockedMessage(u.Hostname(), err)
			}
			return nil, fetchErr(err)
		}
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			resp.Body.Close()
			if hop >= MaxRedirects {
				return nil, fmt.Errorf("too many redirects (more than %d)", MaxRedirects)
			}
			next, err := u.Parse(loc)
			if err != nil {
				return nil, fmt.Errorf("bad redirect location %q", loc)
			}
			nu, err := f.checkURL(next.String())
			if err != nil {
				return nil, r.onRedirectBlocked(next.Hostname(), err)
			}
			u = nu
			continue
		}
		body, rerr := safehttp.ReadLimited(resp.Body, r.limit)
		resp.Body.Close()
		truncated := errors.Is(rerr, safehttp.ErrResponseTooLarge)
		if rerr != nil && !truncated {
			return nil, fetchErr(rerr)
		}
		return &page{status: resp.StatusCode, finalURL: u, contentType: strings.TrimSpace(resp.Header.Get("Content-Type")),
			body: body, truncated: truncated}, nil
	}
}

// fetchErr shortens transport errors for the model: the url.Error's method and URL are already known.
func fetchErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errors.New("timed out")
	}
	return err
}

// mediaType returns the lower-cased media type and charset parameter of a Content-Type value.
func mediaType(ct string) (string, string) {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
		return strings.ToLower(strings.TrimSpace(mt)), ""
	}
	return strings.ToLower(mt), params["charset"]
}

// isTextLike says whether a media type is text the tools return as text: text/*, JSON, XML, JavaScript,
// XHTML, YAML, TOML, SQL, GraphQL, or no type at all.
func isTextLike(mt string) bool {
	if mt == "" || strings.HasPrefix(mt, "text/") {
		return true
	}
	for _, s := range []string{"json", "xml", "javascript", "ecmascript", "yaml", "toml", "sql", "graphql"} {
		if strings.Contains(mt, s) {
			return true
		}
	}
	return false
}

// decodeText decodes body with the charset label (UTF-8 when empty or unknown); invalid bytes become
// U+FFFD.
func decodeText(body []byte, label string) string {
	label = strings.TrimSpace(label)
	if label != "" && !strings.EqualFold(label, "utf-8") && !strings.EqualFold(label, "utf8") {
		if enc, _ := charset.Lookup(label); enc != nil {
			if out, err := enc.NewDecoder().Bytes(body); err == nil {
				return strings.ToValidUTF8(string(out), "\uFFFD")
			}
		}
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if utf8.Valid(body) {
		return string(body)
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}
