package localappwrite

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"appwrite-agent/shared/devkit/testclock"
)

// accountCall sends a JSON request to the stand-in as a browser's Web SDK would and returns status, the
// decoded body and the response headers.
func accountCall(t *testing.T, f *fixture, method, path string, body any, hdr map[string]string) (int, map[string]any, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, f.ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Appwrite-Project", testProject)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: body not JSON: %q", method, path, raw)
		}
	}
	return res.StatusCode, out, res.Header
}

func wantType(t *testing.T, what string, status int, body map[string]any, wantStatus int, wantType string) {
	t.Helper()
	if status != wantStatus || body["type"] != wantType {
		t.Fatalf("%s: %d %v, want %d %s", what, status, body, wantStatus, wantType)
	}
}

func TestAccountSignInJWTAndSignOut(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC))
	f := newFixture(t, Options{Clock: clock.Now})
	if err := f.s.SeedUser(testProject, UserSpec{ID: "alice", Email: "Alice@Example.com", Password: "correct horse"}); err != nil {
		t.Fatal(err)
	}
	login := map[string]any{"email": "alice@example.com", "password": "correct horse"}

	st, body, _ := accountCall(t, f, "POST", "/v1/account/sessions/email", map[string]any{"email": "alice@example.com", "password": "wrong password"}, nil)
	wantType(t, "wrong password", st, body, 401, ErrUserInvalidCredentials)
	st, body, _ = accountCall(t, f, "POST", "/v1/account/sessions/email", map[string]any{"email": "nobody@example.com", "password": "correct horse"}, nil)
	wantType(t, "unknown email", st, body, 401, ErrUserInvalidCredentials)
	st, body, _ = accountCall(t, f, "POST", "/v1/account/sessions/email", map[string]any{"email": "alice@example.com", "password": "short"}, nil)
	wantType(t, "short password", st, body, 400, ErrGeneralArgumentInvalid)

	st, body, hdr := accountCall(t, f, "POST", "/v1/account/sessions/email", login, nil)
	if st != 201 || body["userId"] != "alice" || body["current"] != true || body["secret"] != "" || body["provider"] != "email" {
		t.Fatalf("session: %d %v", st, body)
	}
	var fallback map[string]string
	if err := json.Unmarshal([]byte(hdr.Get("X-Fallback-Cookies")), &fallback); err != nil || fallback["a_session_"+testProject] == "" {
		t.Fatalf("X-Fallback-Cookies %q", hdr.Get("X-Fallback-Cookies"))
	}
	var cookies []string
	for _, c := range (&http.Response{Header: hdr}).Cookies() {
		if !c.HttpOnly || c.Path != "/" || c.Value != fallback["a_session_"+testProject] {
			t.Fatalf("cookie %+v", c)
		}
		cookies = append(cookies, c.Name)
	}
	if strings.Join(cookies, ",") != "a_session_"+testProject+"_legacy,a_session_"+testProject {
		t.Fatalf("cookies %v", cookies)
	}
	session := map[string]string{"X-Fallback-Cookies": hdr.Get("X-Fallback-Cookies")}

	// The Web SDK sends the fallback cookie; a second sign-in with it is refused.
	st, body, _ = accountCall(t, f, "GET", "/v1/account", nil, session)
	if st != 200 || body["$id"] != "alice" || body["email"] != "alice@example.com" || body["password"] != nil {
		t.Fatalf("account: %d %v", st, body)
	}
	st, body, _ = accountCall(t, f, "POST", "/v1/account/sessions/email", login, session)
	wantType(t, "second session", st, body, 401, ErrUserSessionAlreadyExists)

	// A guest has no account scope; an API key neither (it is not a user).
	st, body, _ = accountCall(t, f, "GET", "/v1/account", nil, nil)
	wantType(t, "guest account", st, body, 401, ErrGeneralUnauthorizedScope)
	if body["message"] != `User (role: guests) missing scopes (["account"])` {
		t.Fatalf("guest message %q", body["message"])
	}
	st, body, _ = accountCall(t, f, "GET", "/v1/account", nil, map[string]string{"X-Appwrite-Key": f.key})
	wantType(t, "key account", st, body, 401, ErrGeneralUnauthorizedScope)

	st, body, _ = accountCall(t, f, "POST", "/v1/account/jwts", map[string]any{}, session)
	jwt, _ := body["jwt"].(string)
	if st != 201 || strings.Count(jwt, ".") != 2 {
		t.Fatalf("jwt: %d %v", st, body)
	}
	withJWT := map[string]string{"X-Appwrite-JWT": jwt}
	st, body, _ = accountCall(t, f, "GET", "/v1/account", nil, withJWT)
	if st != 200 || body["$id"] != "alice" {
		t.Fatalf("account by JWT: %d %v", st, body)
	}
	// A JWT cannot make another JWT, and cannot travel with a session.
	st, body, _ = accountCall(t, f, "POST", "/v1/account/jwt", map[string]any{}, withJWT)
	wantType(t, "jwt from jwt", st, body, 404, ErrUserSessionNotFound)
	st, body, _ = accountCall(t, f, "GET", "/v1/account", nil, map[string]string{"X-Appwrite-JWT": jwt, "X-Fallback-Cookies": session["X-Fallback-Cookies"]})
	wantType(t, "jwt and session", st, body, 403, ErrUserJWTAndCookieSet)
	// Tampered.
	st, body, _ = accountCall(t, f, "GET", "/v1/account", nil, map[string]string{"X-Appwrite-JWT": jwt[:len(jwt)-2] + "xx"})
	wantType(t, "tampered jwt", st, body, 401, ErrUserJWTInvalid)
	st, body, _ = accountCall(t, f, "POST", "/v1/account/jwts", map[string]any{"duration": 3601}, session)
	wantType(t, "duration", st, body, 400, ErrGeneralArgumentInvalid)

	// Fifteen minutes later the JWT has expired (exp = now + 900 s; ahc/jwt refuses at exp itself).
	clock.Advance(899 * time.Second)
	if st, _, _ = accountCall(t, f, "GET", "/v1/account", nil, withJWT); st != 200 {
		t.Fatalf("JWT refused before its expiry: %d", st)
	}
	clock.Advance(time.Second)
	st, body, _ = accountCall(t, f, "GET", "/v1/account", nil, withJWT)
	wantType(t, "expired jwt", st, body, 401, ErrUserJWTInvalid)
	if body["message"] != "Failed to verify JWT. Invalid token: Expired" {
		t.Fatalf("expired message %q", body["message"])
	}

	// Signing out ends the session: its fresh JWT now acts as a guest, and the cookies are cleared.
	_, body, _ = accountCall(t, f, "POST", "/v1/account/jwts", map[string]any{}, session)
	fresh := map[string]string{"X-Appwrite-JWT": body["jwt"].(string)}
	st, body, _ = accountCall(t, f, "DELETE", "/v1/account/sessions/current", nil, fresh)
	wantType(t, "sign-out with a JWT", st, body, 404, ErrUserSessionNotFound)
	st, _, hdr = accountCall(t, f, "DELETE", "/v1/account/sessions/current", nil, session)
	if st != 204 || hdr.Get("X-Fallback-Cookies") != "[]" {
		t.Fatalf("sign-out: %d %v", st, hdr)
	}
	st, body, _ = accountCall(t, f, "GET", "/v1/account", nil, fresh)
	wantType(t, "jwt of a deleted session", st, body, 401, ErrGeneralUnauthorizedScope)
	st, body, _ = accountCall(t, f, "GET", "/v1/account", nil, session)
	wantType(t, "deleted session", st, body, 401, ErrGeneralUnauthorizedScope)
}

