//go:build amd64 && !purego

package seal

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// simdCodecs are the assembly codecs this machine runs, each with the size of its step (characters).
func simdCodecs(t *testing.T) []struct {
	name   string
	step   int
	encode func(dst, src []byte) int
	decode func(dst, text []byte) (int, bool)
} {
	type codec = struct {
		name   string
		step   int
		encode func(dst, src []byte) int
		decode func(dst, text []byte) (int, bool)
	}
	var out []codec
	if hasSSSE3 {
		out = append(out, codec{"SSSE3", 16, b64EncodeSSSE3, b64DecodeSSSE3})
	}
	if hasAVX2 {
		out = append(out, codec{"AVX2", 32, b64EncodeAVX2, b64DecodeAVX2})
	}
	if len(out) == 0 {
		t.Skip("this CPU has neither SSSE3 nor AVX2: only the portable code runs")
	}
	return out
}

// Each assembly encoder, alone, writes what the portable encoder writes for the bytes it takes, whole
// steps only, and reads no further than it may.
func TestBase64SIMDEncode(t *testing.T) {
	for _, c := range simdCodecs(t) {
		bytesPerStep := c.step / 4 * 3
		for n := range 200 {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(i*131 + n*7 + 3)
			}
			dst := bytes.Repeat([]byte{'!'}, n/3*4+64)
			got := c.encode(dst, src)
			// What each step reads: 16 bytes (SSSE3), 28 (AVX2: two 16-byte halves 12 apart).
			reads := 16
			if c.step == 32 {
				reads = 28
			}
			want := 0
			for want+reads <= n {
				want += bytesPerStep
			}
			if got != want {
				t.Fatalf("%s, %d bytes: encoded %d, want %d", c.name, n, got, want)
			}
			if text := base64.RawURLEncoding.EncodeToString(src[:got]); string(dst[:got/3*4]) != text {
				t.Fatalf("%s, %d bytes: %q, want %q", c.name, n, dst[:got/3*4], text)
			}
			if strings.Trim(string(dst[got/3*4:]), "!") != "" {
				t.Fatalf("%s, %d bytes: wrote past the text", c.name, n)
			}
		}
	}
}

// Each assembly decoder, alone, accepts exactly the 64 characters of the alphabet, at every position of a
// step (this checks its nibble tables byte by byte), and decodes what the portable decoder decodes.
func TestBase64SIMDDecodeAlphabet(t *testing.T) {
	for _, c := range simdCodecs(t) {
		base := make([]byte, c.step)
		for i := range base {
			base[i] = b64Alphabet[(i*29+5)%64]
		}
		for pos := range c.step {
			for ch := range 256 {
				text := bytes.Clone(base)
				text[pos] = byte(ch)
				dst := make([]byte, c.step)
				n, ok := c.decode(dst, text)
				valid := strings.IndexByte(b64Alphabet, byte(ch)) >= 0
				if ok != valid || (ok && n != c.step) || (!ok && n != 0) {
					t.Fatalf("%s: %q at %d: decoded %d %v, in the alphabet: %v", c.name, ch, pos, n, ok, valid)
				}
				if !ok {
					continue
				}
				want := make([]byte, c.step)
				m, wok := b64DecodeQuadsScalar(want, text)
				if !wok || m != c.step/4*3 || !bytes.Equal(dst[:m], want[:m]) {
					t.Fatalf("%s: %q at %d: %x, portable %x", c.name, ch, pos, dst[:c.step/4*3], want[:m])
				}
			}
		}
	}
}

// Each assembly decoder stops where dst has no room for its store or text has no whole step left, and
// decodes long texts like encoding/base64.
func TestBase64SIMDDecodeLengths(t *testing.T) {
	for _, c := range simdCodecs(t) {
		for n := range 300 {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(i*17 + n)
			}
			text := []byte(base64.RawURLEncoding.EncodeToString(src))
			for _, room := range []int{len(text) * 3 / 4, len(text)*3/4 + c.step} {
				dst := make([]byte, room)
				got, ok := c.decode(dst, text)
				if !ok || got%c.step != 0 || got > len(text) {
					t.Fatalf("%s, %d characters, room %d: decoded %d %v", c.name, len(text), room, got, ok)
				}
				if rest := len(text) - got; rest >= c.step && room-got/4*3 >= c.step {
					t.Fatalf("%s, %d characters, room %d: stopped at %d", c.name, len(text), room, got)
				}
				if !bytes.Equal(dst[:got/4*3], src[:got/4*3]) {
					t.Fatalf("%s, %d characters: %x, want %x", c.name, len(text), dst[:got/4*3], src[:got/4*3])
				}
			}
		}
	}
}

// The assembly checks no bounds, so b64EncodeBlocks leaves a dst too short for the text to the portable
// code, whose bounds checks panic instead of writing past it.
func TestBase64EncodeBlocksShortDst(t *testing.T) {
	src := make([]byte, 100)
	if n := b64EncodeBlocks(make([]byte, 100/3*4), src); n != 0 {
		t.Fatalf("encoded %d bytes into a dst of %d", n, 100/3*4)
	}
	if !hasSSSE3 && !hasAVX2 {
		return
	}
	if n := b64EncodeBlocks(make([]byte, 136), src); n == 0 {
		t.Fatal("a dst with room for the text was refused")
	}
}
