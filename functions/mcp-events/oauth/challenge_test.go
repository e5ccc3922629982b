package oauth_test

import (
	"testing"

	"appwrite-agent/functions/mcp-events/oauth"
)

// TestChallenges: no credentials gives a challenge without an error code (RFC 6750 §3.1), an invalid token
// error="invalid_token", a missing scope error="insufficient_scope" with the scopes the call needs; every
// challenge points at the metadata of the endpoint the client used, and that metadata's resource is that
// endpoint's URL exactly (RFC 9728 §3.3).
func TestChallenges(t *testing.T) {
	r := oauth.Resource{PublicURL: "https://mcp.test", Issuer: "https://iss", Scopes: []string{"a", "b"}}
	for _, c := range []struct{ got, want string }{
		{r.NoCredentials("/mcp"), `Bearer resource_metadata="https://mcp.test/.well-known/oauth-protected-resource/mcp", scope="a b"`},
		{r.NoCredentials("/"), `Bearer resource_metadata="https://mcp.test/.well-known/oauth-protected-resource", scope="a b"`},
		{r.InsufficientScope("/mcp", []string{"rows.read", "tables.read"}, "needs rows.read"),
			`Bearer error="insufficient_scope", scope="rows.read tables.read", resource_metadata="https://mcp.test/.well-known/oauth-protected-resource/mcp", error_description="needs rows.read"`},
	} {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
	}
	if m := r.Metadata("/mcp"); m.Resource != "https://mcp.test/mcp" {
		t.Errorf("/mcp resource %q", m.Resource)
	}
	if m := r.Metadata("/"); m.Resource != "https://mcp.test" {
		t.Errorf("root resource %q", m.Resource)
	}
}
