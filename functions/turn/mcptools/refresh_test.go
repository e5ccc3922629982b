package mcptools

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/shared/turnrequest"
)

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
