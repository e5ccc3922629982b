// Package oauth makes the mcp-events function an OAuth 2.1 resource server: it verifies RS256 access tokens
// from the configured issuer against the issuer's JWKS (cached, refetched on an unknown key id), checks iss,
// aud and exp, and serves the RFC 9728 protected-resource metadata and the 401 challenge that points to it.
package oauth

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"appwrite-agent/shared/safehttp"

	"github.com/golang-jwt/jwt/v5"
)

// Cache timing of a JWKS.
const (
	// DefaultMaxAge is how long fetched keys are trusted before a refetch.
	DefaultMaxAge = time.Hour
	// DefaultMinRefresh is the shortest interval between two fetches caused by unknown key ids, so that
	// tokens with made-up kids cannot make the function hammer the issuer.
	DefaultMinRefresh = 10 * time.Second
	// Leeway is the clock skew accepted on exp, nbf and iat.
	Leeway = 30 * time.Second
	// maxJWKSBytes bounds the JWKS document.
	maxJWKSBytes = 1 << 20
)

// Errors.
var (
	// ErrNoToken: the request has no bearer token.
	ErrNoToken = errors.New("oauth: no bearer token")
	// ErrInvalidToken: the token did not verify; the wrapped error says why.
	ErrInvalidToken = errors.New("oauth: invalid token")
	// ErrKeysUnavailable: the token names a key the cache does not hold and the issuer's JWKS could not be
	// fetched (or the request could not wait for the fetch). Nothing says the token is bad: the client should
	// retry later. Such errors are *UnavailableError values.
	ErrKeysUnavailable = errors.New("oauth: the issuer's keys are unavailable")
)

// Principal is the verified caller.
type Principal struct {
	// Subject is the token's sub: the canonical principal of subscriptions.
	Subject string
	// Scopes are the granted scopes (scope, space separated, or scp, an array).
	Scopes map[string]bool
	// Token is the raw bearer token, used to call Appwrite on the caller's behalf.
	Token string
	// Expiry is the token's exp.
	Expiry time.Time
}

// JWKS is a cached RSA key set fetched from a URL. It is safe for concurrent use.
//
// At most one fetch is in flight at a time and no lock is held while it runs. A token whose key id is known
// never waits for a fetch: while the set is fresh the cached key is used; once it is older than the maximum
// age the cached key keeps serving and one refresh starts in the background. A token with an unknown key id
// waits for a fetch (its own or the one in flight) only when the last fetch attempt, successful or not, is
// older than the minimum refresh interval; otherwise it fails at once with the last outcome. So made-up key
// ids, an issuer answering errors or an issuer that hangs cause at most one fetch per interval.
type JWKS struct {
	url        string
	client     *http.Client
	now        func() time.Time
	maxAge     time.Duration
	minRefresh time.Duration
	timeout    time.Duration

	mu          sync.Mutex
	keys        map[string]*rsa.PublicKey
	fetchedAt   time.Time     // last successful fetch
	attemptedAt time.Time     // start of the last fetch, whatever its outcome
	lastErr     error         // outcome of the last fetch (nil after a success)
	inflight    chan struct{} // closed when the running fetch ends; nil when none runs
}

// JWKSOptions tune a JWKS; zero fields take the defaults.
type JWKSOptions struct {
	// Now is the clock (time.Now).
	Now func() time.Time
	// MaxAge is how long fetched keys are fresh (DefaultMaxAge).
	MaxAge time.Duration
	// MinRefresh is the shortest interval between two fetch attempts (DefaultMinRefresh).
	MinRefresh time.Duration
	// FetchTimeout bounds one fetch (DefaultFetchTimeout). A fetch runs on its own deadline, not the
	// caller's, because every waiting request shares it.
	FetchTimeout time.Duration
}

// DefaultFetchTimeout bounds one JWKS fetch.
const DefaultFetchTimeout = 10 * time.Second

// NewJWKS returns a key set fetched from url with client (http.DefaultClient when nil) and default timing.
func NewJWKS(url string, client *http.Client) *JWKS {
	return NewJWKSWithOptions(url, client, JWKSOptions{})
}

// NewJWKSWithOptions returns a key set fetched from url with client (http.DefaultClient when nil).
func NewJWKSWithOptions(url string, client *http.Client, o JWKSOptions) *JWKS {
	if client == nil {
		client = http.DefaultClient
	}
	j := &JWKS{url: url, client: client, now: o.Now, maxAge: o.MaxAge, minRefresh: o.MinRefresh, timeout: o.FetchTimeout}
	if j.now == nil {
		j.now = time.Now
	}
	if j.maxAge <= 0 {
		j.maxAge = DefaultMaxAge
	}
	if j.minRefresh <= 0 {
		j.minRefresh = DefaultMinRefresh
	}
	if j.timeout <= 0 {
		j.timeout = DefaultFetchTimeout
	}
	return j
}

