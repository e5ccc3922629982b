package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	mrand "math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func keyB64(t testing.TB) string {
	b := make([]byte, KeyBytes)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// cloudIngress is a Cloud function domain of the usual length: https:// + a 20-character id +
// .fra.appwrite.run.
const cloudIngress = "https://6745a1b2c3d4e5f60718.fra.appwrite.run"

// cloudWebhookURL is the webhook URL of a subscription on that ingress (36-character id).
const cloudWebhookURL = cloudIngress + "/appwrite/webhooks/mcpev_0123456789abcdef0123456789abcd"

// cloudBudget is what mcp-events uses with that ingress.
func cloudBudget() Budget {
	b := DefaultBudget()
	b.URL = URLBudget(cloudWebhookURL)
	return b
}

func newSealer(t testing.TB, spec string) *Sealer {
	t.Helper()
	return newSealerBudget(t, spec, cloudBudget())
}

func newSealerBudget(t testing.TB, spec string, b Budget) *Sealer {
	t.Helper()
	r, err := ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSealer(r, b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	id36a = "db_0123456789abcdef0123456789abcdef0"
	id36b = "tb_0123456789abcdef0123456789abcdef0"
)

func sampleSub() Subscription {
	return Subscription{
		CallbackURL: "https://proxy.example.com/hooks/client123",
		Secret:      bytes.Repeat([]byte{0xA5, 0x5A, 0x01, 0x02}, 8),
		Event:       "row.created",
		Args:        Args{{"database_id", "main"}, {"table_id", "orders"}},
		ProjectID:   "6512a9f3c0ffee",
		Expiry:      time.Unix(1_800_000_000, 0).UTC(),
		VerifiedAt:  time.Unix(1_799_000_000, 0).UTC(),
	}
}

// bigSub spreads over all three fields: 36-character ids and a 300-byte callback URL.
func bigSub() Subscription {
	s := sampleSub()
	s.Args = Args{{"database_id", id36a}, {"table_id", id36b}}
	s.CallbackURL = padURL("https://hooks.chatgpt-connectors.example.com/v1/callbacks/", 300)
	return s
}

func padURL(prefix string, n int) string { return prefix + strings.Repeat("x", n-len(prefix)) }

func targetOf(s Subscription) Target { return Target{Event: s.Event, Args: s.Args} }

func TestRoundTripAndLayout(t *testing.T) {
	s := newSealer(t, "k1:"+keyB64(t))
	for name, sub := range map[string]Subscription{"short": sampleSub(), "big": bigSub()} {
		f, err := s.Seal("sub_a3f1c8e2b0d49f7e", sub)
		if err != nil {
			t.Fatal(err)
		}
		b := s.Budget()
		if f.Username == "" || f.Password == "" || len(f.Username) > b.Username || len(f.Password) > b.Password || len(f.URLTail) > b.URL {
			t.Fatalf("%s: split %d/%d/%d outside budget %+v", name, len(f.Username), len(f.Password), len(f.URLTail), b)
		}
		if (name == "short") != (f.URLTail == "") {
			t.Fatalf("%s: URL tail %q (only what does not fit the auth fields goes into the URL)", name, f.URLTail)
		}
		if strings.ContainsAny(f.URLTail, "%/?#=+") {
			t.Fatalf("%s: URL tail has reserved characters: %q", name, f.URLTail)
		}
		got, err := s.Open("sub_a3f1c8e2b0d49f7e", sub.ProjectID, f, targetOf(sub))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, sub) {
			t.Fatalf("%s: got %+v\nwant %+v", name, got, sub)
		}
		t.Logf("%s: %d + %d + %d characters", name, len(f.Username), len(f.Password), len(f.URLTail))
	}
}

func TestSplitKeepsPasswordNonEmpty(t *testing.T) {
	s := newSealerBudget(t, "k1:"+keyB64(t), Budget{Username: 1000, Password: 10})
	f, err := s.Seal("w", sampleSub())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Password) != 1 || f.URLTail != "" {
		t.Fatalf("password %d characters, tail %d: want 1 and 0 (Appwrite sends Basic auth only when both are set)", len(f.Password), len(f.URLTail))
	}
	if _, err := s.Open("w", sampleSub().ProjectID, f, targetOf(sampleSub())); err != nil {
		t.Fatal(err)
	}
}

