package handler_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
	"appwrite-agent/functions/mcp-events/internal/testissuer"
)

const benchAud = "https://mcp.bench/mcp"

func benchServer(b *testing.B) (*handler.Server, string) {
	is := testissuer.New()
	b.Cleanup(is.Close)
	env := map[string]string{
		"MCP_EVENTS_PUBLIC_URL": "https://mcp.bench", "MCP_EVENTS_OAUTH_ISSUER": is.URL,
	}
	srv, err := eventstest.NewServer(func(k string) string { return env[k] }, handler.Options{})
	if err != nil {
		b.Fatal(err)
	}
	tok := is.Mint(testissuer.Token{Sub: "u", Aud: benchAud, Scopes: []string{"project:webhooks.read", "project:webhooks.write", "project:users.read"}})
	return srv, tok
}

func bench(b *testing.B, body, version string) {
	srv, tok := benchServer(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tok)
		if version != "" {
			req.Header.Set("MCP-Protocol-Version", version)
			req.Header.Set("Mcp-Method", "server/discover")
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkDiscover measures one authenticated server/discover (token verification with a warm JWKS cache,
// SDK dispatch, capability decoration).
func BenchmarkDiscover(b *testing.B) {
	bench(b, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, "2026-07-28")
}

// BenchmarkInitialize measures one authenticated legacy initialize.
func BenchmarkInitialize(b *testing.B) {
	bench(b, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"b","version":"1"},"capabilities":{}}}`, "")
}
