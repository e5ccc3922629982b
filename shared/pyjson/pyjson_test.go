package pyjson

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

// The expected values below are what CPython 3.10/3.11 prints.

var tenth = 0.1

func TestFloatRepr(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{49, "49.0"}, {0.5, "0.5"}, {math.Copysign(0, -1), "-0.0"}, {0, "0.0"}, {1e16, "1e+16"}, {1e15, "1000000000000000.0"},
		{123456789.125, "123456789.125"}, {1.5e-7, "1.5e-07"}, {0.0001, "0.0001"}, {0.00001, "1e-05"},
		{1e300, "1e+300"}, {5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
		{tenth + 2*tenth, "0.30000000000000004"}, {-12.5, "-12.5"}, {9007199254740993, "9007199254740992.0"},
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"},
	} {
		if got := FloatRepr(c.f); got != c.want {
			t.Errorf("FloatRepr(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}

func TestReprString(t *testing.T) {
	for in, want := range map[string]string{
		"x": "'x'", "it's": `"it's"`, `say "hi"`: `'say "hi"'`, `it's "x"`: `'it\'s "x"'`,
		"a\nb\tc\r": `'a\nb\tc\r'`, "\x07\x7f": `'\x07\x7f'`, "é😀": "'é😀'", "\u200b\u00a0\u2028": `'\u200b\xa0\u2028'`,
		`back\slash`: `'back\\slash'`, "\U000e0001": `'\U000e0001'`,
	} {
		if got := ReprString(in); got != want {
			t.Errorf("ReprString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestLowerStrip(t *testing.T) {
	for in, want := range map[string]string{
		"DARK": "dark", "İstanbul": "i̇stanbul", "ΟΔΟΣ": "οδος", "ΣΑΣ Σ": "σας σ", "AΣ.b": "aσ.b", "AΣ": "aς", "AΣ b": "aς b", "ǅ": "ǆ", "ΑΣ'Β": "ασ'β",
	} {
		if got := Lower(in); got != want {
			t.Errorf("Lower(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		" x ": "x", "\x1c\x1dx\x1e\x1f": "x", "\u00a0x\u3000": "x", "\u200bx": "\u200bx", "\ufeffx": "\ufeffx", "\u0085x\u2028": "x",
	} {
		if got := Strip(in); got != want {
			t.Errorf("Strip(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for in, want := range map[string]string{
		"[":            "Expecting value: line 1 column 2 (char 1)",
		"{":            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
		`{"a"`:         "Expecting ':' delimiter: line 1 column 5 (char 4)",
		`{"a":1,}`:     "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)",
		"[1,]":         "Expecting value: line 1 column 4 (char 3)",
		"[1 2]":        "Expecting ',' delimiter: line 1 column 4 (char 3)",
		`["abc`:        "Unterminated string starting at: line 1 column 2 (char 1)",
		`["a\x"]`:      "Invalid \\escape: line 1 column 4 (char 3)",
		`["\u12"]`:     "Invalid \\uXXXX escape: line 1 column 4 (char 3)",
		"[\"a\nb\"]":   "Invalid control character at: line 1 column 4 (char 3)",
		"[1] x":        "Extra data: line 1 column 5 (char 4)",
		"\ufeff[]":     "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)",
		"[\n\"é\" 1]":  "Expecting ',' delimiter: line 2 column 5 (char 6)",
		"[-]":          "Expecting value: line 1 column 2 (char 1)",
		"[01]":         "Expecting ',' delimiter: line 1 column 3 (char 2)",
		`["\ud800\u12`: "Invalid \\uXXXX escape: line 1 column 10 (char 9)",
	} {
		_, err := Decode(in)
		if err == nil || err.Error() != want {
			t.Errorf("Decode(%q) error = %v, want %q", in, err, want)
		}
	}
}

func TestDecodeValues(t *testing.T) {
	v, err := Decode(`{"a":1,"b":[true,null,-0,1.50,1e400,NaN,-Infinity,"\ud83d\ude00\u00e9"],"a":2}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.Repr(), "{'a': 2, 'b': [True, None, 0, 1.5, inf, nan, -inf, '😀é']}"; got != want {
		t.Errorf("Repr = %s, want %s", got, want)
	}
}

// FuzzDecode checks Decode against encoding/json on documents without the
// Python-only constants: both must accept or reject the same input.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`[]`, `{"a":[1,2.5e3,"x\u00e9"]}`, `[1,]`, `{"a" 1}`, `"\ud800"`, `[-0.0e+1]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = ValidUTF8(s)
		v, err := Decode(s)
		if err == nil {
			_ = v.Repr()
		}
		for _, c := range []string{"NaN", "Infinity"} {
			if contains(s, c) {
				return
			}
		}
		if (err == nil) != json.Valid([]byte(s)) {
			// encoding/json trims only JSON whitespace at the ends, as Decode does.
			t.Fatalf("Decode(%q) err=%v, json.Valid=%v", s, err, json.Valid([]byte(s)))
		}
	})
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func ExampleDecode() {
	_, err := Decode(`[{"type": "toast",}]`)
	fmt.Println(err)
	v, _ := Decode(`{"type": ["a", 1, 2.0, null]}`)
	fmt.Println(v.Lookup("type").Repr())
	// Output:
	// Expecting property name enclosed in double quotes: line 1 column 19 (char 18)
	// ['a', 1, 2.0, None]
}
