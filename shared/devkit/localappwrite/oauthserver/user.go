package oauthserver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// User plays a person at the authorization server's pages over plain HTTP, for tests that need a
// sign-in but no browser (the Chromium test drives the same pages in a real browser): it opens the
// authorization URL, fills the login form when it is shown, answers the consent and returns where the
// server redirects. It keeps its cookies, so a second authorization skips the login like a browser does.
type User struct {
	// Email and Password are the account's.
	Email, Password string
	client          *http.Client
}

// Consent is how a User answers the consent page.
type Consent struct {
	// Untick lists scopes to untick before approving.
	Untick []string
	// ReadOnly presses "Read-only" instead of "Authorize".
	ReadOnly bool
	// Deny presses "Deny".
	Deny bool
}

// AuthorizeResult is what a User saw.
type AuthorizeResult struct {
	// Redirect is where the server sent the browser (the client's redirect_uri with code or error).
	Redirect *url.URL
	// LoggedIn is true when the login form was shown and filled.
	LoggedIn bool
	// Offered are the scopes the consent page listed.
	Offered []string
	// Account is the account the consent page named.
	Account string
}

// NewUser returns a user with an empty cookie jar.
func NewUser(email, password string) *User {
	jar, _ := cookiejar.New(nil)
	return &User{Email: email, Password: password, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

var (
	requestField = regexp.MustCompile(`name="request" value="([^"]*)"`)
	scopeField   = regexp.MustCompile(`name="scope" value="([^"]*)"`)
	accountField = regexp.MustCompile(`id="account">([^<]*)<`)
	errorField   = regexp.MustCompile(`id="error" role="alert">([^<]*)<`)
)

// Authorize opens authorizeURL and answers as c says.
func (u *User) Authorize(ctx context.Context, authorizeURL string, c Consent) (*AuthorizeResult, error) {
	res := &AuthorizeResult{}
	status, page, loc, err := u.do(ctx, http.MethodGet, authorizeURL, nil)
	if err != nil {
		return nil, err
	}
	if loc != nil { // an error the server sends back to the client at once
		res.Redirect = loc
		return res, nil
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("authorize page: HTTP %d: %s", status, pageError(page))
	}
	if strings.Contains(page, `id="login"`) {
		res.LoggedIn = true
		status, page, _, err = u.do(ctx, http.MethodPost, authorizeURL, url.Values{"action": {"login"},
			"request": {field(requestField, page)}, "email": {u.Email}, "password": {u.Password}})
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("login: HTTP %d: %s", status, pageError(page))
		}
	}
	if !strings.Contains(page, `id="consent"`) {
		return nil, fmt.Errorf("no consent page: %s", pageError(page))
	}
	res.Account = html.UnescapeString(field(accountField, page))
	form := url.Values{"request": {field(requestField, page)}, "action": {"approve"}}
	for _, m := range scopeField.FindAllStringSubmatch(page, -1) {
		sc := html.UnescapeString(m[1])
		res.Offered = append(res.Offered, sc)
		if !slices.Contains(c.Untick, sc) {
			form.Add("scope", sc)
		}
	}
	switch {
	case c.Deny:
		form.Set("action", "deny")
	case c.ReadOnly:
		form.Set("action", "read-only")
	}
	status, page, loc, err = u.do(ctx, http.MethodPost, authorizeURL, form)
	if err != nil {
		return nil, err
	}
	if loc == nil {
		return nil, fmt.Errorf("consent: HTTP %d without a redirect: %s", status, pageError(page))
	}
	res.Redirect = loc
	return res, nil
}

func (u *User) do(ctx context.Context, method, target string, form url.Values) (int, string, *url.URL, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return 0, "", nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := u.client.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, "", nil, err
	}
	if resp.StatusCode == http.StatusSeeOther || resp.StatusCode == http.StatusFound {
		loc, err := resp.Location()
		if err != nil {
			return 0, "", nil, errors.New("redirect without a Location")
		}
		return resp.StatusCode, string(raw), loc, nil
	}
	return resp.StatusCode, string(raw), nil, nil
}

func field(re *regexp.Regexp, page string) string {
	if m := re.FindStringSubmatch(page); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

func pageError(page string) string {
	if e := field(errorField, page); e != "" {
		return e
	}
	if len(page) > 300 {
		page = page[:300]
	}
	return page
}

// Grant is what User.SignIn obtained: a public client's registration and its tokens.
type Grant struct {
	// ClientID is the registered client.
	ClientID string
	// AccessToken, RefreshToken, Scope and ExpiresIn are the token endpoint's answer.
	AccessToken, RefreshToken, Scope string
	ExpiresIn                        int
}

// SignIn does what an MCP client does with this user at the authorization server whose issuer is given:
// registers a public client (authorization_code and refresh_token grants, a loopback redirect URI that is
// never called), has the user authorize scopes for resource (consent untouched), and exchanges the code with
// PKCE S256.
func (u *User) SignIn(ctx context.Context, issuer string, scopes []string, resource string) (*Grant, error) {
	const redirect = "http://127.0.0.1:9/callback"
	var reg struct {
		ClientID string `json:"client_id"`
	}
	regBody := `{"client_name":"Test client","redirect_uris":["` + redirect + `"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"]}`
	if err := u.postJSON(ctx, issuer+"/register", "application/json", regBody, http.StatusCreated, &reg); err != nil {
		return nil, fmt.Errorf("register: %w", err)
	}
	verifier := base64.RawURLEncoding.EncodeToString(randomBytes(32))
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {redirect},
		"scope": {strings.Join(scopes, " ")}, "state": {"s"}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"}, "resource": {resource}}
	res, err := u.Authorize(ctx, issuer+"/authorize?"+q.Encode(), Consent{})
	if err != nil {
		return nil, err
	}
	code := res.Redirect.Query().Get("code")
	if code == "" {
		return nil, fmt.Errorf("authorize redirected without a code: %s", res.Redirect)
	}
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		Scope        string `json:"scope"`
		ExpiresIn    int    `json:"expires_in"`
	}
	form := url.Values{"grant_type": {"authorization_code"}, "client_id": {reg.ClientID}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {resource}}
	if err := u.postJSON(ctx, issuer+"/token", "application/x-www-form-urlencoded", form.Encode(), http.StatusOK, &tok); err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	return &Grant{ClientID: reg.ClientID, AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken,
		Scope: tok.Scope, ExpiresIn: tok.ExpiresIn}, nil
}

func (u *User) postJSON(ctx context.Context, target, contentType, body string, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := u.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}
