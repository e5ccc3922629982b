package seal

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
)

// Label MACs authenticate what mcp-events writes in the clear beside an envelope: the webhook name, which
// Appwrite returns on every read, where authPassword may never be returned (Appwrite Cloud). They use their
// own key, derived from each sealing key, so that no MAC can be mistaken for anything else the key makes.

// labelKeyInfo separates the label key from every other use of a sealing key.
const labelKeyInfo = "appwrite-agent/seal/label-mac/v1"

// MaxLabelMAC is the longest label MAC (HMAC-SHA256).
const MaxLabelMAC = sha256.Size

// labelKey derives the label MAC key of a sealing key: HMAC-SHA256(key, labelKeyInfo).
func labelKey(key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(labelKeyInfo))
	return m.Sum(nil)
}

// labelMAC is HMAC-SHA256(key, parts), each part prefixed by its length (uvarint), cut to n bytes.
func labelMAC(key []byte, n int, parts []string) []byte {
	m := hmac.New(sha256.New, key)
	var buf [binary.MaxVarintLen64]byte
	for _, p := range parts {
		m.Write(buf[:binary.PutUvarint(buf[:], uint64(len(p)))])
		m.Write([]byte(p))
	}
	return m.Sum(nil)[:n]
}

// LabelMAC returns the first n bytes (1..MaxLabelMAC) of the label MAC of parts under the primary key.
func (r *Keyring) LabelMAC(n int, parts ...string) []byte {
	return labelMAC(r.labelKeys[0], min(max(n, 1), MaxLabelMAC), parts)
}

// LabelMACValid reports whether mac is the label MAC of parts, of its length, under any key of the ring.
// Every key is tried and each comparison is constant time.
func (r *Keyring) LabelMACValid(mac []byte, parts ...string) bool {
	if len(mac) == 0 || len(mac) > MaxLabelMAC {
		return false
	}
	ok := 0
	for _, k := range r.labelKeys {
		ok |= subtle.ConstantTimeCompare(mac, labelMAC(k, len(mac), parts))
	}
	return ok == 1
}
