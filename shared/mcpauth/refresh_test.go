package mcpauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/shared/safehttp"
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

// loopbackClient is the SSRF-safe client with loopback and plain http allowed, as tests and scripts/dev
// configure it (SAFEHTTP_ALLOW, SAFEHTTP_ALLOW_HTTP).
func loopbackClient() *http.Client {
	return safehttp.NewClient(safehttp.Options{AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowHTTP: true})
}

func refreshable() Tokens {
	rt := "rt-1"
	return Tokens{AccessToken: "old-at", TokenType: "Bearer", RefreshToken: &rt}
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
	got, err := Refresh(ctx, loopbackClient(), f.srv.URL+"/mcp", "", false, refreshable(), ClientInfo{ClientID: "c1"}, time.Unix(1000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got.AccessToken != "new-at" || got.Refreshable() != "rt-2" || got.ExpiresAt == nil || *got.ExpiresAt != 1060 {
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
			_, err := Refresh(ctx, loopbackClient(), f.srv.URL+"/mcp", "", false, refreshable(), ClientInfo{ClientID: "c1"}, time.Unix(1000, 0))
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
	if _, err := Refresh(ctx, loopbackClient(), f.srv.URL+"/mcp?tenant=a", "", false, refreshable(), ClientInfo{ClientID: "c1"}, time.Unix(1000, 0)); err != nil {
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
	_, err := Refresh(ctx, loopbackClient(), f.srv.URL+"/mcp", "", false, refreshable(), ClientInfo{ClientID: "c1", Issuer: f.srv.URL + "/old-tenant"}, time.Unix(1000, 0))
	want := `the server's authorization server is now "` + f.srv.URL + `/tenant1", but its client was registered with "` + f.srv.URL + `/old-tenant": connect it again`
	if err == nil || err.Error() != want {
		t.Fatalf("err %v, want %s", err, want)
	}
	if got := strings.Join(f.requests(), ", "); got != "GET /.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("requests %s: only the protected-resource metadata may be read", got)
	}
	for _, issuer := range []string{f.srv.URL + "/tenant1/", ""} {
		got, err := Refresh(ctx, loopbackClient(), f.srv.URL+"/mcp", "", false, refreshable(), ClientInfo{ClientID: "c1", Issuer: issuer}, time.Unix(1000, 0))
		if err != nil || got.AccessToken != "new-at" {
			t.Fatalf("issuer %q: %+v %v", issuer, got, err)
		}
	}
}

// A server that serves no protected-resource metadata is a 2025-03-26 server only once it has answered 401
// without naming its metadata (challenged): its origin is then the authorization server, with its RFC 8414
// metadata at the origin, whose issuer may carry a path on that origin; without metadata the token endpoint
// is {origin}/token. Before a challenge, the same server is a *DiscoveryError and nothing is posted: a newer
// server may name its metadata only in its challenge.
func TestRefresh2025_03_26Fallbacks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	withMeta := newASFixture(t, func(base string) map[string]any {
		return map[string]any{"/.well-known/oauth-authorization-server": map[string]any{"issuer": base + "/oauth", "token_endpoint": base + "/oauth/token"}}
	})
	_, err := Refresh(ctx, loopbackClient(), withMeta.srv.URL+"/mcp", "", false, refreshable(), ClientInfo{ClientID: "c1"}, time.Unix(1000, 0))
	var de *DiscoveryError
	if !errors.As(err, &de) || len(withMeta.tokenRequests()) != 0 {
		t.Fatalf("before a challenge: %v (want a *DiscoveryError), posted %v", err, withMeta.tokenRequests())
	}
	got, err := Refresh(ctx, loopbackClient(), withMeta.srv.URL+"/mcp", "", true, refreshable(), ClientInfo{ClientID: "c1", Issuer: withMeta.srv.URL + "/oauth"}, time.Unix(1000, 0))
	if err != nil || got.AccessToken != "new-at" {
		t.Fatalf("metadata at the origin: %+v %v", got, err)
	}
	want := []string{"GET /.well-known/oauth-protected-resource/mcp", "GET /.well-known/oauth-protected-resource", "GET /.well-known/oauth-authorization-server", "POST /oauth/token"}
	if got := withMeta.requests(); strings.Join(got[len(got)-4:], ", ") != strings.Join(want, ", ") {
		t.Fatalf("requests:\n got %v\nwant …%v", got, want)
	}
	// The client registered with the origin's server is bound to it: another issuer is refused unposted.
	before := len(withMeta.tokenRequests())
	if _, err := Refresh(ctx, loopbackClient(), withMeta.srv.URL+"/mcp", "", true, refreshable(), ClientInfo{ClientID: "c1", Issuer: "https://as.example"}, time.Unix(1000, 0)); err == nil || len(withMeta.tokenRequests()) != before {
		t.Fatalf("another issuer: %v, posted %d", err, len(withMeta.tokenRequests())-before)
	}

	bare := newASFixture(t, func(string) map[string]any { return nil })
	if _, err := Refresh(ctx, loopbackClient(), bare.srv.URL+"/mcp", "", true, refreshable(), ClientInfo{ClientID: "c1"}, time.Unix(1000, 0)); err != nil {
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
	if _, err := Refresh(ctx, loopbackClient(), foreign.srv.URL+"/mcp", "", true, refreshable(), ClientInfo{ClientID: "c1"}, time.Unix(1000, 0)); err == nil || !strings.Contains(err.Error(), `names issuer "https://as.example", not one on that origin`) {
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
			_, err := Refresh(ctx, loopbackClient(), f.srv.URL+"/mcp", "", false, refreshable(), ClientInfo{ClientID: "c1"}, time.Unix(1000, 0))
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
		ci        ClientInfo
		want      string // basic, post or none
	}{
		{"registered basic", []string{"client_secret_post"}, ClientInfo{ClientSecret: "s", TokenEndpointAuthMethod: "client_secret_basic"}, "basic"},
		{"registered post", []string{"client_secret_basic"}, ClientInfo{ClientSecret: "s", TokenEndpointAuthMethod: "client_secret_post"}, "post"},
		{"listed basic", []string{"client_secret_basic"}, ClientInfo{ClientSecret: "s"}, "basic"},
		{"listed post only", []string{"client_secret_post"}, ClientInfo{ClientSecret: "s"}, "post"},
		{"nothing listed", nil, ClientInfo{ClientSecret: "s"}, "basic"},
		{"public client", []string{"none"}, ClientInfo{}, "none"},
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
			if _, err := Refresh(ctx, loopbackClient(), f.srv.URL+"/mcp", "", false, refreshable(), ci, time.Unix(1000, 0)); err != nil {
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
