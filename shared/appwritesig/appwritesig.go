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
	"sync"

	"appwrite-agent/shared/hmacpool"
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

// pooledMAC is mac(secret, base + path, body) with an HMAC of macs (the same crypto/hmac HMAC, keyed once
// per secret).
func pooledMAC(macs *hmacpool.Pool, secret, base, path string, body []byte) [sha1.Size]byte {
	var kb [SecretLength]byte
	m := macs.Get(append(kb[:0], secret...))
	m.Scratch = append(append(m.Scratch[:0], base...), path...)
	m.Write(m.Scratch)
	m.Write(body)
	var sum [sha1.Size]byte
	copy(sum[:], m.Sum())
	macs.Put(m)
	return sum
}

// strictStd is base64.StdEncoding.Strict(), made once (Strict returns a new Encoding each call).
var strictStd = base64.StdEncoding.Strict()

// decodeSignature decodes a signature header (at most MaxSignatureLength characters) into buf.
func decodeSignature(buf *[MaxSignatureLength]byte, signature string) ([]byte, error) {
	var sb [MaxSignatureLength]byte
	n, err := strictStd.Decode(buf[:], append(sb[:0], signature...))
	return buf[:n], err
}

// Verify reports whether signature is Appwrite's signature of url + body
// under secret. The comparison is constant time; a malformed signature is
// simply false.
func Verify(secret, url string, body []byte, signature string) bool {
	if len(signature) > MaxSignatureLength || strings.ContainsAny(signature, "\r\n") {
		return false
	}
	var buf [MaxSignatureLength]byte
	got, err := decodeSignature(&buf, signature)
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
	// derived remembers the secrets derived for recently seen webhooks (one
	// HMAC-SHA256 and its allocations saved per delivery); nil in a Keys not
	// made by ParseKeys.
	derived *secretCache
	// macs keeps HMAC-SHA1 states keyed with those secrets (hmacpool, at most hmacpool.DefaultMaxKeys
	// secrets: a flood of made-up ids costs a few hundred KiB at most); nil in a Keys not made by ParseKeys.
	macs *hmacpool.Pool
}

// secretCache maps (key index, webhook id) to the derived secret, holding at
// most maxCached entries: when full it starts over, so a flood of made-up
// webhook ids costs memory only up to that bound.
type secretCache struct {
	mu sync.Mutex
	m  map[cacheKey]string
}

type cacheKey struct {
	key int
	id  string
}

const maxCached = 4096

// secret returns derive(k.keys[i], webhookID), from the cache when it can.
func (k *Keys) secret(i int, webhookID string) string {
	c := k.derived
	if c == nil {
		return derive(k.keys[i], webhookID)
	}
	ck := cacheKey{i, webhookID}
	c.mu.Lock()
	s, ok := c.m[ck]
	c.mu.Unlock()
	if ok {
		return s
	}
	s = derive(k.keys[i], webhookID)
	c.mu.Lock()
	if len(c.m) >= maxCached {
		clear(c.m)
	}
	c.m[ck] = s
	c.mu.Unlock()
	return s
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
	k := &Keys{derived: &secretCache{m: map[cacheKey]string{}}, macs: hmacpool.New(sha1.New, 0)}
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
func (k *Keys) IDs() []string { return append([]string(nil), k.ids...) }

// Secret returns the secret to give Appwrite for the webhook with this id
// (derived with the primary key): base64url(HMAC-SHA256(key, label || id)),
// 43 characters.
func (k *Keys) Secret(webhookID string) (string, error) {
	if webhookID == "" || len(webhookID) > 255 {
		return "", ErrBadInput
	}
	return k.secret(0, webhookID), nil
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
	return k.VerifyAt(webhookID, url, "", body, signature)
}

// VerifyAt is Verify for the URL base + path, without joining them.
func (k *Keys) VerifyAt(webhookID, base, path string, body []byte, signature string) bool {
	if webhookID == "" || len(webhookID) > 255 || len(signature) > MaxSignatureLength || strings.ContainsAny(signature, "\r\n") {
		return false
	}
	var buf [MaxSignatureLength]byte
	got, err := decodeSignature(&buf, signature)
	if err != nil {
		return false
	}
	ok := 0
	for i := range k.keys {
		var sum [sha1.Size]byte
		if k.macs != nil {
			sum = pooledMAC(k.macs, k.secret(i, webhookID), base, path, body)
		} else {
			sum = mac(k.secret(i, webhookID), base+path, body)
		}
		if hmac.Equal(sum[:], got) {
			ok = 1
		}
	}
	return ok == 1
}
