package mcptools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/turnrequest"
)

// asFixture is an MCP server at /mcp and its authorization server at /tenant1 on one loopback origin. meta
// maps a path to the JSON it answers (anything else is 404); every request is recorded.
type asFixture struct {
	srv    *httptest.Server
	mu     sync.Mutex
	seen   []string
	posted []tokenRequest
}

// tokenRequest is a POST to the fixture: its Authorization header and form.
type tokenRequest struct {
	basic string
	form  url.Values
}

func (f *asFixture) tokenRequests() []tokenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]tokenRequest(nil), f.posted...)
}

func newASFixture(t *testing.T, meta func(base string) map[string]any) *asFixture {
	t.Helper()
	f := &asFixture{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.seen = append(f.seen, r.Method+" "+r.URL.RequestURI())
		f.mu.Unlock()
		if r.Method == http.MethodPost {
			_ = r.ParseForm()
			f.mu.Lock()
			f.posted = append(f.posted, tokenRequest{basic: r.Header.Get("Authorization"), form: r.PostForm})
			f.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token":"new-at","token_type":"Bearer","expires_in":60,"refresh_token":"rt-2"}`))
			return
		}
		doc, ok := meta(f.srv.URL)[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *asFixture) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// loopbackClient is the SSRF-safe client of loopbackSource's policy (loopback allowed, as tests and
// scripts/dev configure it).
func loopbackClient() *http.Client { return safehttp.NewClient(loopbackSource().HTTP) }

func refreshable() tokens {
	rt := "rt-1"
	return tokens{AccessToken: "old-at", TokenType: "Bearer", RefreshToken: &rt}
}

// The authorization server's metadata is looked for in the MCP spec's order: RFC 8414 path insertion, then
// OpenID path insertion, then OpenID path appending. Here the first is missing and the other two name
// different token endpoints: the refresh goes to the path-insertion one, and path appending is never asked.
func TestRefreshDiscoveryOrder(t *testing.T) {
	f := newASFixture(t, func(base string) map[string]any {
		return map[string]any{
			"/.well-known/oauth-protected-resource/mcp": map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base + "/tenant1"}},
			"/.well-known/openid-configuration/tenant1": map[string]any{"issuer": base + "/tenant1", "token_endpoint": base + "/token-inserted"},
			"/tenant1/.well-known/openid-configuration": map[string]any{"issuer": base + "/tenant1", "token_endpoint": base + "/token-appended"},
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := refreshTokens(ctx, loopbackClient(), f.srv.URL+"/mcp", "", false, refreshable(), clientInfo{ClientID: "c1"}, time.Unix(1000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got.AccessToken != "new-at" || got.refreshToken() != "rt-2" || got.ExpiresAt == nil || *got.ExpiresAt != 1060 {
		t.Fatalf("tokens: %+v", got)
	}
	want := []string{"GET /.well-known/oauth-protected-resource/mcp", "GET /.well-known/oauth-authorization-server/tenant1",
		"GET /.well-known/openid-configuration/tenant1", "POST /token-inserted"}
	if strings.Join(f.requests(), ", ") != strings.Join(want, ", ") {
		t.Fatalf("requests:\n got %v\nwant %v", f.requests(), want)
	}
}

// Metadata whose issuer is missing or another one is not used (RFC 8414 §3.3, the MCP spec): the refresh
// token is never sent to its token endpoint, and the error says why.
func TestRefreshRefusesMetadataWithoutTheIssuer(t *testing.T) {
	for _, c := range []struct {
		name, want string
		issuer     func(base string) any
	}{
		{"missing", "authorization server metadata names no issuer", func(string) any { return nil }},
		{"empty", "authorization server metadata names no issuer", func(string) any { return "" }},
		{"other", "authorization server metadata names issuer \"https://honest.example\"", func(string) any { return "https://honest.example" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newASFixture(t, func(base string) map[string]any {
				as := map[string]any{"token_endpoint": base + "/token"}
				if iss := c.issuer(base); iss != nil {
					as["issuer"] = iss
				}
				return map[string]any{
					"/.well-known/oauth-protected-resource/mcp":  map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base + "/as"}},
					"/.well-known/oauth-authorization-server/as": as,
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := refreshTokens(ctx, loopbackClient(), f.srv.URL+"/mcp", "", false, refreshable(), clientInfo{ClientID: "c1"}, time.Unix(1000, 0))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("err %v, want %q…", err, c.want)
			}
			for _, r := range f.requests() {
				if strings.HasPrefix(r, "POST") {
					t.Fatalf("the refresh token was sent: %v", f.requests())
				}
			}
		})
	}
}

// A server URL with a query has its metadata at the well-known URL carrying that query (RFC 9728 §3).
func TestRefreshProtectedResourceMetadataWithQuery(t *testing.T) {
	f := newASFixture(t, func(base string) map[string]any {
		return map[string]any{
			"/.well-known/oauth-protected-resource/mcp?tenant=a": map[string]any{"resource": base + "/mcp?tenant=a", "authorization_servers": []string{base}},
			"/.well-known/oauth-authorization-server":            map[string]any{"issuer": base, "token_endpoint": base + "/token"},
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := refreshTokens(ctx, loopbackClient(), f.srv.URL+"/mcp?tenant=a", "", false, refreshable(), clientInfo{ClientID: "c1"}, time.Unix(1000, 0)); err != nil {
		t.Fatal(err)
	}
	want := []string{"GET /.well-known/oauth-protected-resource/mcp?tenant=a", "GET /.well-known/oauth-authorization-server", "POST /token"}
	if strings.Join(f.requests(), ", ") != strings.Join(want, ", ") {
		t.Fatalf("requests:\n got %v\nwant %v", f.requests(), want)
	}
}

// Client credentials are bound to the authorization server that registered them (the MCP spec's
// authorization server binding): when the protected-resource metadata now names another one, the refresh
// stops before asking it anything, and the refresh token and client id go nowhere. The same issuer (a
// trailing slash aside) refreshes, and so does a client_info that names none (registered elsewhere).
func TestRefreshKeepsCredentialsWithTheirAuthorizationServer(t *testing.T) {
	f := newASFixture(t, func(base string) map[string]any {
		return map[string]any{
			"/.well-known/oauth-protected-resource/mcp":       map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base + "/tenant1"}},
			"/.well-known/oauth-authorization-server/tenant1": map[string]any{"issuer": base + "/tenant1", "token_endpoint": base + "/token"},
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := refreshTokens(ctx, loopbackClient(), f.srv.URL+"/mcp", "", false, refreshable(), clientInfo{ClientID: "c1", Issuer: f.srv.URL + "/old-tenant"}, time.Unix(1000, 0))
	want := `the server's authorization server is now "` + f.srv.URL + `/tenant1", but its client was registered with "` + f.srv.URL + `/old-tenant": connect it again`
	if err == nil || err.Error() != want {
		t.Fatalf("err %v, want %s", err, want)
	}
	if got := strings.Join(f.requests(), ", "); got != "GET /.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("requests %s: only the protected-resource metadata may be read", got)
	}
	for _, issuer := range []string{f.srv.URL + "/tenant1/", ""} {
		got, err := refreshTokens(ctx, loopbackClient(), f.srv.URL+"/mcp", "", false, refreshable(), clientInfo{ClientID: "c1", Issuer: issuer}, time.Unix(1000, 0))
		if err != nil || got.AccessToken != "new-at" {
			t.Fatalf("issuer %q: %+v %v", issuer, got, err)
		}
	}
}

// A server that serves no protected-resource metadata is a 2025-03-26 server only once it has answered 401
// without naming its metadata (challenged): its origin is then the authorization server, with its RFC 8414
// metadata at the origin, whose issuer may carry a path on that origin; without metadata the token endpoint
// is {origin}/token. Before a challenge, the same server is a *discoveryError and nothing is posted: a newer
// server may name its metadata only in its challenge.
func TestRefresh2025_03_26Fallbacks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	withMeta := newASFixture(t, func(base string) map[string]any {
		return map[string]any{"/.well-known/oauth-authorization-server": map[string]any{"issuer": base + "/oauth", "token_endpoint": base + "/oauth/token"}}
	})
	_, err := refreshTokens(ctx, loopbackClient(), withMeta.srv.URL+"/mcp", "", false, refreshable(), clientInfo{ClientID: "c1"}, time.Unix(1000, 0))
	var de *discoveryError
	if !errors.As(err, &de) || len(withMeta.tokenRequests()) != 0 {
		t.Fatalf("before a challenge: %v (want a *discoveryError), posted %v", err, withMeta.tokenRequests())
	}
	got, err := refreshTokens(ctx, loopbackClient(), withMeta.srv.URL+"/mcp", "", true, refreshable(), clientInfo{ClientID: "c1", Issuer: withMeta.srv.URL + "/oauth"}, time.Unix(1000, 0))
	if err != nil || got.AccessToken != "new-at" {
		t.Fatalf("metadata at the origin: %+v %v", got, err)
	}
	want := []string{"GET /.well-known/oauth-protected-resource/mcp", "GET /.well-known/oauth-protected-resource", "GET /.well-known/oauth-authorization-server", "POST /oauth/token"}
	if got := withMeta.requests(); strings.Join(got[len(got)-4:], ", ") != strings.Join(want, ", ") {
		t.Fatalf("requests:\n got %v\nwant …%v", got, want)
	}
	// The client registered with the origin's server is bound to it: another issuer is refused unposted.
	before := len(withMeta.tokenRequests())
	if _, err := refreshTokens(ctx, loopbackClient(), withMeta.srv.URL+"/mcp", "", true, refreshable(), clientInfo{ClientID: "c1", Issuer: "https://as.example"}, time.Unix(1000, 0)); err == nil || len(withMeta.tokenRequests()) != before {
		t.Fatalf("another issuer: %v, posted %d", err, len(withMeta.tokenRequests())-before)
	}

	bare := newASFixture(t, func(string) map[string]any { return nil })
	if _, err := refreshTokens(ctx, loopbackClient(), bare.srv.URL+"/mcp", "", true, refreshable(), clientInfo{ClientID: "c1"}, time.Unix(1000, 0)); err != nil {
		t.Fatal(err)
	}
	if reqs := bare.requests(); reqs[len(reqs)-1] != "POST /token" {
		t.Fatalf("without metadata the token endpoint is {origin}/token: %v", reqs)
	}
	if f := bare.tokenRequests()[0].form; f.Get("grant_type") != "refresh_token" || f.Get("resource") != bare.srv.URL+"/mcp" || f.Get("client_id") != "c1" {
		t.Fatalf("form %v", f)
	}

	// Metadata at the origin whose issuer is on another origin does not speak for this server.
	foreign := newASFixture(t, func(string) map[string]any {
		return map[string]any{"/.well-known/oauth-authorization-server": map[string]any{"issuer": "https://as.example", "token_endpoint": "https://as.example/token"}}
	})
	if _, err := refreshTokens(ctx, loopbackClient(), foreign.srv.URL+"/mcp", "", true, refreshable(), clientInfo{ClientID: "c1"}, time.Unix(1000, 0)); err == nil || !strings.Contains(err.Error(), `names issuer "https://as.example", not one on that origin`) {
		t.Fatalf("foreign issuer: %v", err)
	}
}

// The protected-resource metadata must speak for the server it was fetched for (RFC 8707, the MCP spec):
// its resource on the server's origin, the server's URL at or under its path. Another origin or a sibling
// path is refused before any authorization server is asked; a parent path or a trailing slash is the same
// resource.
func TestRefreshRefusesMetadataOfAnotherResource(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range []struct {
		name     string
		resource func(base string) string
		ok       bool
	}{
		{"another origin", func(string) string { return "https://evil.example.com/mcp" }, false},
		{"another port", func(base string) string {
			return strings.TrimSuffix(base, base[strings.LastIndex(base, ":"):]) + ":1/mcp"
		}, false},
		{"a sibling path", func(base string) string { return base + "/other" }, false},
		{"a longer path", func(base string) string { return base + "/mcp/v2" }, false},
		{"a prefix that is not a segment", func(base string) string { return base + "/mc" }, false},
		{"the same", func(base string) string { return base + "/mcp" }, true},
		{"a trailing slash", func(base string) string { return base + "/mcp/" }, true},
		{"the origin", func(base string) string { return base }, true},
		{"the origin with a slash", func(base string) string { return base + "/" }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newASFixture(t, func(base string) map[string]any {
				return map[string]any{
					"/.well-known/oauth-protected-resource/mcp": map[string]any{"resource": c.resource(base), "authorization_servers": []string{base}},
					"/.well-known/oauth-authorization-server":   map[string]any{"issuer": base, "token_endpoint": base + "/token"},
				}
			})
			_, err := refreshTokens(ctx, loopbackClient(), f.srv.URL+"/mcp", "", false, refreshable(), clientInfo{ClientID: "c1"}, time.Unix(1000, 0))
			if c.ok != (err == nil) {
				t.Fatalf("resource %s: %v", c.resource(f.srv.URL), err)
			}
			if !c.ok && (len(f.requests()) != 1 || !strings.Contains(err.Error(), "the protected-resource metadata names resource")) {
				t.Fatalf("%v; requests %v: only the protected-resource metadata may be read", err, f.requests())
			}
		})
	}
}

// A client with a secret authenticates with the method it registered; without one recorded (pre-registered
// credentials a user entered), with what the authorization server lists: client_secret_basic when listed
// or when nothing is (RFC 8414's default), else client_secret_post. A public client sends its id alone.
func TestRefreshTokenEndpointAuthentication(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range []struct {
		name      string
		supported []string
		ci        clientInfo
		want      string // basic, post or none
	}{
		{"registered basic", []string{"client_secret_post"}, clientInfo{ClientSecret: "s", TokenEndpointAuthMethod: "client_secret_basic"}, "basic"},
		{"registered post", []string{"client_secret_basic"}, clientInfo{ClientSecret: "s", TokenEndpointAuthMethod: "client_secret_post"}, "post"},
		{"listed basic", []string{"client_secret_basic"}, clientInfo{ClientSecret: "s"}, "basic"},
		{"listed post only", []string{"client_secret_post"}, clientInfo{ClientSecret: "s"}, "post"},
		{"nothing listed", nil, clientInfo{ClientSecret: "s"}, "basic"},
		{"public client", []string{"none"}, clientInfo{}, "none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newASFixture(t, func(base string) map[string]any {
				as := map[string]any{"issuer": base, "token_endpoint": base + "/token"}
				if c.supported != nil {
					as["token_endpoint_auth_methods_supported"] = c.supported
				}
				return map[string]any{
					"/.well-known/oauth-protected-resource/mcp": map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}},
					"/.well-known/oauth-authorization-server":   as,
				}
			})
			ci := c.ci
			ci.ClientID = "id:1"
			if _, err := refreshTokens(ctx, loopbackClient(), f.srv.URL+"/mcp", "", false, refreshable(), ci, time.Unix(1000, 0)); err != nil {
				t.Fatal(err)
			}
			req := f.tokenRequests()[0]
			got := "none"
			switch {
			case req.basic != "" && req.form.Get("client_secret") == "":
				got = "basic"
				// RFC 6749 §2.3.1: the id and secret are form-encoded before Basic (a ':' in the id survives).
				if req.basic != "Basic "+base64.StdEncoding.EncodeToString([]byte("id%3A1:s")) {
					t.Fatalf("Authorization %q", req.basic)
				}
			case req.basic == "" && req.form.Get("client_secret") == "s":
				got = "post"
			case req.basic != "" || req.form.Has("client_secret"):
				got = "both"
			}
			if got != c.want || req.form.Get("client_id") != "id:1" {
				t.Fatalf("authenticated by %s, want %s (form %v)", got, c.want, req.form)
			}
		})
	}
}

// A known-expired access token is refreshed before it is sent. When its protected-resource metadata is not
// at the well-known URLs, the token is sent once to read the server's 401 challenge, whose resource_metadata
// names where it is, and the refresh is tried again with it: the connection loads with the new token. When
// the metadata names another resource, nothing is sent to the server at all, and the refresh token goes
// nowhere.
func TestExpiredTokenFindsMetadataThroughTheChallenge(t *testing.T) {
	for _, c := range []struct {
		name, resource string // resource "" is the server's own URL
		loads          bool
	}{
		{"custom location", "", true},
		{"another resource", "https://evil.example.com/mcp", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var bearers []string
			var base string
			p := newPeer(t, nil, ping)
			mux := http.NewServeMux()
			prm := func(w http.ResponseWriter, _ *http.Request) {
				res := c.resource
				if res == "" {
					res = base + "/mcp"
				}
				_ = json.NewEncoder(w).Encode(map[string]any{"resource": res, "authorization_servers": []string{base}})
			}
			mux.HandleFunc("/custom/metadata.json", prm)
			if c.resource != "" { // found at the well-known URL, and wrong
				mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", prm)
			}
			mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
				_ = json.NewEncoder(w).Encode(map[string]any{"issuer": base, "token_endpoint": base + "/token"})
			})
			var posted int
			mux.HandleFunc("POST /token", func(w http.ResponseWriter, _ *http.Request) {
				mu.Lock()
				posted++
				mu.Unlock()
				_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "new-at", "token_type": "Bearer", "expires_in": 3600})
			})
			mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				bearers = append(bearers, r.Header.Get("Authorization"))
				mu.Unlock()
				if r.Header.Get("Authorization") != "Bearer new-at" {
					w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/custom/metadata.json"`)
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				p.srv.Config.Handler.ServeHTTP(w, r)
			})
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			base = srv.URL
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			src := loopbackSource()
			src.Now = func() time.Time { return time.Unix(2000, 0) }
			out := src.Load(ctx, &request.Turn{MCPConnections: []turnrequest.MCPConnection{{ID: "srv", URL: srv.URL + "/mcp",
				Tokens:     json.RawMessage(`{"access_token":"old-at","refresh_token":"rt","expires_at":1000}`),
				ClientInfo: json.RawMessage(`{"client_id":"c1"}`)}}}, map[string]bool{})
			defer out.Close()
			mu.Lock()
			defer mu.Unlock()
			if !c.loads {
				want := `MCP connection 'srv' skipped: the access token expired and could not be refreshed: the protected-resource metadata names resource "https://evil.example.com/mcp", which is not ` + srv.URL + "/mcp"
				if len(out.Notices) != 1 || out.Notices[0] != want || posted != 0 || len(bearers) != 0 {
					t.Fatalf("notices %q (want %q), token requests %d, MCP requests %q", out.Notices, want, posted, bearers)
				}
				return
			}
			if len(out.Notices) != 0 || len(out.Tools) != 1 || posted != 1 {
				t.Fatalf("notices %q, tools %d, token requests %d", out.Notices, len(out.Tools), posted)
			}
			if bearers[0] != "Bearer old-at" || bearers[len(bearers)-1] != "Bearer new-at" {
				t.Fatalf("the expired token is sent once for the challenge, then the new one: %q", bearers)
			}
			if tok := string(out.Credentials[0].Tokens); !strings.Contains(tok, `"access_token":"new-at"`) {
				t.Fatalf("credentials %s", tok)
			}
		})
	}
}
