package mcptools

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"appwrite-agent/shared/turnrequest"
)

func TestResolveServer(t *testing.T) {
	for _, c := range []struct {
		in   turnrequest.MCPConnection
		want server
		err  string
	}{
		{in: turnrequest.MCPConnection{ID: "appwrite"}, want: server{BuiltinID, BuiltinName, BuiltinURL, BuiltinDescription}},
		{in: turnrequest.MCPConnection{ID: "appwrite", URL: " http://localhost:8100/ ", Name: "Local"}, want: server{"appwrite", "Local", "http://localhost:8100/", BuiltinDescription}},
		{in: turnrequest.MCPConnection{ID: " My-Server_2 ", URL: "https://x.example/mcp", Description: "d"}, want: server{"my-server_2", "my-server_2", "https://x.example/mcp", "d"}},
		{in: turnrequest.MCPConnection{ID: "x", URL: "https://x.example/"}, err: MsgBadID},
		{in: turnrequest.MCPConnection{ID: "1abc", URL: "https://x.example/"}, err: MsgBadID},
		{in: turnrequest.MCPConnection{ID: strings.Repeat("a", 65), URL: "https://x.example/"}, err: MsgBadID},
		{in: turnrequest.MCPConnection{ID: "Appwrite"}, err: MsgBadURL},
		{in: turnrequest.MCPConnection{ID: "other", URL: "ftp://x/"}, err: MsgBadURL},
	} {
		got, err := resolveServer(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%+v: err %v, want %s", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%+v: %+v %v", c.in, got, err)
		}
	}
}

func jwt(claims string) string {
	e := base64.RawURLEncoding.EncodeToString
	return e([]byte(`{"alg":"RS256"}`)) + "." + e([]byte(claims)) + ".sig"
}

func TestTokens(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	if _, ok := parseTokens(json.RawMessage(`{"refresh_token":"r"}`)); ok {
		t.Fatal("tokens without access_token accepted")
	}
	if _, ok := parseTokens(nil); ok {
		t.Fatal("no tokens accepted")
	}
	for raw, expired := range map[string]bool{
		`{"access_token":"opaque"}`:                                                  false,
		`{"access_token":"opaque","expires_at":1799999990}`:                          true,
		`{"access_token":"opaque","expires_at":1800000020}`:                          true, // within the skew
		`{"access_token":"opaque","expires_at":1800000100}`:                          false,
		fmt.Sprintf(`{"access_token":%q}`, jwt(`{"exp":1799999999}`)):                true,
		fmt.Sprintf(`{"access_token":%q}`, jwt(`{"exp":1800003600}`)):                false,
		fmt.Sprintf(`{"access_token":%q}`, jwt(`{"sub":"no exp"}`)):                  false,
		fmt.Sprintf(`{"access_token":%q,"expires_at":1800003600}`, jwt(`{"exp":1}`)): false,
		`{"access_token":"a.!!!.c"}`:                                                 false,
	} {
		tok, ok := parseTokens(json.RawMessage(raw))
		if !ok || tok.expired(now) != expired {
			t.Errorf("%s: expired %v, want %v", raw, tok.expired(now), expired)
		}
	}
	tok, _ := parseTokens(json.RawMessage(`{"access_token":" a ","token_type":"bearer","expires_in":3600,"scope":"s","refresh_token":"r","extra":1}`))
	if b, _ := tok.MarshalJSON(); string(b) != `{"access_token":"a","token_type":"Bearer","expires_in":3600,"scope":"s","refresh_token":"r"}` {
		t.Fatalf("echo %s", b)
	}
}

func TestNames(t *testing.T) {
	n := newNamer(map[string]bool{"current_time": true})
	for _, c := range [][3]string{
		{"appwrite", "appwrite_call_tool", "appwrite_call_tool"},
		{"appwrite", "current_time", "appwrite_current_time"},
		{"other", "appwrite_call_tool", "other_appwrite_call_tool"},
		{"other", "search docs/v2", "other_search_docs_v2"},
		{"third", "appwrite_call_tool", "third_appwrite_call_tool"},
		{"other", "other_appwrite_call_tool", "other_other_appwrite_call_tool"},
		{"x", "other_appwrite_call_tool", "x_other_appwrite_call_tool"},
		{"other", "appwrite_call_tool", "other_appwrite_call_tool_2"},
		{"long", strings.Repeat("n", 80), "long_" + strings.Repeat("n", 59)},
		{"long", strings.Repeat("n", 80), "long_" + strings.Repeat("n", 57) + "_2"},
		{"e", "…", "e__"},
	} {
		if got := n.name(c[0], c[1]); got != c[2] {
			t.Errorf("name(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
	if safeName("…") != "tool" {
		t.Fatalf("safeName %q", safeName("…"))
	}
}

func TestMetadataURLs(t *testing.T) {
	srv, _ := url.Parse("https://mcp.example.com/mcp/")
	got := prmCandidates(srv, "https://evil.example/.well-known/oauth-protected-resource")
	want := []string{"https://mcp.example.com/.well-known/oauth-protected-resource/mcp", "https://mcp.example.com/.well-known/oauth-protected-resource"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("cross-origin hint: %v", got)
	}
	root, _ := url.Parse("https://mcp.appwrite.io/")
	got = prmCandidates(root, "https://mcp.appwrite.io/.well-known/oauth-protected-resource")
	if strings.Join(got, " ") != "https://mcp.appwrite.io/.well-known/oauth-protected-resource" {
		t.Fatalf("root: %v", got)
	}
	// RFC 9728 §3: the well-known string goes between the host and the path and/or query.
	q, _ := url.Parse("https://mcp.example.com/mcp/?tenant=a")
	got = prmCandidates(q, "")
	want = []string{"https://mcp.example.com/.well-known/oauth-protected-resource/mcp?tenant=a", "https://mcp.example.com/.well-known/oauth-protected-resource"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("query: %v", got)
	}
	rootQ, _ := url.Parse("https://mcp.example.com/?tenant=a")
	got = prmCandidates(rootQ, "")
	want = []string{"https://mcp.example.com/.well-known/oauth-protected-resource?tenant=a", "https://mcp.example.com/.well-known/oauth-protected-resource"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("root with query: %v", got)
	}
	// The MCP spec's order for an issuer with a path: RFC 8414 path insertion, OpenID path insertion,
	// OpenID path appending (authorization-server-discovery.mdx).
	iss, _ := url.Parse("https://cloud.appwrite.io/v1/oauth2/console")
	got = asCandidates(iss)
	want = []string{"https://cloud.appwrite.io/.well-known/oauth-authorization-server/v1/oauth2/console",
		"https://cloud.appwrite.io/.well-known/openid-configuration/v1/oauth2/console",
		"https://cloud.appwrite.io/v1/oauth2/console/.well-known/openid-configuration"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("issuer: %v", got)
	}
	// Without a path (a trailing slash is no path): RFC 8414, then OpenID.
	for _, raw := range []string{"https://auth.example.com", "https://auth.example.com/"} {
		iss, _ := url.Parse(raw)
		got = asCandidates(iss)
		want = []string{"https://auth.example.com/.well-known/oauth-authorization-server", "https://auth.example.com/.well-known/openid-configuration"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("issuer %s: %v", raw, got)
		}
	}
}
