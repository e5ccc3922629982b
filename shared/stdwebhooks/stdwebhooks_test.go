package stdwebhooks

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func newSecret(t testing.TB, n int) Secret {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	return Secret(b)
}

func TestParseSecret(t *testing.T) {
	ok := []string{
		"whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 24)),
		"whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 64)),
		"whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32)),
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	}
	for _, s := range ok {
		sec, err := ParseSecret(s)
		if err != nil {
			t.Errorf("ParseSecret(%q): %v", s, err)
			continue
		}
		if _, err := ParseSecret(sec.String()); err != nil {
			t.Errorf("String() does not re-parse: %v", err)
		}
	}
	bad := []string{
		"",
		"whsec_",
		"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", // no prefix
		"WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		"whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 23)),
		"whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 65)),
		"whsec_" + base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xff}, 30)), // url alphabet
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS!",
		// unpadded: the official libraries' base64.StdEncoding (Go), b64decode (Python) refuse it
		"whsec_" + base64.RawStdEncoding.EncodeToString(bytes.Repeat([]byte{4}, 25)),
		"whsec_ MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n",
		"whsec_" + strings.Repeat("A", 10000),
	}
	for _, s := range bad {
		if _, err := ParseSecret(s); !errors.Is(err, ErrInvalidSecret) {
			t.Errorf("ParseSecret(%.40q) = %v, want ErrInvalidSecret", s, err)
		}
	}
}

func TestParseSecretErrorHidesSecret(t *testing.T) {
	s := "whsec_" + base64.StdEncoding.EncodeToString([]byte("short-but-secret"))
	_, err := ParseSecret(s)
	if err == nil || strings.Contains(err.Error(), s[6:]) {
		t.Fatalf("error %v leaks secret or is nil", err)
	}
}

// Our signatures verify with the independent reference library, and its
// signatures verify with ours.
func TestInteropWithReferenceLibrary(t *testing.T) {
	for _, n := range []int{24, 32, 64} {
		sec := newSecret(t, n)
		ref, err := standardwebhooks.NewWebhook(sec.String())
		if err != nil {
			t.Fatal(err)
		}
		body := []byte(`{"eventId":"evt_1","name":"row.created","data":{"rowId":"r1"}}`)
		now := time.Now()
		h := http.Header{}
		if err := SetHeaders(h, "evt_1", now, body, sec); err != nil {
			t.Fatal(err)
		}
		if err := ref.Verify(body, h); err != nil {
			t.Fatalf("reference library rejects our signature (%d-byte secret): %v", n, err)
		}
		refSig, err := ref.Sign("evt_1", now, body)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := Sign("evt_1", now, body, sec); got != refSig {
			t.Fatalf("signature differs from reference: %s vs %s", got, refSig)
		}
		h.Set(HeaderSignature, refSig)
		if err := Verify(h, body, now, 0, sec); err != nil {
			t.Fatalf("we reject the reference signature: %v", err)
		}
		// Tampered body fails in both.
		if ref.Verify(append(body, ' '), h) == nil || Verify(h, append(body, ' '), now, 0, sec) == nil {
			t.Fatal("tampered body verified")
		}
	}
}

func TestRotationBothSignaturesVerify(t *testing.T) {
	cur, old := newSecret(t, 32), newSecret(t, 32)
	body := []byte(`{"a":1}`)
	now := time.Now()
	h := http.Header{}
	if err := SetHeaders(h, "msg_verification_abc", now, body, cur, old); err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Split(h.Get(HeaderSignature), " ")); n != 2 {
		t.Fatalf("want 2 signatures, got %d", n)
	}
	for i, s := range []Secret{cur, old} {
		ref, _ := standardwebhooks.NewWebhook(s.String())
		if err := ref.Verify(body, h); err != nil {
			t.Errorf("reference library, secret %d: %v", i, err)
		}
		if err := Verify(h, body, now, 0, s); err != nil {
			t.Errorf("Verify, secret %d: %v", i, err)
		}
	}
	if err := Verify(h, body, now, 0, newSecret(t, 32)); !errors.Is(err, ErrNoMatchingSignature) {
		t.Errorf("unrelated secret: %v", err)
	}
}

