// Package config reads the mcp-events configuration from environment variables (docs/events.md lists each
// one). Nothing else in the function reads the environment.
package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"appwrite-agent/functions/mcp-events/mcperr"
)

// Environment variable names.
const (
	EnvEnabled          = "MCP_EVENTS_ENABLED"
	EnvPublicURL        = "MCP_EVENTS_PUBLIC_URL"
	EnvIssuer           = "MCP_EVENTS_OAUTH_ISSUER"
	EnvJWKSURL          = "MCP_EVENTS_OAUTH_JWKS_URL"
	EnvAudience         = "MCP_EVENTS_OAUTH_AUDIENCE"
	EnvScopes           = "MCP_EVENTS_OAUTH_SCOPES"
	EnvAllowedOrigins   = "MCP_EVENTS_ALLOWED_ORIGINS"
	EnvAppwriteEndpoint = "MCP_EVENTS_APPWRITE_ENDPOINT"
	EnvFunctionEndpoint = "APPWRITE_FUNCTION_API_ENDPOINT"
	EnvIngressURL       = "MCP_EVENTS_INGRESS_URL"
	EnvTTLDefault       = "MCP_EVENTS_TTL_DEFAULT"
	EnvTTLMin           = "MCP_EVENTS_TTL_MIN"
	EnvTTLMax           = "MCP_EVENTS_TTL_MAX"
	EnvRotationGrace    = "MCP_EVENTS_ROTATION_GRACE"
	EnvErrorCodes       = "MCP_EVENTS_ERROR_CODES"
	EnvChallengeTimeout = "MCP_EVENTS_CHALLENGE_TIMEOUT"
	EnvRequestTimeout   = "MCP_EVENTS_REQUEST_TIMEOUT"
	EnvChallengeRate    = "MCP_EVENTS_CHALLENGE_RATE"
	EnvUsernameBudget   = "MCP_EVENTS_SEAL_USERNAME_BUDGET"
	EnvPasswordBudget   = "MCP_EVENTS_SEAL_PASSWORD_BUDGET"
	EnvURLBudget        = "MCP_EVENTS_SEAL_URL_BUDGET"
	EnvCallbackCAFile   = "SAFEHTTP_CA_FILE" // shared with webhook-ingress (safehttp.EnvCAFile)
	// EnvSealKeys, EnvWebhookKeys, EnvSafeAllow and EnvSafeAllowHTTP are parsed by the shared packages seal,
	// appwritesig and safehttp (mcpserver.New reads them through the same getenv).
	EnvSealKeys      = "SEAL_KEYS"
	EnvWebhookKeys   = "APPWRITE_WEBHOOK_SECRET_KEYS"
	EnvSafeAllow     = "SAFEHTTP_ALLOW"
	EnvSafeAllowHTTP = "SAFEHTTP_ALLOW_HTTP"
)

// Defaults.
const (
	DefaultTTL              = time.Hour
	DefaultTTLMin           = 5 * time.Minute
	DefaultTTLMax           = 24 * time.Hour
	DefaultRotationGrace    = 10 * time.Minute
	DefaultChallengeTimeout = 5 * time.Second
	DefaultRequestTimeout   = 25 * time.Second
	// DefaultChallengeRate is how many verification challenges one instance sends to one destination host
	// per minute.
	DefaultChallengeRate = 10
)

// defaultScopes are advertised in the protected-resource metadata and the 401 challenge when
// MCP_EVENTS_OAUTH_SCOPES is unset and the authorization server publishes no scopes_supported: what the
// catalog's events need, in Appwrite Cloud's names.
var defaultScopes = []string{
	"project:webhooks.read", "project:webhooks.write", "project:tables.read", "project:rows.read",
	"project:buckets.read", "project:files.read", "project:users.read", "project:functions.read",
	"project:executions.read", "project:sites.read",
}

