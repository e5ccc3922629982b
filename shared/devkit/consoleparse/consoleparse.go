// Package consoleparse reads tool results the way their consumers do: the
// Appwrite Console for appwrite.console/v1 and appwrite.clarify/v1 (as the
// protocol documents' parseConsoleEnvelope and parseClarifyEnvelope
// describe), and Cloud for appwrite.memory/v1 and appwrite.threat/v1.
//
// The rules follow the Console side, not the engine: an output starting with
// "Error:" is a failed call (nil), an unknown protocol is ignored (nil), a
// missing list is ignored (nil), and an action of an unknown type, or a known
// type whose shape does not match the TypeScript types, is skipped without
// failing the batch. Tests use it to read back what the engine emits.
package consoleparse

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
)

// Skipped records an entry the parser left out.
type Skipped struct {
	// Index is the position in the actions (or prompts) array.
	Index int
	// Type is the entry's "type" (or "kind"), "" when it has none.
	Type string
	// Reason says why it was skipped.
	Reason string
}

// trimJS is String.prototype.trim: ECMAScript WhiteSpace and LineTerminator.
func trimJS(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return r == '\ufeff' || (r != 0x85 && unicode.IsSpace(r))
	})
}

// object is a decoded JSON object whose members are still raw.
type object map[string]json.RawMessage

// start applies the shared steps of every parse function: trim, reject
// "Error:", JSON.parse, check the protocol, and return the raw list under
// listKey (nil when the output is not an envelope of that protocol).
func start(output, protocol, listKey string) (object, []json.RawMessage, bool) {
	text := trimJS(output)
	if strings.HasPrefix(text, "Error:") {
		return nil, nil, false
	}
	var env object
	if err := json.Unmarshal([]byte(text), &env); err != nil || env == nil {
		return nil, nil, false
	}
	var p string
	if raw, ok := env["protocol"]; !ok || json.Unmarshal(raw, &p) != nil || p != protocol {
		return nil, nil, false
	}
	if listKey == "" {
		return env, nil, true
	}
	raw, ok := env[listKey]
	if !ok || len(raw) == 0 || raw[0] != '[' {
		return nil, nil, false
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, nil, false
	}
	return env, list, true
}

// parseEntries is the skeleton of every list envelope's parser: start, then each entry of the list read by item,
// which returns the entry, its "type" (or "kind") and why it refuses it ("" when it takes it). A refused
// entry is recorded in skipped and the batch goes on, as the Console does.
func parseEntries[T any](output, protocol, listKey string, item func(raw json.RawMessage) (T, string, string)) (env object, items []T, skipped []Skipped, ok bool) {
	env, list, ok := start(output, protocol, listKey)
	if !ok {
		return nil, nil, nil, false
	}
	items = []T{}
	for i, raw := range list {
		it, typ, reason := item(raw)
		if reason != "" {
			skipped = append(skipped, Skipped{Index: i, Type: typ, Reason: reason})
			continue
		}
		items = append(items, it)
	}
	return env, items, skipped, true
}

func (o object) has(key string) bool {
	raw, ok := o[key]
	return ok && !bytes.Equal(raw, []byte("null"))
}

// str returns a string member; ok is false when it is present but not a string.
func (o object) str(key string) (string, bool) {
	raw, present := o[key]
	if !present {
		return "", true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

func (o object) reqStr(key string) (string, bool) {
	if !o.has(key) {
		return "", false
	}
	s, ok := o.str(key)
	return s, ok && s != ""
}

func (o object) optBool(key string) (*bool, bool) {
	if !o.has(key) {
		return nil, true
	}
	var b bool
	if json.Unmarshal(o[key], &b) != nil {
		return nil, false
	}
	return &b, true
}

func (o object) num(key string) (json.Number, bool) {
	raw, ok := o[key]
	if !ok {
		return "", false
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var n json.Number
	if d.Decode(&n) != nil {
		return "", false
	}
	return n, true
}

func (o object) list(key string) ([]json.RawMessage, bool) {
	raw, ok := o[key]
	if !ok || len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var l []json.RawMessage
	return l, json.Unmarshal(raw, &l) == nil
}

func decodeObject(raw json.RawMessage) (object, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var o object
	return o, json.Unmarshal(raw, &o) == nil
}

func oneOf(s string, allowed ...string) bool {
	for _, a := range allowed {
		if s == a {
			return true
		}
	}
	return false
}
