// Package appwritesig derives, computes and checks the signature Appwrite puts
// on webhook deliveries.
//
// Appwrite signs every delivery with
//
//	X-Appwrite-Webhook-Signature: base64(HMAC-SHA1(key = webhook secret string, msg = stored URL + raw body))
//
// The webhook secret is not random here: it is derived from a server key and
// the webhook id (HMAC-SHA256), so the ingress can recompute it from the id in
// the request path and verify a delivery with nothing stored. A Keys value
// holds one or more server keys: the first derives new secrets, all of them
// verify, so the server key can rotate (create webhooks with the new key,
// keep the old key listed until every webhook was refreshed).
//
// Key format (environment variable EnvKeys): comma-separated "id:base64"
// entries, each key at least 32 bytes, for example
//
//	k2:3q2+7w...,k1:AAEC...
//
// All comparisons are constant time.
package appwritesig

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// EnvKeys is the environment variable LoadKeys reads.
const EnvKeys = "APPWRITE_WEBHOOK_SECRET_KEYS"

// Limits.
const (
	// MinKeyBytes is the smallest accepted server key.
	MinKeyBytes = 32
	// MaxKeys bounds how many server keys a Keys value holds.
	MaxKeys = 8
	// SecretLength is the length of a derived secret (base64url of 32 bytes);
	// Appwrite accepts 8 to 256 characters.
	SecretLength = 43
	// MaxSignatureLength bounds the signature header Verify parses.
	MaxSignatureLength = 64
)

// derivationLabel separates this HMAC use from every other use of the key.
const derivationLabel = "appwrite-agent/appwritesig/webhook-secret/v1\x00"

// Errors returned by this package.
var (
	ErrNoKeys   = errors.New("appwritesig: no server key configured") // empty or unset key list
	ErrWeakKey  = errors.New("appwritesig: server key is too weak")   // short or low entropy
	ErrBadKeys  = errors.New("appwritesig: malformed server keys")    // syntax, duplicate id or key
	ErrBadInput = errors.New("appwritesig: invalid webhook id")       // empty or longer than 255 bytes
)

// Sign returns base64(HMAC-SHA1(secret, url + body)), the value Appwrite
// sends in X-Appwrite-Webhook-Signature.
func Sign(secret, url string, body []byte) string {
	return base64.StdEncoding.EncodeToString(mac(secret, url, body))
}

func mac(secret, url string, body []byte) []byte {
	h := hmac.New(sha1.New, []byte(secret))
	h.Write([]byte(url))
	h.Write(body)
	return h.Sum(nil)
}

// Verify reports whether signature is Appwrite's signature of url + body
// under secret. The comparison is constant time; a malformed signature is
// simply false.
func Verify(secret, url string, body []byte, signature string) bool {
	if len(signature) > MaxSignatureLength || strings.ContainsAny(signature, "\r\n") {
		return false
	}
	got, err := base64.StdEncoding.Strict().DecodeString(signature)
	if err != nil {
		return false
	}
	return hmac.Equal(mac(secret, url, body), got)
}

// Keys is an ordered set of server keys: the first derives secrets, all
// verify. It is immutable and safe for concurrent use.
type Keys struct {
	ids  []string
	keys [][]byte
}

// ParseKeys parses "id:base64,id:base64,..." (standard or URL base64, padded
// or not). Ids are 1-32 characters of [A-Za-z0-9._-] and unique; every key is
// at least MinKeyBytes long, not repeated, and not visibly weak (a single
// repeated byte or fewer than 8 distinct bytes). The first entry is primary.
func ParseKeys(s string) (*Keys, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, ErrNoKeys
	}
	k := &Keys{}
	seen := map[string]bool{}
	for _, entry := range strings.Split(s, ",") {
		id, b64, ok := strings.Cut(strings.TrimSpace(entry), ":")
		if !ok || !validID(id) {
			return nil, fmt.Errorf("%w: entries are id:base64 with ids of [A-Za-z0-9._-]{1,32}", ErrBadKeys)
		}
		if seen["id:"+id] {
			return nil, fmt.Errorf("%w: duplicate key id %q", ErrBadKeys, id)
		}
		key, err := decodeB64(b64)
		if err != nil {
			return nil, fmt.Errorf("%w: key %q is not base64", ErrBadKeys, id)
		}
		if err := checkStrength(key); err != nil {
			return nil, fmt.Errorf("%w: key %q: %v", ErrWeakKey, id, err)
		}
		if seen["key:"+string(key)] {
			return nil, fmt.Errorf("%w: key %q repeats another key", ErrBadKeys, id)
		}
		seen["id:"+id], seen["key:"+string(key)] = true, true
		k.ids = append(k.ids, id)
		k.keys = append(k.keys, key)
		if len(k.ids) > MaxKeys {
			return nil, fmt.Errorf("%w: more than %d keys", ErrBadKeys, MaxKeys)
		}
	}
	return k, nil
}

// LoadKeys parses the EnvKeys environment variable; unset or empty is
// ErrNoKeys (a startup error, never a default).
func LoadKeys() (*Keys, error) {
	k, err := ParseKeys(os.Getenv(EnvKeys))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvKeys, err)
	}
	return k, nil
}

// IDs returns the key ids, primary first.
func (k *Keys) IDs() []string { return append([]string(nil), k.ids...) }

// Secret returns the secret to give Appwrite for the webhook with this id
// (derived with the primary key): base64url(HMAC-SHA256(key, label || id)),
// 43 characters.
func (k *Keys) Secret(webhookID string) (string, error) {
	if webhookID == "" || len(webhookID) > 255 {
		return "", ErrBadInput
	}
	return derive(k.keys[0], webhookID), nil
}

func derive(key []byte, webhookID string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(derivationLabel))
	h.Write([]byte(webhookID))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// Verify reports whether signature (the X-Appwrite-Webhook-Signature value)
// is a valid Appwrite signature of url + body for the webhook with this id,
// under the secret derived from any configured key. Every key is tried (no
// early exit) and each comparison is constant time.
func (k *Keys) Verify(webhookID, url string, body []byte, signature string) bool {
	if webhookID == "" || len(webhookID) > 255 || len(signature) > MaxSignatureLength || strings.ContainsAny(signature, "\r\n") {
		return false
	}
	got, err := base64.StdEncoding.Strict().DecodeString(signature)
	if err != nil {
		return false
	}
	ok := 0
	for _, key := range k.keys {
		if hmac.Equal(mac(derive(key, webhookID), url, body), got) {
			ok = 1
		}
	}
	return ok == 1
}

func validID(id string) bool {
	if id == "" || len(id) > 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func decodeB64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.Strict().DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

func checkStrength(key []byte) error {
	if len(key) < MinKeyBytes {
		return fmt.Errorf("%d bytes, want at least %d", len(key), MinKeyBytes)
	}
	var distinct [256]bool
	n := 0
	for _, c := range key {
		if !distinct[c] {
			distinct[c] = true
			n++
		}
	}
	if n < 8 {
		return fmt.Errorf("only %d distinct byte values; generate it with a CSPRNG (openssl rand -base64 32)", n)
	}
	return nil
}
