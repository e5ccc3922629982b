package oauthserver_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"appwrite-agent/shared/devkit/browser"

	"github.com/chromedp/chromedp"
)

// TestOAuthAuthorizeInChromium drives the authorize step in a real headless Chromium: the login form, the
// consent (one scope unticked by a click), and the redirect that brings the code to the client's callback,
// which is then exchanged for a token that lacks the unticked scope.
func TestOAuthAuthorizeInChromium(t *testing.T) {
	af := newASFixture(t)
	got := make(chan url.Values, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/callback" {
			select {
			case got <- r.URL.Query():
			default:
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>client</title><p id="done">signed in</p>`))
	}))
	defer cb.Close()
	redirect := cb.URL + "/callback"
	status, reg := registerJSON(t, af.iss+"/register", map[string]any{"client_name": "Browser client", "redirect_uris": []string{redirect},
		"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code"}})
	client, _ := reg["client_id"].(string)
	if status != http.StatusCreated || client == "" {
		t.Fatalf("register: %d %v", status, reg)
	}
	p := newPKCE()
	authURL := af.iss + "/authorize?" + url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect},
		"scope": {"openid project:rows.read project:users.read"}, "state": {"browser-state"}, "code_challenge": {p.challenge},
		"code_challenge_method": {"S256"}, "resource": {asResource}}.Encode()

	ctx := browser.New(t, 60*time.Second)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(authURL),
		chromedp.WaitVisible(chromedp.ID("login")),
		browser.Type(chromedp.ID("email"), asUserEmail),
		browser.Type(chromedp.ID("password"), asUserPass),
		chromedp.Click(chromedp.ID("sign-in")),
		chromedp.WaitVisible(chromedp.ID("consent")),
	); err != nil {
		t.Fatalf("login: %v", err)
	}
	account, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("account")))
	if err != nil || account != asUserEmail {
		t.Fatalf("consent names %q (%v), want %s", account, err, asUserEmail)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`input[name="scope"][value="project:users.read"]`)),
		chromedp.Click(chromedp.ID("authorize")),
		chromedp.WaitVisible(chromedp.ID("done")),
	); err != nil {
		t.Fatalf("consent: %v", err)
	}
	var q url.Values
	select {
	case q = <-got:
	case <-ctx.Done():
		t.Fatal("the callback never received the redirect")
	}
	if q.Get("state") != "browser-state" || q.Get("iss") != af.iss || q.Get("code") == "" {
		t.Fatalf("callback query %v", q)
	}
	status, tok := postForm(t, af.iss+"/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {client},
		"code": {q.Get("code")}, "redirect_uri": {redirect}, "code_verifier": {p.verifier}})
	if status != http.StatusOK {
		t.Fatalf("exchange: %d %v", status, tok)
	}
	if sc := af.verify(t, tok["access_token"].(string))["scope"]; sc != "openid project:rows.read" {
		t.Fatalf("scope %q, want the unticked one left out", sc)
	}
}