// The capacity the issue asks for, on a Cloud function domain with 36-character ids, row.created and a
// two-character key id: the longest callback URL that seals, and one byte more refused with the exact
// figure.
func TestCapacity(t *testing.T) {
	s := newSealer(t, "k1:"+keyB64(t))
	for _, c := range []struct {
		secret, prev int
		atLeast      int
	}{{24, 0, 300}, {24, 24, 256}, {32, 0, 300}, {32, 32, 256}, {64, 0, 256}, {64, 64, 200}} {
		sub := bigSub()
		sub.Secret = bytes.Repeat([]byte{7}, c.secret)
		if c.prev > 0 {
			sub.PrevSecret = bytes.Repeat([]byte{8}, c.prev)
			sub.PrevSecretUntil = sub.Expiry.Add(-time.Hour)
		}
		maxURL := s.MaxCallbackURL(sub)
		if maxURL < c.atLeast {
			t.Errorf("secret %d, previous %d: at most %d bytes of callback URL, want >= %d", c.secret, c.prev, maxURL, c.atLeast)
		}
		sub.CallbackURL = padURL("https://hooks.example.com/", maxURL)
		f, err := s.Seal("mcpev_0123456789abcdef0123456789abcd", sub)
		if err != nil {
			t.Fatalf("secret %d, previous %d: the maximum %d does not seal: %v", c.secret, c.prev, maxURL, err)
		}
		if len(cloudWebhookURL)+1+len(f.URLTail) > AppwriteColumn {
			t.Fatalf("webhook URL would be %d characters", len(cloudWebhookURL)+1+len(f.URLTail))
		}
		sub.CallbackURL += "y"
		_, err = s.Seal("mcpev_0123456789abcdef0123456789abcd", sub)
		var tl *TooLongError
		if !errors.As(err, &tl) || tl.MaxCallbackURL != maxURL || tl.CallbackURL != maxURL+1 {
			t.Fatalf("one byte more: %v", err)
		}
		want := fmt.Sprintf("callback URL is %d bytes; at most %d fit with a %d-byte secret", maxURL+1, maxURL, c.secret)
		if !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("message %q, want prefix %q", err, want)
		}
		t.Logf("secret %d B, previous %d B: longest callback URL %d bytes", c.secret, c.prev, maxURL)
	}
	// Without https the scheme is stored.
	sub := bigSub()
	sub.CallbackURL = "http://x"
	if got, https := s.MaxCallbackURL(sub), s.MaxCallbackURL(bigSub()); got != https-len("https://") {
		t.Fatalf("http: %d, https: %d", got, https)
	}
}

func TestPasswordBudgetArithmetic(t *testing.T) {
	if p := PasswordOverflowProbability(DefaultPasswordBudget); p > MaxPasswordOverflow {
		t.Fatalf("default budget overflows with probability %g", p)
	}
	if p := PasswordOverflowProbability(DefaultPasswordBudget + 1); p <= MaxPasswordOverflow {
		t.Fatalf("the default is not the largest safe budget: %d overflows with probability %g", DefaultPasswordBudget+1, p)
	}
	if StoredPasswordLength(90, 0) != 241 || PasswordOverflowProbability(200) != 1 {
		t.Fatal("formula")
	}
	t.Logf("overflow probability: 90 -> %.2g, 93 -> %.2g, 96 -> %.2g", PasswordOverflowProbability(90), PasswordOverflowProbability(93), PasswordOverflowProbability(96))
	// The formula against the document Appwrite writes (json_encode escapes '/').
	key := make([]byte, 16)
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	for n := 1; n <= 120; n++ {
		sealed := gcm.Seal(nil, make([]byte, 12), bytes.Repeat([]byte{byte(n)}, n), nil)
		data := base64.StdEncoding.EncodeToString(sealed[:n])
		doc, _ := json.Marshal(map[string]string{"data": data, "method": "aes-128-gcm", "iv": strings.Repeat("a", 24), "tag": strings.Repeat("b", 32), "version": "1"})
		php := strings.ReplaceAll(string(doc), "/", `\/`)
		if got, want := len(php), StoredPasswordLength(n, strings.Count(data, "/")); got != want {
			t.Fatalf("n=%d: document %d characters, formula %d", n, got, want)
		}
	}
}

// allFields seals a subscription that uses all three fields.
func allFields(t *testing.T, s *Sealer, webhookID string, sub Subscription) Fields {
	t.Helper()
	f, err := s.Seal(webhookID, sub)
	if err != nil {
		t.Fatal(err)
	}
	if f.URLTail == "" || f.Password == "" || f.Username == "" {
		t.Fatalf("subscription does not use all three fields: %+v", f)
	}
	return f
}

