package jsonquote_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"appwrite-agent/shared/jsonquote"
)

// cases are plain identifiers and every kind of byte encoding/json escapes or passes through.
var cases = []string{"", "plain", "row.created", "status_request_entity_too_large", "a b-c_d.e:f/g", `q"`, `b\s`,
	"<a>&", "tab\t", "\x00", "\x7f", "é", "\u2028", "\xff", "ünïcode ok"}

// TestAppendMatchesEncodingJSON: what Append writes after a prefix is what json.Marshal gives.
func TestAppendMatchesEncodingJSON(t *testing.T) {
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := jsonquote.Append([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("%q: got %s, want x%s", s, got, want)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range cases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := jsonquote.Append(nil, s); string(got) != string(want) {
			t.Fatalf("%q: %s, want %s", s, got, want)
		}
	})
}

func ExampleAppend() {
	b := jsonquote.Append([]byte(`{"outcome":`), "delivered")
	b = append(b, `,"note":`...)
	b = jsonquote.Append(b, "<b>")
	fmt.Println(string(append(b, '}')))
	// Output: {"outcome":"delivered","note":"\u003cb\u003e"}
}
