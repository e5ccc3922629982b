// Package oauth makes the mcp-events function an OAuth 2.1 resource server: it verifies RS256 access tokens
// from the configured issuer against the issuer's JWKS (cached, refetched on an unknown key id), checks iss,
// aud and exp, and serves the RFC 9728 protected-resource metadata and the 401 challenge that points to it.
package oauth

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

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
type JWKS struct {
	url        string
	client     *http.Client
	now        func() time.Time
	maxAge     time.Duration
	minRefresh time.Duration

	mu        sync.Mutex
	keys      map[string]*rsa.PublicKey
	fetchedAt time.Time
}

// NewJWKS returns a key set fetched from url with client (http.DefaultClient when nil).
func NewJWKS(url string, client *http.Client) *JWKS {
	if client == nil {
		client = http.DefaultClient
	}
	return &JWKS{url: url, client: client, now: time.Now, maxAge: DefaultMaxAge, minRefresh: DefaultMinRefresh}
}

// Key returns the key with id kid, fetching the set when it is stale or does not know kid (at most once per
// minimum refresh interval).
func (j *JWKS) Key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	now := j.now()
	fresh := !j.fetchedAt.IsZero() && now.Sub(j.fetchedAt) < j.maxAge
	if k, ok := j.keys[kid]; ok && fresh {
		return k, nil
	}
	if j.fetchedAt.IsZero() || !fresh || now.Sub(j.fetchedAt) >= j.minRefresh {
		keys, err := j.fetch(ctx)
		if err != nil {
			if k, ok := j.keys[kid]; ok { // keep serving known keys while the issuer is unreachable
				return k, nil
			}
			return nil, err
		}
		j.keys, j.fetchedAt = keys, now
	}
	if k, ok := j.keys[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("unknown key id %q", kid)
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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch JWKS: HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes))
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS: %w", err)
	}
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
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
	return &Verifier{issuer: issuer, audiences: append([]string(nil), audiences...), jwks: jwks, now: time.Now}
}

// BearerToken extracts the token of an "Authorization: Bearer <token>" header value.
func BearerToken(authorization string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(authorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// Verify checks token and returns its principal. Failures wrap ErrInvalidToken with the reason.
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
	// Scopes are advertised as scopes_supported and in the challenge's scope.
	Scopes []string
}

// MetadataPath is the well-known path of the metadata for the root resource; MetadataPath + "/mcp" is the
// one for the /mcp endpoint.
const MetadataPath = "/.well-known/oauth-protected-resource"

// Metadata returns the document for the resource at path "/" or "/mcp".
func (r Resource) Metadata(path string) Metadata {
	res := r.PublicURL + "/"
	if path == "/mcp" {
		res = r.PublicURL + "/mcp"
	}
	return Metadata{
		Resource: res, AuthorizationServers: []string{r.Issuer},
		ScopesSupported: append([]string{}, r.Scopes...), BearerMethodsSupported: []string{"header"},
		ResourceName: "Appwrite MCP events",
	}
}

// Challenge returns the WWW-Authenticate value of a 401 for a request to path ("/" or "/mcp"), with
// description as error_description.
func (r Resource) Challenge(path, description string) string {
	meta := r.PublicURL + MetadataPath
	if path == "/mcp" {
		meta += "/mcp"
	}
	return fmt.Sprintf(`Bearer error="invalid_token", error_description=%q, resource_metadata=%q, scope=%q`,
		description, meta, strings.Join(r.Scopes, " "))
}
