package pyjson

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsSpace reports whether str.isspace() is true for r. It is Go's
// unicode.IsSpace plus U+001C..U+001F, which Python counts as whitespace
// (bidirectional class B or S).
func IsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// Strip is str.strip() with no argument.
func Strip(s string) string {
	// A string that starts and ends with a printable ASCII character
	// (0x21..0x7f, none of them whitespace) is kept as is.
	if s != "" && s[0]-0x21 < 0x5f && s[len(s)-1]-0x21 < 0x5f {
		return s
	}
	return strip(s)
}

func strip(s string) string {
	// Fast path for the common ASCII case.
	i, j := 0, len(s)
	for i < j {
		c := s[i]
		if c >= utf8.RuneSelf {
			break
		}
		if !(c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f)) {
			break
		}
		i++
	}
	for j > i {
		c := s[j-1]
		if c >= utf8.RuneSelf {
			break
		}
		if !(c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f)) {
			break
		}
		j--
	}
	s = s[i:j]
	if s == "" {
		return s
	}
	if s[0] >= utf8.RuneSelf || s[len(s)-1] >= utf8.RuneSelf {
		return strings.TrimFunc(s, IsSpace)
	}
	return s
}

// Len is len() of a str: the number of code points.
func Len(s string) int { return utf8.RuneCountInString(s) }

// Lower is str.lower(): full Unicode lowercase mapping, including
// U+0130 -> "i̇" and the Final_Sigma rule for U+03A3.
func Lower(s string) string {
	ascii := true
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if c >= 'A' && c <= 'Z' {
			upper = true
		}
	}
	if ascii {
		if !upper {
			return s
		}
		b := []byte(s)
		for i, c := range b {
			if c >= 'A' && c <= 'Z' {
				b[i] = c + 32
			}
		}
		return string(b)
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range rs {
		switch r {
		case 0x130:
			b.WriteString("i\u0307")
		case 0x3a3:
			b.WriteRune(sigma(rs, i))
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// sigma applies CPython's handle_capital_sigma.
func sigma(rs []rune, i int) rune {
	j := i - 1
	var c rune
	for ; j >= 0; j-- {
		c = rs[j]
		if !caseIgnorable(c) {
			break
		}
	}
	final := j >= 0 && cased(c)
	if final && i+1 < len(rs) {
		for j = i + 1; j < len(rs); j++ {
			c = rs[j]
			if !caseIgnorable(c) {
				break
			}
		}
		final = j == len(rs) || !cased(c)
	}
	if final {
		return 0x3c2
	}
	return 0x3c3
}

func cased(r rune) bool {
	return unicode.IsLower(r) || unicode.IsUpper(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', 0xb7, 0x387, 0x55f, 0x5f4, 0x2018, 0x2019, 0x2024, 0x2027,
		0xfe13, 0xfe52, 0xfe55, 0xff07, 0xff0e, 0xff1a:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
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

// AppendString appends s as a JSON string the way json.dumps(...,
// ensure_ascii=False) writes it: only '"', '\\' and control characters below
// U+0020 are escaped (with lower-case hex); everything else is written as is.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		if e := shortEscape[c]; e != 0 {
			b = append(b, '\\', e)
		} else {
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// ValidUTF8 returns s with every byte that is not part of a valid UTF-8
// sequence replaced by U+FFFD, so that Go strings behave like Python str.
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		b.WriteRune(r) // invalid bytes arrive as utf8.RuneError
	}
	return b.String()
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
