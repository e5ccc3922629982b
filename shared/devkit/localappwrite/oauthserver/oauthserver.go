// Package oauthserver is the local Appwrite stand-in's OAuth 2.1 authorization server, as Appwrite Cloud
// serves one per project at {endpoint}/oauth2/{project} (appwrite/mcp `auth.py`: issuer, discovery at
// .well-known/openid-configuration, keys at .well-known/jwks.json; the Console's consent test: scope names,
// narrowing), and User, a person at its sign-in pages. Where Cloud's behaviour is not known the server follows
// the MCP authorization specification and RFC 8414 (metadata), RFC 7591 (registration), RFC 7636 (PKCE),
// RFC 8707 (resource indicators), RFC 9207 (iss in the authorization response) and RFC 6749 / OAuth 2.1
// (errors, refresh rotation); docs/local-appwrite.md says which is which.
//
// The stand-in (package localappwrite) mounts its handlers in its route table and is its Host: which projects
// exist, their issuers, and the users who sign in (for the Console's server, {endpoint}/oauth2/console, the
// users of the project "console", as Cloud's Console accounts). The keys it signs with are the stand-in's,
// whose API verifies the tokens.
package oauthserver

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ProjectPathValue is the path value every handler reads the project from: the stand-in mounts them at
// patterns such as "POST /v1/oauth2/{project}/token".
const ProjectPathValue = "project"

// Lifetimes are the lifetimes of the authorization server's grants; a zero field takes its default.
type Lifetimes struct {
	// AccessTokenTTL is an access token's lifetime (1 hour).
	AccessTokenTTL time.Duration
	// RefreshTokenTTL is a refresh token's lifetime, renewed by each rotation (30 days).
	RefreshTokenTTL time.Duration
	// CodeTTL is an authorization code's lifetime (10 minutes, RFC 6749 section 4.1.2's maximum); an
	// unfinished sign-in (login and consent pages) lasts as long.
	CodeTTL time.Duration
	// SessionTTL is how long a sign-in at the authorization server is remembered (1 hour).
	SessionTTL time.Duration
}

func (o Lifetimes) withDefaults() Lifetimes {
	if o.AccessTokenTTL <= 0 {
		o.AccessTokenTTL = time.Hour
	}
	if o.RefreshTokenTTL <= 0 {
		o.RefreshTokenTTL = 30 * 24 * time.Hour
	}
	if o.CodeTTL <= 0 {
		o.CodeTTL = 10 * time.Minute
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = time.Hour
	}
	return o
}

// Host is what the authorization server asks of the Appwrite it belongs to.
type Host interface {
	// Now is the current time.
	Now() time.Time
	// Issuer is the issuer of project's authorization server; ok is false when there is no such project.
	Issuer(project string) (issuer string, ok bool)
	// SignIn returns the id of project's user with this email and password, or the refusal to show on the
	// login page.
	SignIn(project, email, password string) (userID, refusal string)
	// Account is the email of project's user userID ("" when there is none), named on the consent page.
	Account(project, userID string) string
	// ProjectNotFound answers a request for a project that does not exist.
	ProjectNotFound(w http.ResponseWriter)
}

// Config configures a Server.
type Config struct {
	// Host is the Appwrite the server belongs to.
	Host Host
	// Key signs the access tokens (RS256); KeyID is their kid.
	Key   *rsa.PrivateKey
	KeyID string
	// Scopes is scopes_supported: what a client may ask for.
	Scopes []string
	// Lifetimes of codes, tokens and sign-ins.
	Lifetimes Lifetimes
}

// identityScopes survive every narrowing (the Console's consent: "Identity scopes are always retained").
var identityScopes = []string{"openid", "profile", "email"}

// umbrellaScopes are dropped by any narrowing ("Narrowed grants never include the console-wide umbrella
// scopes").
var umbrellaScopes = []string{"all", "project:all", "organization:all"}

// Server is the authorization server of every project of its Host. Its state is under its own lock, never
// held while the Host is called.
type Server struct {
	host   Host
	key    *rsa.PrivateKey
	kid    string
	scopes []string
	life   Lifetimes

	mu       sync.Mutex
	clients  map[string]*oauthClient
	requests map[string]*authRequest // unfinished sign-ins, by id
	sessions map[string]*asSession   // signed-in browsers, by cookie value
	codes    map[string]*authCode    // by code
	refresh  map[string]*refreshGrant
}

