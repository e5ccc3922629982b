package mcpauth

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

func jwt(claims string) string {
	e := base64.RawURLEncoding.EncodeToString
	return e([]byte(`{"alg":"RS256"}`)) + "." + e([]byte(claims)) + ".sig"
}

func TestTokens(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	if _, ok := ParseTokens(json.RawMessage(`{"refresh_token":"r"}`)); ok {
		t.Fatal("tokens without access_token accepted")
	}
	if _, ok := ParseTokens(nil); ok {
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
		tok, ok := ParseTokens(json.RawMessage(raw))
		if !ok || tok.Expired(now) != expired {
			t.Errorf("%s: expired %v, want %v", raw, tok.Expired(now), expired)
		}
	}
	tok, _ := ParseTokens(json.RawMessage(`{"access_token":" a ","token_type":"bearer","expires_in":3600,"scope":"s","refresh_token":"r","extra":1}`))
	if b, _ := tok.MarshalJSON(); string(b) != `{"access_token":"a","token_type":"Bearer","expires_in":3600,"scope":"s","refresh_token":"r"}` {
		t.Fatalf("echo %s", b)
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
