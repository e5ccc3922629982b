package handler_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestForeignOriginRefused: the Streamable HTTP transport says servers MUST validate Origin. A request whose
// Origin is not listed in MCP_EVENTS_ALLOWED_ORIGINS is refused with 403 before anything else is looked at
// (even a valid token does not help); a listed origin and a request without Origin (server-side clients
// such as ChatGPT's) are served.
func TestForeignOriginRefused(t *testing.T) {
	st := newStack(t)
	st.env["MCP_EVENTS_ALLOWED_ORIGINS"] = "https://Chat.Example.com, http://localhost:6274"
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	ping := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, c := range []struct {
		origin string
		tok    string
		want   int
	}{
		{"http://evil.example.com", tok, http.StatusForbidden},
		{"null", tok, http.StatusForbidden},
		{"https://chat.example.com.evil.example", tok, http.StatusForbidden},
		{"http://chat.example.com", tok, http.StatusForbidden}, // another scheme is another origin
		{"http://evil.example.com", "", http.StatusForbidden},  // before the 401
		{"https://chat.example.com", tok, http.StatusOK},
		{"HTTP://LOCALHOST:6274", tok, http.StatusOK},
		{"", tok, http.StatusOK},
		{"https://chat.example.com", "", http.StatusUnauthorized},
	} {
		hdr := map[string]string{}
		if c.origin != "" {
			hdr["Origin"] = c.origin
		}
		status, h, m, raw := post(t, "POST", url, c.tok, ping, hdr)
		if status != c.want {
			t.Fatalf("Origin %q: HTTP %d %s, want %d", c.origin, status, raw, c.want)
		}
		if status == http.StatusForbidden {
			if rpcCode(m) != -32600 || !strings.Contains(string(raw), "MCP_EVENTS_ALLOWED_ORIGINS") || h.Get("WWW-Authenticate") != "" {
				t.Fatalf("Origin %q: %s", c.origin, raw)
			}
		}
	}
	// Unset, every Origin is foreign.
	delete(st.env, "MCP_EVENTS_ALLOWED_ORIGINS")
	url = st.instance(st.server(handler.Options{}))
	if status, _, _, raw := post(t, "POST", url, tok, ping, map[string]string{"Origin": "https://chat.example.com"}); status != http.StatusForbidden {
		t.Fatalf("no allowed origins: %d %s", status, raw)
	}
}

// TestOwnOriginServed: a page of the server's own origin is served without being listed. The own origin is
// the public URL's (default port or not, any case); a loopback server (public URL on 127.0.0.1, reached
// through a local proxy on another port, as the conformance suite does) also owns the request's own loopback
// host. A DNS-rebinding request (Host and Origin both the attacker's name) and every other origin get the
// 403 of a foreign origin; the listed ones are still served.
func TestOwnOriginServed(t *testing.T) {
	st := newStack(t)
	st.env["MCP_EVENTS_ALLOWED_ORIGINS"] = "https://chat.example.com"
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	check := func(t *testing.T, url string, c originCase) {
		t.Helper()
		hdr := map[string]string{"Origin": c.origin}
		if c.host != "" {
			hdr["Host"] = c.host
		}
		status, h, m, raw := post(t, "POST", url, tok, list, hdr)
		if status != c.want {
			t.Fatalf("Host %q, Origin %q: HTTP %d %s, want %d", c.host, c.origin, status, raw, c.want)
		}
		if status == http.StatusForbidden {
			want := `"Forbidden: Origin \"` + c.origin + `\" is not allowed (list it in MCP_EVENTS_ALLOWED_ORIGINS)"`
			if rpcCode(m) != -32600 || !strings.Contains(string(raw), want) || h.Get("Access-Control-Allow-Origin") != "" {
				t.Fatalf("Origin %q: %v %s", c.origin, h, raw)
			}
		} else if h.Get("Access-Control-Allow-Origin") != c.origin || len(m["result"].(map[string]any)["tools"].([]any)) == 0 {
			t.Fatalf("Origin %q: %v %s", c.origin, h, raw)
		}
	}
	// A deployed server: its public URL is its origin, whatever Host the platform forwards.
	for _, c := range []originCase{
		{"", publicURL, http.StatusOK},
		{"", "HTTPS://MCP-Events.test", http.StatusOK},
		{"", "https://mcp-events.test:443", http.StatusOK},
		{"mcp-events.test", publicURL, http.StatusOK},
		{"", "https://chat.example.com", http.StatusOK},
		{"", "http://mcp-events.test", http.StatusForbidden},       // another scheme
		{"", "https://mcp-events.test:8443", http.StatusForbidden}, // another port
		{"", "https://mcp-events.test.evil.example", http.StatusForbidden},
		{"evil.example.com", "http://evil.example.com", http.StatusForbidden}, // the request's own host is not enough
		{"localhost:6274", "http://localhost:6274", http.StatusForbidden},     // nor a loopback one, on a public server
	} {
		check(t, url, c)
	}

	// A loopback server, reached on another local port than its public URL's.
	st.env["MCP_EVENTS_PUBLIC_URL"] = "http://127.0.0.1:13031"
	st.env["MCP_EVENTS_OAUTH_AUDIENCE"] = publicURL + "/mcp" // the stack's tokens
	url = st.instance(st.server(handler.Options{}))
	for _, c := range []originCase{
		{"", "http://127.0.0.1:13031", http.StatusOK},
		{"localhost:13032", "http://localhost:13032", http.StatusOK},
		{"LOCALHOST:13032", "http://localhost:13032", http.StatusOK},
		{"127.0.0.1:13033", "http://127.0.0.1:13033", http.StatusOK},
		{"[::1]:13034", "http://[::1]:13034", http.StatusOK},
		{"localhost:13032", "http://localhost:13099", http.StatusForbidden}, // another local port is another origin
		{"localhost:13032", "http://127.0.0.1:13032", http.StatusForbidden}, // and another name
		{"evil.example.com", "http://evil.example.com", http.StatusForbidden},
		{"evil.example.com:13032", "http://evil.example.com:13032", http.StatusForbidden},
		{"localhost:13032", "http://evil.example.com", http.StatusForbidden},
		{"", "https://chat.example.com", http.StatusOK},
	} {
		check(t, url, c)
	}
}

