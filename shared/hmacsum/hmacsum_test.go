package hmacsum

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"hash"
	"testing"
)

func want(h func() hash.Hash, key []byte, parts ...[]byte) []byte {
	m := hmac.New(h, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

func check(t *testing.T, key []byte, parts ...[]byte) {
	t.Helper()
	if got, w := SHA256(key, parts...), want(sha256.New, key, parts...); !bytes.Equal(got[:], w) {
		t.Fatalf("SHA256(%q, %q) = %x, crypto/hmac says %x", key, parts, got, w)
	}
	if got, w := SHA1(key, parts...), want(sha1.New, key, parts...); !bytes.Equal(got[:], w) {
		t.Fatalf("SHA1(%q, %q) = %x, crypto/hmac says %x", key, parts, got, w)
	}
}

// RFC 4231 test case 2 and RFC 2202 test case 2 (key "Jefe").
func TestKnownAnswers(t *testing.T) {
	s256 := SHA256([]byte("Jefe"), []byte("what do ya want "), []byte("for nothing?"))
	if got := string(hexOf(s256[:])); got != "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" {
		t.Fatalf("HMAC-SHA256 = %s", got)
	}
	s1 := SHA1([]byte("Jefe"), []byte("what do ya want for nothing?"))
	if got := string(hexOf(s1[:])); got != "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79" {
		t.Fatalf("HMAC-SHA1 = %s", got)
	}
}

func hexOf(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

func TestMatchesCryptoHMAC(t *testing.T) {
	for _, n := range []int{0, 1, 20, 32, 43, 63, 64, 65, 100, 200} {
		key := bytes.Repeat([]byte{byte(n + 1)}, n)
		check(t, key)
		check(t, key, nil)
		check(t, key, []byte("a"), nil, []byte("bc"))
		check(t, key, bytes.Repeat([]byte("x"), 1000), []byte("."))
	}
}

func TestOneAllocation(t *testing.T) {
	key, body := bytes.Repeat([]byte("k"), 32), bytes.Repeat([]byte("b"), 1500)
	if n := testing.AllocsPerRun(100, func() { SHA256(key, []byte("id.1."), body) }); n > 1 {
		t.Errorf("SHA256: %v allocations, want at most 1", n)
	}
	if n := testing.AllocsPerRun(100, func() { SHA1(key, []byte("https://x/y"), body) }); n > 1 {
		t.Errorf("SHA1: %v allocations, want at most 1", n)
	}
}

func FuzzMatchesCryptoHMAC(f *testing.F) {
	f.Add([]byte("Jefe"), []byte("what do ya want "), []byte("for nothing?"))
	f.Add(bytes.Repeat([]byte{0xaa}, 131), []byte("Test Using Larger Than Block-Size Key"), []byte(""))
	f.Fuzz(func(t *testing.T, key, a, b []byte) { check(t, key, a, b) })
}
