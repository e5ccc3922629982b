package seal

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

func stdDecode(text string) ([]byte, bool) {
	if strings.ContainsAny(text, "\r\n") { // the standard decoder skips them; the envelope refuses them
		return nil, false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(text)
	return b, err == nil
}

func TestBase64AgainstStandardLibrary(t *testing.T) {
	for n := range 600 {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i*7 + n)
		}
		text := b64Encode(src)
		if want := base64.RawURLEncoding.EncodeToString(src); text != want {
			t.Fatalf("encode %d bytes: %q, want %q", n, text, want)
		}
		dst := make([]byte, len(text)*3/4)
		m, ok := b64Decode(dst, []byte(text))
		if !ok || !bytes.Equal(dst[:m], src) {
			t.Fatalf("decode %d bytes: %v", n, ok)
		}
	}
	for _, bad := range []string{"A", "AAAAA", "AB", "AAB", "A=", "AA==", "AA\nAA", "AA\rA", "AA+A", "AA/A", "AA%4", "AA A", "\x00AAA", "AA\xffA"} {
		dst := make([]byte, len(bad))
		if _, ok := b64Decode(dst, []byte(bad)); ok {
			if _, std := stdDecode(bad); !std {
				t.Errorf("%q decoded, the standard library refuses it", bad)
			}
		}
	}
}

// FuzzBase64 checks the codec against encoding/base64 (RawURLEncoding.Strict, CR and LF refused).
func FuzzBase64(f *testing.F) {
	f.Add("AQJrMQ")
	f.Add("AB")
	f.Add("AAB")
	f.Add("Zm9vYmFy-_")
	f.Fuzz(func(t *testing.T, text string) {
		want, wantOK := stdDecode(text)
		dst := make([]byte, len(text)*3/4)
		m, ok := b64Decode(dst, []byte(text))
		if ok != wantOK || (ok && !bytes.Equal(dst[:m], want)) {
			t.Fatalf("%q: decode %v %x, standard %v %x", text, ok, dst[:m], wantOK, want)
		}
		if ok && b64Encode(want) != text {
			t.Fatalf("%q: does not re-encode to itself", text)
		}
	})
}

func BenchmarkBase64(b *testing.B) {
	env := make([]byte, 374)
	text := []byte(b64Encode(env))
	dst := make([]byte, len(env))
	b.Run("ours", func(b *testing.B) {
		for b.Loop() {
			_ = b64Encode(env)
			b64Decode(dst, text)
		}
	})
	b.Run("stdlib", func(b *testing.B) {
		for b.Loop() {
			_ = base64.RawURLEncoding.EncodeToString(env)
			base64.RawURLEncoding.Strict().Decode(dst, text)
		}
	})
}

// TestBase64Parts: decoding the three fields in place is decoding their concatenation, wherever the cuts
// fall (the fields are cut at any character).
func TestBase64Parts(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 5, 6, 7, 8, 9, 13, 31} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i*37 + n)
		}
		text := b64Encode(src)
		if n%3 == 1 {
			text += "A" // and non-canonical texts (4k+3 characters, unused bits set)
		}
		want := make([]byte, len(text)*3/4+8)
		wm, wok := b64Decode(want, []byte(text))
		for i := 0; i <= len(text); i++ {
			for j := i; j <= len(text); j++ {
				got := make([]byte, len(text)*3/4+8)
				m, ok := b64DecodeParts(got, make([]byte, len(text)), [3]string{text[:i], text[i:j], text[j:]})
				if ok != wok || m != wm || !bytes.Equal(got[:m], want[:wm]) {
					t.Fatalf("%q cut at %d, %d: got %x %v, want %x %v", text, i, j, got[:m], ok, want[:wm], wok)
				}
			}
		}
		for _, bad := range []string{"*", "=", "\n"} {
			for i := 0; i <= len(text); i++ {
				broken := text[:i] + bad + text[i:]
				got := make([]byte, len(broken)*3/4+8)
				if _, ok := b64DecodeParts(got, make([]byte, len(broken)), [3]string{broken[:i/2], broken[i/2 : i+1], broken[i+1:]}); ok {
					t.Fatalf("%q decoded", broken)
				}
			}
		}
	}
}

// FuzzBase64Parts checks decoding the three fields in place against encoding/base64 on their
// concatenation, with the cuts anywhere.
func FuzzBase64Parts(f *testing.F) {
	f.Add("AQJrMQ", uint16(1), uint16(5))
	f.Add("Zm9vYmFy-_", uint16(3), uint16(3))
	f.Add("AAB", uint16(0), uint16(2))
	f.Fuzz(func(t *testing.T, text string, i, j uint16) {
		a := min(int(i), len(text))
		b := min(max(int(j), a), len(text))
		want, wantOK := stdDecode(text)
		dst := make([]byte, len(text)*3/4)
		m, ok := b64DecodeParts(dst, make([]byte, len(text)), [3]string{text[:a], text[a:b], text[b:]})
		if ok != wantOK || (ok && !bytes.Equal(dst[:m], want)) {
			t.Fatalf("%q cut at %d, %d: decode %v %x, standard %v %x", text, a, b, ok, dst[:m], wantOK, want)
		}
	})
}

// The portable codec, which runs alone on other machines and for the tails here, matches encoding/base64
// on its own.
func TestBase64Portable(t *testing.T) {
	for n := range 300 {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i*61 + n)
		}
		want := base64.RawURLEncoding.EncodeToString(src)
		dst := make([]byte, len(want)+8)
		if got := dst[:b64EncodeScalar(dst, src, 0)]; string(got) != want {
			t.Fatalf("%d bytes: %q, want %q", n, got, want)
		}
		q := len(want) &^ 3
		out := make([]byte, len(want))
		m, ok := b64DecodeQuadsScalar(out, []byte(want[:q]))
		if !ok || !bytes.Equal(out[:m], src[:m]) || m != q/4*3 {
			t.Fatalf("%d bytes: decoded %d %v", n, m, ok)
		}
	}
}