// originCase is one request of TestOwnOriginServed: its Host ("" for the test server's own address), its
// Origin and the status it gets.
type originCase struct {
	host, origin string
	want         int
}

// TestLegacyResultsCarryNoNewerFields: in a 2025-11-25 session, ping answers exactly {} and initialize and
// tools/list carry no resultType (a 2026-07-28 field the TypeScript SDK's strict ping schema refuses); a
// 2026-07-28 request (which has no ping) still gets resultType "complete".
func TestLegacyResultsCarryNoNewerFields(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	for _, c := range []struct{ version, body string }{
		{"", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
		{"2025-06-18", `{"jsonrpc":"2.0","id":3,"method":"ping","params":{}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}`},
	} {
		status, _, m, raw := post(t, "POST", url, tok, c.body, map[string]string{"MCP-Protocol-Version": c.version})
		res, ok := m["result"].(map[string]any)
		if status != http.StatusOK || !ok {
			t.Fatalf("%s: %d %s", c.body, status, raw)
		}
		if _, has := res["resultType"]; has {
			t.Fatalf("%s: a %s result carries resultType: %s", c.body, c.version, raw)
		}
		if strings.Contains(c.body, `"ping"`) && len(res) != 0 {
			t.Fatalf("ping: %s, want an empty result", raw)
		}
	}
	modern := rawPost(t, url, tok, `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, "2026-07-28")
	if !strings.Contains(string(modern), `"resultType":"complete"`) {
		t.Fatalf("2026-07-28 tools/list: %s", modern)
	}
	// The official SDK's ping in a 2025-11-25 session.
	cs := connect(t, url, tok, "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cs.Ping(ctx, &sdk.PingParams{}); err != nil {
		t.Fatalf("SDK ping: %v", err)
	}
}

// TestBrowserCORS: a page of a listed origin (the chat page) can run the MCP authorization discovery from
// the browser: its preflight is answered without a token, the 401 lets it read WWW-Authenticate, and the
// protected-resource metadata is readable from any origin (a public document without credentials). A page
// of another origin gets the 403 and no CORS header, preflight included, so the browser shows it nothing.
func TestBrowserCORS(t *testing.T) {
	st := newStack(t)
	st.env["MCP_EVENTS_ALLOWED_ORIGINS"] = "https://chat.example.com"
	url := st.instance(st.server(handler.Options{}))
	preflight := map[string]string{"Origin": "https://chat.example.com", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization, content-type"}
	status, h, _, raw := post(t, "OPTIONS", url, "", "", preflight)
	if status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "https://chat.example.com" ||
		!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") {
		t.Fatalf("preflight of a listed origin: %d %v %s", status, h, raw)
	}
	preflight["Origin"] = "https://evil.example.com"
	if status, h, _, raw := post(t, "OPTIONS", url, "", "", preflight); status != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight of a foreign origin: %d %v %s", status, h, raw)
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	status, h, _, raw = post(t, "POST", url, "", ping, map[string]string{"Origin": "https://chat.example.com"})
	if status != http.StatusUnauthorized || h.Get("Access-Control-Allow-Origin") != "https://chat.example.com" ||
		!strings.Contains(h.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") || !strings.Contains(h.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("401 to a listed origin: %d %v %s", status, h, raw)
	}
	if status, h, _, raw := post(t, "POST", url, "", ping, map[string]string{"Origin": "https://evil.example.com"}); status != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a foreign origin: %d %v %s", status, h, raw)
	}
	req, _ := http.NewRequest(http.MethodGet, url+"/.well-known/oauth-protected-resource/mcp", nil)
	req.Header.Set("Origin", "https://anyone.example.com")
	res, err := http.DefaultClient.Do(req)
	must(t, err)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("protected-resource metadata: %d %v", res.StatusCode, res.Header)
	}
}
