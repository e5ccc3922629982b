package oauthserver_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/localappwrite/oauthserver"
	"appwrite-agent/shared/devkit/testclock"

	"github.com/golang-jwt/jwt/v5"
)

const (
	asUserEmail = "ada@example.com"
	asUserPass  = "correct horse battery"
	asResource  = "https://mcp.example.test/mcp"
	asRedirect  = "http://127.0.0.1:33418/callback"
)

// asFixture is the stand-in, whose route table mounts the authorization server, with a clock the test moves
// and a Console account (project "console").
type asFixture struct {
	s     *localappwrite.Server
	ts    *httptest.Server
	clock *testclock.Clock // the wall clock moved by the test
	iss   string
}

// signingKey is one RSA key for every stand-in of the test binary (generating one takes up to seconds).
var signingKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

func newASFixture(t *testing.T) *asFixture {
	t.Helper()
	af := &asFixture{clock: testclock.Wall()}
	af.s = localappwrite.New(localappwrite.Options{Clock: af.clock.Now, SigningKey: signingKey(), Logf: t.Logf})
	af.ts = httptest.NewServer(af.s)
	af.s.SetBaseURL(af.ts.URL)
	t.Cleanup(func() {
		af.ts.Close()
		_ = af.s.Close()
	})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(af.s.SeedProject(localappwrite.ProjectSpec{ID: "console"}))
	must(af.s.SeedUser("console", localappwrite.UserSpec{ID: "user-1", Email: asUserEmail, Password: asUserPass, Name: "Ada"}))
	af.iss = af.ts.URL + "/v1/oauth2/console"
	return af
}

// registerJSON and postForm return the status and the decoded JSON object.
func registerJSON(t *testing.T, u string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(u, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, resp)
}

func postForm(t *testing.T, u string, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("token answer Cache-Control %q, want no-store", cc)
	}
	return decodeJSON(t, resp)
}

func decodeJSON(t *testing.T, resp *http.Response) (int, map[string]any) {
	t.Helper()
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("HTTP %d, not JSON: %q", resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

// register registers a public client (RFC 7591) and returns its id.
func (af *asFixture) register(t *testing.T, grants ...string) string {
	t.Helper()
	if grants == nil {
		grants = []string{"authorization_code", "refresh_token"}
	}
	status, out := registerJSON(t, af.iss+"/register", map[string]any{"client_name": "Test client", "redirect_uris": []string{asRedirect},
		"token_endpoint_auth_method": "none", "grant_types": grants, "response_types": []string{"code"}})
	id, _ := out["client_id"].(string)
	if status != http.StatusCreated || id == "" || out["client_secret"] != nil || out["token_endpoint_auth_method"] != "none" {
		t.Fatalf("register: %d %v", status, out)
	}
	return id
}

type pkce struct{ verifier, challenge string }

func newPKCE() pkce {
	v := rand.Text() + rand.Text() // 52 characters of base32: a verifier of RFC 7636's alphabet
	sum := sha256.Sum256([]byte(v))
	return pkce{v, base64.RawURLEncoding.EncodeToString(sum[:])}
}

func (af *asFixture) authorizeURL(clientID string, p pkce, scopes []string, extra url.Values) string {
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {asRedirect},
		"scope": {strings.Join(scopes, " ")}, "state": {"st-1"}, "code_challenge": {p.challenge},
		"code_challenge_method": {"S256"}, "resource": {asResource}}
	for k, v := range extra {
		q[k] = v
	}
	return af.iss + "/authorize?" + q.Encode()
}

// code runs the sign-in as a user and returns the authorization code.
func (af *asFixture) code(t *testing.T, u *oauthserver.User, clientID string, p pkce, scopes []string, c oauthserver.Consent) string {
	t.Helper()
	res, err := u.Authorize(context.Background(), af.authorizeURL(clientID, p, scopes, nil), c)
	if err != nil {
		t.Fatal(err)
	}
	q := res.Redirect.Query()
	if q.Get("state") != "st-1" || q.Get("iss") != af.iss || q.Get("code") == "" || !strings.HasPrefix(res.Redirect.String(), asRedirect+"?") {
		t.Fatalf("redirect: %s", res.Redirect)
	}
	return q.Get("code")
}

func (af *asFixture) exchange(t *testing.T, clientID, code string, p pkce) (int, map[string]any) {
	t.Helper()
	return postForm(t, af.iss+"/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {clientID},
		"code": {code}, "redirect_uri": {asRedirect}, "code_verifier": {p.verifier}, "resource": {asResource}})
}

