package localappwrite

// The Account API a browser page uses through the Appwrite Web SDK: email/password sessions, the current
// account, JWTs, sign-out; and the JWT authentication of the project API (X-Appwrite-JWT). Read from
// appwrite/appwrite 1.9.6 (docs/local-appwrite.md, "Account", has the file:line of each rule).

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// sessionDuration is TOKEN_EXPIRATION_LOGIN_LONG (app/init/constants.php:124): a session lasts a year.
const sessionDuration = 365 * 24 * time.Hour

// jwtDefaultDuration and jwtMaxDuration are POST /v1/account/jwts' duration param: default 900 s, Range(0, 3600)
// (app/controllers/api/account.php:3112).
const (
	jwtDefaultDuration = 900
	jwtMaxDuration     = 3600
)

// createAccount is POST /v1/account (account.php:236-429), a sign-up: userId (CustomId, "unique()" makes
// one), email (Email, stored lower-cased), password (PasswordStrength with the default policy: "Password
// must be between 8 and 256 characters long."), name (Text 128, optional), checked in that order; a user
// with the same id or email (any case) is 409 user_already_exists (the Duplicate of the users collection's
// unique indexes). No session is made and no event is sent (the route has audits only); 201 Account model.
// The scope is sessions.write, which guests hold; unlike the session routes it is allowed with a session.
func (s *Server) createAccount(c *call) (int, any, *APIError) {
	id, err := c.customID("userId")
	if err != nil {
		return 0, nil, err
	}
	spec := UserSpec{ID: id}
	if spec.Email, err = c.email("email", true); err != nil {
		return 0, nil, err
	}
	if spec.Password, err = c.str("password", true, "", 0); err != nil {
		return 0, nil, err
	}
	if err := checkPasswordLength(spec.Password); err != nil {
		return 0, nil, err
	}
	if spec.Name, err = c.str("name", false, "", 128); err != nil {
		return 0, nil, err
	}
	u, err := s.addUserLocked(c.pr, spec)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, accountModel(u), nil
}

// newSessionLocked stores a new session of u and returns it with the value a browser keeps in its
// a_session_<project> cookie: base64 of {"id": user id, "secret": secret} (utopia-php/auth Store::encode).
func (s *Server) newSessionLocked(pr *project, u *user) (rtSession, string) {
	secret := hex.EncodeToString(randomBytes(32))
	if s.rt.sessions == nil {
		s.rt.sessions = map[string]rtSession{}
	}
	now := s.now()
	sess := rtSession{id: s.uniqueID(), projectID: pr.id, userID: u.id, created: now, expire: now.Add(sessionDuration)}
	s.rt.sessions[hashSecret(secret)] = sess
	raw, _ := json.Marshal(map[string]string{"id": u.id, "secret": secret})
	return sess, base64.StdEncoding.EncodeToString(raw)
}

// sessionModel renders Response/Model/Session.php. secret is only filled for a caller with an API key
// (the rule's description: "Only included if the request was made with an API key").
func sessionModel(sess rtSession, u *user, current bool, secret string) obj {
	return obj{
		{"$id", sess.id}, {"$createdAt", formatTime(sess.created)}, {"$updatedAt", formatTime(sess.created)},
		{"userId", sess.userID}, {"expire", formatTime(sess.expire)}, {"provider", "email"}, {"providerUid", u.email},
		{"providerAccessToken", ""}, {"providerAccessTokenExpiry", ""}, {"providerRefreshToken", ""},
		{"ip", ""}, {"osCode", ""}, {"osName", ""}, {"osVersion", ""}, {"clientType", ""}, {"clientCode", ""},
		{"clientName", ""}, {"clientVersion", ""}, {"clientEngine", ""}, {"clientEngineVersion", ""},
		{"deviceName", ""}, {"deviceBrand", ""}, {"deviceModel", ""}, {"countryCode", "--"},
		{"countryName", "Unknown"}, {"current", current}, {"factors", []string{"password"}}, {"secret", secret},
		{"mfaUpdatedAt", ""},
	}
}

