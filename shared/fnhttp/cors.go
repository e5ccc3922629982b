package fnhttp

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// CORS defaults.
const (
	// CORSMethods are the methods a preflight allows.
	CORSMethods = "GET, POST, OPTIONS"
	// CORSHeaders are the request headers a preflight allows by default: what the agent functions read.
	CORSHeaders = "Content-Type, Accept, X-Session-API-Key"
	// CORSMaxAge is how long (seconds) a browser may cache a preflight answer.
	CORSMaxAge = 600
)

// CORS lets browser pages on listed origins call a function directly. The zero value allows nothing and
// adds nothing: with no origin configured, answers carry no CORS headers at all.
type CORS struct {
	// Setting names the environment variable the list came from, for messages.
	Setting string
	// Headers are the request headers a preflight allows (CORSHeaders when empty).
	Headers string

	any     bool
	origins map[string]bool
}

// ParseCORS reads a list of allowed origins separated by commas or spaces: each is scheme://host[:port]
// with scheme http or https (a trailing slash is dropped; letters are compared lower-cased), or "*" for
// every origin. Invalid entries are left out and reported together in the error; the valid ones still
// apply. setting names the variable in messages.
func ParseCORS(setting, list string) (CORS, error) {
	c := CORS{Setting: setting}
	var bad []string
	for _, raw := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if raw == "*" {
			c.any = true
			continue
		}
		o, ok := normalizeOrigin(strings.TrimSuffix(raw, "/"))
		if !ok {
			bad = append(bad, strconv.Quote(raw))
			continue
		}
		if c.origins == nil {
			c.origins = map[string]bool{}
		}
		c.origins[o] = true
	}
	if len(bad) > 0 {
		return c, errors.New(setting + ": ignored " + strings.Join(bad, ", ") + " (an origin is scheme://host[:port] with http or https, or *)")
	}
	return c, nil
}

// normalizeOrigin returns the canonical form of an Origin value, and whether it is a web origin.
func normalizeOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host), true
}

// Enabled reports whether any origin is allowed.
func (c CORS) Enabled() bool { return c.any || len(c.origins) > 0 }

// allowed returns the Access-Control-Allow-Origin value for a request's Origin ("" when not allowed).
func (c CORS) allowed(origin string) string {
	if origin == "" {
		return ""
	}
	if c.any {
		return "*"
	}
	if o, ok := normalizeOrigin(origin); ok && c.origins[o] {
		return origin
	}
	return ""
}

// Wrap returns main with CORS: a preflight (OPTIONS with Access-Control-Request-Method) is answered here,
// 204 with the allowed methods and headers for an allowed origin, 403 JSON otherwise; every other answer,
// errors included, gets Access-Control-Allow-Origin when the request's Origin is allowed, and Vary: Origin.
// When no origin is configured it returns main itself.
func (c CORS) Wrap(main func(openruntimes.Context) openruntimes.Response) func(openruntimes.Context) openruntimes.Response {
	if !c.Enabled() {
		return main
	}
	return func(rt openruntimes.Context) openruntimes.Response {
		origin := rt.Req.Headers["origin"]
		allow := c.allowed(origin)
		if rt.Req.Method == http.MethodOptions && rt.Req.Headers["access-control-request-method"] != "" {
			if allow == "" {
				res := Error(rt, http.StatusForbidden, "origin_not_allowed", "origin "+strconv.Quote(origin)+" is not allowed by "+c.setting())
				res.Headers["vary"] = "Origin"
				return res
			}
			headers := c.Headers
			if headers == "" {
				headers = CORSHeaders
			}
			return openruntimes.Response{StatusCode: http.StatusNoContent, Body: []byte{}, Headers: map[string]string{
				"access-control-allow-origin":  allow,
				"access-control-allow-methods": CORSMethods,
				"access-control-allow-headers": headers,
				"access-control-max-age":       strconv.Itoa(CORSMaxAge),
				"vary":                         "Origin",
			}}
		}
		res := main(rt)
		if res.Headers == nil {
			res.Headers = map[string]string{}
		}
		if v := res.Headers["vary"]; v == "" {
			res.Headers["vary"] = "Origin"
		} else if !strings.Contains(strings.ToLower(v), "origin") {
			res.Headers["vary"] = v + ", Origin"
		}
		if allow != "" {
			res.Headers["access-control-allow-origin"] = allow
		}
		return res
	}
}

func (c CORS) setting() string {
	if c.Setting == "" {
		return "the CORS settings"
	}
	return c.Setting
}
