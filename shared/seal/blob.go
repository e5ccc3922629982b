package seal

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
)

// blobVersion marks a sealed blob; it differs from Version so a subscription envelope never opens as a
// blob or the other way round (the associated data differs too).
const blobVersion = 0x42

// MaxBlobBytes bounds the plaintext of a blob.
const MaxBlobBytes = 1 << 20

// SealBlob encrypts and authenticates plaintext with the primary key for purpose (bound as associated
// data, so a blob sealed for one purpose never opens for another) and returns base64url text:
// version 0x42, key id length and key id, 12-byte nonce, ciphertext and tag. It is for short-lived data the
// server hands to itself through an untrusted channel, such as the ingress's delayed retry jobs.
func (r *Keyring) SealBlob(purpose string, plaintext []byte) (string, error) {
	if len(plaintext) > MaxBlobBytes {
		return "", fmt.Errorf("%w: blob is %d bytes, limit %d", ErrInvalid, len(plaintext), MaxBlobBytes)
	}
	kid := r.Primary()
	hdr := append([]byte{blobVersion, byte(len(kid))}, kid...)
	nonce := make([]byte, nonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := append(append(hdr, nonce...), r.aeads[kid].Seal(nil, nonce, plaintext, blobAD(hdr, purpose))...)
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// OpenBlob reverses SealBlob for the same purpose; any key of the ring that the blob names opens it.
func (r *Keyring) OpenBlob(purpose, text string) ([]byte, error) {
	if len(text) > 2*MaxBlobBytes {
		return nil, ErrMalformed
	}
	if strings.ContainsAny(text, "\r\n") { // encoding/base64 skips CR and LF
		return nil, ErrMalformed
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(text)
	if err != nil || len(raw) < 2 {
		return nil, ErrMalformed
	}
	if raw[0] != blobVersion {
		return nil, ErrUnknownVersion
	}
	n := int(raw[1])
	if n == 0 || n > MaxKeyIDLength || len(raw) < 2+n+nonceSize+tagSize {
		return nil, ErrMalformed
	}
	aead, ok := r.aeads[string(raw[2:2+n])]
	if !ok {
		return nil, ErrUnknownKey
	}
	hdr := raw[:2+n]
	nonce := raw[2+n : 2+n+nonceSize]
	pt, err := aead.Open(nil, nonce, raw[2+n+nonceSize:], blobAD(hdr, purpose))
	if err != nil {
		return nil, ErrAuth
	}
	return pt, nil
}

func blobAD(hdr []byte, purpose string) []byte {
	return append([]byte("appwrite-agent/seal/blob/v1\x00"+purpose+"\x00"), hdr...)
}
