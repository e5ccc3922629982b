//go:build amd64 && !purego

package seal

import "golang.org/x/sys/cpu"

// hasSSSE3 and hasAVX2 are read once: every x86-64 server of the last fifteen years has SSSE3, most have
// AVX2; without them the portable code runs alone.
var (
	hasSSSE3 = cpu.X86.HasSSSE3
	hasAVX2  = cpu.X86.HasAVX2
)

// b64EncodeBlocks encodes whole blocks of src into dst, 24 bytes to 32 characters (AVX2) while at least
// 28 bytes remain, then 12 to 16 (SSSE3) while at least 16 remain (what each step reads), and returns the
// number of bytes of src encoded; dst needs room for 4/3 of them. The portable code does the rest.
func b64EncodeBlocks(dst, src []byte) int {
	if len(dst) < (len(src)+2)/3*4 {
		return 0 // the assembly checks no bounds: leave a short dst to the portable code, which does
	}
	n := 0
	if hasAVX2 && len(src) >= 28 {
		n = b64EncodeAVX2(dst, src)
	}
	if hasSSSE3 && len(src)-n >= 16 {
		n += b64EncodeSSSE3(dst[n/3*4:], src[n:])
	}
	return n
}

// b64DecodeBlocks decodes whole blocks of text into dst, 32 characters to 24 bytes (AVX2) while dst has
// room for a 32-byte store, then 16 to 12 (SSSE3) while it has room for 16, and returns the number of
// characters decoded; ok is false when a character outside the alphabet is met (n is then 0). The
// portable code does the rest.
func b64DecodeBlocks(dst, text []byte) (n int, ok bool) {
	if hasAVX2 && len(text) >= 32 && len(dst) >= 32 {
		if n, ok = b64DecodeAVX2(dst, text); !ok {
			return 0, false
		}
	}
	if hasSSSE3 && len(text)-n >= 16 && len(dst)-n/4*3 >= 16 {
		m, ok := b64DecodeSSSE3(dst[n/4*3:], text[n:])
		if !ok {
			return 0, false
		}
		n += m
	}
	return n, true
}

//go:noescape
func b64EncodeSSSE3(dst, src []byte) (n int)

//go:noescape
func b64EncodeAVX2(dst, src []byte) (n int)

//go:noescape
func b64DecodeAVX2(dst, text []byte) (n int, ok bool)

//go:noescape
func b64DecodeSSSE3(dst, text []byte) (n int, ok bool)