// Every single-bit flip of every sealed part (each field's text, and each byte of the decoded envelope) is
// rejected.
func TestTamperBitFlips(t *testing.T) {
	s := newSealer(t, "k1:"+keyB64(t)+",k2:"+keyB64(t))
	sub := bigSub()
	f := allFields(t, s, "w1", sub)
	tg := targetOf(sub)
	parts := []*string{&f.Username, &f.Password, &f.URLTail}
	for pi, p := range parts {
		orig := *p
		for i := range len(orig) * 8 {
			b := []byte(orig)
			b[i/8] ^= 1 << (i % 8)
			*p = string(b)
			if _, err := s.Open("w1", sub.ProjectID, f, tg); !errors.Is(err, ErrOpen) {
				t.Fatalf("part %d bit %d flipped: err = %v", pi, i, err)
			}
		}
		*p = orig
	}
	if _, err := s.Open("w1", sub.ProjectID, f, tg); err != nil {
		t.Fatal(err)
	}
	env, _ := base64.RawURLEncoding.DecodeString(f.Username + f.Password + f.URLTail)
	for i := range len(env) * 8 {
		e := bytes.Clone(env)
		e[i/8] ^= 1 << (i % 8)
		text := base64.RawURLEncoding.EncodeToString(e)
		g := s.split(text)
		if _, err := s.Open("w1", sub.ProjectID, g, tg); !errors.Is(err, ErrOpen) {
			t.Fatalf("envelope bit %d flipped: err = %v", i, err)
		}
	}
}

