package seal_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"appwrite-agent/shared/seal"
)

func blobRing(t *testing.T, spec string) *seal.Keyring {
	t.Helper()
	r, err := seal.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestBlobRoundTripRotationAndTampering(t *testing.T) {
	k1 := "k1:" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdefghijklmnopqrstuv"))
	k2 := "k2:" + base64.StdEncoding.EncodeToString([]byte("ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvu"))
	old := blobRing(t, k1)
	rotated := blobRing(t, k2+","+k1)
	msg := []byte(`{"job":1}`)

	text, err := old.SealBlob("ingress-job", msg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*seal.Keyring{old, rotated} {
		got, err := r.OpenBlob("ingress-job", text)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("open: %q %v", got, err)
		}
	}
	if _, err := rotated.OpenBlob("other-purpose", text); !errors.Is(err, seal.ErrOpen) {
		t.Fatalf("other purpose opened: %v", err)
	}
	if _, err := blobRing(t, k2).OpenBlob("ingress-job", text); !errors.Is(err, seal.ErrUnknownKey) {
		t.Fatalf("unknown key: %v", err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(text)
	for i := range raw {
		for bit := 0; bit < 8; bit++ {
			flipped := append([]byte(nil), raw...)
			flipped[i] ^= 1 << bit
			if _, err := old.OpenBlob("ingress-job", base64.RawURLEncoding.EncodeToString(flipped)); err == nil {
				t.Fatalf("bit %d of byte %d flipped still opens", bit, i)
			}
		}
	}
	for _, bad := range []string{"", "!!", text[:10], strings.Repeat("A", 40)} {
		if _, err := old.OpenBlob("ingress-job", bad); err == nil {
			t.Fatalf("%q opened", bad)
		}
	}
}
