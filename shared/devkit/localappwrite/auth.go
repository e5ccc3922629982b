package localappwrite

import (
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// project is one Appwrite project and everything in it.
type project struct {
	id      string
	name    string
	keys    map[string]*apiKey // by secret
	members map[string]bool    // user ids allowed in admin mode (console team members)

	webhooks     map[string]*webhook
	webhookOrder []string
	databases    map[string]*database
	buckets      map[string]*bucket
	sites        map[string]*site
	users        map[string]*user
	userOrder    []string
	functions    map[string]*function
}

// apiKey is a standard project API key.
type apiKey struct {
	id     string
	name   string
	secret string
	scopes []string
	expire time.Time
}

// ProjectSpec describes a project to seed.
type ProjectSpec struct {
	// ID is the project id (required, Appwrite custom-id rules).
	ID string `json:"projectId"`
	// Name is the project name (defaults to the id).
	Name string `json:"name"`
	// Members are user ids (OAuth token subjects) that may act on the project in admin mode.
	Members []string `json:"members"`
}

// SeedProject creates a project, or adds members to an existing one.
func (s *Server) SeedProject(p ProjectSpec) error {
	if !validCustomID(p.ID) {
		return fmt.Errorf("localappwrite: invalid project id %q", p.ID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.projects[p.ID]
	if pr == nil {
		name := p.Name
		if name == "" {
			name = p.ID
		}
		pr = &project{
			id: p.ID, name: name,
			keys: map[string]*apiKey{}, members: map[string]bool{},
			webhooks: map[string]*webhook{}, databases: map[string]*database{},
			buckets: map[string]*bucket{}, sites: map[string]*site{}, users: map[string]*user{}, functions: map[string]*function{},
		}
		s.projects[p.ID] = pr
	}
	for _, m := range p.Members {
		pr.members[m] = true
	}
	return nil
}

// AddMember lets the OAuth subject userID act on the project in admin mode.
func (s *Server) AddMember(projectID, userID string) error {
	return s.SeedProject(ProjectSpec{ID: projectID, Members: []string{userID}})
}

// CreateKey creates a standard API key with the given scopes in the project and returns its secret.
func (s *Server) CreateKey(projectID string, scopes []string) (string, error) {
	return s.CreateKeyExpiring(projectID, scopes, time.Time{})
}

// CreateKeyExpiring is CreateKey with an expiry (zero: never).
func (s *Server) CreateKeyExpiring(projectID string, scopes []string, expire time.Time) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.projects[projectID]
	if pr == nil {
		return "", fmt.Errorf("localappwrite: no project %q", projectID)
	}
	// Appwrite standard keys are "standard_" + 256 hex characters.
	secret := "standard_" + hex.EncodeToString(randomBytes(128))
	pr.keys[secret] = &apiKey{id: s.uniqueID(), name: "local key", secret: secret, scopes: slices.Clone(scopes), expire: expire}
	return secret, nil
}

// DynamicKey mints a dynamic API key as Appwrite gives function executions (Appwrite 1.9 `Deployments::scopes`, `src/Appwrite/Auth/Key.php`; docs/local-appwrite.md): an HS256
// JWT {projectId, scopes} signed with the server key, expiring after ttl, prefixed "dynamic_" or "ephemeral_".
func (s *Server) DynamicKey(projectID string, scopes []string, ttl time.Duration) (string, error) {
	now := s.now()
	claims := jwt.MapClaims{
		"projectId": projectID,
		"scopes":    scopes,
		"iat":       now.Unix(),
		"exp":       now.Add(ttl).Unix(),
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(s.opts.KeySecret)
	if err != nil {
		return "", err
	}
	prefix := "dynamic_"
	if s.opts.EphemeralKeys {
		prefix = "ephemeral_"
	}
	return prefix + tok, nil
}

// principal is who a request acts as.
type principal struct {
	kind   string // "key", "dynamic", "oauth", "guest"
	scopes map[string]bool
	userID string // acting user (OAuth subject), "" for keys and guests
	// sessionID is the session a "user" principal authenticated with ("" for the others, a JWT included).
	sessionID string
	label     string // for the missing-scope message
	role      string
}

func (p *principal) has(scope string) bool { return p.scopes[scope] }

func scopeSet(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			m[s] = true
		}
	}
	return m
}

// authenticate resolves the caller of a project request. The order copies Appwrite (app/init/resources.php,
// src/Appwrite/Auth/Key.php): an X-Appwrite-Key selects a key role; a key the project does not know leaves the
// caller a guest (so a key of another project ends as 401 general_unauthorized_scope); an expired key is
// 401 project_key_expired. An OAuth access token (Authorization: Bearer) counts only with X-Appwrite-Mode: admin,
// as the MCP server sends it (appwrite/mcp `server.py`), and only for a project member.
//
// APPWRITE CLOUD BEHAVIOUR: the OAuth bearer is what the hosted Appwrite MCP server sends to Appwrite Cloud.
// The open-source server reads no Authorization: Bearer header and has no OAuth2 routes
// (app/init/resources/request.php:462-585, 1.9.6): against a self-hosted Appwrite such a request is a guest's.
// The stand-in keeps it so that mcp-events can be tested as it runs on Cloud.
func (s *Server) authenticate(r *http.Request, pr *project) (*principal, *APIError) {
	// A guest may create a session and read what is public (GET /v1/functions/runtimes); app/config/roles.php
	// grants guests more, which the stand-in does not serve to them. API keys do not have "public" (roles.php
	// ROLE_KEYS: global, health.read, graphql, besides the key's own scopes).
	guest := &principal{kind: "guest", scopes: scopeSet([]string{"sessions.write", "public"}), label: "User", role: "guests"}
	if key := r.Header.Get("X-Appwrite-Key"); key != "" {
		for _, prefix := range []string{"dynamic_", "ephemeral_"} {
			if strings.HasPrefix(key, prefix) {
				return s.authDynamic(strings.TrimPrefix(key, prefix), pr, guest)
			}
		}
		k := pr.keys[key]
		if k == nil {
			return guest, nil
		}
		if !k.expire.IsZero() && !s.now().Before(k.expire) {
			return nil, newErr(ErrProjectKeyExpired)
		}
		return &principal{kind: "key", scopes: scopeSet(k.scopes), label: s.keyLabel(pr), role: "applications"}, nil
	}
	session := s.sessionPrincipalLocked(r, pr)
	if r.Header.Get("X-Appwrite-JWT") != "" {
		return s.jwtPrincipalLocked(r, pr, session, guest)
	}
	if session != nil {
		return session, nil
	}
	if auth := r.Header.Get("Authorization"); strings.HasPrefix(auth, "Bearer ") {
		// Appwrite Cloud only (see above).
		if !strings.EqualFold(r.Header.Get("X-Appwrite-Mode"), "admin") {
			return guest, nil
		}
		claims, err := s.verifyAccessToken(strings.TrimPrefix(auth, "Bearer "))
		if err != nil {
			return nil, newErr(ErrUserUnauthorized, "Invalid OAuth access token: %s", err.Error())
		}
		sub, _ := claims["sub"].(string)
		if !pr.members[sub] {
			return nil, newErr(ErrUserUnauthorized)
		}
		var scopes []string
		if sc, ok := claims["scope"].(string); ok {
			scopes = strings.Fields(sc)
		} else if scp, ok := claims["scp"].([]any); ok {
			for _, v := range scp {
				if s, ok := v.(string); ok {
					scopes = append(scopes, s)
				}
			}
		}
		return &principal{kind: "oauth", scopes: oauthScopes(scopes), userID: sub, label: sub, role: "owner"}, nil
	}
	return guest, nil
}

func (s *Server) keyLabel(pr *project) string {
	return "app." + pr.id + "@service.localhost"
}

func (s *Server) authDynamic(token string, pr *project, guest *principal) (*principal, *APIError) {
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return s.opts.KeySecret, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithTimeFunc(s.now), jwt.WithExpirationRequired())
	if err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) {
			return nil, newErr(ErrProjectKeyExpired)
		}
		return guest, nil
	}
	if pid, _ := claims["projectId"].(string); pid != pr.id {
		return guest, nil
	}
	var scopes []string
	if list, ok := claims["scopes"].([]any); ok {
		for _, v := range list {
			if s, ok := v.(string); ok {
				scopes = append(scopes, s)
			}
		}
	}
	return &principal{kind: "dynamic", scopes: scopeSet(scopes), label: s.keyLabel(pr), role: "applications"}, nil
}

