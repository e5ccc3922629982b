package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"appwrite-agent/shared/safehttp"
)

// ErrUserURLScheme refuses a per-request base_url that is not https (unless SAFEHTTP_ALLOW_HTTP is on).
var ErrUserURLScheme = errors.New("llm.base_url must use https://")

// userMaxResponseBytes bounds one model answer from a user-supplied endpoint.
const userMaxResponseBytes = 16 << 20

// HTTPClient returns the HTTP client for the endpoint of s and a release function that closes its pooled
// connections; call release when the request ends, so no connection outlives it.
//
// The environment's endpoint is trusted and gets a plain transport of its own. A per-request base_url
// comes from a user, so it goes through the SSRF-safe client of Env.UserPolicy: https only, public
// addresses only, no redirects (SAFEHTTP_ALLOW / SAFEHTTP_ALLOW_HTTP / SAFEHTTP_CA_FILE open it for tests
// and local development). The policy was read once with the Env; its CA roots are parsed on the first such
// call and kept. timeout bounds response headers and the whole exchange (the request's context deadline is
// what really bounds a call; a reasoning model may take long before its headers).
func HTTPClient(s Settings, timeout time.Duration) (*http.Client, func(), error) {
	if !s.UserBaseURL {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		return &http.Client{Transport: tr}, tr.CloseIdleConnections, nil
	}
	err := s.userPolicyErr
	if err == nil {
		err = s.userPolicy.Roots.Err()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("the SSRF policy for llm.base_url is misconfigured: %w", err)
	}
	opts := s.userPolicy
	opts.HeaderTimeout, opts.TotalTimeout, opts.MaxResponseBytes = timeout, timeout, userMaxResponseBytes
	if !opts.AllowHTTP && !strings.HasPrefix(strings.ToLower(s.BaseURL), "https://") {
		return nil, nil, ErrUserURLScheme
	}
	c := safehttp.NewClient(opts)
	return c, c.CloseIdleConnections, nil
}
