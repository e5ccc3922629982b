package seal

import (
	"encoding/binary"
	"unsafe"
)

// The envelope's text is base64url without padding (RFC 4648 §5), exactly what
// base64.RawURLEncoding.Strict() reads and writes (b64_test.go checks both directions against it, and a
// fuzzer keeps checking). It has its own codec because the standard library's costs more than AES-GCM
// itself on an envelope (about 500 characters): this one encodes 12 bits per table lookup, decodes a
// 4-character group with four lookups in pre-shifted tables and one check, reads the three webhook fields
// where they are (b64DecodeParts), and refuses every character outside the alphabet, CR and LF included
// (the standard decoder skips those).

const b64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// b64Pairs maps 12 bits to their two characters (first character in the low byte).
var b64Pairs = func() (t [4096]uint16) {
	for i := range t {
		t[i] = uint16(b64Alphabet[i>>6]) | uint16(b64Alphabet[i&63])<<8
	}
	return t
}()

// b64Values maps a character to its 6-bit value, 0xff when it is not in the alphabet.
var b64Values = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := range len(b64Alphabet) {
		t[b64Alphabet[i]] = byte(i)
	}
	return t
}()

// b64EncodedLen is the length of the text of n bytes.
func b64EncodedLen(n int) int { return (n*8 + 5) / 6 }

// b64Encode returns the text of src.
func b64Encode(src []byte) string {
	return b64EncodeInto(make([]byte, b64EncodedLen(len(src))+8), src)
}

// b64EncodeInto writes the text of src into dst, which must have room for b64EncodedLen(len(src)) + 8
// bytes and is never written again, and returns it as a string that shares dst.
func b64EncodeInto(dst, src []byte) string {
	n := b64EncodeBlocks(dst, src)
	di := b64EncodeScalar(dst, src[n:], n/3*4)
	// dst is never written again: the string may share it.
	return unsafe.String(unsafe.SliceData(dst), di)
}

// b64EncodeScalar is the portable encoder: it writes the text of src into dst from di on and returns
// where the text ends.
func b64EncodeScalar(dst, src []byte, di int) int {
	for len(src) >= 8 { // 6 bytes -> 8 characters per round (reads 8, writes 8)
		v := binary.BigEndian.Uint64(src)
		binary.LittleEndian.PutUint64(dst[di:], uint64(b64Pairs[v>>52])|uint64(b64Pairs[v>>40&0xfff])<<16|
			uint64(b64Pairs[v>>28&0xfff])<<32|uint64(b64Pairs[v>>16&0xfff])<<48)
		src, di = src[6:], di+8
	}
	for len(src) >= 3 {
		v := uint(src[0])<<16 | uint(src[1])<<8 | uint(src[2])
		binary.LittleEndian.PutUint16(dst[di:], b64Pairs[v>>12])
		binary.LittleEndian.PutUint16(dst[di+2:], b64Pairs[v&0xfff])
		src, di = src[3:], di+4
	}
	switch len(src) {
	case 1:
		binary.LittleEndian.PutUint16(dst[di:], b64Pairs[uint(src[0])<<4])
		di += 2
	case 2:
		v := uint(src[0])<<16 | uint(src[1])<<8
		binary.LittleEndian.PutUint16(dst[di:], b64Pairs[v>>12])
		dst[di+2] = b64Alphabet[v>>6&63]
		di += 3
	}
	return di
}

// b64Quad[i][c] is character c's 6 bits at position i of a 4-character group (bits 18, 12, 6 and 0 of 24),
// or b64Bad when c is not in the alphabet: a group decodes with four lookups and one check.
var b64Quad = func() (t [4][256]uint32) {
	for i := range t {
		for c := range t[i] {
			if v := b64Values[c]; v == 0xff {
				t[i][c] = b64Bad
			} else {
				t[i][c] = uint32(v) << (18 - 6*i)
			}
		}
	}
	return t
}()

const b64Bad = 1 << 31

