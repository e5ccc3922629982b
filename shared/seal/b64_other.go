//go:build !amd64 || purego

package seal

const hasSSSE3, hasAVX2 = false, false

// b64EncodeBlocks leaves all of src to the portable code on this architecture.
func b64EncodeBlocks(dst, src []byte) int { return 0 }

// b64DecodeBlocks leaves all of text to the portable code on this architecture.
func b64DecodeBlocks(dst, text []byte) (n int, ok bool) { return 0, true }
