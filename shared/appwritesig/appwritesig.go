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
	"slices"
	"strings"

	"appwrite-agent/shared/keylist"
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
	sum := mac(secret, url, body)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// mac computes HMAC-SHA1(secret, url + body) with crypto/hmac.
func mac(secret, url string, body []byte) [sha1.Size]byte {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(url))
	m.Write(body)
	var sum [sha1.Size]byte
	m.Sum(sum[:0])
	return sum
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
	sum := mac(secret, url, body)
	return hmac.Equal(sum[:], got)
}

// Keys is an ordered set of server keys: the first derives secrets, all
// verify. Its keys never change; it is safe for concurrent use.
type Keys struct {
	ids  []string
	keys [][]byte
}

// ParseKeys parses "id:base64,id:base64,..." (standard or URL base64, padded
// or not). Ids are 1-32 characters of [A-Za-z0-9._-] and unique; every key is
// at least MinKeyBytes long, not repeated, and not visibly weak (a single
// repeated byte or fewer than 8 distinct bytes). The first entry is primary.
func ParseKeys(s string) (*Keys, error) {
	keys, err := keylist.Parse(s, keylist.Rules{MaxIDLength: 32, MinBytes: MinKeyBytes, MaxKeys: MaxKeys,
		NoKeys: ErrNoKeys, Bad: ErrBadKeys, Weak: ErrWeakKey})
	if err != nil {
		return nil, err
	}
	k := &Keys{}
	for _, key := range keys {
		k.ids = append(k.ids, key.ID)
		k.keys = append(k.keys, key.Bytes)
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
func (k *Keys) IDs() []string { return slices.Clone(k.ids) }

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
		sum := mac(derive(key, webhookID), url, body)
		if hmac.Equal(sum[:], got) {
			ok = 1
		}
	}
	return ok == 1
}