// New returns an authorization server with no clients.
func New(c Config) *Server {
	return &Server{host: c.Host, key: c.Key, kid: c.KeyID, scopes: c.Scopes, life: c.Lifetimes.withDefaults(),
		clients: map[string]*oauthClient{}, requests: map[string]*authRequest{}, sessions: map[string]*asSession{},
		codes: map[string]*authCode{}, refresh: map[string]*refreshGrant{}}
}

type oauthClient struct {
	id, project, name string
	redirectURIs      []string
	grantTypes        []string
	registration      map[string]any // the registration answer, for RFC 7591's echo
}

// authRequest is one authorize call between the first page and the redirect.
type authRequest struct {
	id, project, clientID, redirectURI, state, challenge string
	scopes, resources                                    []string
	session                                              string // the signed-in browser it is bound to ("" before login)
	expires                                              time.Time
}

type asSession struct {
	project, userID string
	expires         time.Time
}

type authCode struct {
	project, clientID, redirectURI, challenge, userID, family string
	scopes, resources                                         []string
	expires                                                   time.Time
	used                                                      bool
}

type refreshGrant struct {
	project, clientID, userID, family string
	scopes, resources                 []string
	expires                           time.Time
	used, revoked                     bool
}

func (a *Server) now() time.Time { return a.host.Now() }

// prune forgets what can no longer be used: expired sign-ins, sessions and codes, and refresh tokens that are
// expired, spent or revoked (a reused one is still recognised until it expires, to revoke its grant).
// Called with a.mu held.
func (a *Server) prune(now time.Time) {
	for k, r := range a.requests {
		if !now.Before(r.expires) {
			delete(a.requests, k)
		}
	}
	for k, v := range a.sessions {
		if !now.Before(v.expires) {
			delete(a.sessions, k)
		}
	}
	for k, c := range a.codes {
		if !now.Before(c.expires) {
			delete(a.codes, k)
		}
	}
	for k, g := range a.refresh {
		if !now.Before(g.expires) {
			delete(a.refresh, k)
		}
	}
}

// project resolves the request's project and its issuer, answering the Host's not-found when there is none.
func (a *Server) project(w http.ResponseWriter, r *http.Request) (project, issuer string, ok bool) {
	project = r.PathValue(ProjectPathValue)
	issuer, ok = a.host.Issuer(project)
	if !ok {
		a.host.ProjectNotFound(w)
	}
	return project, issuer, ok
}

// Metadata is the RFC 8414 metadata of project's authorization server (nil when there is no such project).
func (a *Server) Metadata(project string) map[string]any {
	iss, ok := a.host.Issuer(project)
	if !ok {
		return nil
	}
	return map[string]any{
		"issuer":                                         iss,
		"authorization_endpoint":                         iss + "/authorize",
		"token_endpoint":                                 iss + "/token",
		"registration_endpoint":                          iss + "/register",
		"jwks_uri":                                       iss + "/.well-known/jwks.json",
		"scopes_supported":                               a.scopes,
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"subject_types_supported":                        []string{"public"},
		"id_token_signing_alg_values_supported":          []string{"RS256"},
		"authorization_response_iss_parameter_supported": true,
	}
}

// ServeMetadata answers GET .well-known/openid-configuration and .well-known/oauth-authorization-server.
func (a *Server) ServeMetadata(w http.ResponseWriter, r *http.Request) {
	project, _, ok := a.project(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, a.Metadata(project))
}

// writeJSON writes v as the stand-in's API does (no HTML escaping).
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// oauthError writes an RFC 6749 section 5.2 error body (also RFC 7591 section 3.2.2's).
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// ---- RFC 7591 dynamic client registration (public clients) ----