// TestAccountSignUp is POST /v1/account as the Web SDK's account.create sends it: a guest creates an account
// (no session: it signs in next), and Appwrite's refusals with their status, type and message.
func TestAccountSignUp(t *testing.T) {
	f := newFixture(t, Options{})
	if err := f.s.SeedUser(testProject, UserSpec{ID: "alice", Email: "alice@example.com", Password: "correct horse"}); err != nil {
		t.Fatal(err)
	}
	refusals := []struct {
		what    string
		body    map[string]any
		status  int
		typ     string
		message string
	}{
		{"an email already registered, in another case", map[string]any{"userId": "bob", "email": "Alice@Example.com", "password": "battery staple"},
			409, ErrUserAlreadyExists, "A user with the same id, email, or phone already exists in this project."},
		{"an id already taken", map[string]any{"userId": "alice", "email": "bob@example.com", "password": "battery staple"},
			409, ErrUserAlreadyExists, "A user with the same id, email, or phone already exists in this project."},
		{"a password of 7 characters", map[string]any{"userId": "bob", "email": "bob@example.com", "password": "1234567"},
			400, ErrGeneralArgumentInvalid, "Invalid `password` param: Password must be between 8 and 256 characters long."},
		{"a password of 257 characters", map[string]any{"userId": "bob", "email": "bob@example.com", "password": strings.Repeat("p", 257)},
			400, ErrGeneralArgumentInvalid, "Invalid `password` param: Password must be between 8 and 256 characters long."},
		{"a malformed email (checked before the password)", map[string]any{"userId": "bob", "email": "bob", "password": "short"},
			400, ErrGeneralArgumentInvalid, "Invalid `email` param: Value must be a valid email address"},
		{"no password", map[string]any{"userId": "bob", "email": "bob@example.com"},
			400, ErrGeneralArgumentInvalid, `Param "password" is not optional.`},
		{"a name over 128 characters", map[string]any{"userId": "bob", "email": "bob@example.com", "password": "battery staple", "name": strings.Repeat("n", 129)},
			400, ErrGeneralArgumentInvalid, "Invalid `name` param: Value must be a valid string and no longer than 128 chars"},
	}
	for _, r := range refusals {
		st, body, _ := accountCall(t, f, "POST", "/v1/account", r.body, nil)
		if st != r.status || body["type"] != r.typ || body["message"] != r.message {
			t.Errorf("%s: %d %v %q, want %d %s %q", r.what, st, body["type"], body["message"], r.status, r.typ, r.message)
		}
	}

	st, body, hdr := accountCall(t, f, "POST", "/v1/account", map[string]any{"userId": "unique()", "email": "Bob@Example.com", "password": "battery staple", "name": "Bob"}, nil)
	id, _ := body["$id"].(string)
	if st != 201 || id == "" || id == "unique()" || body["email"] != "bob@example.com" || body["name"] != "Bob" || body["status"] != true {
		t.Fatalf("sign-up: %d %v", st, body)
	}
	if _, has := body["password"]; has || hdr.Get("X-Fallback-Cookies") != "" || len((&http.Response{Header: hdr}).Cookies()) != 0 {
		t.Fatalf("sign-up answered a password hash or a session: %v %v", body, hdr)
	}
	// The new account signs in with its password, as the Web SDK does next.
	st, body, _ = accountCall(t, f, "POST", "/v1/account/sessions/email", map[string]any{"email": "bob@example.com", "password": "battery staple"}, nil)
	if st != 201 || body["userId"] != id {
		t.Fatalf("signing in after sign-up: %d %v", st, body)
	}
	st, body, _ = accountCall(t, f, "POST", "/v1/account", map[string]any{"userId": "unique()", "email": "bob@example.com", "password": "battery staple"}, nil)
	wantType(t, "signing up twice", st, body, 409, ErrUserAlreadyExists)
}

