package oauthserver

import (
	"context"
	"net/url"
)

// What the package's external tests reach inside.

// Do is User.do: one request with the user's cookies, redirects not followed.
func (u *User) Do(ctx context.Context, method, target string, form url.Values) (int, string, *url.URL, error) {
	return u.do(ctx, method, target, form)
}

// RequestField is the sign-in request id a login or consent page carries.
func RequestField(page string) string { return field(requestField, page) }

// Outstanding counts the authorization codes, refresh tokens and signed-in browsers the server keeps.
func (a *Server) Outstanding() (codes, refreshTokens, sessions int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.codes), len(a.refresh), len(a.sessions)
}
