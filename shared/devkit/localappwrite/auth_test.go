package localappwrite

import (
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/tablesdb"
	"github.com/golang-jwt/jwt/v5"
)

func TestScopesAndProjectChecks(t *testing.T) {
	f := newFixture(t, Options{})
	seedRowsTable(t, f)
	readOnly, err := f.s.CreateKey(testProject, []string{"webhooks.read"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = callJSON(t, f.sdk(readOnly), "POST", "/webhooks", webhookParams("x"))
	wantErr(t, err, 401, ErrGeneralUnauthorizedScope)
	if !strings.Contains(err.Error(), `missing scopes (["webhooks.write"])`) {
		t.Errorf("message: %v", err)
	}
	if _, err := callJSON(t, f.sdk(readOnly), "GET", "/webhooks", nil); err != nil {
		t.Fatal(err)
	}

	// Unknown project: 404 project_not_found.
	other := appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(f.ts.URL+"/v1"), appwrite.WithProject("nope"), appwrite.WithKey(f.key))
	_, err = callJSON(t, other, "GET", "/webhooks", nil)
	wantErr(t, err, 404, ErrProjectNotFound)

	// A key of another project is unknown here: the caller is a guest without scopes.
	if err := f.s.SeedProject(ProjectSpec{ID: "proj2"}); err != nil {
		t.Fatal(err)
	}
	wrong := appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(f.ts.URL+"/v1"), appwrite.WithProject("proj2"), appwrite.WithKey(f.key))
	_, err = callJSON(t, wrong, "GET", "/webhooks", nil)
	wantErr(t, err, 401, ErrGeneralUnauthorizedScope)
	if !strings.Contains(err.Error(), "(role: guests)") {
		t.Errorf("message: %v", err)
	}
	// No project header at all.
	none := appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(f.ts.URL+"/v1"), appwrite.WithKey(f.key))
	_, err = callJSON(t, none, "GET", "/webhooks", nil)
	wantErr(t, err, 401, ErrGeneralUnauthorizedScope)

	// Expired key.
	old, err := f.s.CreateKeyExpiring(testProject, projectScopes, time.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	_, err = tablesdb.New(f.sdk(old)).GetTable("db1", "t1")
	wantErr(t, err, 401, ErrProjectKeyExpired)
}