// Parts swapped between fields, taken from another subscription or seal, and envelopes moved to another
// webhook, project or target are all rejected.
func TestTamperSwapsAndBinding(t *testing.T) {
	s := newSealer(t, "k1:"+keyB64(t))
	a, b := bigSub(), bigSub()
	b.CallbackURL = padURL("https://other.example.com/hook/", 300)
	fa := allFields(t, s, "wa", a)
	fb := allFields(t, s, "wb", b)
	fa2 := allFields(t, s, "wa", a)
	fc := allFields(t, s, "wa", b) // another subscription on the same webhook id
	if fa == fa2 {
		t.Fatal("two seals of the same subscription are identical (nonce reuse?)")
	}
	ta := targetOf(a)
	other := func(k, v string) Target {
		args := a.Args.Map()
		if v == "" {
			delete(args, k)
		} else {
			args[k] = v
		}
		return Target{Event: a.Event, Args: ArgsOf(args)}
	}
	type c struct {
		wid, proj string
		f         Fields
		tg        Target
	}
	cases := map[string]c{
		"username and password swapped": {"wa", a.ProjectID, Fields{fa.Password, fa.Username, fa.URLTail}, ta},
		"password and URL swapped":      {"wa", a.ProjectID, Fields{fa.Username, fa.URLTail, fa.Password}, ta},
		"username and URL swapped":      {"wa", a.ProjectID, Fields{fa.URLTail, fa.Password, fa.Username}, ta},
		"username from another webhook": {"wa", a.ProjectID, Fields{fb.Username, fa.Password, fa.URLTail}, ta},
		"password from another webhook": {"wa", a.ProjectID, Fields{fa.Username, fb.Password, fa.URLTail}, ta},
		"URL from another webhook":      {"wa", a.ProjectID, Fields{fa.Username, fa.Password, fb.URLTail}, ta},
		"URL from another subscription": {"wa", a.ProjectID, Fields{fa.Username, fa.Password, fc.URLTail}, ta},
		"auth of another subscription":  {"wa", a.ProjectID, Fields{fc.Username, fc.Password, fa.URLTail}, ta},
		"URL from another seal":         {"wa", a.ProjectID, Fields{fa.Username, fa.Password, fa2.URLTail}, ta},
		"password from another seal":    {"wa", a.ProjectID, Fields{fa.Username, fa2.Password, fa.URLTail}, ta},
		"URL missing":                   {"wa", a.ProjectID, Fields{fa.Username, fa.Password, ""}, ta},
		"envelope moved to a webhook":   {"wb", a.ProjectID, fa, ta},
		"envelope moved to a project":   {"wa", "otherproject", fa, ta},
		"another event":                 {"wa", a.ProjectID, fa, Target{"row.updated", a.Args}},
		"another table":                 {"wa", a.ProjectID, fa, other("table_id", "tickets")},
		"another database":              {"wa", a.ProjectID, fa, other("database_id", "main")},
		"argument missing":              {"wa", a.ProjectID, fa, other("table_id", "")},
		"argument added":                {"wa", a.ProjectID, fa, other("bucket_id", "b1")},
		"no target":                     {"wa", a.ProjectID, fa, Target{}},
		"empty password":                {"wa", a.ProjectID, Fields{fa.Username + fa.Password, "", fa.URLTail}, ta},
		"empty username":                {"wa", a.ProjectID, Fields{"", fa.Username + fa.Password, fa.URLTail}, ta},
		"empty webhook id":              {"", a.ProjectID, fa, ta},
		"empty project":                 {"wa", "", fa, ta},
		"padding added":                 {"wa", a.ProjectID, Fields{fa.Username, fa.Password, fa.URLTail + "=="}, ta},
		"newline inserted":              {"wa", a.ProjectID, Fields{fa.Username[:10] + "\n" + fa.Username[10:], fa.Password, fa.URLTail}, ta},
		"appended garbage":              {"wa", a.ProjectID, Fields{fa.Username, fa.Password, fa.URLTail + "AAAA"}, ta},
		"percent-encoded":               {"wa", a.ProjectID, Fields{fa.Username, fa.Password, "%41" + fa.URLTail[3:]}, ta},
		"oversized input":               {"wa", a.ProjectID, Fields{strings.Repeat("A", MaxSealedLength), fa.Password, fa.URLTail}, ta},
	}
	std := strings.NewReplacer("-", "+", "_", "/")
	if text := fa.Username + fa.Password + fa.URLTail; text != std.Replace(text) {
		cases["standard base64 alphabet"] = c{"wa", a.ProjectID, Fields{std.Replace(fa.Username), std.Replace(fa.Password), std.Replace(fa.URLTail)}, ta}
	}
	for name, c := range cases {
		if _, err := s.Open(c.wid, c.proj, c.f, c.tg); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	// The split points are not authenticated (only the concatenation is), which is harmless: the same
	// bytes open to the same subscription.
	re := Fields{fa.Username[:len(fa.Username)-1], fa.Username[len(fa.Username)-1:] + fa.Password, fa.URLTail}
	if _, err := s.Open("wa", a.ProjectID, re, ta); err != nil {
		t.Errorf("resplit: %v", err)
	}
}

func TestTargets(t *testing.T) {
	s := newSealer(t, "k1:"+keyB64(t))
	sub := bigSub()
	f := allFields(t, s, "w", sub)
	decoys := []Target{{"row.updated", sub.Args}, {"row.deleted", sub.Args}, {"file.created", Args{{"bucket_id", "b"}}}}
	got, err := s.Open("w", sub.ProjectID, f, append(decoys, targetOf(sub))...)
	if err != nil || got.Event != "row.created" || got.Args[1] != (Arg{"table_id", id36b}) {
		t.Fatalf("%+v %v", got, err)
	}
	many := make([]Target, 0, MaxTargets+1)
	for range MaxTargets {
		many = append(many, decoys[0])
	}
	if _, err := s.Open("w", sub.ProjectID, f, append(many, targetOf(sub))...); !errors.Is(err, ErrAuth) {
		t.Fatalf("more than MaxTargets tried: %v", err)
	}
	if _, err := s.Open("w", sub.ProjectID, f); !errors.Is(err, ErrAuth) {
		t.Fatalf("no targets: %v", err)
	}
}

// Arguments are bound in one canonical order: Seal refuses others, Open skips a
// target that holds others (an unsorted copy of the right arguments included), and ArgsOf makes
// the order from a map.
func TestArgsCanonical(t *testing.T) {
	s := newSealer(t, "k1:"+keyB64(t))
	sub := bigSub()
	f := allFields(t, s, "w", sub)
	unsorted := Args{sub.Args[1], sub.Args[0]}
	for name, args := range map[string]Args{
		"unsorted":       unsorted,
		"name repeated":  Args{sub.Args[0], sub.Args[0]},
		"names repeated": Args{{"a", "1"}, {"b", "2"}, {"b", "3"}},
		"empty name":     Args{{"", "x"}, {"table_id", "t"}},
	} {
		bad := sub
		bad.Args = args
		var fe *FieldError
		if _, err := s.Seal("w", bad); !errors.As(err, &fe) || fe.Field != "arguments" {
			t.Errorf("Seal, %s: %v", name, err)
		}
	}
	if _, err := s.Open("w", sub.ProjectID, f, Target{sub.Event, unsorted}); !errors.Is(err, ErrAuth) {
		t.Fatalf("opened for unsorted arguments: %v", err)
	}
	got, err := s.Open("w", sub.ProjectID, f, Target{sub.Event, unsorted}, targetOf(sub))
	if err != nil || !reflect.DeepEqual(got.Args, sub.Args) {
		t.Fatalf("canonical target after a skipped one: %+v %v", got.Args, err)
	}

	m := map[string]string{"table_id": "t", "database_id": "d", "a": "", "zz": "z"}
	a := ArgsOf(m)
	if want := (Args{{"a", ""}, {"database_id", "d"}, {"table_id", "t"}, {"zz", "z"}}); !reflect.DeepEqual(a, want) || !a.canonical() {
		t.Fatalf("ArgsOf: %v, want %v", a, want)
	}
	if !a.Equal(m) || a[:3].Equal(m) || !reflect.DeepEqual(a.Map(), m) {
		t.Fatal("Equal or Map")
	}
	m2 := maps.Clone(m)
	m2["zz"] = "other"
	if a.Equal(m2) {
		t.Fatal("Equal with another value")
	}
	if v, ok := a.Get("table_id"); !ok || v != "t" {
		t.Fatalf("Get: %q %v", v, ok)
	}
	if _, ok := a.Get("bucket_id"); ok {
		t.Fatal("Get of a missing name")
	}
	if ArgsOf(nil) != nil || len(Args(nil).Map()) != 0 || Args(nil).Map() == nil || !Args(nil).Equal(map[string]string{}) {
		t.Fatal("no arguments")
	}
	many := map[string]string{}
	for i := range MaxArgs {
		many[fmt.Sprintf("n%02d", (i*37)%MaxArgs)] = "v"
	}
	if l := ArgsOf(many); len(l) != MaxArgs || !l.canonical() {
		t.Fatalf("ArgsOf of %d arguments: %d, canonical %v", MaxArgs, len(l), l.canonical())
	}
}

func TestEpochUnix(t *testing.T) {
	if Epoch.Unix() != epochUnix {
		t.Fatalf("epochUnix %d, Epoch %d", epochUnix, Epoch.Unix())
	}
}

func TestTruncation(t *testing.T) {
	s := newSealer(t, "k1:"+keyB64(t))
	sub := bigSub()
	f := allFields(t, s, "w1", sub)
	text := f.Username + f.Password + f.URLTail
	for n := 2; n < len(text); n++ {
		if _, err := s.Open("w1", sub.ProjectID, s.split(text[:n]), targetOf(sub)); !errors.Is(err, ErrOpen) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
}

func sealedWith(t *testing.T, s *Sealer, mutate func(env []byte) []byte) Fields {
	f, err := s.Seal("w1", sampleSub())
	if err != nil {
		t.Fatal(err)
	}
	env, _ := base64.RawURLEncoding.DecodeString(f.Username + f.Password + f.URLTail)
	return s.split(base64.RawURLEncoding.EncodeToString(mutate(env)))
}

func TestWrongKeyIDAndVersion(t *testing.T) {
	k1, k2 := keyB64(t), keyB64(t)
	s := newSealer(t, "k1:"+k1+",k2:"+k2)
	proj, tg := sampleSub().ProjectID, targetOf(sampleSub())

	// Key id rewritten to another configured key: authentication fails.
	if _, err := s.Open("w1", proj, sealedWith(t, s, func(e []byte) []byte { e[2] = '2'; return e }), tg); !errors.Is(err, ErrAuth) {
		t.Errorf("k1 -> k2: %v", err)
	}
	if _, err := s.Open("w1", proj, sealedWith(t, s, func(e []byte) []byte { e[2] = '9'; return e }), tg); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("k9: %v", err)
	}
	// Key id length changed.
	for _, l := range []byte{0, 2, 15} {
		if _, err := s.Open("w1", proj, sealedWith(t, s, func(e []byte) []byte { e[0] = Version<<4 | l; return e }), tg); !errors.Is(err, ErrOpen) {
			t.Errorf("id length nibble %d: %v", l, err)
		}
	}
	for _, v := range []byte{0x00, 0x02, 0x10, 0x31, 0x42, 0x81, 0xff} {
		if _, err := s.Open("w1", proj, sealedWith(t, s, func(e []byte) []byte { e[0] = v; return e }), tg); !errors.Is(err, ErrOpen) {
			t.Errorf("version byte %#x: %v", v, err)
		}
	}
	if _, err := s.Open("w1", proj, sealedWith(t, s, func(e []byte) []byte { e[0] = 0x91; return e }), tg); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("version 9: want ErrUnknownVersion")
	}
	// Same key id, different key material (a misconfigured replica).
	other := newSealer(t, "k1:"+keyB64(t))
	f, _ := s.Seal("w1", sampleSub())
	if _, err := other.Open("w1", proj, f, tg); !errors.Is(err, ErrAuth) {
		t.Errorf("other key under same id: %v", err)
	}
}

