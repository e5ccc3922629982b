package pyjson

import (
	"math"
	"unicode/utf8"
)

// Set sets key in an Object the way a Python dict assignment does: a new key is appended, an existing one
// keeps its position and takes the new value. It does nothing on a non-object.
func (v *Value) Set(key string, val Value) {
	if v.Kind != Object {
		return
	}
	for i := range v.O {
		if v.O[i].Key == key {
			v.O[i].Value = val
			return
		}
	}
	v.O = append(v.O, Member{Key: key, Value: val})
}

// Clone is a shallow copy (dict.copy(), list.copy()): the copy's members or elements can be set without
// touching v.
func (v Value) Clone() Value {
	v.A = append([]Value(nil), v.A...)
	v.O = append([]Member(nil), v.O...)
	return v
}

// NewObject returns an empty Object ({}).
func NewObject() Value { return Value{Kind: Object} }

// ArrayValue returns an Array of items (a nil slice is the empty list).
func ArrayValue(items []Value) Value { return Value{Kind: Array, A: items} }

// BoolValue returns a Bool value.
func BoolValue(b bool) Value { return Value{Kind: Bool, B: b} }

// FloatValue returns a Float value.
func FloatValue(f float64) Value { return Value{Kind: Float, F: f} }

// Dumps is json.dumps(v, separators=(",", ":"), ensure_ascii=ensureASCII): compact, keys in insertion
// order, floats as their repr (NaN, Infinity and -Infinity as Python writes them), and with ensureASCII
// every character outside printable ASCII escaped as \uXXXX (surrogate pairs above U+FFFF). Strings that
// are not valid UTF-8 are written as ValidUTF8 makes them, as a Python str would hold them.
func Dumps(v Value, ensureASCII bool) string { return string(AppendDumps(nil, v, ensureASCII)) }

// AppendDumps appends Dumps(v, ensureASCII) to b.
func AppendDumps(b []byte, v Value, ensureASCII bool) []byte {
	switch v.Kind {
	case Null:
		return append(b, "null"...)
	case Bool:
		if v.B {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case Int:
		return append(b, v.S...)
	case Float:
		switch {
		case math.IsNaN(v.F):
			return append(b, "NaN"...)
		case math.IsInf(v.F, 1):
			return append(b, "Infinity"...)
		case math.IsInf(v.F, -1):
			return append(b, "-Infinity"...)
		}
		return appendFloat(b, v.F)
	case String:
		return appendDumpsString(b, v.S, ensureASCII)
	case Array:
		b = append(b, '[')
		for i := range v.A {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendDumps(b, v.A[i], ensureASCII)
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		for i := range v.O {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendDumpsString(b, v.O[i].Key, ensureASCII)
			b = append(b, ':')
			b = AppendDumps(b, v.O[i].Value, ensureASCII)
		}
		return append(b, '}')
	}
}

func appendDumpsString(b []byte, s string, ensureASCII bool) []byte {
	s = ValidUTF8(s)
	if !ensureASCII {
		return AppendString(b, s)
	}
	return AppendStringASCII(b, s)
}

// AppendStringASCII appends s as a JSON string the way json.dumps(..., ensure_ascii=True) writes it: '"',
// '\\', \b, \f, \n, \r and \t by their short escapes, every other character outside ' '..'~' as \uXXXX
// with lower-case hex, and characters above U+FFFF as a surrogate pair. s must be valid UTF-8.
func AppendStringASCII(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	u := func(b []byte, r rune) []byte {
		return append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
	}
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && shortEscape[r] != 0:
			b = append(b, '\\', shortEscape[r])
		case r >= ' ' && r <= '~':
			b = append(b, byte(r))
		case r > 0xffff:
			r -= 0x10000
			b = u(u(b, 0xd800+(r>>10)), 0xdc00+(r&0x3ff))
		default:
			b = u(b, r)
		}
	}
	return append(b, '"')
}

// shortEscape is the letter after the backslash of the characters json.dumps escapes by name.
var shortEscape = [utf8.RuneSelf]byte{'"': '"', '\\': '\\', '\n': 'n', '\r': 'r', '\t': 't', '\b': 'b', '\f': 'f'}