func (af *asFixture) refresh(t *testing.T, clientID, rt string) (int, map[string]any) {
	t.Helper()
	return postForm(t, af.iss+"/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {clientID}, "refresh_token": {rt}})
}

// verify checks an access token independently, with the served JWKS.
func (af *asFixture) verify(t *testing.T, tok string) jwt.MapClaims {
	t.Helper()
	pub, kid := servedKey(t, af.iss+"/.well-known/jwks.json")
	claims := jwt.MapClaims{}
	parsed, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return pub, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(af.iss), jwt.WithAudience(asResource),
		jwt.WithExpirationRequired(), jwt.WithTimeFunc(af.clock.Now))
	if err != nil {
		t.Fatalf("access token: %v", err)
	}
	if parsed.Header["kid"] != kid || parsed.Header["typ"] != "at+jwt" {
		t.Fatalf("header %v", parsed.Header)
	}
	return claims
}

// servedKey reads the one RS256 key of the JWKS document at url.
func servedKey(t *testing.T, url string) (*rsa.PublicKey, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string][]localappwrite.JWK
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	keys := doc["keys"]
	if len(keys) != 1 || keys[0].Kty != "RSA" || keys[0].Alg != "RS256" || keys[0].Use != "sig" {
		t.Fatalf("jwks: %+v", doc)
	}
	n, _ := base64.RawURLEncoding.DecodeString(keys[0].N)
	e, _ := base64.RawURLEncoding.DecodeString(keys[0].E)
	return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}, keys[0].Kid
}

func wantOAuthError(t *testing.T, what string, status int, out map[string]any, wantStatus int, code string) {
	t.Helper()
	if status != wantStatus || out["error"] != code {
		t.Fatalf("%s: HTTP %d %v, want %d error=%s", what, status, out, wantStatus, code)
	}
	if d, _ := out["error_description"].(string); d == "" {
		t.Fatalf("%s: no error_description: %v", what, out)
	}
}

