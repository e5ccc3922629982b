// Package ident checks identifiers of the shape "one character of a set, then between min and max characters
// of another set", all ASCII: Appwrite ids, memory keys, turn ids, MCP connection ids, prompt ids; and makes
// new random ids (Unique). It does
// what an anchored regular expression such as ^[a-z][a-z0-9_-]{1,63}$ does, without compiling one when the
// process starts (a counted repetition compiles into one instruction per count: about 0.1 ms and 100 KB
// each) and in a few nanoseconds per check.
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

// Set is a set of ASCII characters.
type Set [2]uint64

// Chars returns the set of the characters in spec, where "x-y" stands for the range from x to y, as inside
// the brackets of a regular expression ("a-zA-Z0-9._-"; a '-' at either end is itself). It panics on a
// character beyond ASCII or a reversed range: specs are constants.
func Chars(spec string) Set {
	var s Set
	for i := 0; i < len(spec); i++ {
		lo, hi := spec[i], spec[i]
		if i+2 < len(spec) && spec[i+1] == '-' {
			hi = spec[i+2]
			i += 2
		}
		if hi >= 0x80 || lo > hi {
			panic("ident: bad character set " + spec)
		}
		for c := lo; ; c++ {
			s[c>>6] |= 1 << (c & 63)
			if c == hi {
				break
			}
		}
	}
	return s
}

// Has reports whether c is in the set.
func (s Set) Has(c byte) bool { return c < 0x80 && s[c>>6]&(1<<(c&63)) != 0 }

// Pattern is one character of First followed by MinRest to MaxRest characters of Rest.
type Pattern struct {
	First, Rest      Set
	MinRest, MaxRest int
}

// Match reports whether s has the pattern's shape.
func (p *Pattern) Match(s string) bool {
	if len(s) < 1+p.MinRest || len(s) > 1+p.MaxRest || !p.First.Has(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !p.Rest.Has(s[i]) {
			return false
		}
	}
	return true
}

// appwriteID is Appwrite's custom id (utopia-php/database's UID/Key validator behind CustomId): 1 to 36
// characters of a-z A-Z 0-9 . - _, not starting with a special character.
var appwriteID = Pattern{First: Chars("a-zA-Z0-9"), Rest: Chars("a-zA-Z0-9._-"), MaxRest: 35}

// AppwriteID reports whether s is an id Appwrite takes as a custom id (of a project, a function, a
// database, a deployment, ...).
func AppwriteID(s string) bool { return appwriteID.Match(s) }
