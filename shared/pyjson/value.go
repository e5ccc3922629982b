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
	"math"
	"strconv"
	"strings"
	"unsafe"
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
// that no value can claim a kind its memory does not hold. It is 24 bytes and holds one
// pointer, so that a decoded document is cheap to build, copy and clear. The
// zero Value is None; the other values are made by Decode and by the
// constructors (StringValue, IntValue, IntLiteral, FloatValue, BoolValue,
// ArrayValue, ObjectValue, NewObject).
type Value struct {
	// kind says what the value is; it is set with p and n, never apart, so
	// that p is always read as what it points to.
	kind Kind
	// p is the first byte of a String's text or an Int's literal, the first
	// element of an Array, the first member of an Object; nil when n is 0.
	p unsafe.Pointer
	// n is the length of that text or of those elements or members, the bits
	// of a Float, 1 for True.
	n uint64
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
	if v.kind != String && v.kind != Int {
		return ""
	}
	return unsafe.String((*byte)(v.p), int(v.n))
}

// Bool returns the value of a Bool; false for any other kind.
func (v Value) Bool() bool { return v.kind == Bool && v.n != 0 }

// Float returns the value of a Float; 0 for any other kind.
func (v Value) Float() float64 {
	if v.kind != Float {
		return 0
	}
	return math.Float64frombits(v.n)
}

// Elems returns the elements of an Array; nil for any other kind. The
// slice shares the value's memory: setting an element sets it in v.
func (v Value) Elems() []Value {
	if v.kind != Array {
		return nil
	}
	return unsafe.Slice((*Value)(v.p), int(v.n))
}

// Members returns the members of an Object in first-insertion order (a key
// given twice keeps its first position and its last value, like a Python
// dict); nil for any other kind. The slice shares the value's memory:
// setting a member's Value sets it in v.
func (v Value) Members() []Member {
	if v.kind != Object {
		return nil
	}
	return unsafe.Slice((*Member)(v.p), int(v.n))
}

// Len returns the number of elements of an Array or members of an Object,
// and the length in bytes of a String's text or an Int's literal; 0 for the
// other kinds.
func (v Value) Len() int {
	switch v.kind {
	case String, Int, Array, Object:
		return int(v.n)
	}
	return 0
}

// Get returns the value of key in an Object, and whether it is present.
// It mirrors dict.get: a missing key and a non-object both give (Null, false).
func (v *Value) Get(key string) (Value, bool) {
	if v.kind != Object {
		return Value{}, false
	}
	// A walk by pointer: a range over Members copies each member.
	for i := uint64(0); i < v.n; i++ {
		if m := (*Member)(unsafe.Add(v.p, i*uint64(unsafe.Sizeof(Member{})))); m.Key == key {
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
		return v.n != 0
	case Int:
		return v.Text() != "0"
	case Float:
		return v.Float() != 0
	default:
		return v.n > 0
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
		if v.n != 0 {
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
func IntLiteral(lit string) Value { return Value{kind: Int, p: strData(lit), n: uint64(len(lit))} }

// StringValue returns a String value.
func StringValue(s string) Value { return Value{kind: String, p: strData(s), n: uint64(len(s))} }

// strData is the pointer a Value keeps for s.
func strData(s string) unsafe.Pointer { return unsafe.Pointer(unsafe.StringData(s)) }
