// Package jsonquote writes a Go string as a JSON string, byte for byte as encoding/json marshals it, without
// reflection: the counter lines and the ingress's event and answer write several per request.
package jsonquote

import "encoding/json"

// Append appends s quoted as encoding/json marshals it. A string of printable ASCII with nothing to escape
// (no '"', '\\', and not the HTML-escaped '<', '>', '&') is written as is; any other goes through
// encoding/json.
func Append(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plain[s[i]] {
			raw, _ := json.Marshal(s) // a string always marshals
			return append(b, raw...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plain tells the bytes encoding/json writes unchanged inside a string: printable ASCII but '"', '\\' and
// the HTML-escaped '<', '>', '&'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
