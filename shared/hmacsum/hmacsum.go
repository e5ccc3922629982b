// Package hmacsum computes HMAC-SHA1 and HMAC-SHA256 (RFC 2104) of a message given in parts, in one
// allocation: crypto/hmac's New allocates two hash states, both pads and the hmac value on every call, which
// the event path pays once per signature it checks or makes. The result is the same as crypto/hmac's (see
// the tests and FuzzMatchesCryptoHMAC).
package hmacsum

import (
	"crypto/sha1"
	"crypto/sha256"
)

// blockSize is the block size of SHA-1 and SHA-256.
const blockSize = 64

// SHA256 returns HMAC-SHA256(key, parts[0] || parts[1] || ...).
func SHA256(key []byte, parts ...[]byte) [sha256.Size]byte {
	var k [blockSize]byte
	if len(key) > blockSize {
		h := sha256.Sum256(key)
		copy(k[:], h[:])
	} else {
		copy(k[:], key)
	}
	inner := sha256.Sum256(padded(&k, 0x36, parts))
	var outer [blockSize + sha256.Size]byte
	pad(outer[:blockSize], &k, 0x5c)
	copy(outer[blockSize:], inner[:])
	return sha256.Sum256(outer[:])
}

// SHA1 returns HMAC-SHA1(key, parts[0] || parts[1] || ...).
func SHA1(key []byte, parts ...[]byte) [sha1.Size]byte {
	var k [blockSize]byte
	if len(key) > blockSize {
		h := sha1.Sum(key)
		copy(k[:], h[:])
	} else {
		copy(k[:], key)
	}
	inner := sha1.Sum(padded(&k, 0x36, parts))
	var outer [blockSize + sha1.Size]byte
	pad(outer[:blockSize], &k, 0x5c)
	copy(outer[blockSize:], inner[:])
	return sha1.Sum(outer[:])
}

// padded returns the key XOR p followed by the parts: the inner hash's whole input.
func padded(k *[blockSize]byte, p byte, parts [][]byte) []byte {
	n := blockSize
	for _, part := range parts {
		n += len(part)
	}
	buf := make([]byte, blockSize, n)
	pad(buf, k, p)
	for _, part := range parts {
		buf = append(buf, part...)
	}
	return buf
}

func pad(dst []byte, k *[blockSize]byte, p byte) {
	for i := range blockSize {
		dst[i] = k[i] ^ p
	}
}