// Config is the whole configuration.
type Config struct {
	// Enabled switches the events extension on (MCP_EVENTS_ENABLED). Off, events are neither advertised nor
	// served: events/* answers Method not found.
	Enabled bool
	// PublicURL is the function's public base URL, without a trailing slash.
	PublicURL string
	// Issuer is the OAuth issuer (iss).
	Issuer string
	// JWKSURL is where the issuer's keys are (default Issuer + "/jwks").
	JWKSURL string
	// Audiences are the accepted aud values (default PublicURL, PublicURL + "/", PublicURL + "/mcp").
	Audiences []string
	// Scopes are advertised as scopes_supported and asked for by the 401 challenge.
	Scopes []string
	// AllowedOrigins are the browser origins (scheme://host[:port], lower case) whose pages may call the MCP
	// endpoint; a request with any other Origin is refused with 403. Empty: only requests without an Origin
	// (server-side clients) are served.
	AllowedOrigins []string
	// ScopesSet reports that MCP_EVENTS_OAUTH_SCOPES set Scopes: the authorization server's published
	// scopes_supported are then not read.
	ScopesSet bool
	// AppwriteEndpoint is the Appwrite API endpoint, ending in /v1.
	AppwriteEndpoint string
	// IngressURL is the webhook-ingress function's public base URL; webhooks point at
	// IngressURL + "/appwrite/webhooks/{id}".
	IngressURL string
	// TTLDefault, TTLMin and TTLMax bound subscription grants; a client's ttlMs is clamped into
	// [TTLMin, TTLMax].
	TTLDefault, TTLMin, TTLMax time.Duration
	// RotationGrace is how long the previous secret keeps signing after a rotation.
	RotationGrace time.Duration
	// Codes is the error numbering.
	Codes mcperr.Numbering
	// ChallengeTimeout bounds the verification POST.
	ChallengeTimeout time.Duration
	// RequestTimeout bounds the handling of one request (below the 30 s platform limit).
	RequestTimeout time.Duration
	// ChallengeRate is the most verification challenges one instance sends to one destination host in any
	// minute; beyond it events/subscribe answers ResourceExhausted.
	ChallengeRate int
	// UsernameBudget and PasswordBudget bound the sealed envelope (0: the seal package defaults).
	UsernameBudget, PasswordBudget int
	// URLBudget is how many sealed characters the webhook URL may carry after the subscription id; -1 (the
	// default) means as many as Appwrite's url column leaves with the ingress URL, 0 none.
	URLBudget int
	// CallbackCAFile is a PEM file of extra root certificates for callback TLS (tests, development).
	CallbackCAFile string
}

// Getenv is os.Getenv's signature; FromEnv takes it so tests can pass a map.
type Getenv func(string) string

