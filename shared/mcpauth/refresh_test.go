package mcpauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/shared/safehttp"
)

// asFixture is an MCP server at /mcp and its authorization server at /tenant1 on one loopback origin. meta
// maps a path to the JSON it answers (anything else is 404); every request is recorded.
type asFixture struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newASFixture(t *testing.T, meta func(base string) map[string]any) *asFixture {
	t.Helper()
	f := &asFixture{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.seen = append(f.seen, r.Method+" "+r.URL.RequestURI())
		f.mu.Unlock()
		if r.Method == http.MethodPost {
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
	got, err := Refresh(ctx, loopbackClient(), f.srv.URL+"/mcp", "", refreshable(), ClientInfo{ClientID: "c1"}, time.Unix(1000, 0))
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
			_, err := Refresh(ctx, loopbackClient(), f.srv.URL+"/mcp", "", refreshable(), ClientInfo{ClientID: "c1"}, time.Unix(1000, 0))
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
	if _, err := Refresh(ctx, loopbackClient(), f.srv.URL+"/mcp?tenant=a", "", refreshable(), ClientInfo{ClientID: "c1"}, time.Unix(1000, 0)); err != nil {
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
	_, err := Refresh(ctx, loopbackClient(), f.srv.URL+"/mcp", "", refreshable(), ClientInfo{ClientID: "c1", Issuer: f.srv.URL + "/old-tenant"}, time.Unix(1000, 0))
	want := `the server's authorization server is now "` + f.srv.URL + `/tenant1", but its client was registered with "` + f.srv.URL + `/old-tenant": connect it again`
	if err == nil || err.Error() != want {
		t.Fatalf("err %v, want %s", err, want)
	}
	if got := strings.Join(f.requests(), ", "); got != "GET /.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("requests %s: only the protected-resource metadata may be read", got)
	}
	for _, issuer := range []string{f.srv.URL + "/tenant1/", ""} {
		got, err := Refresh(ctx, loopbackClient(), f.srv.URL+"/mcp", "", refreshable(), ClientInfo{ClientID: "c1", Issuer: issuer}, time.Unix(1000, 0))
		if err != nil || got.AccessToken != "new-at" {
			t.Fatalf("issuer %q: %+v %v", issuer, got, err)
		}
	}
}
