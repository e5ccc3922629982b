package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"fmt"
	"os"
	"slices"

	"appwrite-agent/shared/keylist"
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
	// labelKeys are the label MAC keys derived from each key, in the order of ids (label.go).
	labelKeys [][]byte
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
	keys, err := keylist.Parse(s, keylist.Rules{MaxIDLength: MaxKeyIDLength, MinBytes: KeyBytes, MaxBytes: KeyBytes, MaxKeys: MaxKeys,
		NoKeys: ErrNoKeys, Bad: ErrBadKeys, Weak: ErrWeakKey})
	if err != nil {
		return nil, err
	}
	r := &Keyring{aeads: map[string]cipher.AEAD{}}
	for _, k := range keys {
		block, err := aes.NewCipher(k.Bytes)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		r.ids = append(r.ids, k.ID)
		r.aeads[k.ID] = aead
		r.labelKeys = append(r.labelKeys, labelKey(k.Bytes))
	}
	return r, nil
}

// aead returns the AEAD of key id.
func (r *Keyring) aead(id []byte) (cipher.AEAD, bool) {
	a, ok := r.aeads[string(id)]
	return a, ok
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
func (r *Keyring) IDs() []string { return slices.Clone(r.ids) }
