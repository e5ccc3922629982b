package pyjson

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Dumps is json.dumps(v, separators=(",", ":"), ensure_ascii=ensureASCII): compact, keys in insertion
// order, floats as their repr (NaN, Infinity and -Infinity as Python writes them), and with ensureASCII
// every character outside printable ASCII escaped as \uXXXX (surrogate pairs above U+FFFF). A byte of a
// string that is not part of valid UTF-8 is written as U+FFFD.
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
	if !ensureASCII {
		return AppendString(b, s)
	}
	return AppendStringASCII(b, s)
}

// AppendStringASCII appends s as a JSON string the way json.dumps(..., ensure_ascii=True) writes it: '"',
// '\\', \b, \f, \n, \r and \t by their short escapes, every other character outside ' '..'~' as \uXXXX
// with lower-case hex, and characters above U+FFFF as a surrogate pair; a byte that is not part of valid
// UTF-8 as \ufffd.
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

// AppendString appends s as a JSON string the way json.dumps(..., ensure_ascii=False) writes it: only '"',
// '\\' and control characters below U+0020 are escaped (\b, \f, \n, \r and \t by name, the others as \u00xx
// with lower-case hex); everything else is written as it is. A byte that is not part of valid UTF-8 is
// written as U+FFFD, as encoding/json does.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s { // an invalid byte arrives as utf8.RuneError, U+FFFD
		switch {
		case r < utf8.RuneSelf && shortEscape[r] != 0:
			b = append(b, '\\', shortEscape[r])
		case r < ' ':
			b = append(b, '\\', 'u', '0', '0', hex[r>>4], hex[r&15])
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

// AppendFloat appends what json.dumps writes for f: its repr when finite,
// NaN, Infinity or -Infinity otherwise (Python's allow_nan default).
func AppendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	return appendFloat(b, f)
}

func appendFloat(b []byte, f float64) []byte {
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	abs := math.Abs(f)
	if abs >= 1e16 || abs < 1e-4 {
		return strconv.AppendFloat(b, f, 'e', -1, 64)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'f', -1, 64)
	for _, c := range b[start:] {
		if c == '.' {
			return b
		}
	}
	return append(b, '.', '0')
}

// AppendStringField appends `,"k":` and v as a JSON string: a field after the first of an object.
func AppendStringField(b []byte, k, v string) []byte {
	return AppendString(AppendKey(b, k), v)
}

// AppendOptionalStringField is AppendStringField, or nothing when v is empty (an absent optional field).
func AppendOptionalStringField(b []byte, k, v string) []byte {
	if v == "" {
		return b
	}
	return AppendStringField(b, k, v)
}

// AppendBoolField appends `,"k":true` or `,"k":false`.
func AppendBoolField(b []byte, k string, v bool) []byte {
	b = AppendKey(b, k)
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// AppendKey appends `,"k":`, the start of a field after the first of an object.
func AppendKey(b []byte, k string) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

// Appender is a value that writes itself as compact JSON.
type Appender interface {
	AppendJSON(b []byte) []byte
}

// AppendArray appends items as a JSON array, comma separated; a nil item (of an interface type) is written
// as null.
func AppendArray[T Appender](b []byte, items []T) []byte {
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		if any(it) == nil {
			b = append(b, "null"...)
			continue
		}
		b = it.AppendJSON(b)
	}
	return append(b, ']')
}