// FromEnv reads the configuration through getenv (os.Getenv when nil).
func FromEnv(getenv Getenv) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c := Config{}
	var err error
	if c.Enabled, err = boolVar(getenv, EnvEnabled); err != nil {
		return c, err
	}
	if c.PublicURL, err = urlVar(getenv, EnvPublicURL, true); err != nil {
		return c, err
	}
	if c.Issuer, err = urlVar(getenv, EnvIssuer, true); err != nil {
		return c, err
	}
	if c.JWKSURL, err = urlVar(getenv, EnvJWKSURL, false); err != nil {
		return c, err
	}
	if c.JWKSURL == "" {
		c.JWKSURL = c.Issuer + "/jwks"
	}
	c.Audiences = list(getenv(EnvAudience))
	if len(c.Audiences) == 0 {
		c.Audiences = []string{c.PublicURL, c.PublicURL + "/", c.PublicURL + "/mcp"}
	}
	c.Scopes = list(getenv(EnvScopes))
	c.ScopesSet = len(c.Scopes) > 0
	if len(c.Scopes) == 0 {
		c.Scopes = slices.Clone(defaultScopes)
	}
	for _, o := range list(getenv(EnvAllowedOrigins)) {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return c, fmt.Errorf("%s: %q is not an origin (scheme://host[:port], e.g. https://chat.example.com)", EnvAllowedOrigins, o)
		}
		c.AllowedOrigins = append(c.AllowedOrigins, NormalizeOrigin(o))
	}
	ep := getenv(EnvAppwriteEndpoint)
	if ep == "" {
		ep = getenv(EnvFunctionEndpoint)
	}
	if c.AppwriteEndpoint, err = urlValue(EnvAppwriteEndpoint, ep, c.Enabled); err != nil {
		return c, err
	}
	if c.IngressURL, err = urlVar(getenv, EnvIngressURL, c.Enabled); err != nil {
		return c, err
	}
	// Appwrite 1.9.6 and earlier sign rawurldecode(url) + body, later versions the stored url
	// (Workers/Webhooks.php:104,115 in 1.9.6): a webhook URL with a "%" verifies on one and not the other.
	if strings.Contains(c.IngressURL, "%") {
		err = fmt.Errorf("%s: %q holds a %%; Appwrite's webhook signature covers the URL differently across versions when it does: use a URL without percent-escapes", EnvIngressURL, c.IngressURL)
	}
	if err != nil {
		return c, err
	}
	if c.TTLDefault, err = durVar(getenv, EnvTTLDefault, DefaultTTL); err != nil {
		return c, err
	}
	if c.TTLMin, err = durVar(getenv, EnvTTLMin, DefaultTTLMin); err != nil {
		return c, err
	}
	if c.TTLMax, err = durVar(getenv, EnvTTLMax, DefaultTTLMax); err != nil {
		return c, err
	}
	if c.TTLMin > c.TTLMax || c.TTLDefault < c.TTLMin || c.TTLDefault > c.TTLMax {
		return c, fmt.Errorf("%s, %s, %s: need min <= default <= max", EnvTTLMin, EnvTTLDefault, EnvTTLMax)
	}
	if c.RotationGrace, err = durVar(getenv, EnvRotationGrace, DefaultRotationGrace); err != nil {
		return c, err
	}
	if c.Codes, err = mcperr.ParseNumbering(strings.ToLower(strings.TrimSpace(getenv(EnvErrorCodes)))); err != nil {
		return c, fmt.Errorf("%s: %w", EnvErrorCodes, err)
	}
	if c.ChallengeTimeout, err = durVar(getenv, EnvChallengeTimeout, DefaultChallengeTimeout); err != nil {
		return c, err
	}
	if c.RequestTimeout, err = durVar(getenv, EnvRequestTimeout, DefaultRequestTimeout); err != nil {
		return c, err
	}
	if c.ChallengeRate, err = intVar(getenv, EnvChallengeRate); err != nil {
		return c, err
	}
	if c.ChallengeRate == 0 {
		c.ChallengeRate = DefaultChallengeRate
	}
	if c.UsernameBudget, err = intVar(getenv, EnvUsernameBudget); err != nil {
		return c, err
	}
	if c.PasswordBudget, err = intVar(getenv, EnvPasswordBudget); err != nil {
		return c, err
	}
	c.URLBudget = -1
	if v := strings.TrimSpace(getenv(EnvURLBudget)); v != "" {
		if c.URLBudget, err = strconv.Atoi(v); err != nil || c.URLBudget < 0 {
			return c, fmt.Errorf("%s: %q is not a non-negative integer", EnvURLBudget, v)
		}
	}
	c.CallbackCAFile = strings.TrimSpace(getenv(EnvCallbackCAFile))
	return c, nil
}

// NormalizeOrigin is an origin as compared: lower case, without a trailing slash, and without the scheme's
// default port (a browser never sends ":443" for https or ":80" for http, RFC 6454 §6.1).
func NormalizeOrigin(o string) string {
	o = strings.TrimRight(strings.ToLower(strings.TrimSpace(o)), "/")
	if s, ok := strings.CutSuffix(o, ":443"); ok && strings.HasPrefix(o, "https://") {
		return s
	}
	if s, ok := strings.CutSuffix(o, ":80"); ok && strings.HasPrefix(o, "http://") {
		return s
	}
	return o
}

// OriginOf is the origin (scheme://host[:port], normalized) of an absolute http or https URL, or "" for
// anything else.
func OriginOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	return NormalizeOrigin(u.Scheme + "://" + u.Host)
}

// IsLoopbackHost reports whether host (a URL's host, with or without a port) names this machine:
// localhost (or a name under .localhost), 127.0.0.0/8 or ::1.
func IsLoopbackHost(host string) bool {
	h := strings.ToLower(host)
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func list(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func boolVar(getenv Getenv, name string) (bool, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s: %q is not a boolean", name, v)
	}
	return b, nil
}

func urlVar(getenv Getenv, name string, required bool) (string, error) {
	return urlValue(name, getenv(name), required)
}

func urlValue(name, v string, required bool) (string, error) {
	v = strings.TrimRight(strings.TrimSpace(v), "/")
	if v == "" {
		if required {
			return "", fmt.Errorf("%s: required", name)
		}
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("%s: %q is not an http(s) URL", name, v)
	}
	return v, nil
}

func durVar(getenv Getenv, name string, def time.Duration) (time.Duration, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: %q is not a positive Go duration (e.g. 90m)", name, v)
	}
	return d, nil
}

func intVar(getenv Getenv, name string) (int, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s: %q is not a positive integer", name, v)
	}
	return n, nil
}
