// Package keylist parses the server-key lists of the configuration, "id:base64[,id:base64...]", the format
// of SEAL_KEYS and APPWRITE_WEBHOOK_SECRET_KEYS. The first key is the primary one; the others still verify
// or open what older keys made, so keys rotate by prepending.
package keylist

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Key is one entry of a list.
type Key struct {
	ID    string
	Bytes []byte
}

// Rules say what a list may hold, and which errors to wrap (each package keeps its own sentinels).
type Rules struct {
	// MaxIDLength bounds an id (1..MaxIDLength characters of [A-Za-z0-9._-]).
	MaxIDLength int
	// MinBytes and MaxBytes bound a key's decoded length (MaxBytes 0: no upper bound).
	MinBytes, MaxBytes int
	// MaxKeys bounds the number of entries.
	MaxKeys int
	// NoKeys is returned for an empty list, Bad wrapped for a malformed one, Weak for a weak key.
	NoKeys, Bad, Weak error
}

// minDistinctBytes is the visibly-weak threshold: a random 32-byte key has about 30 distinct byte values.
const minDistinctBytes = 8

// Parse parses s. Ids must be unique and keys must differ from each other; a key that is too short or has
// fewer than 8 distinct byte values (all zeros, a repeated pattern) is weak. Keys are standard or URL-safe
// base64, padded or not.
func Parse(s string, r Rules) ([]Key, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, r.NoKeys
	}
	var out []Key
	seenID, seenKey := map[string]bool{}, map[string]bool{}
	for _, entry := range strings.Split(s, ",") {
		id, b64, ok := strings.Cut(strings.TrimSpace(entry), ":")
		if !ok || !validID(id, r.MaxIDLength) {
			return nil, fmt.Errorf("%w: entries are id:base64 with ids of [A-Za-z0-9._-]{1,%d}", r.Bad, r.MaxIDLength)
		}
		if seenID[id] {
			return nil, fmt.Errorf("%w: duplicate key id %q", r.Bad, id)
		}
		key, err := decodeB64(b64)
		if err != nil {
			return nil, fmt.Errorf("%w: key %q is not base64", r.Bad, id)
		}
		switch {
		case r.MaxBytes > 0 && r.MinBytes == r.MaxBytes && len(key) != r.MinBytes:
			return nil, fmt.Errorf("%w: key %q is %d bytes, want %d", r.Weak, id, len(key), r.MinBytes)
		case len(key) < r.MinBytes:
			return nil, fmt.Errorf("%w: key %q is %d bytes, want at least %d", r.Weak, id, len(key), r.MinBytes)
		case r.MaxBytes > 0 && len(key) > r.MaxBytes:
			return nil, fmt.Errorf("%w: key %q is %d bytes, want at most %d", r.Weak, id, len(key), r.MaxBytes)
		}
		if n := distinctBytes(key); n < minDistinctBytes {
			return nil, fmt.Errorf("%w: key %q has only %d distinct byte values; generate it with a CSPRNG (openssl rand -base64 32)", r.Weak, id, n)
		}
		if seenKey[string(key)] {
			return nil, fmt.Errorf("%w: key %q repeats another key", r.Bad, id)
		}
		seenID[id], seenKey[string(key)] = true, true
		out = append(out, Key{ID: id, Bytes: key})
		if len(out) > r.MaxKeys {
			return nil, fmt.Errorf("%w: more than %d keys", r.Bad, r.MaxKeys)
		}
	}
	return out, nil
}

func validID(id string, max int) bool {
	if id == "" || len(id) > max {
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
