package appwritesig

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"testing"
)

const (
	vecURL    = "https://ingress.example.com/appwrite/webhooks/sub_1"
	vecBody   = `{"$id":"row1"}`
	vecSecret = "secret-key-from-appwrite"
	// Computed independently (Python: base64(hmac.new(secret, url+body, sha1))),
	// the same as Appwrite's PHP base64_encode(hash_hmac('sha1', $url.$payload, $key, true)).
	vecSig = "Z80zqMz0Xu+g407AUOLkevsIPD0="
	// bytes 0..31, and the secret derived from it for "sub_1" (Python).
	vecKey     = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	vecDerived = "I19_ggV1hgVZEmB_Mo56qITFC_3uqiapeUPpYceLFWk"
)

func randKey(t testing.TB) string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

func TestKnownVector(t *testing.T) {
	if got := Sign(vecSecret, vecURL, []byte(vecBody)); got != vecSig {
		t.Fatalf("Sign = %s want %s", got, vecSig)
	}
	if !Verify(vecSecret, vecURL, []byte(vecBody), vecSig) {
		t.Fatal("Verify(known vector) = false")
	}
	k, err := ParseKeys("k1:" + vecKey)
	if err != nil {
		t.Fatal(err)
	}
	s, err := k.Secret("sub_1")
	if err != nil || s != vecDerived {
		t.Fatalf("Secret = %q, %v want %q", s, err, vecDerived)
	}
	if len(s) != SecretLength || len(s) < 8 || len(s) > 256 {
		t.Fatalf("secret length %d not accepted by Appwrite", len(s))
	}
}

func TestVerifyRejects(t *testing.T) {
	body := []byte(vecBody)
	raw, _ := base64.StdEncoding.DecodeString(vecSig)
	for i := range len(raw) * 8 {
		f := bytes.Clone(raw)
		f[i/8] ^= 1 << (i % 8)
		if Verify(vecSecret, vecURL, body, base64.StdEncoding.EncodeToString(f)) {
			t.Fatalf("bit %d flipped still verifies", i)
		}
	}
	for name, c := range map[string][3]string{
		"other url":    {vecSecret, vecURL + "x", vecSig},
		"decoded url":  {vecSecret, strings.Replace(vecURL, "sub_1", "sub%5F1", 1), vecSig},
		"other secret": {vecSecret + "x", vecURL, vecSig},
		"empty sig":    {vecSecret, vecURL, ""},
		"not base64":   {vecSecret, vecURL, "Z80zqMz0Xu+g407AUOLkevsIPD0!"},
		"unpadded":     {vecSecret, vecURL, strings.TrimRight(vecSig, "=")},
		"newline":      {vecSecret, vecURL, vecSig[:10] + "\n" + vecSig[10:]},
		"long":         {vecSecret, vecURL, strings.Repeat(vecSig, 4)},
		"sha256 sized": {vecSecret, vecURL, base64.StdEncoding.EncodeToString(make([]byte, 32))},
	} {
		if Verify(c[0], c[1], body, c[2]) {
			t.Errorf("%s: verified", name)
		}
	}
	if Verify(vecSecret, vecURL, append(body, ' '), vecSig) {
		t.Error("changed body verified")
	}
}

func TestKeysDeriveAndRotate(t *testing.T) {
	old, nw := randKey(t), randKey(t)
	before, err := ParseKeys("old:" + old)
	if err != nil {
		t.Fatal(err)
	}
	after, err := ParseKeys("new:" + nw + ", old:" + old)
	if err != nil {
		t.Fatal(err)
	}
	if ids := after.IDs(); len(ids) != 2 || ids[0] != "new" {
		t.Fatalf("IDs = %v", ids)
	}
	body := []byte(`{"x":1}`)
	url := "https://in.example/appwrite/webhooks/w1"
	oldSecret, _ := before.Secret("w1")
	newSecret, _ := after.Secret("w1")
	if oldSecret == newSecret {
		t.Fatal("primary key not used")
	}
	// A webhook created before the rotation still verifies after it.
	if !after.Verify("w1", url, body, Sign(oldSecret, url, body)) {
		t.Fatal("old webhook fails after rotation")
	}
	if !after.Verify("w1", url, body, Sign(newSecret, url, body)) {
		t.Fatal("new webhook fails")
	}
	if before.Verify("w1", url, body, Sign(newSecret, url, body)) {
		t.Fatal("old ring verifies new-key signature")
	}
	// Secrets are per webhook: w1's secret does not sign for w2.
	if after.Verify("w2", url, body, Sign(newSecret, url, body)) {
		t.Fatal("secret of w1 verifies for w2")
	}
	s2, _ := after.Secret("w2")
	if s2 == newSecret {
		t.Fatal("same secret for two webhooks")
	}
	if _, err := after.Secret(""); !errors.Is(err, ErrBadInput) {
		t.Fatalf("empty id: %v", err)
	}
	if after.Verify("", url, body, Sign(newSecret, url, body)) {
		t.Fatal("empty id verified")
	}
}

func TestParseKeysRejects(t *testing.T) {
	k := randKey(t)
	cases := map[string]error{
		"":                              ErrNoKeys,
		"   ":                           ErrNoKeys,
		"k1":                            ErrBadKeys,
		":" + k:                         ErrBadKeys,
		"k 1:" + k:                      ErrBadKeys,
		"k1:" + k + ",k1:" + randKey(t): ErrBadKeys,
		"k1:" + k + ",k2:" + k:          ErrBadKeys,
		"k1:!!!":                        ErrBadKeys,
		"k1:" + base64.StdEncoding.EncodeToString(make([]byte, 16)):               ErrWeakKey,
		"k1:" + base64.StdEncoding.EncodeToString(make([]byte, 32)):               ErrWeakKey,
		"k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("ab"), 16)): ErrWeakKey,
	}
	for in, want := range cases {
		if _, err := ParseKeys(in); !errors.Is(err, want) {
			t.Errorf("ParseKeys(%.20q) = %v, want %v", in, err, want)
		}
	}
	t.Setenv(EnvKeys, "")
	if _, err := LoadKeys(os.Getenv); !errors.Is(err, ErrNoKeys) || !strings.Contains(err.Error(), EnvKeys) {
		t.Errorf("LoadKeys with empty env: %v", err)
	}
	t.Setenv(EnvKeys, "k1:"+k)
	if _, err := LoadKeys(os.Getenv); err != nil {
		t.Errorf("LoadKeys: %v", err)
	}
}

func FuzzVerify(f *testing.F) {
	f.Add("sub_1", vecURL, []byte(vecBody), vecSig)
	f.Add("", "", []byte{}, "")
	f.Add("w", "https://x/", []byte("{}"), "AAAA")
	keys, _ := ParseKeys("k1:" + vecKey)
	f.Fuzz(func(t *testing.T, id, url string, body []byte, sig string) {
		ok := keys.Verify(id, url, body, sig)
		if !ok {
			return
		}
		secret, err := keys.Secret(id)
		if err != nil {
			t.Fatalf("verified for an id we cannot derive: %v", err)
		}
		want := hmac.New(sha1.New, []byte(secret))
		want.Write([]byte(url))
		want.Write(body)
		if sig != base64.StdEncoding.EncodeToString(want.Sum(nil)) {
			t.Fatalf("verified a non-canonical signature %q", sig)
		}
	})
}