// ServeRegister answers POST register: RFC 7591 dynamic client registration of public clients.
func (a *Server) ServeRegister(w http.ResponseWriter, r *http.Request) {
	project, _, ok := a.project(w, r)
	if !ok {
		return
	}
	var meta map[string]any
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err == nil {
		err = json.Unmarshal(body, &meta)
	}
	if err != nil || meta == nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the body must be a JSON object of client metadata")
		return
	}
	strs := func(k string) ([]string, bool) {
		v, present := meta[k]
		if !present {
			return nil, true
		}
		list, ok := v.([]any)
		out := []string{}
		for _, x := range list {
			s, isStr := x.(string)
			if !isStr {
				return nil, false
			}
			out = append(out, s)
		}
		return out, ok
	}
	redirects, ok := strs("redirect_uris")
	if !ok || len(redirects) == 0 {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris must be a non-empty array of URLs")
		return
	}
	for _, u := range redirects {
		if err := checkRedirectURI(u); err != nil {
			oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", err.Error())
			return
		}
	}
	method, _ := meta["token_endpoint_auth_method"].(string)
	if method == "" {
		// RFC 7591 section 2's default is client_secret_basic; this server registers public clients only.
		method = "none"
	}
	if method != "none" {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata",
			fmt.Sprintf("token_endpoint_auth_method %q is not supported: only public clients (\"none\") with PKCE are registered", method))
		return
	}
	grants, ok := strs("grant_types")
	if !ok {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "grant_types must be an array of strings")
		return
	}
	if len(grants) == 0 {
		grants = []string{"authorization_code"} // RFC 7591 section 2's default
	}
	for _, g := range grants {
		if g != "authorization_code" && g != "refresh_token" {
			oauthError(w, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("grant_type %q is not supported", g))
			return
		}
	}
	responses, ok := strs("response_types")
	if !ok || slices.ContainsFunc(responses, func(t string) bool { return t != "code" }) {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", `response_types may only hold "code"`)
		return
	}
	if sc, present := meta["scope"]; present {
		str, isStr := sc.(string)
		if !isStr {
			oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "scope must be a string")
			return
		}
		if bad := a.unknownScopes(strings.Fields(str)); len(bad) > 0 {
			oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "unknown scopes: "+strings.Join(bad, " "))
			return
		}
	}
	name, _ := meta["client_name"].(string)
	if name == "" {
		name = "An application"
	}
	c := &oauthClient{id: "mcp_" + hex.EncodeToString(randomBytes(12)), project: project, name: name,
		redirectURIs: redirects, grantTypes: grants}
	out := map[string]any{}
	for k, v := range meta {
		if k != "client_secret" && k != "client_secret_expires_at" {
			out[k] = v
		}
	}
	out["client_id"] = c.id
	out["client_id_issued_at"] = a.now().Unix()
	out["token_endpoint_auth_method"] = method
	out["grant_types"] = grants
	out["response_types"] = []string{"code"}
	out["redirect_uris"] = redirects
	c.registration = out
	a.mu.Lock()
	a.clients[c.id] = c
	a.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, out)
}

// checkRedirectURI accepts what OAuth 2.1 and RFC 8252 allow a public client: an absolute URL without a
// fragment that is https, http on a loopback host, or a private-use scheme of a native app.
func checkRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return fmt.Errorf("redirect_uri %q is not an absolute URL", raw)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("redirect_uri %q has a fragment", raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		if u.Host == "" {
			return fmt.Errorf("redirect_uri %q has no host", raw)
		}
	case "http":
		if !isLoopbackHost(u.Hostname()) {
			return fmt.Errorf("redirect_uri %q: http is allowed only on a loopback host (use https)", raw)
		}
	case "javascript", "data", "vbscript", "file":
		return fmt.Errorf("redirect_uri %q: scheme %q is not allowed", raw, u.Scheme)
	}
	return nil
}

// redirectMatches compares a redirect_uri with a registered one: exactly, except that a loopback IP
// redirect may use any port (RFC 8252 section 7.3).
func redirectMatches(registered, got string) bool {
	if registered == got {
		return true
	}
	a, err1 := url.Parse(registered)
	b, err2 := url.Parse(got)
	if err1 != nil || err2 != nil || a.Scheme != "http" || b.Scheme != "http" || net.ParseIP(a.Hostname()) == nil {
		return false
	}
	return isLoopbackHost(a.Hostname()) && a.Hostname() == b.Hostname() && a.Path == b.Path && a.RawQuery == b.RawQuery
}

func (a *Server) unknownScopes(scopes []string) []string {
	supported := a.scopes
	var bad []string
	for _, sc := range scopes {
		if !slices.Contains(supported, sc) {
			bad = append(bad, sc)
		}
	}
	return bad
}

// ---- authorize: login, consent, redirect ----

