package chatpage

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// oauthMCP is a third-party MCP server (not Appwrite's) behind its own OAuth 2.1 authorization server, on
// its own origin. The staged mcp-events with the stand-in's authorization server is the real thing the page
// is tested against; this one proves what that cannot in the local topology: an authorization server on
// another origin than the page (the stand-in serves function domains on its own origin, so the page's
// registration and token exchange with it are same-origin; on Appwrite Cloud they are cross-origin, through
// CORS) and an MCP server with no Appwrite in it (other scope names, the official Go SDK's server). It is
// an MCP server behind its own OAuth 2.1 authorization server, as the MCP authorization spec
// describes them: protected resource metadata (RFC 9728) named in the 401's WWW-Authenticate, authorization
// server metadata (RFC 8414), dynamic client registration (RFC 7591), the authorization code grant with
// PKCE S256 only (RFC 7636) and the resource indicator (RFC 8707). It approves every authorization at once
// (there is no user to ask) and checks everything else strictly, so the page's flow is tested for real. CORS
// is open, as it must be for a browser client. The MCP endpoint is the official Go SDK's, stateless, with one
// tool.
type oauthMCP struct {
	srv *httptest.Server

	mu      sync.Mutex
	clients map[string][]string // client_id -> redirect_uris
	codes   map[string]grant
	tokens  map[string]bool
	// authorized counts MCP requests that carried an issued access token; refused those that did not.
	authorized, refused int
	registered          int
	exchanged           []url.Values
}

type grant struct {
	clientID, redirectURI, challenge, resource string
}

func newOAuthMCP(t testing.TB) *oauthMCP {
	o := &oauthMCP{clients: map[string][]string{}, codes: map[string]grant{}, tokens: map[string]bool{}}
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "widgets", Version: "1.0.0"}, nil)
	s.AddTool(&sdkmcp.Tool{Name: "list_widgets", Description: "List the widgets of the workshop.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{}}},
		func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "sprocket, flange"}}}, nil
		})
	mcpHandler := sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return s }, &sdkmcp.StreamableHTTPOptions{Stateless: true})

	mux := http.NewServeMux()
	prm := func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"resource": o.resource(), "authorization_servers": []string{o.srv.URL}, "scopes_supported": []string{"widgets"}})
	}
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", prm)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", prm)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer":                                o.srv.URL,
			"authorization_endpoint":                o.srv.URL + "/authorize",
			"token_endpoint":                        o.srv.URL + "/token",
			"registration_endpoint":                 o.srv.URL + "/register",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			RedirectURIs []string `json:"redirect_uris"`
			AuthMethod   string   `json:"token_endpoint_auth_method"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RedirectURIs) == 0 || req.AuthMethod != "none" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
			return
		}
		id := random()
		o.mu.Lock()
		o.clients[id] = req.RedirectURIs
		o.registered++
		o.mu.Unlock()
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		o.mu.Lock()
		uris, ok := o.clients[q.Get("client_id")]
		o.mu.Unlock()
		redirect := q.Get("redirect_uri")
		if !ok || !slices.Contains(uris, redirect) {
			http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
			return
		}
		back, _ := url.Parse(redirect)
		v := url.Values{"state": {q.Get("state")}}
		switch {
		case q.Get("response_type") != "code":
			v.Set("error", "unsupported_response_type")
		case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
			v.Set("error", "invalid_request")
			v.Set("error_description", "PKCE S256 is required")
		case q.Get("resource") != o.resource():
			v.Set("error", "invalid_target")
		default:
			code := random()
			o.mu.Lock()
			o.codes[code] = grant{clientID: q.Get("client_id"), redirectURI: redirect, challenge: q.Get("code_challenge"), resource: q.Get("resource")}
			o.mu.Unlock()
			v.Set("code", code)
		}
		back.RawQuery = v.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
			return
		}
		f := r.PostForm
		o.mu.Lock()
		defer o.mu.Unlock()
		o.exchanged = append(o.exchanged, f)
		g, ok := o.codes[f.Get("code")]
		delete(o.codes, f.Get("code")) // one use
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if !ok || f.Get("grant_type") != "authorization_code" || g.clientID != f.Get("client_id") || g.redirectURI != f.Get("redirect_uri") ||
			g.resource != f.Get("resource") || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		token := random()
		o.tokens[token] = true
		writeJSON(w, http.StatusOK, map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 3600, "refresh_token": random(), "scope": "widgets"})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		o.mu.Lock()
		ok := o.tokens[token]
		if ok {
			o.authorized++
		} else {
			o.refused++
		}
		o.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+o.srv.URL+`/.well-known/oauth-protected-resource/mcp", scope="widgets"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token"})
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	o.srv = httptest.NewServer(cors(mux))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *oauthMCP) resource() string { return o.srv.URL + "/mcp" }

func (o *oauthMCP) counts() (registered, authorized, refused int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.registered, o.authorized, o.refused
}

// cors lets a page of any origin read the answers (and the WWW-Authenticate header), as a public OAuth and
// MCP server must for a browser client.
func cors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Expose-Headers", "WWW-Authenticate, Mcp-Session-Id")
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization, Accept, Mcp-Session-Id, Mcp-Protocol-Version")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func random() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