// CloudScopePrefix starts the project scopes of an Appwrite Cloud OAuth access token: "project:rows.read"
// grants the API-key scope "rows.read" (the Console's OAuth consent test fixture lists the names; appwrite/mcp
// docs/events.md "OAuth scopes"). CloudScopeAll grants every project scope.
const (
	CloudScopePrefix = "project:"
	CloudScopeAll    = "project:all"
)

// oauthScopes is what an OAuth access token's scopes grant, as API-key scopes: "project:<scope>" grants
// <scope>, "project:all" every project scope. Bare names grant nothing: Appwrite Cloud's authorization server
// never issues them (they are API-key scopes), and organization: scopes do not apply to project routes.
func oauthScopes(list []string) map[string]bool {
	out := map[string]bool{}
	for _, s := range list {
		switch {
		case s == CloudScopeAll:
			for _, p := range projectScopes {
				out[p] = true
			}
		case strings.HasPrefix(s, CloudScopePrefix) && len(s) > len(CloudScopePrefix):
			out[strings.TrimPrefix(s, CloudScopePrefix)] = true
		}
	}
	return out
}

// CloudScopes returns the Cloud names of API-key scopes ("rows.read" → "project:rows.read"), for minting
// tokens as Appwrite Cloud's authorization server grants them.
func CloudScopes(scopes ...string) []string {
	out := make([]string, 0, len(scopes))
	for _, s := range scopes {
		if !strings.HasPrefix(s, CloudScopePrefix) {
			s = CloudScopePrefix + s
		}
		out = append(out, s)
	}
	return out
}