// ServeAuthorize answers GET authorize: it checks an authorization request (RFC 6749 section 4.1.1 with RFC 7636 and RFC 8707) and shows
// the login page, or the consent page when the browser is signed in.
func (a *Server) ServeAuthorize(w http.ResponseWriter, r *http.Request) {
	project, issuer, ok := a.project(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	a.mu.Lock()
	c := a.clients[q.Get("client_id")]
	a.mu.Unlock()
	// Errors about the client or its redirect_uri are shown to the user, never redirected (section 4.1.2.1).
	if c == nil || c.project != project {
		a.asErrorPage(w, http.StatusBadRequest, "invalid_client", "This application is not registered here (unknown client_id).")
		return
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" && len(c.redirectURIs) == 1 {
		redirect = c.redirectURIs[0]
	}
	if !slices.ContainsFunc(c.redirectURIs, func(reg string) bool { return redirectMatches(reg, redirect) }) {
		a.asErrorPage(w, http.StatusBadRequest, "invalid_request", "The redirect_uri is not one this application registered.")
		return
	}
	fail := func(code, desc string) { redirectError(w, r, redirect, issuer, q.Get("state"), code, desc) }
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "response_type must be code")
		return
	case q.Get("code_challenge") == "":
		fail("invalid_request", "code_challenge is required (PKCE, S256)")
		return
	case q.Get("code_challenge_method") != "S256":
		fail("invalid_request", "code_challenge_method must be S256")
		return
	}
	scopes := strings.Fields(q.Get("scope"))
	if len(scopes) == 0 {
		fail("invalid_scope", "scope is required")
		return
	}
	if bad := a.unknownScopes(scopes); len(bad) > 0 {
		fail("invalid_scope", "unknown scopes: "+strings.Join(bad, " "))
		return
	}
	resources := q["resource"]
	for _, res := range resources {
		if u, err := url.Parse(res); err != nil || !u.IsAbs() || u.Fragment != "" || strings.Contains(res, "#") {
			fail("invalid_target", "resource must be an absolute URI without a fragment (RFC 8707)")
			return
		}
	}
	req := &authRequest{id: randomToken(), project: project, clientID: c.id, redirectURI: redirect, state: q.Get("state"),
		challenge: q.Get("code_challenge"), scopes: unique(scopes), resources: unique(resources),
		expires: a.now().Add(a.life.CodeTTL)}
	sid := a.sessionOf(r, project)
	a.mu.Lock()
	a.prune(a.now())
	a.requests[req.id] = req
	req.session = sid
	a.mu.Unlock()
	if sid == "" {
		a.renderLogin(w, http.StatusOK, c, req, "")
		return
	}
	a.renderConsent(w, http.StatusOK, c, req, "")
}

// ServeAuthorizeForm answers POST authorize: the login and consent forms.
func (a *Server) ServeAuthorizeForm(w http.ResponseWriter, r *http.Request) {
	project, issuer, ok := a.project(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		a.asErrorPage(w, http.StatusBadRequest, "invalid_request", "The form could not be read.")
		return
	}
	now := a.now()
	a.mu.Lock()
	req := a.requests[r.PostForm.Get("request")]
	var c *oauthClient
	if req != nil {
		c = a.clients[req.clientID]
	}
	a.mu.Unlock()
	if req == nil || c == nil || req.project != project || !now.Before(req.expires) {
		a.asErrorPage(w, http.StatusBadRequest, "invalid_request", "This sign-in has expired or is unknown. Start again from the application.")
		return
	}
	switch r.PostForm.Get("action") {
	case "login":
		userID, refusal := a.host.SignIn(project, r.PostForm.Get("email"), r.PostForm.Get("password"))
		if refusal != "" {
			a.renderLogin(w, http.StatusUnauthorized, c, req, refusal)
			return
		}
		sid := randomToken()
		a.mu.Lock()
		a.sessions[sid] = &asSession{project: project, userID: userID, expires: now.Add(a.life.SessionTTL)}
		req.session = sid
		a.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: asCookie, Value: sid, Path: "/v1/oauth2/" + project, HttpOnly: true,
			SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, MaxAge: int(a.life.SessionTTL / time.Second)}) // Max-Age: relative, so a browser whose clock differs keeps it
		a.renderConsent(w, http.StatusOK, c, req, "")
		return
	case "approve", "read-only", "deny":
	default:
		a.asErrorPage(w, http.StatusBadRequest, "invalid_request", "Unknown form action.")
		return
	}
	// The consent must come from the browser that signed in for this request (no cross-site approval).
	sid := a.sessionOf(r, project)
	if sid == "" || sid != req.session {
		a.asErrorPage(w, http.StatusForbidden, "access_denied", "Sign in again to approve this application.")
		return
	}
	a.mu.Lock()
	delete(a.requests, req.id) // one answer per request
	sess := a.sessions[sid]
	a.mu.Unlock()
	if r.PostForm.Get("action") == "deny" {
		redirectError(w, r, req.redirectURI, issuer, req.state, "access_denied", "the user denied access")
		return
	}
	granted := narrow(req.scopes, r.PostForm["scope"], r.PostForm.Get("action") == "read-only")
	if !slices.ContainsFunc(granted, func(s string) bool { return !slices.Contains(identityScopes, s) }) {
		a.mu.Lock()
		a.requests[req.id] = req // let the user choose again
		a.mu.Unlock()
		a.renderConsent(w, http.StatusBadRequest, c, req, "Select at least one permission.")
		return
	}
	code := randomToken()
	a.mu.Lock()
	a.codes[code] = &authCode{project: project, clientID: c.id, redirectURI: req.redirectURI, challenge: req.challenge,
		userID: sess.userID, family: randomToken(), scopes: granted, resources: req.resources, expires: now.Add(a.life.CodeTTL)}
	a.mu.Unlock()
	v := url.Values{"code": {code}, "iss": {issuer}}
	if req.state != "" {
		v.Set("state", req.state)
	}
	http.Redirect(w, r, withQuery(req.redirectURI, v), http.StatusSeeOther)
}

