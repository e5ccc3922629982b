package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// EnvKeys is the environment variable LoadKeyring reads.
const EnvKeys = "SEAL_KEYS"

// Key format limits.
const (
	// KeyBytes is the size of every sealing key (AES-256).
	KeyBytes = 32
	// MaxKeyIDLength bounds a key id; the id travels in every envelope, so
	// keep it short ("k1", "2026a").
	MaxKeyIDLength = 16
	// MaxKeys bounds how many keys a Keyring holds.
	MaxKeys = 16
)

// Keyring errors.
var (
	ErrNoKeys  = errors.New("seal: no sealing key configured") // empty or unset key list
	ErrWeakKey = errors.New("seal: sealing key is too weak")   // wrong size or low entropy
	ErrBadKeys = errors.New("seal: malformed sealing keys")    // syntax, duplicate id or key
)

// Keyring is an ordered set of AES-256 keys with ids. The first key is the
// primary: Seal always uses it. Open uses whichever key the envelope names, so
// envelopes sealed under an older key still open while that key is listed.
// A Keyring is immutable and safe for concurrent use.
type Keyring struct {
	ids   []string
	aeads map[string]cipher.AEAD
}

// ParseKeyring parses a key list:
//
//	id:base64[,id:base64...]
//
// Ids are 1-16 characters of [A-Za-z0-9._-], unique. Each key is exactly 32
// bytes in standard or URL-safe base64, padded or not (generate one with
// `openssl rand -base64 32`). Keys must differ from each other and must not be
// visibly weak (fewer than 8 distinct byte values, e.g. all zeros). The FIRST
// entry is the primary key used for new envelopes; to rotate, prepend a new
// key and keep the old ones listed until every envelope sealed under them has
// been refreshed or has expired.
func ParseKeyring(s string) (*Keyring, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, ErrNoKeys
	}
	r := &Keyring{aeads: map[string]cipher.AEAD{}}
	seenKey := map[string]bool{}
	for _, entry := range strings.Split(s, ",") {
		id, b64, ok := strings.Cut(strings.TrimSpace(entry), ":")
		if !ok || !validKeyID(id) {
			return nil, fmt.Errorf("%w: entries are id:base64 with ids of [A-Za-z0-9._-]{1,%d}", ErrBadKeys, MaxKeyIDLength)
		}
		if _, dup := r.aeads[id]; dup {
			return nil, fmt.Errorf("%w: duplicate key id %q", ErrBadKeys, id)
		}
		key, err := decodeB64(b64)
		if err != nil {
			return nil, fmt.Errorf("%w: key %q is not base64", ErrBadKeys, id)
		}
		if len(key) != KeyBytes {
			return nil, fmt.Errorf("%w: key %q is %d bytes, want %d", ErrWeakKey, id, len(key), KeyBytes)
		}
		if n := distinctBytes(key); n < 8 {
			return nil, fmt.Errorf("%w: key %q has only %d distinct byte values; generate it with a CSPRNG", ErrWeakKey, id, n)
		}
		if seenKey[string(key)] {
			return nil, fmt.Errorf("%w: key %q repeats another key", ErrBadKeys, id)
		}
		seenKey[string(key)] = true
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		r.ids = append(r.ids, id)
		r.aeads[id] = aead
		if len(r.ids) > MaxKeys {
			return nil, fmt.Errorf("%w: more than %d keys", ErrBadKeys, MaxKeys)
		}
	}
	return r, nil
}

// LoadKeyring parses the EnvKeys environment variable. Unset, empty, malformed
// or weak keys are errors: the caller must refuse to start.
func LoadKeyring() (*Keyring, error) {
	r, err := ParseKeyring(os.Getenv(EnvKeys))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvKeys, err)
	}
	return r, nil
}

// Primary returns the id of the key new envelopes are sealed with.
func (r *Keyring) Primary() string { return r.ids[0] }

// IDs returns every key id, primary first.
func (r *Keyring) IDs() []string { return append([]string(nil), r.ids...) }

func validKeyID(id string) bool {
	if id == "" || len(id) > MaxKeyIDLength {
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

func distinctBytes(b []byte) int {
	var seen [256]bool
	n := 0
	for _, c := range b {
		if !seen[c] {
			seen[c] = true
			n++
		}
	}
	return n
}
