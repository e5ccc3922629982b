package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"appwrite-agent/functions/mcp-events/internal/testissuer"
	"appwrite-agent/functions/mcp-events/oauth"

	"github.com/golang-jwt/jwt/v5"
)

const aud = "https://mcp.test/mcp"

func setup(t *testing.T) (*testissuer.Issuer, *oauth.Verifier) {
	is := testissuer.New()
	t.Cleanup(is.Close)
	v := oauth.NewVerifier(is.URL, []string{"https://mcp.test", "https://mcp.test/", aud}, oauth.NewJWKS(is.URL+"/jwks", nil))
	return is, v
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestVerify(t *testing.T) {
	is, v := setup(t)
	p, err := v.Verify(ctx(t), is.Mint(testissuer.Token{Sub: "u1", Aud: aud, Scopes: []string{"rows.read", "users.read"}}))
	if err != nil {
		t.Fatal(err)
	}
	if p.Subject != "u1" || !p.Scopes["rows.read"] || !p.Scopes["users.read"] || p.Expiry.IsZero() {
		t.Fatalf("%+v", p)
	}
	for _, c := range []struct {
		name string
		tok  string
		want string
	}{
		{"expired", is.Mint(testissuer.Token{Sub: "u1", Aud: aud, TTL: -time.Hour}), "expired"},
		{"wrong audience", is.Mint(testissuer.Token{Sub: "u1", Aud: "https://elsewhere"}), "audience"},
		{"wrong issuer", is.Mint(testissuer.Token{Sub: "u1", Aud: aud, Iss: "https://evil"}), "issuer"},
		{"foreign key", is.Mint(testissuer.Token{Sub: "u1", Aud: aud, Foreign: true}), "signature"},
		{"no subject", is.Mint(testissuer.Token{Aud: aud}), "subject"},
		{"garbage", "a.b.c", "malformed"},
		{"hs256", hs256(t), "signature"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.Verify(ctx(t), c.tok)
			if !errors.Is(err, oauth.ErrInvalidToken) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	if _, err := v.Verify(ctx(t), ""); !errors.Is(err, oauth.ErrNoToken) {
		t.Fatal(err)
	}
}

func hs256(t *testing.T) string {
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "u1", "exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJWKSCache: keys are fetched once, refetched when a token names an unknown key id, and made-up key ids
// cannot force a fetch per request.
func TestJWKSCache(t *testing.T) {
	is := testissuer.New()
	t.Cleanup(is.Close)
	clk := newClock() // the cache's clock: the refresh floor passes without waiting for it
	v := oauth.NewVerifier(is.URL, []string{aud}, oauth.NewJWKSWithOptions(is.URL+"/jwks", nil, oauth.JWKSOptions{Now: clk.Now}))
	for i := 0; i < 3; i++ {
		if _, err := v.Verify(ctx(t), is.Mint(testissuer.Token{Sub: "u", Aud: aud})); err != nil {
			t.Fatal(err)
		}
	}
	if n := is.Fetches.Load(); n != 1 {
		t.Fatalf("fetches %d, want 1", n)
	}
	is.Rotate()
	clk.Advance(oauth.DefaultMinRefresh) // the refresh floor
	if _, err := v.Verify(ctx(t), is.Mint(testissuer.Token{Sub: "u", Aud: aud})); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	if n := is.Fetches.Load(); n != 2 {
		t.Fatalf("fetches %d, want 2", n)
	}
	for i := 0; i < 5; i++ {
		_, _ = v.Verify(ctx(t), is.Mint(testissuer.Token{Sub: "u", Aud: aud, Foreign: true, Kid: fmt.Sprint("made-up-", i)}))
	}
	if n := is.Fetches.Load(); n != 2 {
		t.Fatalf("unknown signatures caused fetches: %d", n)
	}
}

func TestChallengeAndMetadata(t *testing.T) {
	r := oauth.Resource{PublicURL: "https://mcp.test", Issuer: "https://iss", Scopes: []string{"a", "b"}}
	c := r.Challenge("/mcp", "Authentication required")
	want := `Bearer error="invalid_token", error_description="Authentication required", resource_metadata="https://mcp.test/.well-known/oauth-protected-resource/mcp", scope="a b"`
	if c != want {
		t.Fatalf("%s", c)
	}
	if m := r.Metadata("/"); m.Resource != "https://mcp.test" || m.AuthorizationServers[0] != "https://iss" {
		t.Fatalf("%+v", m)
	}
}
