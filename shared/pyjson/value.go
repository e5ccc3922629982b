// Package pyjson reproduces the parts of CPython's json module and str type
// that the Python agent engine's outputs depend on: json.loads with its exact
// error messages, dicts that keep insertion order, repr() and str() of values,
// float repr, str.strip(), str.lower(), len() in code points, and
// json.dumps(separators=(",", ":")) with ensure_ascii on or off.
//
// It is the project's one Python-compatibility implementation: the protocol
// packages (shared/protocol/*), the turn's built-in tools and its MCP tools
// use it to give the same error texts and the same bytes as the engine they
// replace. Golden tests hold the values CPython gives.
package pyjson

import (
	"strconv"
	"strings"
)

// Kind is the Python type a decoded JSON value has.
type Kind uint8

// The kinds of decoded values, named after the Python types json.loads yields.
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

// Repr returns Python's repr() of the value.
func (v Value) Repr() string {
	var b strings.Builder
	v.appendRepr(&b)
	return b.String()
}

// PyStr returns Python's str() of the value: the text itself for a string,
// repr() for everything else.
func (v Value) PyStr() string {
	if v.kind == String {
		return v.Text()
	}
	return v.Repr()
}

func (v Value) appendRepr(b *strings.Builder) {
	switch v.kind {
	case Null:
		b.WriteString("None")
	case Bool:
		if v.truth {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case Int:
		b.WriteString(v.Text())
	case Float:
		b.WriteString(FloatRepr(v.Float()))
	case String:
		b.WriteString(ReprString(v.Text()))
	case Array:
		b.WriteByte('[')
		for i, e := range v.Elems() {
			if i > 0 {
				b.WriteString(", ")
			}
			e.appendRepr(b)
		}
		b.WriteByte(']')
	default:
		b.WriteByte('{')
		for i, m := range v.Members() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(ReprString(m.Key))
			b.WriteString(": ")
			m.Value.appendRepr(b)
		}
		b.WriteByte('}')
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