func TestVerifyTolerance(t *testing.T) {
	sec := newSecret(t, 32)
	body := []byte("x")
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		skew time.Duration
		want error
	}{
		{0, nil},
		{-5 * time.Minute, nil},
		{5 * time.Minute, nil},
		{-5*time.Minute - time.Second, ErrTooOld},
		{5*time.Minute + time.Second, ErrTooNew},
	} {
		h := http.Header{}
		SetHeaders(h, "evt_x", now.Add(tc.skew), body, sec)
		if err := Verify(h, body, now, DefaultTolerance, sec); !errors.Is(err, tc.want) && err != tc.want {
			t.Errorf("skew %v: got %v want %v", tc.skew, err, tc.want)
		}
	}
}

func TestVerifyRejects(t *testing.T) {
	sec := newSecret(t, 32)
	body := []byte("payload")
	now := time.Unix(1_800_000_000, 0)
	good := http.Header{}
	SetHeaders(good, "evt_1", now, body, sec)
	mut := func(f func(h http.Header)) http.Header {
		h := good.Clone()
		f(h)
		return h
	}
	sig := good.Get(HeaderSignature)
	cases := map[string]struct {
		h    http.Header
		want error
	}{
		"no id":          {mut(func(h http.Header) { h.Del(HeaderID) }), ErrMissingHeaders},
		"no ts":          {mut(func(h http.Header) { h.Del(HeaderTimestamp) }), ErrMissingHeaders},
		"no sig":         {mut(func(h http.Header) { h.Del(HeaderSignature) }), ErrMissingHeaders},
		"other id":       {mut(func(h http.Header) { h.Set(HeaderID, "evt_2") }), ErrNoMatchingSignature},
		"dotted id":      {mut(func(h http.Header) { h.Set(HeaderID, "evt.1") }), ErrInvalidHeaders},
		"ts +":           {mut(func(h http.Header) { h.Set(HeaderTimestamp, "+1800000000") }), ErrInvalidHeaders},
		"ts float":       {mut(func(h http.Header) { h.Set(HeaderTimestamp, "1800000000.0") }), ErrInvalidHeaders},
		"ts shifted":     {mut(func(h http.Header) { h.Set(HeaderTimestamp, "1800000001") }), ErrNoMatchingSignature},
		"v2 only":        {mut(func(h http.Header) { h.Set(HeaderSignature, "v2,"+sig[3:]) }), ErrNoMatchingSignature},
		"v1a only":       {mut(func(h http.Header) { h.Set(HeaderSignature, "v1a,"+sig[3:]) }), ErrNoMatchingSignature},
		"bad base64":     {mut(func(h http.Header) { h.Set(HeaderSignature, "v1,!!!") }), ErrInvalidHeaders},
		"short sig":      {mut(func(h http.Header) { h.Set(HeaderSignature, "v1,AAAA") }), ErrInvalidHeaders},
		"huge header":    {mut(func(h http.Header) { h.Set(HeaderSignature, strings.Repeat(sig+" ", 200)) }), ErrInvalidHeaders},
		"flipped sig":    {mut(func(h http.Header) { h.Set(HeaderSignature, flipB64(sig)) }), ErrNoMatchingSignature},
		"empty sig list": {mut(func(h http.Header) { h.Set(HeaderSignature, "   ") }), ErrNoMatchingSignature},
	}
	for name, tc := range cases {
		if err := Verify(tc.h, body, now, 0, sec); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v want %v", name, err, tc.want)
		}
	}
	if err := Verify(good, body, now, 0); !errors.Is(err, ErrNoMatchingSignature) {
		t.Errorf("no secrets: %v", err)
	}
	if err := Verify(good, body, now, 0, sec); err != nil {
		t.Fatalf("good: %v", err)
	}
}

func flipB64(sig string) string {
	raw, _ := base64.StdEncoding.DecodeString(sig[3:])
	raw[0] ^= 1
	return "v1," + base64.StdEncoding.EncodeToString(raw)
}

func TestSignRejects(t *testing.T) {
	sec := newSecret(t, 32)
	for _, id := range []string{"", "a.b", "a b", "a\nb", "é", strings.Repeat("a", MaxIDLength+1)} {
		if _, err := Sign(id, time.Now(), nil, sec); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Sign(id %q): %v", id, err)
		}
	}
	if _, err := Sign("evt", time.Now(), nil); !errors.Is(err, ErrInvalidSecret) {
		t.Errorf("no secret: %v", err)
	}
	if _, err := Sign("evt", time.Now(), nil, Secret("short")); !errors.Is(err, ErrInvalidSecret) {
		t.Errorf("short secret: %v", err)
	}
}

