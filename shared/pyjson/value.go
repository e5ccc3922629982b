// Package pyjson holds JSON values the way the Python agent engine's json module holds them, and writes them
// back byte for byte as the engine did: objects keep the order of their members (a Python dict), integers
// keep their literal (a Python int), and Dumps is json.dumps(separators=(",", ":")) with ensure_ascii on or
// off. Decode reads a text with encoding/json; its errors are ours. Repr and PyStr are Python's repr() and
// str() of a value, for the texts that quote one.
//
// The protocol packages (shared/protocol/*), the turn's built-in tools and its MCP tools use it where their
// bytes are contract; docs/CONVENTIONS.md "Texts" says which texts are, and which are ours.
package pyjson

import (
	"slices"
	"strconv"
)

// Kind is the Python type a decoded JSON value has.
type Kind uint8

// The kinds of values, named after the Python types the engine's json module gives.
const (
	Null   Kind = iota // None
	Bool               // bool
	Int                // int (arbitrary precision; the literal is kept)
	Float              // float
	String             // str
	Array              // list
	Object             // dict
)

// Value is one decoded JSON value: its Kind, and what the kind holds, read
// through Text, Bool, Float, Elems and Members; the fields are unexported so
// that no value can claim a kind it does not hold. The zero Value is None;
// the other values are made by Decode and by the constructors (StringValue,
// IntValue, IntLiteral, FloatValue, BoolValue, ArrayValue, ObjectValue,
// NewObject).
type Value struct {
	kind    Kind
	text    string   // a String's text, an Int's canonical literal
	num     float64  // a Float
	truth   bool     // a Bool
	elems   []Value  // an Array's elements
	members []Member // an Object's members
}

// Member is one key/value pair of an Object.
type Member struct {
	// Key is the member name.
	Key string
	// Value is the member value.
	Value Value
}

// Kind returns what the value is.
func (v Value) Kind() Kind { return v.kind }

// Text returns the text of a String, or the canonical decimal literal of an
// Int; "" for any other kind.
func (v Value) Text() string {
	return v.text
}

// Bool returns the value of a Bool; false for any other kind.
func (v Value) Bool() bool { return v.truth }

// Float returns the value of a Float; 0 for any other kind.
func (v Value) Float() float64 {
	return v.num
}

// Elems returns the elements of an Array; nil for any other kind. The
// slice shares the value's memory: setting an element sets it in v.
func (v Value) Elems() []Value {
	return v.elems
}

// Members returns the members of an Object in first-insertion order (a key
// given twice keeps its first position and its last value, like a Python
// dict); nil for any other kind. The slice shares the value's memory:
// setting a member's Value sets it in v.
func (v Value) Members() []Member {
	return v.members
}

// Len returns the number of elements of an Array or members of an Object,
// and the length in bytes of a String's text or an Int's literal; 0 for the
// other kinds.
func (v Value) Len() int {
	switch v.kind {
	case String, Int:
		return len(v.text)
	case Array:
		return len(v.elems)
	case Object:
		return len(v.members)
	}
	return 0
}

// Get returns the value of key in an Object, and whether it is present.
// It mirrors dict.get: a missing key and a non-object both give (Null, false).
func (v *Value) Get(key string) (Value, bool) {
	for _, m := range v.members {
		if m.Key == key {
			return m.Value, true
		}
	}
	return Value{}, false
}

// Lookup returns the value of key, with a missing key given as None (dict.get).
func (v *Value) Lookup(key string) Value {
	x, _ := v.Get(key)
	return x
}

// IsNone reports whether the value is None.
func (v Value) IsNone() bool { return v.kind == Null }

// Truthy reports Python truthiness: None, False, 0, 0.0, "", [] and {} are false.
func (v Value) Truthy() bool {
	switch v.kind {
	case Null:
		return false
	case Bool:
		return v.truth
	case Int:
		return v.text != "0"
	case Float:
		return v.num != 0
	default:
		return v.Len() > 0
	}
}

// IntValue returns an Int value holding n.
func IntValue(n int64) Value { return IntLiteral(strconv.FormatInt(n, 10)) }

// IntLiteral returns an Int value whose canonical decimal literal is lit
// (digits with no leading zero, "-" before a non-zero one), for an int
// beyond int64.
func IntLiteral(lit string) Value { return Value{kind: Int, text: lit} }

// StringValue returns a String value.
func StringValue(s string) Value { return Value{kind: String, text: s} }

// Set sets key in an Object the way a Python dict assignment does: a new key is appended, an existing one
// keeps its position and takes the new value. It does nothing on a non-object. Adding a key copies the
// members: to build an object key by key, use SetMember on a slice and make the Value with ObjectValue.
func (v *Value) Set(key string, val Value) {
	if v.kind == Object {
		*v = ObjectValue(SetMember(v.Members(), key, val))
	}
}

// SetMember is a Python dict assignment on members: a new key is appended, an existing one keeps its
// position and takes the new value. It returns the members, as append does.
func SetMember(members []Member, key string, val Value) []Member {
	for i := range members {
		if members[i].Key == key {
			members[i].Value = val
			return members
		}
	}
	return append(members, Member{Key: key, Value: val})
}

// Clone is a shallow copy (dict.copy(), list.copy()): the copy's members or elements can be set without
// touching v.
func (v Value) Clone() Value {
	switch v.kind {
	case Array:
		return ArrayValue(slices.Clone(v.Elems()))
	case Object:
		return ObjectValue(slices.Clone(v.Members()))
	}
	return v
}

// NewObject returns an empty Object ({}).
func NewObject() Value { return Value{kind: Object} }

// ArrayValue returns an Array of items (a nil slice is the empty list). The value shares items' memory.
func ArrayValue(items []Value) Value {
	if len(items) == 0 {
		return Value{kind: Array}
	}
	return Value{kind: Array, elems: items[:len(items):len(items)]}
}

// ObjectValue returns an Object of members, which must have distinct keys (a nil slice is the empty dict).
// The value shares members' memory.
func ObjectValue(members []Member) Value {
	if len(members) == 0 {
		return Value{kind: Object}
	}
	return Value{kind: Object, members: members[:len(members):len(members)]}
}

// BoolValue returns a Bool value.
func BoolValue(b bool) Value {
	if b {
		return Value{kind: Bool, truth: true}
	}
	return Value{kind: Bool}
}

// FloatValue returns a Float value.
func FloatValue(f float64) Value { return Value{kind: Float, num: f} }
