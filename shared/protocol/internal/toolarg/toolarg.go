// Package toolarg is the one pipeline of the four protocol tools (console, clarify, memory, threat): the
// error that carries the Python engine's message word for word, the reading of a tool argument (JSON text of
// one object or an array of objects, or the model's call arguments), the list checks (not empty, at most so
// many, each item in order, the first error wins), the tool result (the envelope, or the protocol's error
// prefix and the message), and the typed field readers with the engine's messages ("<where>key must be a
// string", "... is required", "... must be a boolean"). A protocol package keeps only its own item rules and
// its envelope.
package toolarg

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"appwrite-agent/shared/pyjson"
)

// Error is a rejected tool argument; Error returns the message that follows the protocol's ErrorPrefix.
type Error struct {
	// Msg is the engine's message, word for word.
	Msg string
}

// Error returns Msg.
func (e *Error) Error() string { return e.Msg }

// Fail returns an *Error with msg.
func Fail(msg string) error { return &Error{Msg: msg} }

// Decode reads a tool argument as the engine's parse_*_arg does: white space trimmed, then the JSON text
// decoded (pyjson.Decode, whose error text is ours). name ("actions", "prompts", "report") words the
// messages.
func Decode(arg, name string) (pyjson.Value, error) {
	text := strings.TrimSpace(arg)
	if text == "" {
		return pyjson.Value{}, Fail(name + " is empty")
	}
	v, err := pyjson.Decode(text)
	if err != nil {
		return pyjson.Value{}, Fail(name + " must be valid JSON: " + err.Error())
	}
	return v, nil
}

// Items is the list an argument holds: one object, or the elements of an array.
func Items(v pyjson.Value, name string) ([]pyjson.Value, error) {
	switch v.Kind() {
	case pyjson.Object:
		return []pyjson.Value{v}, nil
	case pyjson.Array:
		return v.Elems(), nil
	}
	return nil, Fail(name + " JSON must be an object or an array of objects")
}

// List is a protocol's list argument (console's and memory's actions, clarify's prompts): one object or an
// array of objects, at least one and at most Max, each read by Item in order (the first error wins), then
// checked together by Across.
type List[T any] struct {
	// Name is the argument's name in messages: "actions", "prompts".
	Name string
	// Noun words the limit's message, "at most <Max> <Noun> per call": "console actions".
	Noun string
	// Max is the most items one call may hold.
	Max int
	// Item validates one item and returns it normalized.
	Item func(raw *pyjson.Value) (T, error)
	// Across checks the items together (clarify's distinct prompt ids); nil when the protocol has no such rule.
	Across func(items []T) error
}

// Parse reads the argument's JSON text as the engine's parse_*_arg does (Decode), then checks its items.
func (l List[T]) Parse(arg string) ([]T, error) {
	v, err := Decode(arg, l.Name)
	if err != nil {
		return nil, err
	}
	return l.Check(v)
}

// Check reads the items of a decoded argument: one object, or the elements of an array.
func (l List[T]) Check(v pyjson.Value) ([]T, error) {
	raws, err := Items(v, l.Name)
	if err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, Fail(l.Name + " array is empty")
	}
	if len(raws) > l.Max {
		return nil, Fail("at most " + strconv.Itoa(l.Max) + " " + l.Noun + " per call")
	}
	out := make([]T, 0, len(raws))
	for i := range raws {
		it, err := l.Item(&raws[i])
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	if l.Across != nil {
		if err := l.Across(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FromCall reads the list from the model's raw call arguments, an object {Name: …}: a string is parsed as
// Parse does; an object or an array given directly is checked as it is (the engine's parse_*_arg accepts a
// dict or a list). Anything else, the member missing or the arguments not an object, gives "<Name> must be a
// JSON string, object, or array". FromCall returns the decoded arguments too, for a tool with another
// argument (clarify's title).
func (l List[T]) FromCall(args json.RawMessage) (pyjson.Value, []T, error) {
	wrong := Fail(l.Name + " must be a JSON string, object, or array")
	v, err := pyjson.Decode(strings.TrimSpace(string(args)))
	if err != nil || v.Kind() != pyjson.Object {
		return pyjson.Value{}, nil, wrong
	}
	switch a := v.Lookup(l.Name); a.Kind() {
	case pyjson.String:
		items, err := l.Parse(a.Text())
		return v, items, err
	case pyjson.Object, pyjson.Array:
		items, err := l.Check(a)
		return v, items, err
	}
	return v, nil, wrong
}

// Result is what a protocol's tool returns: the envelope as compact JSON, or prefix (the protocol's
// ErrorPrefix) followed by the message when err is not nil.
func Result(prefix string, envelope fmt.Stringer, err error) string {
	if err != nil {
		return prefix + err.Error()
	}
	return envelope.String()
}

// Where names the item a field belongs to in messages, as the engine does (for example the repr of its type:
// "'resource'"). It is called only when a message is made. Nil means messages name the field alone.
type Where func(raw *pyjson.Value) string

func (w Where) fail(raw *pyjson.Value, key, problem string) error {
	if w == nil {
		return Fail(key + problem)
	}
	return Fail(w(raw) + ": " + key + problem)
}

// RequiredString reads raw[key]: a string, stripped, not empty.
func RequiredString(raw *pyjson.Value, key string, where Where) (string, error) {
	return RequiredStringValue(raw, key, raw.Lookup(key), where)
}

// RequiredStringValue is RequiredString for a caller that has looked up v = raw[key] already.
func RequiredStringValue(raw *pyjson.Value, key string, v pyjson.Value, where Where) (string, error) {
	if v.Kind() != pyjson.String {
		return "", where.fail(raw, key, " must be a string")
	}
	t := strings.TrimSpace(v.Text())
	if t == "" {
		return "", where.fail(raw, key, " is required")
	}
	return t, nil
}

// OptionalString reads raw[key]: absent or null is "", otherwise a string, stripped.
func OptionalString(raw *pyjson.Value, key string, where Where) (string, error) {
	return OptionalStringValue(raw, key, raw.Lookup(key), where)
}

// OptionalStringValue is OptionalString for a caller that has looked up v = raw[key] already.
func OptionalStringValue(raw *pyjson.Value, key string, v pyjson.Value, where Where) (string, error) {
	if v.Kind() == pyjson.Null {
		return "", nil
	}
	if v.Kind() != pyjson.String {
		return "", where.fail(raw, key, " must be a string")
	}
	return strings.TrimSpace(v.Text()), nil
}

// OptionalBool reads raw[key]: absent or null is nil, otherwise a boolean.
func OptionalBool(raw *pyjson.Value, key string, where Where) (*bool, error) {
	v := raw.Lookup(key)
	if v.Kind() == pyjson.Null {
		return nil, nil
	}
	if v.Kind() != pyjson.Bool {
		return nil, where.fail(raw, key, " must be a boolean")
	}
	b := v.Bool()
	return &b, nil
}
