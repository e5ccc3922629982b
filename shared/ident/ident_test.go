package ident_test

import (
	"regexp"
	"testing"

	"appwrite-agent/shared/ident"
)

// TestUnique: an id is 20 lowercase hex characters that Appwrite takes as a custom id, and two are never the
// same.
func TestUnique(t *testing.T) {
	appwriteID := regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,35}$`)
	hex := regexp.MustCompile(`^[0-9a-f]{20}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := ident.Unique()
		if !hex.MatchString(id) || !appwriteID.MatchString(id) || seen[id] {
			t.Fatalf("id %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
	}
}
