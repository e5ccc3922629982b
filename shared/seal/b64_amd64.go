//go:build amd64 && !purego

package seal

import "golang.org/x/sys/cpu"

// hasSSSE3 is read once: every x86-64 server of the last fifteen years has SSSE3; without it the portable
// code runs alone.
var hasSSSE3 = cpu.X86.HasSSSE3

// b64EncodeBlocks encodes whole 12-byte blocks of src into dst (16 characters each, SSSE3) while at least
// 16 bytes of src remain (each step reads 16), and returns the number of bytes of src encoded; dst needs
// room for 4/3 of them. The portable code does the rest.
func b64EncodeBlocks(dst, src []byte) int {
	if !hasSSSE3 || len(src) < 16 {
		return 0
	}
	return b64EncodeSSSE3(dst, src)
}

// b64DecodeBlocks decodes whole 16-character blocks of text into dst (12 bytes each, SSSE3) while dst
// has room for a 16-byte store, and returns the number of characters decoded; ok is false when a
// character outside the alphabet is met (n is then 0). The portable code does the rest.
func b64DecodeBlocks(dst, text []byte) (n int, ok bool) {
	if !hasSSSE3 || len(text) < 16 || len(dst) < 16 {
		return 0, true
	}
	return b64DecodeSSSE3(dst, text)
}

//go:noescape
func b64EncodeSSSE3(dst, src []byte) (n int)

//go:noescape
func b64DecodeSSSE3(dst, text []byte) (n int, ok bool)