func TestAccountExecutionByJWTCarriesTheUser(t *testing.T) {
	f := newFixture(t, Options{})
	if err := f.s.SeedUser(testProject, UserSpec{ID: "alice", Email: "alice@example.com", Password: "correct horse"}); err != nil {
		t.Fatal(err)
	}
	got := make(chan http.Header, 1)
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.WriteHeader(200)
	}))
	t.Cleanup(fn.Close)
	if err := f.s.RegisterFunction(testProject, FunctionSpec{ID: "turn", URL: fn.URL, Execute: []string{"any"}, Timeout: 900}); err != nil {
		t.Fatal(err)
	}
	value, err := f.s.CreateSession(testProject, "alice")
	if err != nil {
		t.Fatal(err)
	}
	jwt, err := f.s.UserJWT(testProject, value, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	st, body, _ := accountCall(t, f, "POST", "/v1/functions/turn/executions",
		map[string]any{"async": true, "body": "{}", "headers": map[string]string{"X-Session-API-Key": "k"}}, map[string]string{"X-Appwrite-JWT": jwt})
	if st != 202 {
		t.Fatalf("execution: %d %v", st, body)
	}
	h := <-got
	// An async execution may run up to the function's timeout (a turn longer than 30 s); a synchronous one
	// gets 30 s.
	if h.Get("X-Appwrite-User-Id") != "alice" || h.Get("X-Session-Api-Key") != "k" || h.Get("X-Open-Runtimes-Timeout") != "900" {
		t.Fatalf("execution headers %v", h)
	}
	if st, body, _ := accountCall(t, f, "POST", "/v1/functions/turn/executions", map[string]any{"body": "{}"}, map[string]string{"X-Appwrite-JWT": jwt}); st != 201 {
		t.Fatalf("sync execution: %d %v", st, body)
	}
	if h := <-got; h.Get("X-Open-Runtimes-Timeout") != "30" || h.Get("X-Appwrite-User-Id") != "alice" {
		t.Fatalf("sync execution headers %v", h)
	}
	for _, stored := range body["requestHeaders"].([]any) {
		if strings.EqualFold(stored.(map[string]any)["name"].(string), "x-session-api-key") {
			t.Fatalf("the execution stores the session key header: %v", body["requestHeaders"])
		}
	}
}