// UnavailableError is the error of a token whose key is not cached while the issuer's JWKS cannot be
// fetched. It matches ErrKeysUnavailable with errors.Is.
type UnavailableError struct {
	// Reason is why the key set could not be read (the last fetch's error, or the request's context).
	Reason error
	// RetryAfter is when the next fetch may run (at least one second).
	RetryAfter time.Duration
}

// Error says which key set failed and why.
func (e *UnavailableError) Error() string {
	return "the issuer's keys (JWKS) are unavailable: " + e.Reason.Error()
}

// Is reports ErrKeysUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrKeysUnavailable }

// Unwrap returns Reason.
func (e *UnavailableError) Unwrap() error { return e.Reason }

// unavailableLocked is the UnavailableError of reason, with the time until the next fetch may start.
func (j *JWKS) unavailableLocked(reason error) *UnavailableError {
	retry := j.minRefresh - j.now().Sub(j.attemptedAt)
	if retry < time.Second {
		retry = time.Second
	}
	return &UnavailableError{Reason: reason, RetryAfter: retry}
}

// Key returns the key with id kid (see JWKS for when it fetches and when it waits). A kid that is not
// cached while the key set cannot be fetched is an *UnavailableError.
func (j *JWKS) Key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	j.mu.Lock()
	now := j.now()
	k, known := j.keys[kid]
	if known {
		if now.Sub(j.fetchedAt) >= j.maxAge && j.mayFetchLocked(now) {
			j.startFetchLocked(now) // refresh in the background; the known key serves meanwhile
		}
		j.mu.Unlock()
		return k, nil
	}
	if j.inflight == nil {
		if !j.mayFetchLocked(now) {
			defer j.mu.Unlock()
			if j.lastErr != nil {
				return nil, j.unavailableLocked(fmt.Errorf("unknown key id %q, last fetch failed: %w", kid, j.lastErr))
			}
			return nil, fmt.Errorf("unknown key id %q", kid)
		}
		j.startFetchLocked(now)
	}
	done := j.inflight
	j.mu.Unlock()

	select {
	case <-done:
	case <-ctx.Done():
		j.mu.Lock()
		defer j.mu.Unlock()
		return nil, j.unavailableLocked(fmt.Errorf("waiting for the fetch: %w", ctx.Err()))
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if k, ok := j.keys[kid]; ok {
		return k, nil
	}
	if j.lastErr != nil {
		return nil, j.unavailableLocked(j.lastErr)
	}
	return nil, fmt.Errorf("unknown key id %q", kid)
}

// mayFetchLocked reports whether a new fetch may start at now: none runs and the last attempt is at least
// the minimum refresh interval old.
func (j *JWKS) mayFetchLocked(now time.Time) bool {
	return j.inflight == nil && (j.attemptedAt.IsZero() || now.Sub(j.attemptedAt) >= j.minRefresh)
}

// startFetchLocked starts one fetch. It runs in its own goroutine, detached from the request that started
// it, because every request waiting on it (and the cache) shares its result; it is bounded by the fetch
// timeout, so it never outlives that.
func (j *JWKS) startFetchLocked(now time.Time) {
	done := make(chan struct{})
	j.inflight, j.attemptedAt = done, now
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), j.timeout)
		defer cancel()
		keys, err := j.fetch(ctx)
		j.mu.Lock()
		if err == nil {
			j.keys, j.fetchedAt, j.lastErr = keys, j.now(), nil
		} else {
			j.lastErr = err // known keys are kept: they keep serving while the issuer is unreachable
		}
		j.inflight = nil
		j.mu.Unlock()
		close(done)
	}()
}

type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
}

func (j *JWKS) fetch(ctx context.Context) (map[string]*rsa.PublicKey, error) {
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	if err := safehttp.GetJSON(ctx, j.client, j.url, maxJWKSBytes, &doc); err != nil {
		return nil, fmt.Errorf("fetch JWKS: %w", err)
	}
	keys := map[string]*rsa.PublicKey{}
	for _, k := range doc.Keys {
		if k.Kty != "RSA" || (k.Use != "" && k.Use != "sig") || (k.Alg != "" && k.Alg != "RS256") {
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.N, "="))
		e, err2 := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.E, "="))
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			continue
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < 2048 {
			continue
		}
		keys[k.Kid] = pub
	}
	return keys, nil
}

// Verifier checks access tokens.
type Verifier struct {
	issuer    string
	audiences []string
	jwks      *JWKS
	now       func() time.Time
}

// NewVerifier returns a verifier for tokens of issuer with an aud among audiences, signed by a key of jwks.
func NewVerifier(issuer string, audiences []string, jwks *JWKS) *Verifier {
	return &Verifier{issuer: issuer, audiences: slices.Clone(audiences), jwks: jwks, now: time.Now}
}

