// Package testissuer is a minimal OAuth issuer for tests of the mcp-events function: it serves a JWKS and
// mints RS256 access tokens. Only tests import it.
package testissuer

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issuer is a test issuer listening on a loopback httptest server.
type Issuer struct {
	// URL is the issuer (iss); the JWKS is at URL + "/jwks".
	URL string
	// Fetches counts JWKS fetches.
	Fetches atomic.Int64

	srv  *httptest.Server
	keys atomic.Pointer[[]*key]

	mu      sync.Mutex
	spare   []*rsa.PrivateKey // fixture keys not used yet, for Rotate
	foreign *rsa.PrivateKey   // never published
}

// fixtureKeys are 2048-bit RSA test keys (public knowledge, for tests only): generating one takes up to
// seconds on a loaded machine, more under the race detector, and the tests make several per issuer. The
// last one is the foreign key; Rotate generates a key once the others are used up.
//
//go:embed testdata/keys.pem
var fixtureKeys []byte

func parseFixtureKeys() []*rsa.PrivateKey {
	var out []*rsa.PrivateKey
	rest := fixtureKeys
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return out
		}
		k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
		if err != nil {
			panic("testissuer: testdata/keys.pem: " + err.Error())
		}
		out = append(out, k.(*rsa.PrivateKey))
	}
}

type key struct {
	kid  string
	priv *rsa.PrivateKey
}

// New starts an issuer with one key. Close it when done.
func New() *Issuer {
	is := &Issuer{}
	keys := parseFixtureKeys()
	is.spare, is.foreign = keys[:len(keys)-1], keys[len(keys)-1]
	is.Rotate()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		is.Fetches.Add(1)
		var out []map[string]string
		for _, k := range *is.keys.Load() {
			out = append(out, map[string]string{
				"kty": "RSA", "use": "sig", "alg": "RS256", "kid": k.kid,
				"n": base64.RawURLEncoding.EncodeToString(k.priv.N.Bytes()),
				"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.priv.E)).Bytes()),
			})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": out})
	})
	is.srv = httptest.NewServer(mux)
	is.URL = is.srv.URL
	return is
}

// Close stops the server.
func (is *Issuer) Close() { is.srv.Close() }

// Rotate adds a new signing key (used for tokens minted from now on); old keys stay published.
func (is *Issuer) Rotate() string {
	is.mu.Lock()
	var priv *rsa.PrivateKey
	if len(is.spare) > 0 {
		priv, is.spare = is.spare[0], is.spare[1:]
	}
	is.mu.Unlock()
	if priv == nil {
		var err error
		if priv, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	k := &key{kid: base64.RawURLEncoding.EncodeToString(b), priv: priv}
	var keys []*key
	if old := is.keys.Load(); old != nil {
		keys = append(keys, *old...)
	}
	keys = append([]*key{k}, keys...)
	is.keys.Store(&keys)
	return k.kid
}

// Token describes a token to mint.
type Token struct {
	Sub    string
	Aud    string
	Iss    string // default: the issuer URL
	Scopes []string
	TTL    time.Duration // default one hour; negative: already expired
	// Foreign signs with a key the JWKS does not publish.
	Foreign bool
	// Kid overrides the key id in the header.
	Kid string
}

// Mint returns a signed token.
func (is *Issuer) Mint(t Token) string {
	k := (*is.keys.Load())[0]
	if t.Foreign {
		k = &key{kid: k.kid, priv: is.foreign}
	}
	if t.Iss == "" {
		t.Iss = is.URL
	}
	if t.TTL == 0 {
		t.TTL = time.Hour
	}
	now := time.Now()
	claims := jwt.MapClaims{
		"iss": t.Iss, "sub": t.Sub, "aud": t.Aud, "iat": now.Unix(), "exp": now.Add(t.TTL).Unix(),
		"scope": strings.Join(t.Scopes, " "),
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = k.kid
	if t.Kid != "" {
		tok.Header["kid"] = t.Kid
	}
	s, err := tok.SignedString(k.priv)
	if err != nil {
		panic(err)
	}
	return s
}
