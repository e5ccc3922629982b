package pyjson

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of arrays and objects. CPython's C scanner
// raises RecursionError somewhat below its default recursion limit of 1000;
// here a deeper document is a decode error (see SyntaxError).
const MaxDepth = 900

// SyntaxError is a json.JSONDecodeError. Error() returns str(exc), e.g.
// "Expecting value: line 1 column 2 (char 1)".
type SyntaxError struct {
	// Msg is the bare message ("Expecting value").
	Msg string
	// Pos is the offset in code points, as Python counts it.
	Pos int
	// Line and Col are 1-based, as Python computes them.
	Line, Col int
	text      string
}

// Error returns the text Python's str(JSONDecodeError) gives.
func (e *SyntaxError) Error() string {
	if e.text != "" {
		return e.text
	}
	return e.Msg + ": line " + strconv.Itoa(e.Line) + " column " + strconv.Itoa(e.Col) + " (char " + strconv.Itoa(e.Pos) + ")"
}

// Decode is json.loads(s) for a str s that contains only valid UTF-8 (see
// ValidUTF8). The error, if any, is a *SyntaxError.
func Decode(s string) (Value, error) {
	if strings.HasPrefix(s, "\ufeff") {
		return Value{}, newErr(s, "Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
	}
	d := decoder{s: s, stop: -1}
	v, end, ok := d.scanOnce(skipWS(s, 0))
	if !ok {
		if d.err != nil {
			return Value{}, d.err
		}
		return Value{}, newErr(s, "Expecting value", d.stop)
	}
	end = skipWS(s, end)
	if end != len(s) {
		return Value{}, newErr(s, "Extra data", end)
	}
	return v, nil
}

// decoder is the state of one Decode, which mirrors CPython's C scanner (Modules/_json.c).
type decoder struct {
	s     string
	depth int
	err   *SyntaxError
	stop  int // >= 0 when a StopIteration is pending
}

func newErr(s, msg string, bytePos int) *SyntaxError {
	if bytePos > len(s) {
		bytePos = len(s)
	}
	head := s[:bytePos]
	pos := utf8.RuneCountInString(head)
	line := strings.Count(head, "\n") + 1
	var col int
	if nl := strings.LastIndexByte(head, '\n'); nl >= 0 {
		col = utf8.RuneCountInString(head[nl+1:]) + 1
	} else {
		col = pos + 1
	}
	return &SyntaxError{Msg: msg, Pos: pos, Line: line, Col: col}
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipWS returns the index of the first non-white-space byte at or after i.
func skipWS(s string, i int) int {
	for i < len(s) && isWS(s[i]) {
		i++
	}
	return i
}

func (d *decoder) fail(msg string, pos int) (int, bool) {
	d.err = newErr(d.s, msg, pos)
	return 0, false
}

func (d *decoder) stopAt(pos int) (int, bool) {
	d.stop = pos
	return 0, false
}

// scanOnce mirrors scan_once_unicode.
func (d *decoder) scanOnce(idx int) (Value, int, bool) {
	s := d.s
	n := len(s)
	if idx >= n {
		end, ok := d.stopAt(idx)
		return Value{}, end, ok
	}
	switch s[idx] {
	case '"':
		str, end, ok := d.scanString(idx + 1)
		return StringValue(str), end, ok
	case '{', '[':
		if d.depth >= MaxDepth {
			what := "array"
			if s[idx] == '{' {
				what = "object"
			}
			msg := "maximum recursion depth exceeded while decoding a JSON " + what + " from a unicode string"
			d.err = &SyntaxError{Msg: msg, text: msg}
			return Value{}, 0, false
		}
		d.depth++
		defer func() { d.depth-- }()
		if s[idx] == '{' {
			m, end, ok := d.parseObject(idx + 1)
			return ObjectValue(m), end, ok
		}
		a, end, ok := d.parseArray(idx + 1)
		return ArrayValue(a), end, ok
	case 'n':
		if strings.HasPrefix(s[idx:], "null") {
			return Value{}, idx + 4, true
		}
	case 't':
		if strings.HasPrefix(s[idx:], "true") {
			return BoolValue(true), idx + 4, true
		}
	case 'f':
		if strings.HasPrefix(s[idx:], "false") {
			return BoolValue(false), idx + 5, true
		}
	case 'N':
		if strings.HasPrefix(s[idx:], "NaN") {
			return FloatValue(math.NaN()), idx + 3, true
		}
	case 'I':
		if strings.HasPrefix(s[idx:], "Infinity") {
			return FloatValue(math.Inf(1)), idx + 8, true
		}
	case '-':
		if strings.HasPrefix(s[idx:], "-Infinity") {
			return FloatValue(math.Inf(-1)), idx + 9, true
		}
	}
	return d.matchNumber(idx)
}

// matchNumber mirrors _match_number_unicode.
func (d *decoder) matchNumber(start int) (Value, int, bool) {
	s := d.s
	end := len(s) - 1
	idx := start
	isFloat := false
	if s[idx] == '-' {
		idx++
		if idx > end {
			d.stop = start
			return Value{}, 0, false
		}
	}
	switch c := s[idx]; {
	case c >= '1' && c <= '9':
		idx++
		for idx <= end && s[idx] >= '0' && s[idx] <= '9' {
			idx++
		}
	case c == '0':
		idx++
	default:
		d.stop = start
		return Value{}, 0, false
	}
	if idx < end && s[idx] == '.' && s[idx+1] >= '0' && s[idx+1] <= '9' {
		isFloat = true
		idx += 2
		for idx <= end && s[idx] >= '0' && s[idx] <= '9' {
			idx++
		}
	}
	if idx < end && (s[idx] == 'e' || s[idx] == 'E') {
		eStart := idx
		idx++
		if idx < end && (s[idx] == '-' || s[idx] == '+') {
			idx++
		}
		for idx <= end && s[idx] >= '0' && s[idx] <= '9' {
			idx++
		}
		if s[idx-1] >= '0' && s[idx-1] <= '9' {
			isFloat = true
		} else {
			idx = eStart
		}
	}
	lit := s[start:idx]
	if isFloat {
		f, _ := strconv.ParseFloat(lit, 64) // out of range gives ±Inf or 0, as float() does
		return FloatValue(f), idx, true
	}
	if lit == "-0" {
		lit = "0"
	}
	return IntLiteral(lit), idx, true
}

// scanString mirrors scanstring_unicode; end is the index after the quote.
func (d *decoder) scanString(end int) (string, int, bool) {
	s := d.s
	n := len(s)
	begin := end - 1
	var buf []byte
	for {
		next := end
		var c byte
		for ; next < n; next++ {
			c = s[next]
			if c == '"' || c == '\\' {
				break
			}
			if c <= 0x1f {
				d.err = newErr(s, "Invalid control character at", next)
				return "", 0, false
			}
		}
		if next >= n {
			d.err = newErr(s, "Unterminated string starting at", begin)
			return "", 0, false
		}
		if c == '"' {
			if buf == nil {
				return s[end:next], next + 1, true
			}
			buf = append(buf, s[end:next]...)
			return string(buf), next + 1, true
		}
		buf = append(buf, s[end:next]...)
		next++ // skip the backslash
		if next == n {
			d.err = newErr(s, "Unterminated string starting at", begin)
			return "", 0, false
		}
		c = s[next]
		if c != 'u' {
			end = next + 1
			switch c {
			case '"', '\\', '/':
				buf = append(buf, c)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			default:
				d.err = newErr(s, "Invalid \\escape", end-2)
				return "", 0, false
			}
			continue
		}
		next++
		end = next + 4
		if end >= n {
			d.err = newErr(s, "Invalid \\uXXXX escape", next-1)
			return "", 0, false
		}
		r, ok := hex4(s[next:end])
		if !ok {
			d.err = newErr(s, "Invalid \\uXXXX escape", end-5)
			return "", 0, false
		}
		next = end
		if utf16.IsSurrogate(r) && r < 0xdc00 && end+6 < n && s[next] == '\\' && s[next+1] == 'u' {
			r2, ok := hex4(s[end+2 : end+6])
			if !ok {
				d.err = newErr(s, "Invalid \\uXXXX escape", end+1)
				return "", 0, false
			}
			if r2 >= 0xdc00 && r2 <= 0xdfff {
				r = utf16.DecodeRune(r, r2)
				end += 6
			}
		}
		// A lone surrogate (which Python would keep) becomes U+FFFD.
		buf = utf8.AppendRune(buf, r)
	}
}

func hex4(h string) (rune, bool) {
	var r rune
	for i := 0; i < 4; i++ {
		c := h[i]
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// parseObject mirrors _parse_object_unicode; idx is after '{'. A key given twice keeps its first position
// and takes its last value, as a dict does.
func (d *decoder) parseObject(idx int) ([]Member, int, bool) {
	s := d.s
	end := len(s) - 1
	var members []Member
	index := map[string]int{}
	idx = skipWS(s, idx)
	if idx <= end && s[idx] == '}' {
		return members, idx + 1, true
	}
	for {
		if idx > end || s[idx] != '"' {
			d.fail("Expecting property name enclosed in double quotes", idx)
			return nil, 0, false
		}
		key, next, ok := d.scanString(idx + 1)
		if !ok {
			return nil, 0, false
		}
		if idx = skipWS(s, next); idx > end || s[idx] != ':' {
			d.fail("Expecting ':' delimiter", idx)
			return nil, 0, false
		}
		v, next, ok := d.scanOnce(skipWS(s, idx+1))
		if !ok {
			return nil, 0, false
		}
		if i, seen := index[key]; seen {
			members[i].Value = v
		} else {
			index[key] = len(members)
			members = append(members, Member{Key: key, Value: v})
		}
		if idx = skipWS(s, next); idx <= end && s[idx] == '}' {
			return members, idx + 1, true
		}
		if idx > end || s[idx] != ',' {
			d.fail("Expecting ',' delimiter", idx)
			return nil, 0, false
		}
		idx = skipWS(s, idx+1)
	}
}

// parseArray mirrors _parse_array_unicode; idx is after '['.
func (d *decoder) parseArray(idx int) ([]Value, int, bool) {
	s := d.s
	end := len(s) - 1
	var elems []Value
	idx = skipWS(s, idx)
	if idx <= end && s[idx] == ']' {
		return elems, idx + 1, true
	}
	for {
		v, next, ok := d.scanOnce(idx)
		if !ok {
			return nil, 0, false
		}
		elems = append(elems, v)
		if idx = skipWS(s, next); idx <= end && s[idx] == ']' {
			return elems, idx + 1, true
		}
		if idx > end || s[idx] != ',' {
			d.fail("Expecting ',' delimiter", idx)
			return nil, 0, false
		}
		idx = skipWS(s, idx+1)
	}
}