// narrow is the consent's result: the requested scopes the user left ticked (all of them when the form
// names none of them, as a plain Authorize), only their .read scopes for read-only; the identity scopes are
// kept, and a narrowed grant loses the umbrella scopes.
func narrow(requested, ticked []string, readOnly bool) []string {
	var out []string
	for _, sc := range requested {
		keep := slices.Contains(ticked, sc) || slices.Contains(identityScopes, sc)
		if readOnly {
			keep = keep && (slices.Contains(identityScopes, sc) || strings.HasSuffix(sc, ".read"))
		}
		if keep {
			out = append(out, sc)
		}
	}
	if len(out) < len(requested) {
		out = slices.DeleteFunc(out, func(sc string) bool { return slices.Contains(umbrellaScopes, sc) })
	}
	return out
}

const asCookie = "a_oauth2_session"

// sessionOf returns the browser's live sign-in at project's server, or "".
func (a *Server) sessionOf(r *http.Request, project string) string {
	ck, err := r.Cookie(asCookie)
	if err != nil {
		return ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	sess := a.sessions[ck.Value]
	if sess == nil || sess.project != project || !a.now().Before(sess.expires) {
		return ""
	}
	return ck.Value
}

func redirectError(w http.ResponseWriter, r *http.Request, redirect, issuer, state, code, desc string) {
	v := url.Values{"error": {code}, "error_description": {desc}, "iss": {issuer}}
	if state != "" {
		v.Set("state", state)
	}
	http.Redirect(w, r, withQuery(redirect, v), http.StatusSeeOther)
}

func withQuery(raw string, v url.Values) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	for k, vs := range v {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func randomToken() string { return base64.RawURLEncoding.EncodeToString(randomBytes(32)) }

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it crashes the program instead)
	return b
}