// b64Decode decodes text into dst, which must have room for len(text)*3/4 bytes, and returns the bytes
// written. It refuses characters outside the alphabet, a length of 4k+1, and non-zero unused bits.
func b64Decode(dst, text []byte) (int, bool) {
	q := len(text) &^ 3
	di, ok := b64DecodeQuads(dst, text[:q])
	if !ok {
		return 0, false
	}
	n, ok := b64DecodeTail(dst[di:], text[q:])
	return di + n, ok
}

// b64DecodeParts decodes the concatenation of parts (the fields of an envelope, cut at any character)
// into dst like b64Decode. It gathers them in tmp first, which must have room for all of them: with
// whole blocks of 16 characters decoded at once, one copy costs less than mending the groups that
// straddle two fields.
func b64DecodeParts(dst, tmp []byte, parts [3]string) (int, bool) {
	n := copy(tmp, parts[0])
	n += copy(tmp[n:], parts[1])
	n += copy(tmp[n:], parts[2])
	return b64Decode(dst, tmp[:n])
}

// b64DecodeQuads decodes text, a whole number of 4-character groups, into dst (room for len(text)*3/4).
// Blocks of 16 characters go to b64DecodeBlocks; when 4 to 12 characters are left, and room allows, the
// last 16 characters are decoded as one more block, which writes again the bytes it shares with the one
// before.
func b64DecodeQuads(dst, text []byte) (int, bool) {
	n, ok := b64DecodeBlocks(dst, text)
	if !ok {
		return 0, false
	}
	if n > 0 && n < len(text) {
		if last := len(text) - 16; len(dst) >= last/4*3+16 {
			if m, ok := b64DecodeBlocks(dst[last/4*3:], text[last:]); !ok || m != 16 {
				return 0, false
			}
			return len(text) / 4 * 3, true
		}
	}
	di, ok := b64DecodeQuadsScalar(dst[n/4*3:], text[n:])
	return n/4*3 + di, ok
}

// b64DecodeQuadsScalar is the portable b64DecodeQuads.
func b64DecodeQuadsScalar(dst, text []byte) (int, bool) {
	di := 0
	for len(text) >= 8 && len(dst)-di >= 8 { // 8 characters -> 6 bytes per round (writes 8)
		t := text[:8]
		v := b64Quad[0][t[0]] | b64Quad[1][t[1]] | b64Quad[2][t[2]] | b64Quad[3][t[3]]
		w := b64Quad[0][t[4]] | b64Quad[1][t[5]] | b64Quad[2][t[6]] | b64Quad[3][t[7]]
		if (v|w)&b64Bad != 0 {
			return 0, false
		}
		binary.BigEndian.PutUint64(dst[di:], uint64(v)<<40|uint64(w)<<16)
		text, di = text[8:], di+6
	}
	for len(text) >= 4 {
		v := b64Quad[0][text[0]] | b64Quad[1][text[1]] | b64Quad[2][text[2]] | b64Quad[3][text[3]]
		if v&b64Bad != 0 {
			return 0, false
		}
		_ = dst[di+2]
		dst[di], dst[di+1], dst[di+2] = byte(v>>16), byte(v>>8), byte(v)
		text, di = text[4:], di+3
	}
	return di, true
}

// b64DecodeTail decodes the last 0 to 3 characters of a text.
func b64DecodeTail(dst, text []byte) (int, bool) {
	switch len(text) {
	case 0:
		return 0, true
	case 2:
		a, b := b64Values[text[0]], b64Values[text[1]]
		if (a|b)&0xc0 != 0 || b&0x0f != 0 {
			return 0, false
		}
		dst[0] = a<<2 | b>>4
		return 1, true
	case 3:
		a, b, c := b64Values[text[0]], b64Values[text[1]], b64Values[text[2]]
		if (a|b|c)&0xc0 != 0 || c&0x03 != 0 {
			return 0, false
		}
		v := uint(a)<<12 | uint(b)<<6 | uint(c)
		dst[0], dst[1] = byte(v>>10), byte(v>>2)
		return 2, true
	}
	return 0, false // 1 character: not a whole byte
}