func TestKeyRotation(t *testing.T) {
	k1, k2 := keyB64(t), keyB64(t)
	before := newSealer(t, "k1:"+k1)
	after := newSealer(t, "k2:"+k2+",k1:"+k1)
	retired := newSealer(t, "k2:"+k2)
	sub := sampleSub()
	tg := targetOf(sub)

	f, _ := before.Seal("w1", sub)
	got, err := after.Open("w1", sub.ProjectID, f, tg)
	if err != nil || !reflect.DeepEqual(got, sub) {
		t.Fatalf("rotated ring cannot open old envelope: %v", err)
	}
	f2, _ := after.Seal("w1", sub)
	env, _ := base64.RawURLEncoding.DecodeString(f2.Username + f2.Password + f2.URLTail)
	if l := int(env[0]&0x0f) + 1; string(env[1:1+l]) != "k2" {
		t.Fatalf("new envelope sealed with %q, want primary k2", env[1:1+l])
	}
	if _, err := before.Open("w1", sub.ProjectID, f2, tg); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("old ring opened new-key envelope: %v", err)
	}
	if _, err := retired.Open("w1", sub.ProjectID, f, tg); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("retired key still opens: %v", err)
	}
}

func TestSealRejectsInvalid(t *testing.T) {
	s := newSealer(t, "k1:"+keyB64(t))
	mut := map[string]func(*Subscription){
		"callbackUrl":         func(s *Subscription) { s.CallbackURL = "" },
		"secret":              func(s *Subscription) { s.Secret = make([]byte, 23) },
		"previousSecret":      func(s *Subscription) { s.PrevSecret = make([]byte, 65); s.PrevSecretUntil = time.Now() },
		"previousSecretUntil": func(s *Subscription) { s.PrevSecretUntil = time.Now() },
		"event":               func(s *Subscription) { s.Event = "" },
		"expiry":              func(s *Subscription) { s.Expiry = time.Time{} },
		"verifiedAt":          func(s *Subscription) { s.VerifiedAt = time.Unix(1_700_000_000, 0) }, // before Epoch
		"projectId":           func(s *Subscription) { s.ProjectID = "" },
		"arguments":           func(s *Subscription) { s.Args = Args{{"", "x"}} },
	}
	for field, f := range mut {
		sub := sampleSub()
		f(&sub)
		_, err := s.Seal("w1", sub)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != field || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v", field, err)
		}
	}
	sub := sampleSub()
	sub.PrevSecret = make([]byte, 30)
	if _, err := s.Seal("w1", sub); err == nil {
		t.Error("previous secret without deadline accepted")
	}
	sub = sampleSub()
	sub.Expiry = Epoch.Add(1 << 33 * time.Second)
	if _, err := s.Seal("w1", sub); err == nil {
		t.Error("expiry after 2162 accepted")
	}
	if _, err := s.Seal("", sampleSub()); err == nil {
		t.Error("empty webhook id accepted")
	}
}

