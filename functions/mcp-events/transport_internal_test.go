package handler

import (
	"encoding/json"
	"testing"
)

// FuzzCheckShape: checkShape never panics, and accepts exactly the JSON objects whose id, when present, is
// a string, a number or null and whose method, when present, is a string.
func FuzzCheckShape(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `[{"jsonrpc":"2.0","id":1}]`, `[]`, `{"id":{"a":1}}`,
		`{"id":[1]}`, `{"id":true}`, `{"id":null}`, `{"id":"x","method":7}`, `"x"`, `{`, ``, ` {"id":-1e3} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fault := checkShape(body)
		var msg map[string]any
		isObject := json.Unmarshal(body, &msg) == nil && msg != nil
		if !isObject {
			if fault == nil {
				t.Fatalf("accepted a body that is not a JSON object: %q", body)
			}
			return
		}
		ok := true
		if id, has := msg["id"]; has {
			switch id.(type) {
			case string, float64, nil:
			default:
				ok = false
			}
		}
		if m, has := msg["method"]; has {
			if _, isStr := m.(string); !isStr {
				ok = false
			}
		}
		if ok != (fault == nil) {
			t.Fatalf("%q: fault %+v, want ok=%v", body, fault, ok)
		}
	})
}