// Verify checks token and returns its principal. Failures wrap ErrInvalidToken with the reason, except a
// token whose key cannot be read now, which is the JWKS's *UnavailableError (ErrKeysUnavailable).
func (v *Verifier) Verify(ctx context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, ErrNoToken
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return v.jwks.Key(ctx, kid)
	},
		jwt.WithValidMethods([]string{"RS256"}),
		jwt.WithIssuer(v.issuer),
		jwt.WithAudience(v.audiences...),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(Leeway),
		jwt.WithTimeFunc(v.now),
	)
	if err != nil {
		if ue := (*UnavailableError)(nil); errors.As(err, &ue) {
			return nil, ue
		}
		return nil, fmt.Errorf("%w: %s", ErrInvalidToken, reason(err))
	}
	sub, _ := claims["sub"].(string)
	if sub == "" {
		return nil, fmt.Errorf("%w: no subject", ErrInvalidToken)
	}
	p := &Principal{Subject: sub, Scopes: map[string]bool{}, Token: token}
	if exp, err := claims.GetExpirationTime(); err == nil && exp != nil {
		p.Expiry = exp.Time
	}
	switch sc := claims["scope"].(type) {
	case string:
		for _, s := range strings.Fields(sc) {
			p.Scopes[s] = true
		}
	}
	if scp, ok := claims["scp"].([]any); ok {
		for _, s := range scp {
			if str, ok := s.(string); ok && str != "" {
				p.Scopes[str] = true
			}
		}
	}
	return p, nil
}

// reason turns a golang-jwt error into a short description safe to show the client.
func reason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "token expired"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "token audience is not this resource"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "token issuer is not trusted"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return "token not valid yet"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "token misses a required claim"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "token signature does not verify"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "token is malformed"
	default:
		return "token is invalid"
	}
}

// Metadata is the RFC 9728 protected-resource metadata document.
type Metadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// Resource describes this resource server for the metadata and the challenge.
type Resource struct {
	// PublicURL is the base URL, without a trailing slash.
	PublicURL string
	// Issuer is the authorization server.
	Issuer string
	// Scopes are what the challenges ask for (the 401's scope): Appwrite Cloud's names of what the events
	// and tools need, the first alternative of each requirement.
	Scopes []string
	// Supported is advertised as scopes_supported; Scopes when nil. Published sets it to what the
	// authorization server publishes.
	Supported []string
	// Needs are the scope requirements (each met by any one of its alternatives) behind Scopes: a
	// challenge asks for the alternative the authorization server publishes.
	Needs [][]string
}

// MetadataPath is the well-known path of the metadata for the root resource; MetadataPath + "/mcp" is the
// one for the /mcp endpoint.
const MetadataPath = "/.well-known/oauth-protected-resource"

// Metadata returns the document for the resource at path "/" or "/mcp". Its resource is exactly the URL a
// client uses for that endpoint (RFC 9728 §3.3): PublicURL for the root, PublicURL + "/mcp" for /mcp; no
// slash is added.
func (r Resource) Metadata(path string) Metadata {
	res := r.PublicURL
	if path == "/mcp" {
		res = r.PublicURL + "/mcp"
	}
	return Metadata{
		Resource: res, AuthorizationServers: []string{r.Issuer},
		ScopesSupported: r.supported(), BearerMethodsSupported: []string{"header"},
		ResourceName: "Appwrite MCP events",
	}
}

func (r Resource) supported() []string {
	if r.Supported != nil {
		return append([]string{}, r.Supported...)
	}
	return append([]string{}, r.Scopes...)
}

// MetadataURL returns the URL of the metadata document for a request to path ("/" or "/mcp").
func (r Resource) MetadataURL(path string) string {
	if path == "/mcp" {
		return r.PublicURL + MetadataPath + "/mcp"
	}
	return r.PublicURL + MetadataPath
}

// NoCredentials returns the WWW-Authenticate value of a 401 for a request to path that carries no
// credentials at all: no error code (RFC 6750 §3.1), the metadata URL and the scopes to ask for.
func (r Resource) NoCredentials(path string) string {
	return fmt.Sprintf(`Bearer resource_metadata=%q, scope=%q`, r.MetadataURL(path), strings.Join(r.Scopes, " "))
}

// Challenge returns the WWW-Authenticate value of a 401 for a request to path ("/" or "/mcp") whose token
// did not verify, with description as error_description.
func (r Resource) Challenge(path, description string) string {
	return fmt.Sprintf(`Bearer error="invalid_token", error_description=%q, resource_metadata=%q, scope=%q`,
		description, r.MetadataURL(path), strings.Join(r.Scopes, " "))
}

// InsufficientScope returns the WWW-Authenticate value of a 403 for a request to path whose token lacks
// scopes a call needs: error="insufficient_scope" with the scopes the call needs (the client adds them to
// what it holds and asks the user again), the metadata URL and description.
func (r Resource) InsufficientScope(path string, scopes []string, description string) string {
	return fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q, error_description=%q`,
		strings.Join(r.pickAll(scopes, r.Supported), " "), r.MetadataURL(path), description)
}
