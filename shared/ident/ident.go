// Package ident makes new random ids (Unique).
package ident

import (
	"crypto/rand"
	"encoding/hex"
)

// Unique returns a new random id: 20 lowercase hexadecimal characters (80 bits from crypto/rand), the length
// of the Appwrite SDKs' ID.unique(), and an id Appwrite takes wherever it takes a custom one
// (^[a-zA-Z0-9][a-zA-Z0-9._-]{0,35}$).
func Unique() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