// createEmailSession is POST /v1/account/sessions/email (alias /v1/account/sessions): email (Email),
// password (Password: 8 to 256 characters); refused while a session is active (the "session" group hook,
// app/controllers/shared/api.php:728-740); a wrong email or password is 401 user_invalid_credentials, a
// blocked user 403 user_blocked. It sets the a_session_<project> cookie and its _legacy twin (HttpOnly,
// path /, a year) and, as the stand-in's origins never share a registrable domain with it (127.0.0.1,
// localhost: domainVerification is false, app/init/resources/request.php:229-236), the X-Fallback-Cookies
// header the Web SDK keeps in localStorage and sends back.
func (s *Server) createEmailSession(c *call) (int, any, *APIError) {
	if c.who.userID != "" {
		return 0, nil, newErr(ErrUserSessionAlreadyExists)
	}
	email, err := c.email("email", true)
	if err != nil {
		return 0, nil, err
	}
	password, err := c.str("password", true, "", 0)
	if err != nil {
		return 0, nil, err
	}
	if err := checkPasswordLength(password); err != nil {
		return 0, nil, err
	}
	u, err := passwordUserLocked(c.pr, email, password)
	if err != nil {
		return 0, nil, err
	}
	sess, value := s.newSessionLocked(c.pr, u)
	key := "a_session_" + c.pr.id
	fallback, _ := json.Marshal(map[string]string{key: value})
	c.w.Header().Set("X-Fallback-Cookies", string(fallback))
	for _, name := range []string{key + "_legacy", key} {
		http.SetCookie(c.w, &http.Cookie{Name: name, Value: value, Path: "/", Expires: sess.expire, HttpOnly: true, SameSite: http.SameSiteNoneMode})
	}
	secret := ""
	if c.who.kind == "key" || c.who.kind == "dynamic" {
		secret = value
	}
	m := sessionModel(sess, u, true, secret)
	c.emit("users.[userId].sessions.[sessionId].create", m, param{"userId", u.id}, param{"sessionId", sess.id})
	return http.StatusCreated, m, nil
}

// getAccount is GET /v1/account: the caller's account (Response/Model/Account: the user without password
// and hash). A guest lacks the account scope (401 general_unauthorized_scope).
func (s *Server) getAccount(c *call) (int, any, *APIError) {
	u := c.pr.users[c.who.userID]
	if u == nil {
		return 0, nil, newErr(ErrUserNotFound)
	}
	return http.StatusOK, accountModel(u), nil
}

// createJWT is POST /v1/account/jwts (alias /v1/account/jwt): an HS256 JWT {userId, sessionId, exp} signed
// with the server's key, valid duration seconds (default 900, at most 3600). Only a session can make one:
// the session comes from the request's cookie or header (User::sessionVerify), so a JWT caller gets 404
// user_session_not_found.
func (s *Server) createJWT(c *call) (int, any, *APIError) {
	duration, err := c.integer("duration", jwtDefaultDuration)
	if err != nil {
		return 0, nil, err
	}
	if duration < 0 || duration > jwtMaxDuration {
		return 0, nil, invalidParam("duration", "Value must be a valid range between 0 and 3,600")
	}
	if c.who.kind != "user" || c.who.sessionID == "" {
		return 0, nil, newErr(ErrUserSessionNotFound)
	}
	if duration == 0 {
		// ahc/jwt refuses a maxAge below 1 (ValidatesJWT::validateConfig): an uncaught exception.
		return 0, nil, newErr(ErrGeneralUnknown)
	}
	tok, jerr := s.signUserJWT(c.who.userID, c.who.sessionID, time.Duration(duration)*time.Second)
	if jerr != nil {
		return 0, nil, newErr(ErrGeneralServerError, "%s", jerr.Error())
	}
	return http.StatusCreated, obj{{"jwt", tok}}, nil
}

// signUserJWT mints the JWT of a user's session, expiring after ttl.
func (s *Server) signUserJWT(userID, sessionID string, ttl time.Duration) (string, error) {
	claims := jwt.MapClaims{"userId": userID, "sessionId": sessionID, "exp": s.now().Add(ttl).Unix()}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(s.opts.KeySecret)
}

// UserJWT mints a JWT for an existing session value (what POST /v1/account/jwts returns for it), valid for
// ttl; tests use it to make expired or nearly expired JWTs with the stand-in's clock.
func (s *Server) UserJWT(projectID, sessionValue string, ttl time.Duration) (string, error) {
	s.mu.Lock()
	pr := s.projects[projectID]
	var sess rtSession
	var u *user
	if pr != nil {
		sess, u = s.sessionLocked(pr, sessionValue)
	}
	s.mu.Unlock()
	if u == nil {
		return "", errors.New("localappwrite: no such session in project " + projectID)
	}
	return s.signUserJWT(u.id, sess.id, ttl)
}

// deleteSession is DELETE /v1/account/sessions/{sessionId}; "current" is the session of the request's
// cookie or header (a JWT caller has none: 404 user_session_not_found). Deleting the current session also
// clears the cookies and the X-Fallback-Cookies (account.php:699-786). 204.
func (s *Server) deleteSession(c *call) (int, any, *APIError) {
	id := c.r.PathValue("sessionId")
	if id == "current" {
		if c.who.kind != "user" {
			return 0, nil, newErr(ErrUserSessionNotFound)
		}
		id = c.who.sessionID
	}
	for h, sess := range s.rt.sessions {
		if sess.id != id || sess.userID != c.who.userID || sess.projectID != c.pr.id {
			continue
		}
		delete(s.rt.sessions, h)
		if c.who.kind == "user" && c.who.sessionID == id {
			key := "a_session_" + c.pr.id
			c.w.Header().Set("X-Fallback-Cookies", "[]")
			for _, name := range []string{key + "_legacy", key} {
				http.SetCookie(c.w, &http.Cookie{Name: name, Value: "", Path: "/", Expires: s.now().Add(-time.Hour), HttpOnly: true, SameSite: http.SameSiteNoneMode})
			}
		}
		u := c.pr.users[sess.userID]
		if u != nil {
			m := sessionModel(sess, u, c.who.sessionID == id, "")
			c.emit("users.[userId].sessions.[sessionId].delete", m, param{"userId", u.id}, param{"sessionId", sess.id})
		}
		return http.StatusNoContent, nil, nil
	}
	return 0, nil, newErr(ErrUserSessionNotFound)
}

