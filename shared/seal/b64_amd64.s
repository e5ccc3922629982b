//go:build amd64 && !purego

#include "textflag.h"

// base64url (RFC 4648 §5) with AVX2, 32 characters per step, and SSSE3, 16 per step, after Wojciech Muła
// and Daniel Lemire, "Faster Base64 Encoding and Decoding Using AVX2 Instructions" (ACM TOPS 2018), §3
// and §4, for the URL alphabet. b64.go has the portable code and says what the text is; the tests check
// this against it and against encoding/base64. Every table is 32 bytes, the same 16 twice: AVX2 shuffles
// each 128-bit half of a register on its own, and SSSE3 reads the first 16.

// Encoding: bytes b0 b1 b2 of each group of three are shuffled into a 32-bit lane as b1 b0 b2 b1, two
// masks and two multiplies move the four 6-bit values a b c d into the lane's four bytes, and a 16-entry
// table indexed by a reduced value adds what turns each value into its character.
DATA encShuf<>+0(SB)/8, $0x0405030401020001
DATA encShuf<>+8(SB)/8, $0x0a0b090a07080607
DATA encShuf<>+16(SB)/8, $0x0405030401020001
DATA encShuf<>+24(SB)/8, $0x0a0b090a07080607
GLOBL encShuf<>(SB), RODATA|NOPTR, $32

DATA encMaskAC<>+0(SB)/8, $0x0fc0fc000fc0fc00
DATA encMaskAC<>+8(SB)/8, $0x0fc0fc000fc0fc00
DATA encMaskAC<>+16(SB)/8, $0x0fc0fc000fc0fc00
DATA encMaskAC<>+24(SB)/8, $0x0fc0fc000fc0fc00
GLOBL encMaskAC<>(SB), RODATA|NOPTR, $32

DATA encMulAC<>+0(SB)/8, $0x0400004004000040
DATA encMulAC<>+8(SB)/8, $0x0400004004000040
DATA encMulAC<>+16(SB)/8, $0x0400004004000040
DATA encMulAC<>+24(SB)/8, $0x0400004004000040
GLOBL encMulAC<>(SB), RODATA|NOPTR, $32

DATA encMaskBD<>+0(SB)/8, $0x003f03f0003f03f0
DATA encMaskBD<>+8(SB)/8, $0x003f03f0003f03f0
DATA encMaskBD<>+16(SB)/8, $0x003f03f0003f03f0
DATA encMaskBD<>+24(SB)/8, $0x003f03f0003f03f0
GLOBL encMaskBD<>(SB), RODATA|NOPTR, $32

DATA encMulBD<>+0(SB)/8, $0x0100001001000010
DATA encMulBD<>+8(SB)/8, $0x0100001001000010
DATA encMulBD<>+16(SB)/8, $0x0100001001000010
DATA encMulBD<>+24(SB)/8, $0x0100001001000010
GLOBL encMulBD<>(SB), RODATA|NOPTR, $32

DATA enc51<>+0(SB)/8, $0x3333333333333333
DATA enc51<>+8(SB)/8, $0x3333333333333333
DATA enc51<>+16(SB)/8, $0x3333333333333333
DATA enc51<>+24(SB)/8, $0x3333333333333333
GLOBL enc51<>(SB), RODATA|NOPTR, $32

DATA enc26<>+0(SB)/8, $0x1a1a1a1a1a1a1a1a
DATA enc26<>+8(SB)/8, $0x1a1a1a1a1a1a1a1a
DATA enc26<>+16(SB)/8, $0x1a1a1a1a1a1a1a1a
DATA enc26<>+24(SB)/8, $0x1a1a1a1a1a1a1a1a
GLOBL enc26<>(SB), RODATA|NOPTR, $32