// unique is in without its repetitions, in order.
func unique(in []string) []string {
	out := []string{}
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// isLoopbackHost reports whether host is localhost, a name under .localhost or a loopback IP literal
// (RFC 8252 section 7.3's loopback redirect).
func isLoopbackHost(host string) bool {
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// ---- token ----

// ServeToken answers POST token: the authorization_code and refresh_token grants.
func (a *Server) ServeToken(w http.ResponseWriter, r *http.Request) {
	project, issuer, ok := a.project(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return
	}
	f := r.PostForm
	clientID := f.Get("client_id")
	if u, _, basic := r.BasicAuth(); basic && clientID == "" {
		clientID, _ = url.QueryUnescape(u)
	}
	a.mu.Lock()
	c := a.clients[clientID]
	a.mu.Unlock()
	if c == nil || c.project != project {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client_id")
		return
	}
	switch f.Get("grant_type") {
	case "authorization_code":
		a.exchangeCode(w, f, c, issuer)
	case "refresh_token":
		a.exchangeRefresh(w, f, c, issuer)
	case "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "grant_type is required")
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", fmt.Sprintf("grant_type %q is not supported", f.Get("grant_type")))
	}
}

func (a *Server) exchangeCode(w http.ResponseWriter, f url.Values, c *oauthClient, issuer string) {
	now := a.now()
	a.mu.Lock()
	code := a.codes[f.Get("code")]
	var reused bool
	if code != nil && code.clientID == c.id {
		reused = code.used
		code.used = true
		if reused {
			// RFC 6749 section 4.1.2: a code used twice revokes what it granted.
			for _, g := range a.refresh {
				if g.family == code.family {
					g.revoked = true
				}
			}
		}
	}
	a.mu.Unlock()
	switch {
	case f.Get("code") == "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "code is required")
		return
	case code == nil || code.clientID != c.id:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the authorization code is unknown or was issued to another client")
		return
	case reused:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the authorization code was already used; the tokens it granted are revoked")
		return
	case !now.Before(code.expires):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the authorization code has expired")
		return
	case f.Get("redirect_uri") != code.redirectURI:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri does not match the authorization request's")
		return
	case f.Get("code_verifier") == "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "code_verifier is required (PKCE)")
		return
	case !verifierMatches(f.Get("code_verifier"), code.challenge):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge (S256)")
		return
	}
	aud, err := audience(code.resources, f["resource"])
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_target", err.Error())
		return
	}
	a.issueTokens(w, c, issuer, code.userID, code.family, code.scopes, code.resources, aud)
}

func (a *Server) exchangeRefresh(w http.ResponseWriter, f url.Values, c *oauthClient, issuer string) {
	now := a.now()
	tok := f.Get("refresh_token")
	if tok == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "refresh_token is required")
		return
	}
	a.mu.Lock()
	g := a.refresh[tok]
	var reused bool
	if g != nil && g.clientID == c.id && !g.revoked && now.Before(g.expires) {
		reused = g.used
		if reused {
			// A rotated refresh token presented again means it leaked: the whole grant is revoked (OAuth 2.1
			// section 4.3.1).
			for _, other := range a.refresh {
				if other.family == g.family {
					other.revoked = true
				}
			}
		}
		g.used = true
	}
	a.mu.Unlock()
	switch {
	case g == nil || g.clientID != c.id:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is unknown or was issued to another client")
		return
	case g.revoked:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token was revoked")
		return
	case !now.Before(g.expires):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token has expired")
		return
	case reused:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token was already used; the grant is revoked")
		return
	}
	scopes := g.scopes
	if sc := strings.Fields(f.Get("scope")); len(sc) > 0 {
		for _, x := range sc {
			if !slices.Contains(g.scopes, x) {
				oauthError(w, http.StatusBadRequest, "invalid_scope", fmt.Sprintf("scope %q was not granted", x))
				return
			}
		}
		scopes = unique(sc)
	}
	aud, err := audience(g.resources, f["resource"])
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_target", err.Error())
		return
	}
	a.issueTokens(w, c, issuer, g.userID, g.family, scopes, g.resources, aud)
}

// audience is the token's aud: the resources asked for at the token endpoint, which must have been
// authorized, else every authorized resource (RFC 8707 section 2.2).
func audience(authorized, asked []string) ([]string, error) {
	for _, a := range asked {
		if !slices.Contains(authorized, a) {
			return nil, fmt.Errorf("resource %q was not part of the authorization", a)
		}
	}
	if len(asked) > 0 {
		return unique(asked), nil
	}
	return authorized, nil
}

func verifierMatches(verifier, challenge string) bool {
	// RFC 7636 section 4.1: 43 to 128 unreserved characters.
	if len(verifier) < 43 || len(verifier) > 128 || strings.Trim(verifier, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~") != "" {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

func (a *Server) issueTokens(w http.ResponseWriter, c *oauthClient, issuer, userID, family string, scopes, resources, aud []string) {
	opts := a.life
	now := a.now()
	claims := jwt.MapClaims{
		"iss": issuer, "sub": userID, "client_id": c.id, "scope": strings.Join(scopes, " "),
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(opts.AccessTokenTTL).Unix(),
		"jti": hex.EncodeToString(randomBytes(12)),
	}
	switch len(aud) {
	case 0:
	case 1:
		claims["aud"] = aud[0]
	default:
		claims["aud"] = aud
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	t.Header["kid"] = a.kid
	t.Header["typ"] = "at+jwt" // RFC 9068
	access, err := t.SignedString(a.key)
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error", "signing the access token: "+err.Error())
		return
	}
	out := map[string]any{"access_token": access, "token_type": "Bearer",
		"expires_in": int(opts.AccessTokenTTL.Seconds()), "scope": strings.Join(scopes, " ")}
	if slices.Contains(c.grantTypes, "refresh_token") {
		rt := randomToken()
		a.mu.Lock()
		a.refresh[rt] = &refreshGrant{project: c.project, clientID: c.id, userID: userID, family: family,
			scopes: scopes, resources: resources, expires: now.Add(opts.RefreshTokenTTL)}
		a.mu.Unlock()
		out["refresh_token"] = rt
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, out)
}
