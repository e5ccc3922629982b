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

type stopIteration struct{ pos int }

type decoder struct {
	s     string
	depth int
	err   *SyntaxError
	stop  int // >= 0 when a StopIteration is pending
	// vals and mems are scratch stacks: the elements of the arrays and
	// objects being parsed, copied into exactly sized slices when each closes.
	vals []Value
	mems []Member
	// valChunk and memChunk are arenas the finished slices are cut from, so
	// a document costs a few allocations instead of one per container.
	valChunk []Value
	memChunk []Member
}

const chunk = 256

func (d *decoder) valSlice(src []Value) []Value {
	n := len(src)
	if n > cap(d.valChunk)-len(d.valChunk) {
		d.valChunk = make([]Value, 0, max(chunk, n))
	}
	start := len(d.valChunk)
	d.valChunk = append(d.valChunk, src...)
	return d.valChunk[start : start+n : start+n]
}

func (d *decoder) memSlice(src []Member) []Member {
	n := len(src)
	if n > cap(d.memChunk)-len(d.memChunk) {
		d.memChunk = make([]Member, 0, max(chunk, n))
	}
	start := len(d.memChunk)
	d.memChunk = append(d.memChunk, src...)
	return d.memChunk[start : start+n : start+n]
}

// Decode is json.loads(s) for a str s that contains only valid UTF-8 (see
// ValidUTF8). The error, if any, is a *SyntaxError.
func Decode(s string) (Value, error) {
	if strings.HasPrefix(s, "\ufeff") {
		return Value{}, newErr(s, "Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
	}
	d := decoder{s: s, stop: -1}
	idx := skipWS(s, 0)
	v, end, ok := d.scanOnce(idx)
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

func skipWS(s string, i int) int {
	for i < len(s) && isWS(s[i]) {
		i++
	}
	return i
}

func (d *decoder) fail(msg string, pos int) (Value, int, bool) {
	d.err = newErr(d.s, msg, pos)
	return Value{}, 0, false
}

func (d *decoder) stopAt(pos int) (Value, int, bool) {
	d.stop = pos
	return Value{}, 0, false
}

// scanOnce mirrors scan_once_unicode.
func (d *decoder) scanOnce(idx int) (Value, int, bool) {
	s := d.s
	n := len(s)
	if idx >= n {
		return d.stopAt(idx)
	}
	switch s[idx] {
	case '"':
		str, end, ok := d.scanString(idx + 1)
		if !ok {
			return Value{}, 0, false
		}
		return Value{Kind: String, S: str}, end, true
	case '{':
		if d.depth >= MaxDepth {
			d.err = &SyntaxError{Msg: "maximum recursion depth exceeded while decoding a JSON object from a unicode string",
				text: "maximum recursion depth exceeded while decoding a JSON object from a unicode string"}
			return Value{}, 0, false
		}
		d.depth++
		v, end, ok := d.parseObject(idx + 1)
		d.depth--
		return v, end, ok
	case '[':
		if d.depth >= MaxDepth {
			d.err = &SyntaxError{Msg: "maximum recursion depth exceeded while decoding a JSON array from a unicode string",
				text: "maximum recursion depth exceeded while decoding a JSON array from a unicode string"}
			return Value{}, 0, false
		}
		d.depth++
		v, end, ok := d.parseArray(idx + 1)
		d.depth--
		return v, end, ok
	case 'n':
		if idx+3 < n && s[idx+1:idx+4] == "ull" {
			return Value{Kind: Null}, idx + 4, true
		}
	case 't':
		if idx+3 < n && s[idx+1:idx+4] == "rue" {
			return Value{Kind: Bool, B: true}, idx + 4, true
		}
	case 'f':
		if idx+4 < n && s[idx+1:idx+5] == "alse" {
			return Value{Kind: Bool}, idx + 5, true
		}
	case 'N':
		if idx+2 < n && s[idx+1:idx+3] == "aN" {
			return Value{Kind: Float, F: math.NaN()}, idx + 3, true
		}
	case 'I':
		if idx+7 < n && s[idx+1:idx+8] == "nfinity" {
			return Value{Kind: Float, F: math.Inf(1)}, idx + 8, true
		}
	case '-':
		if idx+8 < n && s[idx+1:idx+9] == "Infinity" {
			return Value{Kind: Float, F: math.Inf(-1)}, idx + 9, true
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
			return d.stopAt(start)
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
		return d.stopAt(start)
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
		return Value{Kind: Float, F: f}, idx, true
	}
	if lit == "-0" {
		lit = "0"
	}
	return Value{Kind: Int, S: lit}, idx, true
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

// parseObject mirrors _parse_object_unicode; idx is after '{'.
func (d *decoder) parseObject(idx int) (Value, int, bool) {
	s := d.s
	end := len(s) - 1
	base := len(d.mems)
	defer func() { d.mems = d.mems[:base] }()
	var index map[string]int
	idx = skipWS(s, idx)
	if idx > end || s[idx] != '}' {
		for {
			if idx > end || s[idx] != '"' {
				return d.fail("Expecting property name enclosed in double quotes", idx)
			}
			key, next, ok := d.scanString(idx + 1)
			if !ok {
				return Value{}, 0, false
			}
			idx = skipWS(s, next)
			if idx > end || s[idx] != ':' {
				return d.fail("Expecting ':' delimiter", idx)
			}
			idx = skipWS(s, idx+1)
			val, next, ok := d.scanOnce(idx)
			if !ok {
				return Value{}, 0, false
			}
			// dict semantics: first position, last value.
			cur := d.mems[base:]
			pos := -1
			if index != nil {
				if p, ok := index[key]; ok {
					pos = p
				}
			} else {
				for i := range cur {
					if cur[i].Key == key {
						pos = i
						break
					}
				}
			}
			if pos >= 0 {
				cur[pos].Value = val
			} else {
				d.mems = append(d.mems, Member{Key: key, Value: val})
				if n := len(d.mems) - base; index != nil {
					index[key] = n - 1
				} else if n > 16 {
					index = make(map[string]int, 32)
					for i, m := range d.mems[base:] {
						index[m.Key] = i
					}
				}
			}
			idx = skipWS(s, next)
			if idx <= end && s[idx] == '}' {
				break
			}
			if idx > end || s[idx] != ',' {
				return d.fail("Expecting ',' delimiter", idx)
			}
			idx = skipWS(s, idx+1)
		}
	}
	v := Value{Kind: Object, O: d.memSlice(d.mems[base:])}
	return v, idx + 1, true
}

// parseArray mirrors _parse_array_unicode; idx is after '['.
func (d *decoder) parseArray(idx int) (Value, int, bool) {
	s := d.s
	end := len(s) - 1
	base := len(d.vals)
	defer func() { d.vals = d.vals[:base] }()
	idx = skipWS(s, idx)
	if idx > end || s[idx] != ']' {
		for {
			val, next, ok := d.scanOnce(idx)
			if !ok {
				return Value{}, 0, false
			}
			d.vals = append(d.vals, val)
			idx = skipWS(s, next)
			if idx <= end && s[idx] == ']' {
				break
			}
			if idx > end || s[idx] != ',' {
				return d.fail("Expecting ',' delimiter", idx)
			}
			idx = skipWS(s, idx+1)
		}
	}
	v := Value{Kind: Array, A: d.valSlice(d.vals[base:])}
	return v, idx + 1, true
}