func TestAccountCORS(t *testing.T) {
	f := newFixture(t, Options{})
	req, _ := http.NewRequest("OPTIONS", f.ts.URL+"/v1/account/sessions/email", nil)
	req.Header.Set("Origin", "http://127.0.0.1:5173")
	req.Header.Set("Access-Control-Request-Method", "POST")
	res, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 204 || res.Header.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:5173" ||
		res.Header.Get("Access-Control-Allow-Credentials") != "true" ||
		!strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "X-Fallback-Cookies") ||
		!strings.Contains(res.Header.Get("Access-Control-Expose-Headers"), "X-Fallback-Cookies") {
		t.Fatalf("preflight %d %v", res.StatusCode, res.Header)
	}
	st, _, hdr := accountCall(t, f, "GET", "/v1/account", nil, map[string]string{"Origin": "http://127.0.0.1:5173"})
	if st != 401 || hdr.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:5173" {
		t.Fatalf("error answer without CORS: %d %v", st, hdr)
	}
}

func TestUsersReadOnlyRowsTheyMayRead(t *testing.T) {
	f := newFixture(t, Options{})
	err := f.s.SeedDatabase(testProject, DatabaseSpec{ID: "chat", Tables: []TableSpec{
		{ID: "conversations", RowSecurity: true, Columns: []Column{{Key: "title", Type: "string", Size: 64}}},
		{ID: "public", Permissions: []string{`read("any")`}, Columns: []Column{{Key: "title", Type: "string", Size: 64}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"alice", "bob"} {
		if err := f.s.SeedUser(testProject, UserSpec{ID: u, Email: u + "@example.com"}); err != nil {
			t.Fatal(err)
		}
	}
	key := map[string]string{"X-Appwrite-Key": f.key}
	for _, row := range []struct{ table, id, owner string }{{"conversations", "a1", "alice"}, {"conversations", "b1", "bob"}, {"public", "p1", ""}} {
		body := map[string]any{"rowId": row.id, "data": map[string]any{"title": row.id}}
		if row.owner != "" {
			body["permissions"] = []string{`read("user:` + row.owner + `")`}
		}
		if st, b, _ := accountCall(t, f, "POST", "/v1/tablesdb/chat/tables/"+row.table+"/rows", body, key); st != 201 {
			t.Fatalf("create %s: %d %v", row.id, st, b)
		}
	}
	alice, _ := f.s.CreateSession(testProject, "alice")
	jwt, _ := f.s.UserJWT(testProject, alice, time.Minute)
	for _, auth := range []map[string]string{{"X-Appwrite-Session": alice}, {"X-Appwrite-JWT": jwt}} {
		st, body, _ := accountCall(t, f, "GET", "/v1/tablesdb/chat/tables/conversations/rows", nil, auth)
		rows, _ := body["rows"].([]any)
		if st != 200 || len(rows) != 1 || rows[0].(map[string]any)["$id"] != "a1" {
			t.Fatalf("alice lists %d %v", st, body)
		}
		st, body, _ = accountCall(t, f, "GET", "/v1/tablesdb/chat/tables/conversations/rows/b1", nil, auth)
		wantType(t, "bob's row", st, body, 404, ErrRowNotFound)
		if st, body, _ = accountCall(t, f, "GET", "/v1/tablesdb/chat/tables/public/rows/p1", nil, auth); st != 200 {
			t.Fatalf("a row anyone may read: %d %v", st, body)
		}
	}
	// A key reads everything.
	if st, body, _ := accountCall(t, f, "GET", "/v1/tablesdb/chat/tables/conversations/rows/b1", nil, key); st != 200 {
		t.Fatalf("key: %d %v", st, body)
	}
}