// sealRawV2 encrypts an arbitrary plaintext as a version 2 envelope for webhook w1, project p, target tg.
func sealRawV2(s *Sealer, pt []byte, tg Target) Fields {
	kid := s.ring.ids[0]
	hdr := append([]byte{byte(Version<<4 | (len(kid) - 1))}, kid...)
	nonce := make([]byte, nonceSize)
	rand.Read(nonce)
	env := append(append(bytes.Clone(hdr), nonce...), s.ring.aeads[kid].Seal(nil, nonce, pt, appendADV2(nil, hdr, "w1", "p", tg.Event, tg.Args))...)
	return s.split(base64.RawURLEncoding.EncodeToString(env))
}

// Non-canonical plaintexts, correctly encrypted, are still refused.
func TestNonCanonicalPlaintextV2(t *testing.T) {
	s := newSealer(t, "k1:"+keyB64(t))
	tg := targetOf(sampleSub())
	good, err := appendPlaintextV2(nil, ptr(sampleSub()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open("w1", "p", sealRawV2(s, good, tg), tg); err != nil {
		t.Fatalf("canonical plaintext: %v", err)
	}
	set := func(i int, v byte) []byte { b := bytes.Clone(good); b[i] = v; return b }
	stored := sampleSub()
	stored.CallbackURL = "http://x.example/"
	plainHTTP, _ := appendPlaintextV2(nil, &stored)
	withPrefix := append(bytes.Clone(plainHTTP[:len(plainHTTP)-len(stored.CallbackURL)]), "https://x.example/"...)
	for name, pt := range map[string][]byte{
		"empty":                 {},
		"flags only":            good[:1],
		"unknown flag":          set(0, good[0]|0x08),
		"zero expiry":           append(append([]byte{good[0]}, 0, 0, 0, 0), good[5:]...),
		"zero verifiedAt":       append(append(bytes.Clone(good[:5]), 0, 0, 0, 0), good[9:]...),
		"secret length 23":      set(9, 23),
		"secret length 65":      set(9, 65),
		"secret longer than pt": set(9, 64)[:10+40],
		"no callback URL":       good[:10+32],
		"stored https prefix":   withPrefix,
		"verified flag cleared": set(0, good[0]&^flagVerified),
		"prev flag without one": set(0, good[0]|flagPrev),
	} {
		if _, err := s.Open("w1", "p", sealRawV2(s, pt, tg), tg); !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrOpen) {
			t.Errorf("%s: %v", name, err)
		} else if err == nil {
			t.Errorf("%s: opened", name)
		}
	}
}

func randBytes(r *mrand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func randString(r *mrand.Rand, min, max int) string {
	const alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./?=&"
	n := min + r.IntN(max-min+1)
	b := make([]byte, n)
	for i := range b {
		b[i] = alpha[r.IntN(len(alpha))]
	}
	return string(b)
}

func randTime(r *mrand.Rand) time.Time {
	return Epoch.Add(time.Duration(1+r.Int64N(1<<32-1)) * time.Second).UTC()
}

func randSub(r *mrand.Rand) Subscription {
	scheme := []string{"https://", "http://", ""}[r.IntN(3)]
	sub := Subscription{
		CallbackURL: scheme + randString(r, 1, 400),
		Secret:      randBytes(r, MinSecretBytes+r.IntN(MaxSecretBytes-MinSecretBytes+1)),
		Event:       randString(r, 1, 20),
		ProjectID:   randString(r, 1, 36),
		Expiry:      randTime(r),
	}
	if r.IntN(2) == 0 {
		sub.VerifiedAt = randTime(r)
	}
	if r.IntN(3) == 0 {
		sub.PrevSecret = randBytes(r, MinSecretBytes+r.IntN(MaxSecretBytes-MinSecretBytes+1))
		sub.PrevSecretUntil = randTime(r)
	}
	if n := r.IntN(4); n > 0 {
		m := map[string]string{}
		for range n {
			m[randString(r, 1, 12)] = randString(r, 0, 36)
		}
		sub.Args = ArgsOf(m)
	}
	return sub
}

// Property: any valid subscription either round-trips exactly or is refused with a *TooLongError whose
// MaxCallbackURL is exact, and what is sealed respects the budget.
func TestPropertyRoundTrip(t *testing.T) {
	r := mrand.New(mrand.NewPCG(1, uint64(time.Now().UnixNano())))
	s := newSealer(t, "k1:"+keyB64(t)+",old:"+keyB64(t))
	big, _ := NewSealer(s.ring, Budget{Username: 2000, Password: 1000, URL: 1000})
	fit, refused := 0, 0
	for i := range 3000 {
		sub := randSub(r)
		wid := randString(r, 1, 36)
		for _, sl := range []*Sealer{s, big} {
			f, err := sl.Seal(wid, sub)
			var tl *TooLongError
			if errors.As(err, &tl) && sl == s {
				if tl.MaxCallbackURL >= len(sub.CallbackURL) {
					t.Fatalf("case %d: refused although MaxCallbackURL %d >= %d", i, tl.MaxCallbackURL, len(sub.CallbackURL))
				}
				refused++
				continue
			}
			if err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			if sl == s && s.MaxCallbackURL(sub) < len(sub.CallbackURL) {
				t.Fatalf("case %d: sealed although MaxCallbackURL %d < %d", i, s.MaxCallbackURL(sub), len(sub.CallbackURL))
			}
			b := sl.budget
			if len(f.Username) > b.Username || len(f.Password) > b.Password || len(f.URLTail) > b.URL || f.Username == "" || f.Password == "" {
				t.Fatalf("case %d: split %d/%d/%d", i, len(f.Username), len(f.Password), len(f.URLTail))
			}
			got, err := sl.Open(wid, sub.ProjectID, f, targetOf(sub))
			if err != nil {
				t.Fatalf("case %d: open: %v", i, err)
			}
			if len(got.Args) == 0 && len(sub.Args) == 0 {
				got.Args = sub.Args
			}
			if !reflect.DeepEqual(got, sub) {
				t.Fatalf("case %d: got %+v want %+v", i, got, sub)
			}
			if sl == s {
				fit++
			}
		}
	}
	t.Logf("cloud budget: %d fit, %d refused as too long", fit, refused)
}

func TestSigningSecretsAndExpiry(t *testing.T) {
	sub := sampleSub()
	now := time.Unix(1_799_999_999, 0)
	if sub.Expired(now) || !sub.Expired(sub.Expiry) {
		t.Fatal("Expired")
	}
	if n := len(sub.SigningSecrets(now)); n != 1 {
		t.Fatalf("%d secrets", n)
	}
	sub.PrevSecret = make([]byte, 32)
	sub.PrevSecretUntil = now.Add(time.Second)
	if n := len(sub.SigningSecrets(now)); n != 2 {
		t.Fatalf("%d secrets in grace window", n)
	}
	if n := len(sub.SigningSecrets(now.Add(time.Second))); n != 1 {
		t.Fatalf("%d secrets after grace window", n)
	}
}

func TestParseKeyring(t *testing.T) {
	k := keyB64(t)
	raw, _ := base64.StdEncoding.DecodeString(k)
	r, err := ParseKeyring(" k1:" + k + " , k0:" + base64.RawURLEncoding.EncodeToString(randBytes(mrand.New(mrand.NewPCG(2, 3)), 32)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Primary() != "k1" || len(r.IDs()) != 2 {
		t.Fatalf("primary %q ids %v", r.Primary(), r.IDs())
	}
	bad := map[string]error{
		"":                                ErrNoKeys,
		"k1":                              ErrBadKeys,
		"k1:":                             ErrWeakKey,
		":" + k:                           ErrBadKeys,
		"k/1:" + k:                        ErrBadKeys,
		strings.Repeat("k", 17) + ":" + k: ErrBadKeys,
		"k1:" + k + ",k1:" + keyB64(t):    ErrBadKeys,
		"k1:" + k + ",k2:" + base64.RawURLEncoding.EncodeToString(raw):                        ErrBadKeys,
		"k1:" + base64.StdEncoding.EncodeToString(raw[:16]):                                   ErrWeakKey,
		"k1:" + base64.StdEncoding.EncodeToString(append(raw, 1)):                             ErrWeakKey,
		"k1:" + base64.StdEncoding.EncodeToString(make([]byte, 32)):                           ErrWeakKey,
		"k1:" + base64.StdEncoding.EncodeToString([]byte("passwordpasswordpasswordpassword")): ErrWeakKey,
		"k1:not base64!": ErrBadKeys,
	}
	for in, want := range bad {
		if _, err := ParseKeyring(in); !errors.Is(err, want) {
			t.Errorf("ParseKeyring(%.24q) = %v, want %v", in, err, want)
		}
	}
	t.Setenv(EnvKeys, "")
	if _, err := LoadKeyring(os.Getenv); !errors.Is(err, ErrNoKeys) || !strings.Contains(err.Error(), EnvKeys) {
		t.Errorf("LoadKeyring(empty) = %v", err)
	}
	t.Setenv(EnvKeys, "k1:"+k)
	if _, err := LoadKeyring(os.Getenv); err != nil {
		t.Errorf("LoadKeyring = %v", err)
	}
	if _, err := NewSealer(nil, Budget{}); err == nil {
		t.Error("NewSealer(nil)")
	}
	if _, err := NewSealer(r, Budget{Username: 10}); err == nil {
		t.Error("NewSealer with zero password budget")
	}
	if _, err := NewSealer(r, Budget{Username: 10, Password: 10, URL: -1}); err == nil {
		t.Error("NewSealer with a negative URL budget")
	}
	if got := URLBudget(cloudWebhookURL); got != 154 || URLBudget(strings.Repeat("x", 300)) != 0 {
		t.Errorf("URLBudget = %d", got)
	}
}

// fuzzSealer is deterministic so that corpus entries stay meaningful.
func fuzzSealer(t testing.TB) *Sealer {
	k1 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 2))
	k2 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 2))
	return newSealer(t, "k1:"+k1+",k2:"+k2)
}