func TestOAuthDiscovery(t *testing.T) {
	af := newASFixture(t)
	for _, path := range []string{"/v1/oauth2/console/.well-known/openid-configuration", "/v1/oauth2/console/.well-known/oauth-authorization-server",
		"/.well-known/oauth-authorization-server/v1/oauth2/console", "/.well-known/openid-configuration/v1/oauth2/console"} {
		resp, err := http.Get(af.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		status, meta := decodeJSON(t, resp)
		if status != http.StatusOK || meta["issuer"] != af.iss || meta["registration_endpoint"] != af.iss+"/register" ||
			meta["token_endpoint"] != af.iss+"/token" || meta["authorization_endpoint"] != af.iss+"/authorize" ||
			meta["jwks_uri"] != af.iss+"/.well-known/jwks.json" {
			t.Fatalf("%s: %d %v", path, status, meta)
		}
		var scopes []string
		for _, s := range meta["scopes_supported"].([]any) {
			scopes = append(scopes, s.(string))
		}
		for _, want := range []string{"project:all", "project:webhooks.read", "project:webhooks.write", "project:rows.read", "openid", "profile", "email"} {
			if !slices.Contains(scopes, want) {
				t.Fatalf("scopes_supported lacks %s: %v", want, scopes)
			}
		}
		if slices.Contains(scopes, "webhooks.read") {
			t.Fatalf("scopes_supported has a bare API-key scope: %v", scopes)
		}
		if m := meta["code_challenge_methods_supported"].([]any); len(m) != 1 || m[0] != "S256" {
			t.Fatalf("PKCE methods %v", m)
		}
	}
	// A project that does not exist has no server.
	resp, err := http.Get(af.ts.URL + "/v1/oauth2/nope/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	if status, out := decodeJSON(t, resp); status != http.StatusNotFound || out["type"] != localappwrite.ErrProjectNotFound {
		t.Fatalf("unknown project: %d %v", status, out)
	}
}

// TestOAuthCodeFlow: registration, login, consent, the code exchanged with PKCE, a token carrying Cloud's
// scope names and the resource as aud that the stand-in's API accepts, and a refresh that rotates.
func TestOAuthCodeFlow(t *testing.T) {
	af := newASFixture(t)
	client := af.register(t)
	p := newPKCE()
	user := oauthserver.NewUser(asUserEmail, asUserPass)
	scopes := []string{"openid", "project:webhooks.read", "project:webhooks.write", "project:rows.read"}
	res, err := user.Authorize(context.Background(), af.authorizeURL(client, p, scopes, nil), oauthserver.Consent{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.LoggedIn || res.Account != asUserEmail || !slices.Equal(res.Offered, scopes) {
		t.Fatalf("pages: %+v", res)
	}
	status, tok := af.exchange(t, client, res.Redirect.Query().Get("code"), p)
	if status != http.StatusOK || tok["token_type"] != "Bearer" || tok["expires_in"] != float64(3600) || tok["refresh_token"] == nil {
		t.Fatalf("token: %d %v", status, tok)
	}
	claims := af.verify(t, tok["access_token"].(string))
	if claims["sub"] != "user-1" || claims["scope"] != strings.Join(scopes, " ") || claims["client_id"] != client || tok["scope"] != claims["scope"] {
		t.Fatalf("claims %v", claims)
	}

	// A second authorization skips the login (the browser is signed in).
	res2, err := user.Authorize(context.Background(), af.authorizeURL(client, newPKCE(), scopes, nil), oauthserver.Consent{})
	if err != nil || res2.LoggedIn {
		t.Fatalf("second authorization: %+v %v", res2, err)
	}
	// Once the sign-in has lapsed, the login is shown again.
	af.clock.Advance(2 * time.Hour)
	if res3, err := user.Authorize(context.Background(), af.authorizeURL(client, newPKCE(), scopes, nil), oauthserver.Consent{}); err != nil || !res3.LoggedIn {
		t.Fatalf("authorization after the session: %+v %v", res3, err)
	}

	// Refresh: a new access token and a new refresh token; the old refresh token is spent.
	status, tok2 := af.refresh(t, client, tok["refresh_token"].(string))
	if status != http.StatusOK || tok2["refresh_token"] == tok["refresh_token"] || tok2["access_token"] == tok["access_token"] {
		t.Fatalf("refresh: %d %v", status, tok2)
	}
	c2 := af.verify(t, tok2["access_token"].(string))
	if c2["scope"] != claims["scope"] || c2["aud"] != asResource || c2["sub"] != "user-1" {
		t.Fatalf("refreshed claims %v", c2)
	}
}

// TestOAuthRefreshRotation: a refresh token works once; presenting it again revokes the whole grant,
// including the token that replaced it (OAuth 2.1 section 4.3.1).
func TestOAuthRefreshRotation(t *testing.T) {
	af := newASFixture(t)
	client := af.register(t)
	p := newPKCE()
	_, tok := af.exchange(t, client, af.code(t, oauthserver.NewUser(asUserEmail, asUserPass), client, p, []string{"project:rows.read"}, oauthserver.Consent{}), p)
	rt1 := tok["refresh_token"].(string)
	_, tok2 := af.refresh(t, client, rt1)
	rt2, _ := tok2["refresh_token"].(string)
	status, out := af.refresh(t, client, rt1)
	wantOAuthError(t, "reused refresh token", status, out, http.StatusBadRequest, "invalid_grant")
	status, out = af.refresh(t, client, rt2)
	wantOAuthError(t, "refresh token of a revoked grant", status, out, http.StatusBadRequest, "invalid_grant")
	// A client registered without the refresh_token grant gets none.
	other := af.register(t, "authorization_code")
	p = newPKCE()
	_, tok = af.exchange(t, other, af.code(t, oauthserver.NewUser(asUserEmail, asUserPass), other, p, []string{"project:rows.read"}, oauthserver.Consent{}), p)
	if _, has := tok["refresh_token"]; has || tok["access_token"] == nil {
		t.Fatalf("authorization_code-only client: %v", tok)
	}
}

// TestOAuthErrors: each refusal carries RFC 6749's error code.
func TestOAuthErrors(t *testing.T) {
	af := newASFixture(t)
	client := af.register(t)
	user := oauthserver.NewUser(asUserEmail, asUserPass)
	scopes := []string{"project:rows.read"}

	t.Run("wrong redirect_uri at authorize", func(t *testing.T) {
		resp, err := http.Get(af.authorizeURL(client, newPKCE(), scopes, url.Values{"redirect_uri": {"https://evil.example/cb"}}))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `<code id="error-code">invalid_request</code>`) || resp.Header.Get("Location") != "" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
	t.Run("wrong redirect_uri at token", func(t *testing.T) {
		p := newPKCE()
		code := af.code(t, user, client, p, scopes, oauthserver.Consent{})
		status, out := postForm(t, af.iss+"/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {client},
			"code": {code}, "redirect_uri": {"http://127.0.0.1:33418/other"}, "code_verifier": {p.verifier}})
		wantOAuthError(t, "redirect_uri", status, out, http.StatusBadRequest, "invalid_grant")
	})
	t.Run("reused code", func(t *testing.T) {
		p := newPKCE()
		code := af.code(t, user, client, p, scopes, oauthserver.Consent{})
		status, tok := af.exchange(t, client, code, p)
		if status != http.StatusOK {
			t.Fatalf("first exchange: %d %v", status, tok)
		}
		status, out := af.exchange(t, client, code, p)
		wantOAuthError(t, "reused code", status, out, http.StatusBadRequest, "invalid_grant")
		// What the code granted is revoked.
		status, out = af.refresh(t, client, tok["refresh_token"].(string))
		wantOAuthError(t, "refresh after code reuse", status, out, http.StatusBadRequest, "invalid_grant")
	})
	t.Run("wrong verifier", func(t *testing.T) {
		p := newPKCE()
		code := af.code(t, user, client, p, scopes, oauthserver.Consent{})
		status, out := af.exchange(t, client, code, newPKCE())
		wantOAuthError(t, "wrong verifier", status, out, http.StatusBadRequest, "invalid_grant")
		status, out = af.exchange(t, client, af.code(t, user, client, p, scopes, oauthserver.Consent{}), pkce{verifier: ""})
		wantOAuthError(t, "no verifier", status, out, http.StatusBadRequest, "invalid_request")
	})
	t.Run("unknown client", func(t *testing.T) {
		status, out := postForm(t, af.iss+"/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {"mcp_nobody"},
			"code": {"x"}, "redirect_uri": {asRedirect}, "code_verifier": {newPKCE().verifier}})
		wantOAuthError(t, "unknown client at token", status, out, http.StatusUnauthorized, "invalid_client")
		resp, err := http.Get(af.authorizeURL("mcp_nobody", newPKCE(), scopes, nil))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `<code id="error-code">invalid_client</code>`) {
			t.Fatalf("unknown client at authorize: %d %s", resp.StatusCode, body)
		}
	})
	t.Run("expired refresh token", func(t *testing.T) {
		p := newPKCE()
		_, tok := af.exchange(t, client, af.code(t, user, client, p, scopes, oauthserver.Consent{}), p)
		af.clock.Advance(31 * 24 * time.Hour)
		defer af.clock.Advance(-31 * 24 * time.Hour)
		status, out := af.refresh(t, client, tok["refresh_token"].(string))
		wantOAuthError(t, "expired refresh token", status, out, http.StatusBadRequest, "invalid_grant")
	})
	t.Run("expired code", func(t *testing.T) {
		p := newPKCE()
		code := af.code(t, user, client, p, scopes, oauthserver.Consent{})
		af.clock.Advance(11 * time.Minute)
		defer af.clock.Advance(-11 * time.Minute)
		status, out := af.exchange(t, client, code, p)
		wantOAuthError(t, "expired code", status, out, http.StatusBadRequest, "invalid_grant")
	})
	t.Run("code of another client", func(t *testing.T) {
		p := newPKCE()
		code := af.code(t, user, client, p, scopes, oauthserver.Consent{})
		status, out := af.exchange(t, af.register(t), code, p)
		wantOAuthError(t, "another client's code", status, out, http.StatusBadRequest, "invalid_grant")
	})
	t.Run("resource not authorized", func(t *testing.T) {
		p := newPKCE()
		code := af.code(t, user, client, p, scopes, oauthserver.Consent{})
		status, out := postForm(t, af.iss+"/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {client},
			"code": {code}, "redirect_uri": {asRedirect}, "code_verifier": {p.verifier}, "resource": {"https://other.example/mcp"}})
		wantOAuthError(t, "resource", status, out, http.StatusBadRequest, "invalid_target")
	})
	t.Run("refresh asking for more scope", func(t *testing.T) {
		p := newPKCE()
		_, tok := af.exchange(t, client, af.code(t, user, client, p, scopes, oauthserver.Consent{}), p)
		status, out := postForm(t, af.iss+"/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {client},
			"refresh_token": {tok["refresh_token"].(string)}, "scope": {"project:rows.read project:rows.write"}})
		wantOAuthError(t, "wider scope", status, out, http.StatusBadRequest, "invalid_scope")
	})
	t.Run("unsupported grant", func(t *testing.T) {
		status, out := postForm(t, af.iss+"/token", url.Values{"grant_type": {"password"}, "client_id": {client}})
		wantOAuthError(t, "password grant", status, out, http.StatusBadRequest, "unsupported_grant_type")
	})
	// Errors about a valid client's request go back to its redirect_uri.
	for _, c := range []struct {
		name  string
		extra url.Values
		code  string
	}{
		{"plain PKCE", url.Values{"code_challenge_method": {"plain"}}, "invalid_request"},
		{"no PKCE", url.Values{"code_challenge": {""}}, "invalid_request"},
		{"token response", url.Values{"response_type": {"token"}}, "unsupported_response_type"},
		{"bare scope name", url.Values{"scope": {"webhooks.read"}}, "invalid_scope"},
		{"resource with fragment", url.Values{"resource": {"https://mcp.example.test/mcp#x"}}, "invalid_target"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := user.Authorize(context.Background(), af.authorizeURL(client, newPKCE(), scopes, c.extra), oauthserver.Consent{})
			if err != nil {
				t.Fatal(err)
			}
			if q := res.Redirect.Query(); q.Get("error") != c.code || q.Get("state") != "st-1" || q.Get("code") != "" {
				t.Fatalf("redirect %s, want error=%s", res.Redirect, c.code)
			}
		})
	}
	t.Run("deny", func(t *testing.T) {
		res, err := user.Authorize(context.Background(), af.authorizeURL(client, newPKCE(), scopes, nil), oauthserver.Consent{Deny: true})
		if err != nil || res.Redirect.Query().Get("error") != "access_denied" {
			t.Fatalf("%+v %v", res, err)
		}
	})
}

