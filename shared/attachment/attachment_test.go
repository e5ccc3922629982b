package attachment

import (
	"net/http"
	"strings"
	"testing"
)

func TestSanitizeName(t *testing.T) {
	for in, want := range map[string]string{"../../etc/passwd": "passwd", `C:\x\my file.txt`: "my_file.txt", "...": "file",
		"_a_": "a", strings.Repeat("a", 200): strings.Repeat("a", 180), "héllo.md": "h_llo.md"} {
		if got := SanitizeName(in); got != want {
			t.Errorf("SanitizeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecodeLenient(t *testing.T) {
	for _, in := range []string{"aGVsbG8=", "aGVsbG8", "aGVs\nbG8=", "data:text/plain;base64,aGVsbG8="} {
		if b, ok := DecodeLenient(in); !ok || string(b) != "hello" {
			t.Errorf("DecodeLenient(%q) = %q %v", in, b, ok)
		}
	}
	if _, ok := DecodeLenient("@@"); ok {
		t.Error("invalid accepted")
	}
}

func TestDecodeLimits(t *testing.T) {
	if b, p := Decode("a.txt", "aGVsbG8=", 5); p != nil || string(b) != "hello" {
		t.Fatalf("at the limit: %q %v", b, p)
	}
	if _, p := Decode("a.txt", "aGVsbG8h", 5); p == nil || p.Status != http.StatusRequestEntityTooLarge || p.Message != "Attachment 'a.txt' exceeds max size (5 bytes)" {
		t.Fatalf("one byte over: %+v", p)
	}
	if _, p := Decode("a.txt", strings.Repeat("A", 100), 5); p == nil || p.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("far over: %+v", p)
	}
	for raw, msg := range map[string]string{" ": "Attachment 'a.txt' missing content_base64", "@@": "Attachment 'a.txt' has invalid base64", "==": "Attachment 'a.txt' is empty"} {
		if _, p := Decode("a.txt", raw, 5); p == nil || p.Status != http.StatusUnprocessableEntity || p.Message != msg {
			t.Errorf("%q: %+v, want %q", raw, p, msg)
		}
	}
	if p := TooMany(8); p.Status != http.StatusUnprocessableEntity || p.Message != "Too many attachments (max 8)" {
		t.Fatalf("too many: %+v", p)
	}
}
