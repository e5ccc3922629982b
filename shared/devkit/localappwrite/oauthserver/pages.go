package oauthserver

import (
	htmltemplate "html/template"
	"net/http"
)

// The authorization server's pages: a plain login form (the project's users, email and password), the
// consent naming the application, the account and every scope asked for, with a box per scope to narrow it,
// a "Read-only" choice and "Deny", and an error page for what cannot be sent back to the application.

var asPages = htmltemplate.Must(htmltemplate.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem}
label{display:block;margin:.4rem 0}fieldset{border:1px solid #ccc;margin:1rem 0}.error{color:#b00}
button{margin:.5rem .5rem 0 0;padding:.4rem 1rem}</style></head><body>
<h1>{{.Title}}</h1>
{{if .Error}}<p class="error" id="error" role="alert">{{.Error}}</p>{{end}}
{{if eq .Kind "login"}}
<p>Sign in to Appwrite to continue to <strong>{{.Client}}</strong>.</p>
<form method="post" id="login">
<input type="hidden" name="action" value="login"><input type="hidden" name="request" value="{{.Request}}">
<label>Email <input type="email" name="email" id="email" autocomplete="username" required></label>
<label>Password <input type="password" name="password" id="password" autocomplete="current-password" required></label>
<button type="submit" id="sign-in">Sign in</button>
</form>
{{else if eq .Kind "consent"}}
<p><strong>{{.Client}}</strong> wants to access your Appwrite account <strong id="account">{{.Account}}</strong>.</p>
{{range .Resources}}<p>For: <code class="resource">{{.}}</code></p>{{end}}
<form method="post" id="consent">
<input type="hidden" name="request" value="{{.Request}}">
<fieldset><legend>Permissions (untick what you do not want to allow)</legend>
{{range .Scopes}}<label><input type="checkbox" name="scope" value="{{.}}" checked> {{.}}</label>
{{end}}</fieldset>
<button type="submit" name="action" value="approve" id="authorize">Authorize</button>
<button type="submit" name="action" value="read-only" id="read-only">Read-only</button>
<button type="submit" name="action" value="deny" id="deny">Deny</button>
</form>
<p>You are redirected to <code>{{.Redirect}}</code>.</p>
{{else}}
<p>Error: <code id="error-code">{{.Code}}</code></p>
{{end}}
</body></html>`))

type asPage struct {
	Kind, Title, Error, Code, Client, Account, Request, Redirect string
	Scopes, Resources                                            []string
}

func (a *Server) renderPage(w http.ResponseWriter, status int, p asPage) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	// No framing (clickjacking of the consent) and no scripts.
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = asPages.Execute(w, p)
}

func (a *Server) renderLogin(w http.ResponseWriter, status int, c *oauthClient, req *authRequest, errMsg string) {
	a.renderPage(w, status, asPage{Kind: "login", Title: "Sign in", Error: errMsg, Client: c.name, Request: req.id})
}

func (a *Server) renderConsent(w http.ResponseWriter, status int, c *oauthClient, req *authRequest, errMsg string) {
	account := ""
	a.mu.Lock()
	sess := a.sessions[req.session]
	a.mu.Unlock()
	if sess != nil {
		account = a.host.Account(sess.project, sess.userID)
	}
	a.renderPage(w, status, asPage{Kind: "consent", Title: "Authorize " + c.name, Error: errMsg, Client: c.name,
		Account: account, Request: req.id, Redirect: req.redirectURI, Scopes: req.scopes, Resources: req.resources})
}

// asErrorPage shows an error that must not be redirected to the application (RFC 6749 section 4.1.2.1).
func (a *Server) asErrorPage(w http.ResponseWriter, status int, code, msg string) {
	a.renderPage(w, status, asPage{Kind: "error", Title: "Authorization failed", Error: msg, Code: code})
}