func TestOAuthRegistrationRefusals(t *testing.T) {
	af := newASFixture(t)
	for _, c := range []struct {
		name string
		body map[string]any
		code string
	}{
		{"no redirect_uris", map[string]any{"client_name": "x"}, "invalid_redirect_uri"},
		{"http on a public host", map[string]any{"redirect_uris": []string{"http://example.com/cb"}}, "invalid_redirect_uri"},
		{"javascript", map[string]any{"redirect_uris": []string{"javascript:alert(1)"}}, "invalid_redirect_uri"},
		{"fragment", map[string]any{"redirect_uris": []string{"https://app.example/cb#x"}}, "invalid_redirect_uri"},
		{"confidential client", map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "token_endpoint_auth_method": "client_secret_basic"}, "invalid_client_metadata"},
		{"implicit grant", map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "grant_types": []string{"implicit"}}, "invalid_client_metadata"},
		{"unknown scope", map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "scope": "rows.read"}, "invalid_client_metadata"},
	} {
		status, out := registerJSON(t, af.iss+"/register", c.body)
		wantOAuthError(t, c.name, status, out, http.StatusBadRequest, c.code)
	}
}

// TestOAuthConsentNarrowing: the user's choices on the consent page become the token's scope.
func TestOAuthConsentNarrowing(t *testing.T) {
	af := newASFixture(t)
	client := af.register(t)
	user := oauthserver.NewUser(asUserEmail, asUserPass)
	all := []string{"openid", "project:all", "project:webhooks.read", "project:webhooks.write", "project:rows.read", "project:users.read"}
	grant := func(c oauthserver.Consent) string {
		p := newPKCE()
		status, tok := af.exchange(t, client, af.code(t, user, client, p, all, c), p)
		if status != http.StatusOK {
			t.Fatalf("exchange: %d %v", status, tok)
		}
		return af.verify(t, tok["access_token"].(string))["scope"].(string)
	}
	if got := grant(oauthserver.Consent{}); got != strings.Join(all, " ") {
		t.Fatalf("untouched consent: %q", got)
	}
	if got := grant(oauthserver.Consent{Untick: []string{"project:users.read"}}); got != "openid project:webhooks.read project:webhooks.write project:rows.read" {
		t.Fatalf("unticked users.read: %q", got)
	}
	if got := grant(oauthserver.Consent{ReadOnly: true}); got != "openid project:webhooks.read project:rows.read project:users.read" {
		t.Fatalf("read-only: %q", got)
	}
	// Unticking everything is refused on the page; the user can still choose.
	_, err := user.Authorize(context.Background(), af.authorizeURL(client, newPKCE(), all, nil), oauthserver.Consent{Untick: all})
	if err == nil || !strings.Contains(err.Error(), "Select at least one permission") {
		t.Fatalf("nothing selected: %v", err)
	}
}