func fuzzTarget() Target { return targetOf(sampleSub()) }

// FuzzOpen feeds username and password only (an envelope without a URL part; its corpus also holds
// envelopes of a layout no longer read, which must not open).
func FuzzOpen(f *testing.F) {
	s := fuzzSealer(f)
	sub := sampleSub()
	sub.ProjectID = "p1"
	v2, _ := s.Seal("w1", sub)
	f.Add(v2.Username, v2.Password)
	f.Add("AQJrMQ", "AAAA")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, user, pass string) {
		got, err := s.Open("w1", "p1", Fields{Username: user, Password: pass}, fuzzTarget())
		if err != nil {
			if !errors.Is(err, ErrOpen) {
				t.Fatalf("error %v does not wrap ErrOpen", err)
			}
			return
		}
		if _, err := appendPlaintextV2(nil, &got); err != nil {
			t.Fatalf("opened an invalid subscription: %v", err)
		}
	})
}

// FuzzOpenFields feeds all three fields of a version 2 envelope.
func FuzzOpenFields(f *testing.F) {
	s := fuzzSealer(f)
	sub := bigSub()
	sub.ProjectID = "p1"
	full, _ := s.Seal("w1", sub)
	f.Add(full.Username, full.Password, full.URLTail)
	f.Add(full.Username, full.Password, "")
	f.Add("IWsx", "A", "AAAA")
	f.Fuzz(func(t *testing.T, user, pass, tail string) {
		got, err := s.Open("w1", "p1", Fields{user, pass, tail}, Target{sub.Event, sub.Args}, fuzzTarget())
		if err != nil {
			if !errors.Is(err, ErrOpen) {
				t.Fatalf("error %v does not wrap ErrOpen", err)
			}
			return
		}
		if _, err := appendPlaintextV2(nil, &got); err != nil {
			t.Fatalf("opened an invalid subscription: %v", err)
		}
	})
}

// FuzzDecodePlaintextV2 reaches the version 2 plaintext decoder directly (the fuzzer cannot forge GCM
// tags): it must never panic and must accept only canonical encodings.
func FuzzDecodePlaintextV2(f *testing.F) {
	good, _ := appendPlaintextV2(nil, ptr(sampleSub()))
	f.Add(good)
	rot := bigSub()
	rot.PrevSecret = bytes.Repeat([]byte{9}, 24)
	rot.PrevSecretUntil = time.Unix(1_800_000_100, 0)
	rotated, _ := appendPlaintextV2(nil, &rot)
	f.Add(rotated)
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 1, 24})
	f.Fuzz(func(t *testing.T, pt []byte) {
		sub, err := decodePlaintextV2(pt)
		if err != nil {
			return
		}
		again, err := appendPlaintextV2(nil, &sub)
		if err != nil || !bytes.Equal(again, pt) {
			t.Fatalf("accepted non-canonical plaintext %x (re-encodes to %x, %v)", pt, again, err)
		}
	})
}

func ptr[T any](v T) *T { return &v }
