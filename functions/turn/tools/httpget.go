package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"appwrite-agent/shared/pyjson"
)

// http_get limits, as in the reference.
const (
	HTTPGetDefaultBytes = 200_000
	HTTPGetMinBytes     = 1_000
	HTTPGetMaxBytes     = 500_000
	httpGetUserAgent    = "AppwriteAgent/1.0 (+https://appwrite.io; http_get)"
	httpGetAccept       = "application/json, text/plain, text/*, */*"
)

// HTTPGet is the http_get tool: one GET through the SSRF-safe client, https only, redirects followed
// and re-checked, the body cut at max_bytes (1000..500000, default 200000), text-like types decoded with
// their charset, binary bodies described instead of dumped.
type HTTPGet struct {
	// Web is the SSRF policy.
	Web Web
}

// Name implements toolapi.Tool.
func (HTTPGet) Name() string { return "http_get" }

// Description implements toolapi.Tool.
func (HTTPGet) Description() string {
	return "Fetch a public https:// URL with a plain GET and return the raw response: a first line with status, " +
		"final URL, host and content type, then the body as text. Best for APIs, JSON, raw Markdown or text files " +
		"(e.g. docs sources on GitHub). It does not run JavaScript or simplify HTML: use browser_fetch to read a web " +
		"page. Private, local and non-https addresses are refused; long bodies are cut and marked."
}

// Parameters implements toolapi.Tool.
func (HTTPGet) Parameters() json.RawMessage {
	return schema([][2]string{
		{"url", prop("string", "The https:// URL to fetch.", "")},
		{"max_bytes", prop("integer", "Most body bytes to return (1000 to 500000).", `"default":200000`)},
	}, "url")
}

// Run implements toolapi.Tool.
func (h HTTPGet) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var a struct {
		URL      string `json:"url"`
		MaxBytes optInt `json:"max_bytes"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	limit := clamp(a.MaxBytes.or(HTTPGetDefaultBytes), HTTPGetMinBytes, HTTPGetMaxBytes)
	f := newFetcher(h.Web)
	p, err := f.get(ctx, fetchReq{url: a.URL, accept: httpGetAccept, userAgent: httpGetUserAgent, limit: limit,
		onRedirectBlocked: func(_ string, err error) error { return &policyError{"redirect blocked: " + err.Error()} }})
	if err != nil {
		var pe *policyError
		if errors.As(err, &pe) {
			return "Error: " + pe.msg, nil
		}
		return "Error fetching URL: " + err.Error(), nil
	}
	ct := p.contentType
	if ct == "" {
		ct = "unknown"
	}
	out := fmt.Sprintf("status=%d final_url=%s host=%s content_type=%s\n\n", p.status, p.finalURL, p.finalURL.Hostname(), ct)
	mt, cs := mediaType(p.contentType)
	if !isTextLike(mt) {
		n := strconv.Itoa(len(p.body))
		if p.truncated {
			n = "more than " + n
		}
		return out + fmt.Sprintf("(binary or non-text content-type %s; %s bytes not returned as text. Fetch a text, "+
			"JSON or HTML URL instead, or use browser_fetch for a web page.)", pyjson.ReprString(mt), n), nil
	}
	out += decodeText(p.body, cs)
	if p.truncated {
		out += fmt.Sprintf("\n\n… truncated at %d bytes", limit)
	}
	return out, nil
}
