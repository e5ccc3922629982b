package appwritesig

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
)

// TestSecretCacheIsTransparentAndBounded checks that cached secrets are the derived ones, for every key,
// and that the cache never holds more than maxCached entries.
func TestSecretCacheIsTransparentAndBounded(t *testing.T) {
	k1 := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("abcdefghij", 4)))
	k2 := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("0123456789", 4)))
	keys, err := ParseKeys("new:" + k1 + ",old:" + k2)
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		for i := range keys.keys {
			for _, id := range []string{"sub-1", "sub-2", strings.Repeat("x", 255)} {
				if got, want := keys.secret(i, id), derive(keys.keys[i], id); got != want {
					t.Fatalf("key %d, %q: cached %q, derived %q", i, id, got, want)
				}
			}
		}
	}
	body := []byte(`{"a":1}`)
	sig := Sign(derive(keys.keys[1], "sub-1"), "https://x/y", body)
	if !keys.Verify("sub-1", "https://x/y", body, sig) || keys.Verify("sub-2", "https://x/y", body, sig) {
		t.Fatal("verify through the cache")
	}
	for i := 0; i < 3*maxCached; i++ {
		keys.secret(0, "flood-"+strconv.Itoa(i))
		if n := len(keys.derived.m); n > maxCached {
			t.Fatalf("%d cached secrets", n)
		}
	}
}

// TestPooledMACIsMAC: the HMACs kept per secret give crypto/hmac's fresh HMAC-SHA1, for secrets seen
// before and new ones, and Verify accepts and refuses the same signatures with and without them.
func TestPooledMACIsMAC(t *testing.T) {
	keys, err := ParseKeys("k:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("abcdefghij", 4))))
	if err != nil {
		t.Fatal(err)
	}
	plain := &Keys{ids: keys.ids, keys: keys.keys}
	for round := 0; round < 3; round++ {
		for i := 0; i < 5; i++ {
			id := "sub-" + strconv.Itoa(i)
			url, body := "https://ingress.example/appwrite/webhooks/"+id, []byte(strings.Repeat(`{"n":`+strconv.Itoa(round)+`}`, i*40))
			secret := keys.secret(0, id)
			if pooledMAC(keys.macs, secret, url[:10], url[10:], body) != mac(secret, url, body) {
				t.Fatalf("round %d, %s: pooled HMAC differs", round, id)
			}
			sig := Sign(secret, url, body)
			for _, k := range []*Keys{keys, plain} {
				if !k.Verify(id, url, body, sig) || k.Verify(id, url+"x", body, sig) || k.Verify("sub-x", url, body, sig) ||
					!k.VerifyAt(id, url[:20], url[20:], body, sig) || k.VerifyAt(id, url[:20], url[21:], body, sig) {
					t.Fatalf("round %d, %s: verify (pooled %v)", round, id, k.macs != nil)
				}
			}
		}
	}
}