func TestDynamicKeys(t *testing.T) {
	for _, eph := range []bool{false, true} {
		f := newFixture(t, Options{EphemeralKeys: eph})
		seedRowsTable(t, f)
		key, err := f.s.DynamicKey(testProject, []string{"rows.read", "rows.write"}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		prefix := "dynamic_"
		if eph {
			prefix = "ephemeral_"
		}
		if !strings.HasPrefix(key, prefix) {
			t.Fatalf("key %q lacks %s", key[:12], prefix)
		}
		db := tablesdb.New(f.sdk(key))
		if _, err := db.CreateRow("db1", "t1", "r1", map[string]any{"title": "x"}); err != nil {
			t.Fatal(err)
		}
		_, err = db.GetTable("db1", "t1")
		wantErr(t, err, 401, ErrGeneralUnauthorizedScope)
		// The same JWT under the other prefix is accepted too.
		alt := "ephemeral_" + strings.TrimPrefix(key, prefix)
		if eph {
			alt = "dynamic_" + strings.TrimPrefix(key, prefix)
		}
		if _, err := tablesdb.New(f.sdk(alt)).GetRow("db1", "t1", "r1"); err != nil {
			t.Fatal(err)
		}
		// Another project's dynamic key is a guest here; an expired one is project_key_expired.
		otherKey, _ := f.s.DynamicKey("proj2", []string{"rows.read"}, time.Minute)
		_, err = tablesdb.New(f.sdk(otherKey)).GetRow("db1", "t1", "r1")
		wantErr(t, err, 401, ErrGeneralUnauthorizedScope)
		expired, _ := f.s.DynamicKey(testProject, []string{"rows.read"}, -time.Minute)
		_, err = tablesdb.New(f.sdk(expired)).GetRow("db1", "t1", "r1")
		wantErr(t, err, 401, ErrProjectKeyExpired)
	}
}

// jwksKey builds the RSA key from the served JWKS document (RFC 7517), independently of the server.
func jwksKey(t *testing.T, url string) (*rsa.PublicKey, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Keys []struct{ Kty, Use, Alg, Kid, N, E string } `json:"keys"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Keys) != 1 || doc.Keys[0].Kty != "RSA" || doc.Keys[0].Alg != "RS256" || doc.Keys[0].Use != "sig" {
		t.Fatalf("jwks: %+v", doc)
	}
	n, _ := base64.RawURLEncoding.DecodeString(doc.Keys[0].N)
	e, _ := base64.RawURLEncoding.DecodeString(doc.Keys[0].E)
	return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}, doc.Keys[0].Kid
}

func TestOAuthIssuerAndAdminMode(t *testing.T) {
	f := newFixture(t, Options{})
	seedRowsTable(t, f)
	// Discovery points at the JWKS.
	resp, err := http.Get(f.ts.URL + "/v1/oauth2/console/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var disc map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&disc)
	resp.Body.Close()
	if disc["issuer"] != f.ts.URL+"/v1/oauth2/console" || disc["jwks_uri"] != f.ts.URL+"/v1/oauth2/console/.well-known/jwks.json" {
		t.Fatalf("discovery: %v", disc)
	}
	pub, kid := jwksKey(t, disc["jwks_uri"].(string))

	tok, err := f.s.MintToken("user-1", "https://mcp.example.test/mcp", CloudScopes("webhooks.read", "webhooks.write", "rows.read"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	claims := jwt.MapClaims{}
	parsed, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return pub, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(f.ts.URL+"/v1/oauth2/console"),
		jwt.WithAudience("https://mcp.example.test/mcp"), jwt.WithExpirationRequired())
	if err != nil {
		t.Fatalf("independent verification: %v", err)
	}
	if parsed.Header["kid"] != kid || claims["sub"] != "user-1" || claims["scope"] != "project:webhooks.read project:webhooks.write project:rows.read" {
		t.Fatalf("claims: %v header %v", claims, parsed.Header)
	}

	bearer := func(token string, admin bool) map[string]any {
		h := map[string]any{"content-type": "application/json", "Authorization": "Bearer " + token}
		if admin {
			h["X-Appwrite-Mode"] = "admin"
		}
		return h
	}
	c := appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(f.ts.URL+"/v1"), appwrite.WithProject(testProject))
	if _, err := c.Call("POST", "/webhooks", bearer(tok, true), webhookParams("by-oauth")); err != nil {
		t.Fatalf("admin-mode bearer: %v", err)
	}
	_, err = c.Call("GET", "/webhooks", bearer(tok, false), nil)
	wantErr(t, err, 401, ErrGeneralUnauthorizedScope)
	_, err = c.Call("GET", "/tablesdb/db1/tables/t1", bearer(tok, true), nil)
	wantErr(t, err, 401, ErrGeneralUnauthorizedScope)
	// Appwrite Cloud's token scopes are project:<scope> and project:all; a bare name is an API-key scope that
	// no access token carries, and grants nothing.
	bare, _ := f.s.MintToken("user-1", "", []string{"webhooks.read", "all"}, time.Hour)
	_, err = c.Call("GET", "/webhooks", bearer(bare, true), nil)
	wantErr(t, err, 401, ErrGeneralUnauthorizedScope)
	all, _ := f.s.MintToken("user-1", "", []string{"openid", CloudScopeAll}, time.Hour)
	if _, err := c.Call("GET", "/tablesdb/db1/tables/t1", bearer(all, true), nil); err != nil {
		t.Fatalf("project:all: %v", err)
	}
	stranger, _ := f.s.MintToken("user-2", "", CloudScopes("webhooks.read"), time.Hour)
	_, err = c.Call("GET", "/webhooks", bearer(stranger, true), nil)
	wantErr(t, err, 401, ErrUserUnauthorized)
	expired, _ := f.s.MintToken("user-1", "", CloudScopes("webhooks.read"), -time.Minute)
	_, err = c.Call("GET", "/webhooks", bearer(expired, true), nil)
	wantErr(t, err, 401, ErrUserUnauthorized)
	_, err = c.Call("GET", "/webhooks", bearer(tok+"x", true), nil)
	wantErr(t, err, 401, ErrUserUnauthorized)

	// Events caused by an OAuth user carry the user id in deliveries.
	rec := newRecorder(t)
	createHook(t, f, "u", rec.ts.URL, []string{"databases.*.tables.*.rows.*.create"}, nil)
	rowTok, _ := f.s.MintToken("user-1", "", CloudScopes("rows.write"), time.Hour)
	if _, err := c.Call("POST", "/tablesdb/db1/tables/t1/rows", bearer(rowTok, true),
		map[string]any{"rowId": "unique()", "data": map[string]any{"title": "t"}}); err != nil {
		t.Fatal(err)
	}
	f.flush(t)
	if got := rec.all(); len(got) != 1 || got[0].Header.Get("X-Appwrite-Webhook-User-Id") != "user-1" {
		t.Fatalf("user id header: %+v", got)
	}
}