DATA enc13<>+0(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA enc13<>+8(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA enc13<>+16(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA enc13<>+24(SB)/8, $0x0d0d0d0d0d0d0d0d
GLOBL enc13<>(SB), RODATA|NOPTR, $32

// What to add to a value to get its character, by reduced value: 0 for 26..51 ('a'-26 = 71), 1..10 for
// 52..61 ('0'-52 = -4), 11 for 62 ('-'-62 = -17), 12 for 63 ('_'-63 = 32), 13 for 0..25 ('A' = 65).
DATA encShift<>+0(SB)/8, $0xfcfcfcfcfcfcfc47
DATA encShift<>+8(SB)/8, $0x00004120effcfcfc
DATA encShift<>+16(SB)/8, $0xfcfcfcfcfcfcfc47
DATA encShift<>+24(SB)/8, $0x00004120effcfcfc
GLOBL encShift<>(SB), RODATA|NOPTR, $32

// func b64EncodeSSSE3(dst, src []byte) (n int)
TEXT ·b64EncodeSSSE3(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	XORQ AX, AX
	MOVOU encShuf<>(SB), X8
	MOVOU encMaskAC<>(SB), X9
	MOVOU encMulAC<>(SB), X10
	MOVOU encMaskBD<>(SB), X11
	MOVOU encMulBD<>(SB), X12
	MOVOU enc51<>(SB), X13
	MOVOU enc26<>(SB), X14
	MOVOU enc13<>(SB), X6
	MOVOU encShift<>(SB), X7

encLoop:
	LEAQ 16(AX), DX
	CMPQ DX, CX
	JA   encDone
	MOVOU (SI)(AX*1), X0
	PSHUFB X8, X0
	MOVO   X0, X1
	PAND   X9, X0
	PMULHUW X10, X0
	PAND   X11, X1
	PMULLW X12, X1
	POR    X1, X0      // X0: the 6-bit values, one a byte, in text order
	MOVO   X0, X2
	PSUBUSB X13, X2    // 52..63 -> 1..12, the rest 0
	MOVO   X14, X3
	PCMPGTB X0, X3     // 0xff where the value is below 26
	PAND   X6, X3
	POR    X3, X2      // 0..25 -> 13
	MOVO   X7, X4
	PSHUFB X2, X4
	PADDB  X4, X0
	MOVOU  X0, (DI)
	ADDQ   $16, DI
	ADDQ   $12, AX
	JMP    encLoop

encDone:
	MOVQ AX, n+48(FP)
	RET

// Decoding: a character is in the alphabet when the bit its high nibble selects is set in the entry of
// its low nibble (decLo, decHi: one bit per high nibble that has valid characters, 2 to 7; bytes from
// 0x80 select none). Its value is the character plus an offset chosen by the high nibble (decOff), plus
// 33 for '_', the one character whose high nibble (5) it shares with 'P'..'Z' but not their offset. Two
// multiply-adds pack the four values of each 32-bit lane into 24 bits, and a shuffle puts the twelve
// bytes in order.
DATA dec0F<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA dec0F<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA dec0F<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA dec0F<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL dec0F<>(SB), RODATA|NOPTR, $32

// Bits: 0x01 high nibble 2 (valid: D '-'), 0x02 nibble 3 (0..9), 0x04 nibbles 4 and 6 (1..F), 0x08 nibble
// 5 (0..A 'P'..'Z', F '_'), 0x10 nibble 7 (0..A).
// decLo by low nibble: 0: 1a, 1..9: 1e, A: 1c, B: 04, C: 04, D: 05, E: 04, F: 0c (checked against the
// alphabet by TestBase64SIMDDecodeAlphabet).
DATA decLo<>+0(SB)/8, $0x1e1e1e1e1e1e1e1a
DATA decLo<>+8(SB)/8, $0x0c040504041c1e1e
DATA decLo<>+16(SB)/8, $0x1e1e1e1e1e1e1e1a
DATA decLo<>+24(SB)/8, $0x0c040504041c1e1e
GLOBL decLo<>(SB), RODATA|NOPTR, $32

// decHi by high nibble: 2: 01, 3: 02, 4: 04, 5: 08, 6: 04, 7: 10, others 0.
DATA decHi<>+0(SB)/8, $0x1004080402010000
DATA decHi<>+8(SB)/8, $0x0000000000000000
DATA decHi<>+16(SB)/8, $0x1004080402010000
DATA decHi<>+24(SB)/8, $0x0000000000000000
GLOBL decHi<>(SB), RODATA|NOPTR, $32

// decOff by high nibble: 2: +17 ('-' -> 62), 3: +4 ('0' -> 52), 4 and 5: -65 ('A' -> 0), 6 and 7: -71
// ('a' -> 26).
DATA decOff<>+0(SB)/8, $0xb9b9bfbf04110000
DATA decOff<>+8(SB)/8, $0x0000000000000000
DATA decOff<>+16(SB)/8, $0xb9b9bfbf04110000
DATA decOff<>+24(SB)/8, $0x0000000000000000
GLOBL decOff<>(SB), RODATA|NOPTR, $32

DATA decUnder<>+0(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA decUnder<>+8(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA decUnder<>+16(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA decUnder<>+24(SB)/8, $0x5f5f5f5f5f5f5f5f
GLOBL decUnder<>(SB), RODATA|NOPTR, $32

DATA dec33<>+0(SB)/8, $0x2121212121212121
DATA dec33<>+8(SB)/8, $0x2121212121212121
DATA dec33<>+16(SB)/8, $0x2121212121212121
DATA dec33<>+24(SB)/8, $0x2121212121212121
GLOBL dec33<>(SB), RODATA|NOPTR, $32

// a*64 + b and c*64 + d in each 16-bit half, then (a*64 + b)*4096 + c*64 + d in each 32-bit lane.
DATA decMerge1<>+0(SB)/8, $0x0140014001400140
DATA decMerge1<>+8(SB)/8, $0x0140014001400140
DATA decMerge1<>+16(SB)/8, $0x0140014001400140
DATA decMerge1<>+24(SB)/8, $0x0140014001400140
GLOBL decMerge1<>(SB), RODATA|NOPTR, $32

DATA decMerge2<>+0(SB)/8, $0x0001100000011000
DATA decMerge2<>+8(SB)/8, $0x0001100000011000
DATA decMerge2<>+16(SB)/8, $0x0001100000011000
DATA decMerge2<>+24(SB)/8, $0x0001100000011000
GLOBL decMerge2<>(SB), RODATA|NOPTR, $32

// Bytes 2 1 0 of each lane, in lane order, then four zero bytes.
DATA decPack<>+0(SB)/8, $0x090a040506000102
DATA decPack<>+8(SB)/8, $0x808080800c0d0e08
DATA decPack<>+16(SB)/8, $0x090a040506000102
DATA decPack<>+24(SB)/8, $0x808080800c0d0e08
GLOBL decPack<>(SB), RODATA|NOPTR, $32

// func b64DecodeSSSE3(dst, text []byte) (n int, ok bool)
TEXT ·b64DecodeSSSE3(SB), NOSPLIT, $0-57
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), R8
	MOVQ text_base+24(FP), SI
	MOVQ text_len+32(FP), CX
	XORQ AX, AX
	MOVOU dec0F<>(SB), X8
	MOVOU decLo<>(SB), X9
	MOVOU decHi<>(SB), X10
	MOVOU decOff<>(SB), X11
	MOVOU decUnder<>(SB), X12
	MOVOU dec33<>(SB), X13
	MOVOU decMerge1<>(SB), X14
	MOVOU decMerge2<>(SB), X7
	MOVOU decPack<>(SB), X6
	PXOR  X5, X5

decLoop:
	LEAQ 16(AX), DX
	CMPQ DX, CX
	JA   decDone
	CMPQ R8, $16
	JB   decDone
	MOVOU (SI)(AX*1), X0
	MOVO  X0, X1
	PSRLL $4, X1
	PAND  X8, X1       // high nibbles
	MOVO  X0, X2
	PAND  X8, X2       // low nibbles
	MOVO  X9, X3
	PSHUFB X2, X3
	MOVO  X10, X4
	PSHUFB X1, X4
	PAND  X4, X3
	PCMPEQB X5, X3     // 0xff where the character is not in the alphabet
	PMOVMSKB X3, BX
	TESTL BX, BX
	JNZ   decBad
	MOVO  X11, X4
	PSHUFB X1, X4      // offset by high nibble
	MOVO  X0, X2
	PCMPEQB X12, X2
	PAND  X13, X2
	PADDB X2, X4       // '_': -65 + 33 = -32
	PADDB X4, X0       // the 6-bit values
	PMADDUBSW X14, X0
	PMADDWL X7, X0
	PSHUFB X6, X0
	MOVOU X0, (DI)
	ADDQ  $12, DI
	SUBQ  $12, R8
	ADDQ  $16, AX
	JMP   decLoop

decDone:
	MOVQ AX, n+48(FP)
	MOVB $1, ok+56(FP)
	RET

decBad:
	MOVQ $0, n+48(FP)
	MOVB $0, ok+56(FP)
	RET

// VPERMD order that packs the two 12-byte halves of decPack's result into 24 bytes.
DATA decPerm<>+0(SB)/8, $0x0000000100000000
DATA decPerm<>+8(SB)/8, $0x0000000400000002
DATA decPerm<>+16(SB)/8, $0x0000000600000005
DATA decPerm<>+24(SB)/8, $0x0000000700000003
GLOBL decPerm<>(SB), RODATA|NOPTR, $32

// func b64EncodeAVX2(dst, src []byte) (n int)
// 24 bytes -> 32 characters per step while 28 bytes of src remain (each half reads 16: bytes 0..15 and
// 12..27); the encoding is b64EncodeSSSE3's, on both halves.
TEXT ·b64EncodeAVX2(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	XORQ AX, AX
	VMOVDQU encShuf<>(SB), Y8
	VMOVDQU encMaskAC<>(SB), Y9
	VMOVDQU encMulAC<>(SB), Y10
	VMOVDQU encMaskBD<>(SB), Y11
	VMOVDQU encMulBD<>(SB), Y12
	VMOVDQU enc51<>(SB), Y13
	VMOVDQU enc26<>(SB), Y14
	VMOVDQU enc13<>(SB), Y6
	VMOVDQU encShift<>(SB), Y7

avxEncLoop:
	LEAQ 28(AX), DX
	CMPQ DX, CX
	JA   avxEncDone
	VMOVDQU    (SI)(AX*1), X0
	VINSERTI128 $1, 12(SI)(AX*1), Y0, Y0
	VPSHUFB    Y8, Y0, Y0
	VPAND      Y9, Y0, Y1
	VPMULHUW   Y10, Y1, Y1
	VPAND      Y11, Y0, Y2
	VPMULLW    Y12, Y2, Y2
	VPOR       Y2, Y1, Y0   // the 6-bit values
	VPSUBUSB   Y13, Y0, Y2  // 52..63 -> 1..12, the rest 0
	VPCMPGTB   Y0, Y14, Y3  // 0xff where the value is below 26
	VPAND      Y6, Y3, Y3
	VPOR       Y3, Y2, Y2   // 0..25 -> 13
	VPSHUFB    Y2, Y7, Y4
	VPADDB     Y4, Y0, Y0
	VMOVDQU    Y0, (DI)
	ADDQ       $32, DI
	ADDQ       $24, AX
	JMP        avxEncLoop

avxEncDone:
	VZEROUPPER
	MOVQ AX, n+48(FP)
	RET

// func b64DecodeAVX2(dst, text []byte) (n int, ok bool)
// 32 characters -> 24 bytes per step while dst has room for a 32-byte store; the decoding is
// b64DecodeSSSE3's, on both halves, then decPerm joins the halves' 12 bytes.
TEXT ·b64DecodeAVX2(SB), NOSPLIT, $0-57
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), R8
	MOVQ text_base+24(FP), SI
	MOVQ text_len+32(FP), CX
	XORQ AX, AX
	VMOVDQU dec0F<>(SB), Y8
	VMOVDQU decLo<>(SB), Y9
	VMOVDQU decHi<>(SB), Y10
	VMOVDQU decOff<>(SB), Y11
	VMOVDQU decUnder<>(SB), Y12
	VMOVDQU dec33<>(SB), Y13
	VMOVDQU decMerge1<>(SB), Y14
	VMOVDQU decMerge2<>(SB), Y7
	VMOVDQU decPack<>(SB), Y6
	VMOVDQU decPerm<>(SB), Y15
	VPXOR   Y5, Y5, Y5

avxDecLoop:
	LEAQ 32(AX), DX
	CMPQ DX, CX
	JA   avxDecDone
	CMPQ R8, $32
	JB   avxDecDone
	VMOVDQU  (SI)(AX*1), Y0
	VPSRLD   $4, Y0, Y1
	VPAND    Y8, Y1, Y1   // high nibbles
	VPAND    Y8, Y0, Y2   // low nibbles
	VPSHUFB  Y2, Y9, Y3
	VPSHUFB  Y1, Y10, Y4
	VPAND    Y4, Y3, Y3
	VPCMPEQB Y5, Y3, Y3   // 0xff where the character is not in the alphabet
	VPMOVMSKB Y3, BX
	TESTL    BX, BX
	JNZ      avxDecBad
	VPSHUFB  Y1, Y11, Y4  // offset by high nibble
	VPCMPEQB Y12, Y0, Y2
	VPAND    Y13, Y2, Y2
	VPADDB   Y2, Y4, Y4   // '_': -65 + 33 = -32
	VPADDB   Y4, Y0, Y0   // the 6-bit values
	VPMADDUBSW Y14, Y0, Y0
	VPMADDWD Y7, Y0, Y0
	VPSHUFB  Y6, Y0, Y0
	VPERMD   Y0, Y15, Y0
	VMOVDQU  Y0, (DI)
	ADDQ     $24, DI
	SUBQ     $24, R8
	ADDQ     $32, AX
	JMP      avxDecLoop

avxDecDone:
	VZEROUPPER
	MOVQ AX, n+48(FP)
	MOVB $1, ok+56(FP)
	RET

avxDecBad:
	VZEROUPPER
	MOVQ $0, n+48(FP)
	MOVB $0, ok+56(FP)
	RET
