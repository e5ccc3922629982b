package pyjson

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Python's repr() and str(), for the texts that quote a value: the engine's validation messages
// ("unknown or missing type 'x'"), the Console's metadata values, the turn's tool outputs (docs/CONVENTIONS.md
// "Texts").

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

// ReprString is repr() of a str.
func ReprString(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	b := make([]byte, 0, len(s)+2)
	b = append(b, quote)
	const hex = "0123456789abcdef"
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r < ' ' || r == 0x7f:
			b = append(b, '\\', 'x', hex[r>>4], hex[r&15])
		case r < 0x7f:
			b = append(b, byte(r))
		case unicode.IsPrint(r):
			b = utf8.AppendRune(b, r)
		case r <= 0xff:
			b = append(b, '\\', 'x', hex[r>>4], hex[r&15])
		case r <= 0xffff:
			b = append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
		default:
			b = append(b, '\\', 'U')
			for sh := 28; sh >= 0; sh -= 4 {
				b = append(b, hex[r>>uint(sh)&15])
			}
		}
	}
	b = append(b, quote)
	return string(b)
}

// FloatRepr is repr() of a float ("49.0", "1e+16", "1.5e-05", "inf", "nan").
func FloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return string(appendFloat(nil, f))
}