func TestOAuthLoginAndConsentProtection(t *testing.T) {
	af := newASFixture(t)
	client := af.register(t)
	scopes := []string{"project:rows.read"}
	_, err := oauthserver.NewUser(asUserEmail, "wrong password").Authorize(context.Background(), af.authorizeURL(client, newPKCE(), scopes, nil), oauthserver.Consent{})
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "Invalid credentials. Please check the email and password.") {
		t.Fatalf("wrong password: %v", err)
	}
	_, err = oauthserver.NewUser("nobody@example.com", asUserPass).Authorize(context.Background(), af.authorizeURL(client, newPKCE(), scopes, nil), oauthserver.Consent{})
	if err == nil || !strings.Contains(err.Error(), "Invalid credentials") {
		t.Fatalf("unknown user: %v", err)
	}
	// A consent posted without the signed-in browser's cookie (a cross-site form) is refused.
	user := oauthserver.NewUser(asUserEmail, asUserPass)
	u := af.authorizeURL(client, newPKCE(), scopes, nil)
	_, page, _, err := user.Do(context.Background(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = user.Do(context.Background(), http.MethodPost, u, url.Values{"action": {"login"}, "request": {oauthserver.RequestField(page)},
		"email": {asUserEmail}, "password": {asUserPass}})
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"action": {"approve"}, "request": {oauthserver.RequestField(page)}, "scope": scopes}
	resp, err := http.PostForm(u, form) // no cookies
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" {
		t.Fatalf("consent without the session: %d", resp.StatusCode)
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("pages may be framed: %v", resp.Header)
	}
	// The signed-in browser still can, once.
	status, _, loc, err := user.Do(context.Background(), http.MethodPost, u, form)
	if err != nil || loc == nil || loc.Query().Get("code") == "" {
		t.Fatalf("consent: %d %v %v", status, loc, err)
	}
	status, _, loc, _ = user.Do(context.Background(), http.MethodPost, u, form)
	if status != http.StatusBadRequest || loc != nil {
		t.Fatalf("a second answer to one request: %d %v", status, loc)
	}
}

