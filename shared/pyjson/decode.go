package pyjson

import (
	"math"
	"math/bits"
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

// A Decoder decodes documents as Decode does, and keeps its memory from one
// document to the next: once its buffers have grown to the size of the
// documents it sees, decoding allocates nothing but the strings that hold
// escapes. The Value a call returns, with every array and object inside it,
// is valid only until the next Decode or Reset on the same Decoder; its
// strings stay valid. A Decoder must not be used by two goroutines at once.
// The zero Decoder is ready to use.
type Decoder struct {
	d decoder
}

// maxKeep bounds the memory a Decoder keeps for the next document, in
// Values and in Members: a rare huge document does not pin its buffers.
const maxKeep = 4096

// Decode is the package-level Decode with the Decoder's memory. It ends the
// validity of the Value the previous call returned.
func (dec *Decoder) Decode(s string) (Value, error) {
	dec.Reset()
	return dec.d.decode(s)
}

// Reset forgets the last document: it ends the validity of the Value the
// last Decode returned, and no part of that document stays reachable from
// the Decoder.
func (dec *Decoder) Reset() {
	d := &dec.d
	clear(d.vals[:d.valsHigh])
	clear(d.mems[:d.memsHigh])
	clear(d.valArena[:cap(d.valArena)])
	clear(d.memArena[:cap(d.memArena)])
	vals, mems, valArena, memArena := d.vals[:0], d.mems[:0], d.valArena[:0], d.memArena[:0]
	// Size the arenas for a document like the last one: one slice each.
	if d.valNeed > cap(valArena) {
		valArena = make([]Value, 0, d.valNeed)
	}
	if d.memNeed > cap(memArena) {
		memArena = make([]Member, 0, d.memNeed)
	}
	if cap(valArena) > maxKeep || cap(vals) > maxKeep {
		vals, valArena = nil, nil
	}
	if cap(memArena) > maxKeep || cap(mems) > maxKeep {
		mems, memArena = nil, nil
	}
	*d = decoder{vals: vals, mems: mems, valArena: valArena, memArena: memArena}
}

// Decode is json.loads(s) for a str s that contains only valid UTF-8 (see
// ValidUTF8). The error, if any, is a *SyntaxError.
func Decode(s string) (Value, error) {
	var d decoder
	return d.decode(s)
}

type decoder struct {
	s     string
	depth int
	err   *SyntaxError
	stop  int // >= 0 when a StopIteration is pending
	// vals and mems are scratch stacks: the elements of the arrays and
	// objects being parsed, copied into exactly sized slices when each
	// closes; valsHigh and memsHigh are the most they have held.
	vals               []Value
	mems               []Member
	valsHigh, memsHigh int
	// valArena and memArena are the arenas the finished slices are cut
	// from, so a document costs a few allocations instead of one per
	// container (none with a Decoder that has seen such a document);
	// valNeed and memNeed count what the document has cut.
	valArena         []Value
	memArena         []Member
	valNeed, memNeed int
}

const chunk = 256

func (d *decoder) valSlice(base int) []Value {
	src := d.vals[base:]
	n := len(src)
	d.valsHigh = max(d.valsHigh, len(d.vals))
	d.valNeed += n
	if n > cap(d.valArena)-len(d.valArena) {
		d.valArena = make([]Value, 0, max(chunk, n))
	}
	start := len(d.valArena)
	d.valArena = append(d.valArena, src...)
	d.vals = d.vals[:base]
	return d.valArena[start : start+n : start+n]
}

func (d *decoder) memSlice(base int) []Member {
	src := d.mems[base:]
	n := len(src)
	d.memsHigh = max(d.memsHigh, len(d.mems))
	d.memNeed += n
	if n > cap(d.memArena)-len(d.memArena) {
		d.memArena = make([]Member, 0, max(chunk, n))
	}
	start := len(d.memArena)
	d.memArena = append(d.memArena, src...)
	d.mems = d.mems[:base]
	return d.memArena[start : start+n : start+n]
}

func (d *decoder) decode(s string) (Value, error) {
	if strings.HasPrefix(s, "\ufeff") {
		return Value{}, newErr(s, "Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
	}
	d.s, d.stop = s, -1
	idx := skipWS(s, 0)
	var v Value
	end, ok := d.scanOnce(idx, &v)
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

// skipWS returns the index of the first non-white-space byte at or after
// i. The test for a byte that cannot be white space is inlined; the loop is
// not.
func skipWS(s string, i int) int {
	if i < len(s) && s[i] <= ' ' {
		return skipWSLoop(s, i)
	}
	return i
}

func skipWSLoop(s string, i int) int {
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

// scanOnce mirrors scan_once_unicode. An array or an object is decoded by
// scanNested, which returns it; any other value is decoded by scanLeaf into
// a slot. The two are apart so that no pointer is held across the recursion
// of arrays and objects: a slot of the scratch stacks moves when they grow.
func (d *decoder) scanOnce(idx int, slot *Value) (int, bool) {
	if idx < len(d.s) && (d.s[idx] == '{' || d.s[idx] == '[') {
		v, end, ok := d.scanNested(idx)
		*slot = v
		return end, ok
	}
	return d.scanLeaf(idx, slot)
}

// nested reports whether the value at idx is an array or an object.
func (d *decoder) nested(idx int) bool {
	return idx < len(d.s) && (d.s[idx] == '{' || d.s[idx] == '[')
}

// scanNested decodes the array or object at idx.
func (d *decoder) scanNested(idx int) (Value, int, bool) {
	if d.depth >= MaxDepth {
		what := "array"
		if d.s[idx] == '{' {
			what = "object"
		}
		msg := "maximum recursion depth exceeded while decoding a JSON " + what + " from a unicode string"
		d.err = &SyntaxError{Msg: msg, text: msg}
		return Value{}, 0, false
	}
	d.depth++
	if d.s[idx] == '{' {
		m, end, ok := d.parseObject(idx + 1)
		d.depth--
		return ObjectValue(m), end, ok
	}
	a, end, ok := d.parseArray(idx + 1)
	d.depth--
	return ArrayValue(a), end, ok
}

// scanLeaf decodes the value at idx, which is not an array or an object,
// into dst, a zero Value.
func (d *decoder) scanLeaf(idx int, dst *Value) (int, bool) {
	s := d.s
	n := len(s)
	if idx >= n {
		return d.stopAt(idx)
	}
	switch s[idx] {
	case '"':
		str, end, ok := d.scanString(idx + 1)
		if !ok {
			return 0, false
		}
		dst.kind, dst.p, dst.n = String, strData(str), uint64(len(str))
		return end, true
	case 'n':
		if idx+3 < n && s[idx+1:idx+4] == "ull" {
			dst.kind = Null
			return idx + 4, true
		}
	case 't':
		if idx+3 < n && s[idx+1:idx+4] == "rue" {
			dst.kind, dst.n = Bool, 1
			return idx + 4, true
		}
	case 'f':
		if idx+4 < n && s[idx+1:idx+5] == "alse" {
			dst.kind = Bool
			return idx + 5, true
		}
	case 'N':
		if idx+2 < n && s[idx+1:idx+3] == "aN" {
			dst.kind, dst.n = Float, math.Float64bits(math.NaN())
			return idx + 3, true
		}
	case 'I':
		if idx+7 < n && s[idx+1:idx+8] == "nfinity" {
			dst.kind, dst.n = Float, math.Float64bits(math.Inf(1))
			return idx + 8, true
		}
	case '-':
		if idx+8 < n && s[idx+1:idx+9] == "Infinity" {
			dst.kind, dst.n = Float, math.Float64bits(math.Inf(-1))
			return idx + 9, true
		}
	}
	return d.matchNumber(idx, dst)
}

// matchNumber mirrors _match_number_unicode.
func (d *decoder) matchNumber(start int, dst *Value) (int, bool) {
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
		dst.kind, dst.n = Float, math.Float64bits(f)
		return idx, true
	}
	if lit == "-0" {
		lit = "0"
	}
	dst.kind, dst.p, dst.n = Int, strData(lit), uint64(len(lit))
	return idx, true
}

// scanString mirrors scanstring_unicode; end is the index after the quote.
func (d *decoder) scanString(end int) (string, int, bool) {
	// The common case first: no escape up to the closing quote.
	s := d.s
	i := end
	for ; i+8 <= len(s); i += 8 {
		if m := specials(load8(s, i)); m != 0 {
			// The lowest marked byte is the first special one.
			i += bits.TrailingZeros64(m) >> 3
			if s[i] == '"' {
				return s[end:i], i + 1, true
			}
			return d.scanEscaped(end)
		}
	}
	for i < len(s) && s[i] != '"' && s[i] != '\\' && s[i] >= 0x20 {
		i++
	}
	if i < len(s) && s[i] == '"' {
		return s[end:i], i + 1, true
	}
	return d.scanEscaped(end)
}

// scanEscaped is scanString for a string with an escape, a control
// character, or no end.
func (d *decoder) scanEscaped(end int) (string, int, bool) {
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

// specials returns a mask with the high bit set in those of the 8 bytes of
// x (load8) that are '"', '\\' or a control character (below 0x20). Bytes above
// the lowest marked one may be marked wrongly; the lowest is always right.
// It and load8 are small enough to be inlined into the scanning loops.
func specials(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, b := x^(ones*'"'), x^(ones*'\\')
	return (((q - ones) &^ q) | ((b - ones) &^ b) | ((x - ones*0x20) &^ x)) & highs
}

// load8 returns the 8 bytes at s[i:] as a little-endian word (one load).
func load8(s string, i int) uint64 {
	t := s[i : i+8]
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
		uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
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
func (d *decoder) parseObject(idx int) ([]Member, int, bool) {
	s := d.s
	end := len(s) - 1
	base := len(d.mems)
	var index map[string]int
	var seen uint64 // keyBit of every key so far, while index is nil
	idx = skipWS(s, idx)
	if idx > end || s[idx] != '}' {
		for {
			if idx > end || s[idx] != '"' {
				return d.failObject(base, "Expecting property name enclosed in double quotes", idx)
			}
			// A key with no escape is cut here, without a call (the
			// 8-byte scan is written out: a function holding it would be
			// too big to inline).
			next := idx + 1
			for ; next+8 <= len(s); next += 8 {
				if m := specials(load8(s, next)); m != 0 {
					next += bits.TrailingZeros64(m) >> 3
					break
				}
			}
			var key string
			var ok bool
			if next < len(s) && s[next] == '"' {
				key, next = s[idx+1:next], next+1
			} else if key, next, ok = d.scanString(idx + 1); !ok {
				return d.failObject(base, "", 0)
			}
			idx = next
			if idx > end || s[idx] != ':' {
				if idx = skipWS(s, idx); idx > end || s[idx] != ':' {
					return d.failObject(base, "Expecting ':' delimiter", idx)
				}
			}
			idx = skipWS(s, idx+1)
			// The value goes to a local, and the member is pushed once it
			// is whole (a nested value's members come and go above it).
			var v Value
			switch {
			case idx < len(s) && s[idx] == '"':
				// A string with no escape, cut as the key is.
				next = idx + 1
				for ; next+8 <= len(s); next += 8 {
					if m := specials(load8(s, next)); m != 0 {
						next += bits.TrailingZeros64(m) >> 3
						break
					}
				}
				if next < len(s) && s[next] == '"' {
					v.kind, v.p, v.n = String, strData(s[idx+1:next]), uint64(next-idx-1)
					next, ok = next+1, true
				} else {
					next, ok = d.scanLeaf(idx, &v)
				}
			case d.nested(idx):
				v, next, ok = d.scanNested(idx)
			default:
				next, ok = d.scanLeaf(idx, &v)
			}
			if !ok {
				return d.failObject(base, "", 0)
			}
			// dict semantics: first position, last value.
			pos := -1
			if index != nil {
				if p, ok := index[key]; ok {
					pos = p
				}
			} else if bit := keyBit(key); seen&bit == 0 {
				seen |= bit // no key of this object has key's hash: a new key
			} else {
				cur := d.mems[base:]
				for i := range cur {
					if cur[i].Key == key {
						pos = i
						break
					}
				}
			}
			if pos >= 0 {
				d.mems[base+pos].Value = v
			} else {
				d.mems = append(d.mems, Member{Key: key, Value: v})
				if index != nil {
					index[key] = len(d.mems) - 1 - base
				} else if len(d.mems)-base > 16 {
					index = make(map[string]int, 32)
					for i, m := range d.mems[base:] {
						index[m.Key] = i
					}
				}
			}
			idx = next
			if idx > end || s[idx] != ',' {
				if idx = skipWS(s, idx); idx <= end && s[idx] == '}' {
					break
				}
				if idx > end || s[idx] != ',' {
					return d.failObject(base, "Expecting ',' delimiter", idx)
				}
			}
			idx = skipWS(s, idx+1)
		}
	}
	return d.memSlice(base), idx + 1, true
}

// keyBit returns a one-bit mask picked by a hash of key's length and first
// and last bytes: parseObject compares a key with the ones before it only
// when their bits meet.
func keyBit(key string) uint64 {
	h := uint64(len(key))
	if len(key) > 0 {
		h |= uint64(key[0])<<8 | uint64(key[len(key)-1])<<16
	}
	return 1 << ((h * 0x9e3779b97f4a7c15) >> 58)
}

// failObject drops the members of the object being parsed and records the
// syntax error msg at pos ("" when it is recorded already).
func (d *decoder) failObject(base int, msg string, pos int) ([]Member, int, bool) {
	d.mems = d.mems[:base]
	if msg != "" {
		d.fail(msg, pos)
	}
	return nil, 0, false
}

// parseArray mirrors _parse_array_unicode; idx is after '['.
func (d *decoder) parseArray(idx int) ([]Value, int, bool) {
	s := d.s
	end := len(s) - 1
	base := len(d.vals)
	idx = skipWS(s, idx)
	if idx > end || s[idx] != ']' {
		for {
			// The element goes to a local and is pushed whole (a nested
			// value's elements come and go above it).
			var v Value
			var next int
			var ok bool
			if d.nested(idx) {
				v, next, ok = d.scanNested(idx)
			} else {
				next, ok = d.scanLeaf(idx, &v)
			}
			if !ok {
				d.vals = d.vals[:base]
				return nil, 0, false
			}
			d.vals = append(d.vals, v)
			idx = next
			if idx > end || s[idx] != ',' {
				if idx = skipWS(s, idx); idx <= end && s[idx] == ']' {
					break
				}
				if idx > end || s[idx] != ',' {
					d.vals = d.vals[:base]
					d.fail("Expecting ',' delimiter", idx)
					return nil, 0, false
				}
			}
			idx = skipWS(s, idx+1)
		}
	}
	return d.valSlice(base), idx + 1, true
}
