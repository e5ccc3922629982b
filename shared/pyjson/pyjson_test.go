package pyjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
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

func TestDecodeErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                              "unexpected end of JSON input at byte 0",
		"  ":                            "unexpected end of JSON input at byte 2",
		"[":                             "unexpected end of JSON input at byte 1",
		"{":                             "unexpected end of JSON input at byte 1",
		`{"a"`:                          "unexpected end of JSON input at byte 4",
		`["abc`:                         "unexpected end of JSON input at byte 5",
		"nul":                           "unexpected end of JSON input at byte 3",
		`{"a":1,}`:                      "invalid character '}' looking for beginning of object key string at byte 7",
		"[1,]":                          "invalid character ']' looking for beginning of value at byte 3",
		"[1 2]":                         "invalid character '2' after array element at byte 3",
		`{"a" 1}`:                       "invalid character '1' after object key at byte 5",
		`{"a":1 "b":2}`:                 "invalid character '\"' after object key:value pair at byte 7",
		`["a\x"]`:                       "invalid character 'x' in string escape code at byte 1",
		`["\u12"]`:                      "invalid character '\"' in \\u hexadecimal character escape at byte 1",
		"[\"a\nb\"]":                    "invalid character '\\n' in string literal at byte 1",
		"[1] x":                         "unexpected text after the JSON value at byte 4",
		"[1]]":                          "unexpected text after the JSON value at byte 3",
		"1 2":                           "unexpected text after the JSON value at byte 2",
		"\ufeff[]":                      "invalid character 'ï' looking for beginning of value at byte 0",
		"[\n\"é\" 1]":                   "invalid character '1' after array element at byte 7",
		"[-]":                           "invalid character ']' in numeric literal at byte 1",
		"[01]":                          "invalid character '1' after array element at byte 2",
		"[NaN]":                         "invalid character 'N' looking for beginning of value at byte 1",
		"[Infinity]":                    "invalid character 'I' looking for beginning of value at byte 1",
		strings.Repeat("[", MaxDepth+1): "more than 900 nested arrays and objects at byte 900",
	} {
		_, err := Decode(in)
		var syn *SyntaxError
		if !errors.As(err, &syn) || err.Error() != want {
			t.Errorf("Decode(%q) error = %v, want %q", in, err, want)
		}
	}
	if _, err := Decode(strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)); err != nil {
		t.Errorf("%d nested arrays: %v", MaxDepth, err)
	}
}

func TestDecodeValues(t *testing.T) {
	v, err := Decode(` {"a":1,"b":[true,null,-0,1.50,1e400,-1e400,123456789012345678901234567890,"\ud83d\ude00\u00e9","\ud800x"],"a":2} `)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.Repr(), "{'a': 2, 'b': [True, None, 0, 1.5, inf, -inf, 123456789012345678901234567890, '😀é', '\ufffdx']}"; got != want {
		t.Errorf("Repr = %s, want %s", got, want)
	}
	if v, err := Decode("[\"a\xffb\"]"); err != nil || v.Elems()[0].Text() != "a\ufffdb" {
		t.Errorf("invalid UTF-8 in a string: %q %v", v.Repr(), err)
	}
}

// FuzzDecode checks Decode against encoding/json: both accept or refuse the same texts (up to MaxDepth), and
// what Decode accepts, Dumps writes back as a text that decodes to the same value (when it holds only finite
// numbers).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`[]`, `{"a":[1,2.5e3,"x\u00e9"]}`, `[1,]`, `{"a" 1}`, `"\ud800"`, `[-0.0e+1]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Decode(s)
		if err != nil {
			var syn *SyntaxError
			if !errors.As(err, &syn) || syn.Offset < 0 || syn.Offset > int64(len(s)) {
				t.Fatalf("Decode(%q): %v", s, err)
			}
			if syn.Msg == fmt.Sprintf("more than %d nested arrays and objects", MaxDepth) {
				return
			}
		}
		if (err == nil) != json.Valid([]byte(s)) {
			t.Fatalf("Decode(%q) err=%v, json.Valid=%v", s, err, json.Valid([]byte(s)))
		}
		if err != nil || !finite(v) {
			return // json.dumps writes NaN, Infinity and -Infinity, which are not JSON
		}
		for _, ascii := range []bool{true, false} {
			out := Dumps(v, ascii)
			again, err := Decode(out)
			if err != nil || Dumps(again, ascii) != out {
				t.Fatalf("Decode(%q) = %s, which decodes to %s (%v)", s, out, Dumps(again, ascii), err)
			}
		}
	})
}

// finite reports whether v holds no NaN or infinite float.
func finite(v Value) bool {
	switch v.Kind() {
	case Float:
		return !math.IsNaN(v.Float()) && !math.IsInf(v.Float(), 0)
	case Array:
		for _, e := range v.Elems() {
			if !finite(e) {
				return false
			}
		}
	case Object:
		for _, m := range v.Members() {
			if !finite(m.Value) {
				return false
			}
		}
	}
	return true
}

func ExampleDecode() {
	_, err := Decode(`[{"type": "toast",}]`)
	fmt.Println(err)
	v, _ := Decode(`{"type": ["a", 1, 2.0, null]}`)
	fmt.Println(v.Lookup("type").Repr())
	// Output:
	// invalid character '}' looking for beginning of object key string at byte 18
	// ['a', 1, 2.0, None]
}