// The signed content is exactly id.ts.body.
func TestSignedContent(t *testing.T) {
	sec := newSecret(t, 24)
	ts := time.Unix(1739980800, 0)
	h := hmac.New(sha256.New, sec)
	h.Write([]byte("evt_789.1739980800.{}"))
	want := "v1," + base64.StdEncoding.EncodeToString(h.Sum(nil))
	if got, _ := Sign("evt_789", ts, []byte("{}"), sec); got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	if strconv.FormatInt(ts.Unix(), 10) != "1739980800" {
		t.Fatal("clock")
	}
}

func FuzzParseSecret(f *testing.F) {
	f.Add("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	f.Add("whsec_")
	f.Add("whsec_" + base64.RawStdEncoding.EncodeToString(make([]byte, 25)))
	f.Fuzz(func(t *testing.T, s string) {
		sec, err := ParseSecret(s)
		if err != nil {
			return
		}
		if !sec.Valid() {
			t.Fatalf("accepted invalid length %d", len(sec))
		}
		again, err := ParseSecret(sec.String())
		if err != nil || !bytes.Equal(again, sec) {
			t.Fatalf("round trip failed: %v", err)
		}
	})
}

func FuzzVerify(f *testing.F) {
	sec := Secret(bytes.Repeat([]byte{7, 9, 11}, 11))
	now := time.Unix(1_800_000_000, 0)
	good, _ := Sign("evt_1", now, []byte("body"), sec)
	f.Add("evt_1", "1800000000", good, []byte("body"))
	f.Add("evt_1", "1800000000", "v1a,xxx "+good, []byte("body"))
	f.Add("", "", "", []byte(nil))
	f.Add("a.b", "-1", "v1,", []byte("x"))
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set(HeaderID, id)
		h.Set(HeaderTimestamp, ts)
		h.Set(HeaderSignature, sig)
		err := Verify(h, body, now, 0, sec)
		ParseSignatures(sig)
		if err != nil {
			return
		}
		// Accepted: it must be a genuine signature of exactly this message.
		if _, serr := Sign(h.Get(HeaderID), now, body, sec); serr != nil {
			t.Fatalf("verified a message we cannot sign: %v", serr)
		}
		tsv, _ := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64)
		want, _ := Sign(h.Get(HeaderID), time.Unix(tsv, 0), body, sec)
		if !strings.Contains(" "+h.Get(HeaderSignature)+" ", " "+want+" ") {
			t.Fatalf("verified without a matching signature: %q", h.Get(HeaderSignature))
		}
		ref, _ := standardwebhooks.NewWebhookRaw(sec)
		if ref.VerifyIgnoringTimestamp(body, h) != nil {
			t.Fatalf("reference library disagrees")
		}
	})
}

// TestSetHeadersAsHeaderSet: SetHeaders leaves h exactly as setting Sign's value and the timestamp with
// http.Header.Set does, replacing values already there.
func TestSetHeadersAsHeaderSet(t *testing.T) {
	s1, s2 := Secret(bytes.Repeat([]byte{1}, 32)), Secret(bytes.Repeat([]byte{2}, 24))
	ts := time.Unix(1767225600, 0)
	for _, secrets := range [][]Secret{{s1}, {s1, s2}} {
		got := http.Header{"Webhook-Id": {"old", "older"}, "Content-Type": {"application/json"}}
		if err := SetHeaders(got, "msg_1", ts, []byte(`{"a":1}`), secrets...); err != nil {
			t.Fatal(err)
		}
		sig, err := Sign("msg_1", ts, []byte(`{"a":1}`), secrets...)
		if err != nil {
			t.Fatal(err)
		}
		want := http.Header{"Content-Type": {"application/json"}}
		want.Set(HeaderID, "msg_1")
		want.Set(HeaderTimestamp, "1767225600")
		want.Set(HeaderSignature, sig)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("SetHeaders made %v, Header.Set makes %v", got, want)
		}
		if err := Verify(got, []byte(`{"a":1}`), ts, 0, secrets[len(secrets)-1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := SetHeaders(http.Header{}, "bad id", ts, nil, s1); !errors.Is(err, ErrInvalidID) {
		t.Fatalf("bad id: %v", err)
	}
	if err := SetHeaders(http.Header{}, "msg_1", ts, nil); !errors.Is(err, ErrInvalidSecret) {
		t.Fatalf("no secret: %v", err)
	}
}
