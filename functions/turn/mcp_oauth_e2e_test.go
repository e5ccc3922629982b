package handler_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/localappwrite/oauthserver"
	"appwrite-agent/shared/devkit/testclock"

	"github.com/golang-jwt/jwt/v5"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPRefreshAgainstStandInAuthorizationServer: the MCP connection's tokens come from the stand-in's
// OAuth authorization server (a real sign-in: registration, login, consent, PKCE). Once the access token has
// expired at the MCP server (the stand-in's clock, which the server checks tokens with, moves two hours on),
// the server answers 401; turn refreshes at the stand-in's token endpoint, found through the server's
// protected-resource metadata, and goes on; the rotated tokens come back in mcp_credentials, and the spent
// refresh token no longer works.
func TestMCPRefreshAgainstStandInAuthorizationServer(t *testing.T) {
	model, srv := mcpEnv(t)
	clock := testclock.Wall() // the stand-in's clock
	aw := localappwrite.New(localappwrite.Options{Logf: t.Logf, Clock: clock.Now})
	awSrv := httptest.NewServer(aw)
	t.Cleanup(func() { awSrv.Close(); _ = aw.Close() })
	aw.SetBaseURL(awSrv.URL)
	must(t, aw.SeedProject(localappwrite.ProjectSpec{ID: "console"}))
	must(t, aw.SeedUser("console", localappwrite.UserSpec{ID: "u1", Email: "u1@example.com", Password: "a long password"}))

	// The MCP server: the official Go SDK behind a resource-server check of the stand-in's tokens.
	var mu sync.Mutex
	var seen []string // the access tokens it accepted
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "oauth-test", Version: "1.0.0"}, nil)
	s.AddTool(&sdkmcp.Tool{Name: "appwrite_search_tools", Description: "Search the Appwrite tool catalog.",
		InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			return sdkText("databases_get", false), nil
		})
	mcpHandler := sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return s }, &sdkmcp.StreamableHTTPOptions{Stateless: true})
	mux := http.NewServeMux()
	mcp := httptest.NewServer(mux)
	t.Cleanup(mcp.Close)
	resource := mcp.URL + "/mcp"
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{"resource": resource, "authorization_servers": []string{aw.Issuer()}})
	})
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		_, err := jwt.Parse(raw, func(*jwt.Token) (any, error) { return aw.PublicKey(), nil }, jwt.WithValidMethods([]string{"RS256"}),
			jwt.WithIssuer(aw.Issuer()), jwt.WithAudience(resource), jwt.WithTimeFunc(clock.Now), jwt.WithExpirationRequired())
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+mcp.URL+`/.well-known/oauth-protected-resource/mcp"`)
			writeJSON(w, 401, map[string]string{"error": "invalid_token", "error_description": err.Error()})
			return
		}
		mu.Lock()
		seen = append(seen, raw)
		mu.Unlock()
		mcpHandler.ServeHTTP(w, r)
	}))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g, err := oauthserver.NewUser("u1@example.com", "a long password").SignIn(ctx, aw.Issuer(), []string{"project:all"}, resource)
	must(t, err)
	clock.Advance(2 * time.Hour) // the access token has expired for the MCP server

	script(model, call("appwrite_search_tools", `{}`))
	c := conn("appwrite", resource, g.AccessToken, map[string]any{"client_info": map[string]any{"client_id": g.ClientID}})
	c["tokens"].(map[string]any)["refresh_token"] = g.RefreshToken
	evs := turn(t, srv, map[string]any{"message": "m", "mcp_connections": []any{c}})

	tok := credentials(t, evs)["appwrite"]["tokens"].(map[string]any)
	access, _ := tok["access_token"].(string)
	refresh, _ := tok["refresh_token"].(string)
	if access == "" || access == g.AccessToken || refresh == "" || refresh == g.RefreshToken || tok["scope"] != "project:all" || tok["expires_in"] != 3600.0 {
		t.Fatalf("mcp_credentials tokens %v", tok)
	}
	mu.Lock()
	accepted := append([]string(nil), seen...)
	mu.Unlock()
	if len(accepted) == 0 || accepted[len(accepted)-1] != access {
		t.Fatalf("the MCP server did not go on with the refreshed token (%d accepted)", len(accepted))
	}
	for _, a := range accepted {
		if a == g.AccessToken {
			t.Fatal("the MCP server accepted the expired token")
		}
	}
	if ends := find(evs, "tool_end"); len(ends) != 1 || ends[0]["failed"] != nil {
		t.Fatalf("tool_end %v", ends)
	}
	// Rotation: the refresh token turn spent is gone.
	resp, err := http.PostForm(aw.Issuer()+"/token", map[string][]string{"grant_type": {"refresh_token"}, "client_id": {g.ClientID}, "refresh_token": {g.RefreshToken}})
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("the spent refresh token: HTTP %d", resp.StatusCode)
	}
}
