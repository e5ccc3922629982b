package pyjson

import (
	"unicode/utf8"
)

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
		return ArrayValue(append([]Value(nil), v.Elems()...))
	case Object:
		return ObjectValue(append([]Member(nil), v.Members()...))
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

// Dumps is json.dumps(v, separators=(",", ":"), ensure_ascii=ensureASCII): compact, keys in insertion
// order, floats as their repr (NaN, Infinity and -Infinity as Python writes them), and with ensureASCII
// every character outside printable ASCII escaped as \uXXXX (surrogate pairs above U+FFFF). Strings that
// are not valid UTF-8 are written as ValidUTF8 makes them, as a Python str would hold them.
func Dumps(v Value, ensureASCII bool) string { return string(AppendDumps(nil, v, ensureASCII)) }

// AppendDumps appends Dumps(v, ensureASCII) to b.
func AppendDumps(b []byte, v Value, ensureASCII bool) []byte {
	switch v.kind {
	case Null:
		return append(b, "null"...)
	case Bool:
		if v.truth {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case Int:
		return append(b, v.Text()...)
	case Float:
		return AppendFloat(b, v.Float())
	case String:
		return appendDumpsString(b, v.Text(), ensureASCII)
	case Array:
		b = append(b, '[')
		for i, e := range v.Elems() {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendDumps(b, e, ensureASCII)
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		for i, m := range v.Members() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendDumpsString(b, m.Key, ensureASCII)
			b = append(b, ':')
			b = AppendDumps(b, m.Value, ensureASCII)
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
