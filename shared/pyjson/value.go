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

// Value is one decoded JSON value.
type Value struct {
	// Kind says which of the other fields is meaningful.
	Kind Kind
	// B is the value of a Bool.
	B bool
	// S is the text of a String, or the canonical decimal literal of an Int.
	S string
	// F is the value of a Float.
	F float64
	// A holds the elements of an Array.
	A []Value
	// O holds the members of an Object in first-insertion order; a key given
	// twice keeps its first position and its last value, like a Python dict.
	O []Member
}

// Member is one key/value pair of an Object.
type Member struct {
	// Key is the member name.
	Key string
	// Value is the member value.
	Value Value
}

// Get returns the value of key in an Object, and whether it is present.
// It mirrors dict.get: a missing key and a non-object both give (Null, false).
func (v *Value) Get(key string) (Value, bool) {
	if v.Kind != Object {
		return Value{}, false
	}
	for i := range v.O {
		if v.O[i].Key == key {
			return v.O[i].Value, true
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
func (v Value) IsNone() bool { return v.Kind == Null }

// Truthy reports Python truthiness: None, False, 0, 0.0, "", [] and {} are false.
func (v Value) Truthy() bool {
	switch v.Kind {
	case Null:
		return false
	case Bool:
		return v.B
	case Int:
		return v.S != "0"
	case Float:
		return v.F != 0
	case String:
		return v.S != ""
	case Array:
		return len(v.A) > 0
	default:
		return len(v.O) > 0
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
	if v.Kind == String {
		return v.S
	}
	return v.Repr()
}

func (v Value) appendRepr(b *strings.Builder) {
	switch v.Kind {
	case Null:
		b.WriteString("None")
	case Bool:
		if v.B {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case Int:
		b.WriteString(v.S)
	case Float:
		b.WriteString(FloatRepr(v.F))
	case String:
		b.WriteString(ReprString(v.S))
	case Array:
		b.WriteByte('[')
		for i := range v.A {
			if i > 0 {
				b.WriteString(", ")
			}
			v.A[i].appendRepr(b)
		}
		b.WriteByte(']')
	default:
		b.WriteByte('{')
		for i := range v.O {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(ReprString(v.O[i].Key))
			b.WriteString(": ")
			v.O[i].Value.appendRepr(b)
		}
		b.WriteByte('}')
	}
}

// IntValue returns an Int value holding n.
func IntValue(n int64) Value { return Value{Kind: Int, S: strconv.FormatInt(n, 10)} }

// StringValue returns a String value.
func StringValue(s string) Value { return Value{Kind: String, S: s} }