// jwtPrincipalLocked resolves X-Appwrite-JWT (app/init/resources/request.php:435-461): with a session as
// well, 403 user_jwt_and_cookie_set; a token that does not verify (signature, expiry: ahc/jwt's "Invalid
// token: Expired", ValidatesJWT::validateTimestamps) is 401 user_jwt_invalid "Failed to verify JWT. …"; a
// token whose user is not in the project, or whose session is gone, leaves the caller a guest.
func (s *Server) jwtPrincipalLocked(r *http.Request, pr *project, session *principal, guest *principal) (*principal, *APIError) {
	token := r.Header.Get("X-Appwrite-JWT")
	if session != nil {
		return nil, newErr(ErrUserJWTAndCookieSet)
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return s.opts.KeySecret, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithTimeFunc(s.now))
	if err != nil {
		reason := "Invalid token: Signature failed"
		switch {
		case errors.Is(err, jwt.ErrTokenExpired):
			reason = "Invalid token: Expired"
		case errors.Is(err, jwt.ErrTokenMalformed):
			reason = "Invalid token: Incomplete segments"
		}
		return nil, newErr(ErrUserJWTInvalid, "Failed to verify JWT. %s", reason)
	}
	uid, _ := claims["userId"].(string)
	sid, _ := claims["sessionId"].(string)
	u := pr.users[uid]
	if u == nil {
		return guest, nil
	}
	if sid != "" {
		found := false
		for _, sess := range s.rt.sessions {
			if sess.id == sid && sess.userID == u.id && sess.projectID == pr.id {
				found = true
				break
			}
		}
		if !found {
			return guest, nil
		}
	}
	return &principal{kind: "jwt", scopes: scopeSet(userScopes), userID: u.id, label: u.email, role: "users"}, nil
}

// sessionValueFromRequest finds the session value of a request in Appwrite's order
// (app/init/resources/request.php:381-405): the a_session_<project> cookie, its _legacy twin, the
// X-Appwrite-Session header, then the a_session_<project> entry of the X-Fallback-Cookies JSON header.
func sessionValueFromRequest(r *http.Request, projectID string) string {
	key := "a_session_" + projectID
	for _, name := range []string{key, key + "_legacy"} {
		if ck, err := r.Cookie(name); err == nil && ck.Value != "" {
			return ck.Value
		}
	}
	if v := r.Header.Get("X-Appwrite-Session"); v != "" {
		return v
	}
	if raw := r.Header.Get("X-Fallback-Cookies"); raw != "" {
		var m map[string]any
		if json.Unmarshal([]byte(raw), &m) == nil {
			if v, ok := m[key].(string); ok {
				return v
			}
		}
	}
	return ""
}

// corsHeaders are Appwrite's CORS answer (src/Appwrite/Network/Cors.php, app/config/cors.php, credentials on,
// request.php:325-335). The stand-in has no platforms: every origin is accepted, as if it were one.
func corsHeaders(h http.Header, origin string) {
	if origin == "" {
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE")
	h.Set("Access-Control-Allow-Headers", strings.Join(corsAllowedHeaders, ", "))
	h.Set("Access-Control-Expose-Headers", "X-Appwrite-Session, X-Fallback-Cookies")
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Set("Access-Control-Max-Age", "86400")
	h.Add("Vary", "Origin")
}

// corsAllowedHeaders is app/config/cors.php's allowedHeaders (1.9.6).
var corsAllowedHeaders = []string{
	"Accept", "Origin", "Cookie", "Set-Cookie", "Content-Type", "Content-Range",
	"X-Appwrite-Project", "X-Appwrite-Key", "X-Appwrite-Dev-Key", "X-Appwrite-Locale", "X-Appwrite-Mode",
	"X-Appwrite-JWT", "X-Appwrite-Organization", "X-Appwrite-Response-Format", "X-Appwrite-Timeout",
	"X-Appwrite-ID", "X-Appwrite-Timestamp", "X-Appwrite-Session", "X-Appwrite-Platform",
	"X-Appwrite-Impersonate-User-Id", "X-Appwrite-Impersonate-User-Email", "X-Appwrite-Impersonate-User-Phone",
	"X-SDK-Version", "X-SDK-Name", "X-SDK-Language", "X-SDK-Platform", "X-SDK-GraphQL", "X-SDK-Profile",
	"Range", "Cache-Control", "Expires", "Pragma",
	"X-Fallback-Cookies", "X-Requested-With", "X-Forwarded-For", "X-Forwarded-User-Agent",
}
