package localappwrite

import (
	"net/http"
	"strings"
	"time"

	"appwrite-agent/shared/devkit/localappwrite/oauthserver"
)

// The stand-in is the host of its OAuth authorization servers (package oauthserver, mounted in routes.go):
// the Console's at {endpoint}/oauth2/console (Server.Issuer) always exists and its users are those of a
// seeded project "console", as Cloud's Console accounts; another project's exists when the project does.

// OAuth returns the stand-in's authorization server.
func (s *Server) OAuth() *oauthserver.Server { return s.as }

// OAuthMetadata is the RFC 8414 metadata of project's authorization server (nil when there is no such
// project).
func (s *Server) OAuthMetadata(project string) map[string]any { return s.as.Metadata(project) }

// oauthHost is the Server as oauthserver.Host.
type oauthHost struct{ s *Server }

func (h oauthHost) Now() time.Time { return h.s.now() }

// Issuer is Server.Issuer for the Console, else {endpoint}/oauth2/{project}; ok is false when the project
// does not exist.
func (h oauthHost) Issuer(project string) (string, bool) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if project == "console" {
		return s.issuerLocked(), true
	}
	if s.projects[project] == nil {
		return "", false
	}
	return s.endpointLocked() + "/oauth2/" + project, true
}

// SignIn checks the login form as Appwrite's email sessions do (passwordUserLocked): Appwrite's message on
// a refusal.
func (h oauthHost) SignIn(project, email, password string) (string, string) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.projects[project]
	if pr == nil {
		return "", newErr(ErrUserInvalidCredentials).Message
	}
	u, err := passwordUserLocked(pr, strings.TrimSpace(email), password)
	if err != nil {
		return "", err.Message
	}
	return u.id, ""
}

func (h oauthHost) Account(project, userID string) string {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if pr := s.projects[project]; pr != nil && pr.users[userID] != nil {
		return pr.users[userID].email
	}
	return ""
}

func (h oauthHost) ProjectNotFound(w http.ResponseWriter) {
	h.s.writeError(w, newErr(ErrProjectNotFound))
}

// serveOAuthJWKS answers a project's authorization server's .well-known/jwks.json: the stand-in's keys, which
// its API verifies the tokens with.
func (s *Server) serveOAuthJWKS(w http.ResponseWriter, r *http.Request) {
	if _, ok := (oauthHost{s}).Issuer(r.PathValue(oauthserver.ProjectPathValue)); !ok {
		s.writeError(w, newErr(ErrProjectNotFound))
		return
	}
	s.serveJWKS(w, r)
}
