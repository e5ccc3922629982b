package handler_test

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// resign makes d's signature valid for its (altered) path, as only someone holding the webhook's signing
// secret could: what remains is the envelope's own protection.
func (f *fixture) resign(d delivery, s subscription) delivery {
	mac := hmac.New(sha1.New, []byte(s.secret))
	mac.Write([]byte(f.ingress.URL + d.path))
	mac.Write(d.body)
	d.signature = base64.StdEncoding.EncodeToString(mac.Sum(nil))
	return d
}

// longCallback spreads an envelope over authUsername, authPassword and the webhook URL.
func (f *fixture) longCallback() string { return f.receiver.URL() + "/" + strings.Repeat("c", 220) }

// TestEnvelopeInFieldsOrURLDelivers: a subscription whose envelope fits in authUsername and authPassword
// and one with part of its envelope in the webhook URL both deliver verified events.
func TestEnvelopeInFieldsOrURLDelivers(t *testing.T) {
	f := newFixture(t)
	short := f.subscribeTo("sub-fields", "row.created", rowArgs, time.Now().Add(time.Hour), f.receiver.URL())
	long := f.subscribeTo("sub-url", "row.created", rowArgs, time.Now().Add(time.Hour), f.longCallback())
	if short.tail != "" || long.tail == "" {
		t.Fatalf("setup: short tail %q, long tail %q", short.tail, long.tail)
	}
	for i, s := range []subscription{short, long} {
		a := f.send(f.appwriteDelivery(s, rowEvents("tickets", "r1", "create"), rowBody("tickets", "r1", "2026-12-01T10:00:00.000+00:00")))
		if a.Status != 200 || a.Outcome != "delivered" {
			t.Fatalf("%s: %+v", s.id, a)
		}
		evs := f.receiver.Events()
		if len(evs) != i+1 || !evs[i].Verified || evs[i].Header.Get("X-MCP-Subscription-Id") != s.id {
			t.Fatalf("%s: %+v", s.id, evs)
		}
	}
}

// TestSealedURLPartTampering: the sealed part of the URL is covered twice, by Appwrite's signature and by
// the envelope; changed, moved, removed or swapped (even with a valid Appwrite signature), nothing is
// delivered.
func TestSealedURLPartTampering(t *testing.T) {
	f := newFixture(t)
	s := f.subscribeTo("sub-tail-1", "row.created", rowArgs, time.Now().Add(time.Hour), f.longCallback())
	other := f.subscribeTo("sub-tail-2", "row.created", rowArgs, time.Now().Add(time.Hour), f.longCallback()+"x")
	events := rowEvents("tickets", "r1", "create")
	body := rowBody("tickets", "r1", "2026-12-01T10:00:00.000+00:00")
	base := f.appwriteDelivery(s, events, body)
	prefix := "/appwrite/webhooks/" + s.id

	// Not re-signed: Appwrite's signature over the URL fails.
	d := base
	d.path = prefix + "/" + strings.Replace(s.tail, s.tail[:1], flipChar(s.tail[:1]), 1)
	if a := f.send(d); a.Status != 401 || a.Error != "bad_signature" {
		t.Fatalf("unsigned change: %+v", a)
	}
	// Every single-bit flip of every character of the sealed part, re-signed.
	for i := range len(s.tail) {
		for bit := range 7 {
			b := []byte(s.tail)
			b[i] ^= 1 << bit
			if c := b[i]; c <= ' ' || c >= 0x7f || strings.IndexByte("/?#%\"<>\\^`{|}", c) >= 0 {
				continue // not a character of a URL path Appwrite would store and send unchanged
			}
			d := base
			d.path = prefix + "/" + string(b)
			if a := f.send(f.resign(d, s)); a.Status == 200 {
				t.Fatalf("char %d bit %d: %+v", i, bit, a)
			}
		}
	}
	for name, path := range map[string]string{
		"removed":                   prefix,
		"from another subscription": prefix + "/" + other.tail,
		"swapped with the password": prefix + "/" + s.pass,
		"percent-encoded":           prefix + "/%41" + s.tail[1:],
		"empty":                     prefix + "/",
		"one more segment":          prefix + "/" + s.tail + "/x",
	} {
		d := base
		d.path = path
		if a := f.send(f.resign(d, s)); a.Status == 200 {
			t.Errorf("%s: %+v", name, a)
		}
	}
	d = base
	d.pass = s.tail
	d.path = prefix + "/" + s.pass
	if a := f.send(f.resign(d, s)); a.Status == 200 {
		t.Errorf("password and URL part swapped: %+v", a)
	}
	if a := f.send(base); a.Status != 200 || a.Outcome != "delivered" {
		t.Fatalf("the untouched delivery: %+v", a)
	}
	if n := len(f.receiver.Events()); n != 1 {
		t.Fatalf("%d events delivered, want 1", n)
	}
}

func flipChar(c string) string {
	if c == "A" {
		return "B"
	}
	return "A"
}