func TestOAuthUserSignIn(t *testing.T) {
	af := newASFixture(t)
	g, err := oauthserver.NewUser(asUserEmail, asUserPass).SignIn(context.Background(), af.iss, []string{"project:rows.read"}, asResource)
	if err != nil {
		t.Fatal(err)
	}
	if c := af.verify(t, g.AccessToken); c["scope"] != "project:rows.read" || c["client_id"] != g.ClientID || g.RefreshToken == "" || g.ExpiresIn != 3600 {
		t.Fatalf("grant %+v, claims %v", g, c)
	}
	if _, err := oauthserver.NewUser(asUserEmail, "nope").SignIn(context.Background(), af.iss, []string{"project:rows.read"}, asResource); err == nil {
		t.Fatal("a wrong password signed in")
	}
}

// TestOAuthForgetsWhatExpired: a long-running stand-in does not keep expired sign-ins, codes and refresh
// tokens.
func TestOAuthForgetsWhatExpired(t *testing.T) {
	af := newASFixture(t)
	client := af.register(t)
	user := oauthserver.NewUser(asUserEmail, asUserPass)
	p := newPKCE()
	af.exchange(t, client, af.code(t, user, client, p, []string{"project:rows.read"}, oauthserver.Consent{}), p)
	af.code(t, user, client, newPKCE(), []string{"project:rows.read"}, oauthserver.Consent{}) // a code never exchanged
	count := func() (int, int, int) {
		return af.s.OAuth().Outstanding()
	}
	if c, r, s := count(); c != 2 || r != 1 || s != 1 {
		t.Fatalf("before: %d codes, %d refresh tokens, %d sessions", c, r, s)
	}
	af.clock.Advance(31 * 24 * time.Hour)
	// The next authorization request prunes.
	resp, err := http.Get(af.authorizeURL(client, newPKCE(), []string{"project:rows.read"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if c, r, s := count(); c != 0 || r != 0 || s != 0 {
		t.Fatalf("after: %d codes, %d refresh tokens, %d sessions", c, r, s)
	}
}