// missingScope is Appwrite's 401 for a role without the route's scope (app/controllers/shared/api.php):
// "<email> (role: <role>) missing scopes (<json>)".
func missingScope(p *principal, scope string) *APIError {
	js, _ := json.Marshal([]string{scope})
	return newErr(ErrGeneralUnauthorizedScope, "%s (role: %s) missing scopes (%s)", p.label, p.role, js)
}

// ---- OAuth issuer ----

// MintToken mints an RS256 OAuth access token as the Appwrite OAuth issuer would: iss, aud, sub, iat, exp,
// jti and a space-separated scope. aud defaults to Options.Audience, a zero ttl to one hour (a negative
// ttl mints an expired token, for tests).
func (s *Server) MintToken(sub, aud string, scopes []string, ttl time.Duration) (string, error) {
	if sub == "" {
		return "", errors.New("localappwrite: MintToken needs a subject")
	}
	if aud == "" {
		aud = s.opts.Audience
	}
	if ttl == 0 {
		ttl = time.Hour
	}
	now := s.now()
	claims := jwt.MapClaims{
		"iss":   s.Issuer(),
		"sub":   sub,
		"iat":   now.Unix(),
		"nbf":   now.Unix(),
		"exp":   now.Add(ttl).Unix(),
		"jti":   hex.EncodeToString(randomBytes(12)),
		"scope": strings.Join(scopes, " "),
	}
	if aud != "" {
		claims["aud"] = aud
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	t.Header["kid"] = s.kid
	return t.SignedString(s.signer)
}

// verifyAccessToken runs with s.mu held.
func (s *Server) verifyAccessToken(token string) (jwt.MapClaims, error) {
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return &s.signer.PublicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(s.issuerLocked()), jwt.WithTimeFunc(s.now),
		jwt.WithExpirationRequired())
	if err != nil {
		return nil, err
	}
	return claims, nil
}

// PublicKey returns the OAuth signing key's public half.
func (s *Server) PublicKey() *rsa.PublicKey { return &s.signer.PublicKey }

// JWK is one RFC 7517 key of the JWKS document.
type JWK struct {
	// Kty, Use, Alg and Kid describe the key; N and E are the RSA modulus and exponent (base64url).
	Kty string `json:"kty"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	N   string `json:"n"`
	E   string `json:"e"`
}

// JWKS returns the issuer's key set ({"keys":[...]}, RFC 7517).
func (s *Server) JWKS() map[string][]JWK {
	pub := &s.signer.PublicKey
	return map[string][]JWK{"keys": {{
		Kty: "RSA", Use: "sig", Alg: "RS256", Kid: s.kid,
		N: base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
	}}}
}

// keyID is the RFC 7638 thumbprint of an RSA public key.
func keyID(pub *rsa.PublicKey) string {
	e := base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes())
	n := base64.RawURLEncoding.EncodeToString(pub.N.Bytes())
	sum := sha256.Sum256([]byte(`{"e":"` + e + `","kty":"RSA","n":"` + n + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// projectScopes are the API-key scopes of app/config/scopes/project.php this stand-in knows.
var projectScopes = []string{
	"users.read", "users.write", "teams.read", "teams.write",
	"databases.read", "databases.write", "tables.read", "tables.write", "collections.read", "collections.write",
	"columns.read", "columns.write", "attributes.read", "attributes.write", "indexes.read", "indexes.write",
	"rows.read", "rows.write", "documents.read", "documents.write",
	"files.read", "files.write", "buckets.read", "buckets.write",
	"functions.read", "functions.write", "executions.read", "execution.read", "executions.write", "execution.write",
	"sites.read", "sites.write",
	"webhooks.read", "webhooks.write", "locale.read", "avatars.read", "health.read", "rules.read", "rules.write",
}

// cloudScopesSupported is the discovery document's scopes_supported: what Appwrite Cloud's consent screen
// offers an MCP client (the Console's OAuth consent test fixture, MCP_SCOPES): the OpenID scopes,
// project:all and project:<scope> for the project scopes this stand-in knows. The organization: scopes of
// that list are left out: the stand-in has no organization routes.
func cloudScopesSupported() []string {
	out := []string{"openid", "profile", "email", CloudScopeAll}
	return append(out, CloudScopes(sortedScopes()...)...)
}

func sortedScopes() []string {
	out := slices.Clone(projectScopes)
	sort.Strings(out)
	return out
}
