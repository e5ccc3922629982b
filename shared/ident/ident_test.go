package ident_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"appwrite-agent/shared/ident"
)

// patterns pairs each Pattern the project uses with the regular expression it replaces.
var patterns = []struct {
	re string
	p  ident.Pattern
}{
	{`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,35}$`, ident.Pattern{First: ident.Chars("a-zA-Z0-9"), Rest: ident.Chars("a-zA-Z0-9._-"), MaxRest: 35}},
	{`^[a-z][a-z0-9_.-]{1,127}$`, ident.Pattern{First: ident.Chars("a-z"), Rest: ident.Chars("a-z0-9_.-"), MinRest: 1, MaxRest: 127}},
	{`^[A-Za-z0-9][A-Za-z0-9_-]{0,35}$`, ident.Pattern{First: ident.Chars("A-Za-z0-9"), Rest: ident.Chars("A-Za-z0-9_-"), MaxRest: 35}},
	{`^[a-z][a-z0-9_-]{1,63}$`, ident.Pattern{First: ident.Chars("a-z"), Rest: ident.Chars("a-z0-9_-"), MinRest: 1, MaxRest: 63}},
	{`^[a-z][a-z0-9_.-]{0,63}$`, ident.Pattern{First: ident.Chars("a-z"), Rest: ident.Chars("a-z0-9_.-"), MaxRest: 63}},
}

var samples = []string{"", "a", "ab", "A", "0", "_a", "a_", "a.b-c_d", "a b", "é", "aé", "a\n", "a\x00", "-", ".x",
	"x" + string(rune(0x7f)), "abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz01234567890", "Z9", "a/b",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}

func TestPatternsMatchTheirRegexps(t *testing.T) {
	for _, c := range patterns {
		re := regexp.MustCompile(c.re)
		for _, s := range append(samples, fmt.Sprint(len(c.re))) {
			if got, want := c.p.Match(s), re.MatchString(s); got != want {
				t.Errorf("%s: Match(%q) = %v, regexp says %v", c.re, s, got, want)
			}
		}
	}
}

func FuzzPatternsMatchTheirRegexps(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	res := make([]*regexp.Regexp, len(patterns))
	for i, c := range patterns {
		res[i] = regexp.MustCompile(c.re)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, c := range patterns {
			if got, want := c.p.Match(s), res[i].MatchString(s); got != want {
				t.Fatalf("%s: Match(%q) = %v, regexp says %v", c.re, s, got, want)
			}
		}
	})
}

func TestCharsRefusesBadSpecs(t *testing.T) {
	for _, spec := range []string{"z-a", "a-é"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Chars(%q) did not panic", spec)
				}
			}()
			ident.Chars(spec)
		}()
	}
	if s := ident.Chars("-a-c."); !s.Has('-') || !s.Has('b') || !s.Has('.') || s.Has('d') {
		t.Error("Chars(\"-a-c.\") is wrong")
	}
}

func BenchmarkMatch(b *testing.B) {
	p := patterns[0].p
	for b.Loop() {
		p.Match("user_1234.profile-x")
	}
}

// TestUnique: an id is 20 lowercase hex characters that Appwrite takes as a custom id, and two are never the
// same.
func TestUnique(t *testing.T) {
	hex := ident.Pattern{First: ident.Chars("0-9a-f"), Rest: ident.Chars("0-9a-f"), MinRest: 19, MaxRest: 19}
	seen := map[string]bool{}
	for range 1000 {
		id := ident.Unique()
		if !hex.Match(id) || !ident.AppwriteID(id) || seen[id] {
			t.Fatalf("id %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
	}
}

// TestAppwriteID: Appwrite's custom id rule.
func TestAppwriteID(t *testing.T) {
	for id, want := range map[string]bool{
		"turn": true, "mcp-events": true, "a": true, "A.b_c-d": true, strings.Repeat("x", 36): true,
		"": false, "-chat": false, ".x": false, "_x": false, strings.Repeat("x", 37): false, "a b": false, "é": false,
	} {
		if got := ident.AppwriteID(id); got != want {
			t.Errorf("AppwriteID(%q) = %v", id, got)
		}
	}
}
