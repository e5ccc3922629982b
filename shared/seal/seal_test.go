package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	mrand "math/rand/v2"
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

func newSealer(t testing.TB, spec string) *Sealer {
	t.Helper()
	r, err := ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSealer(r, DefaultBudget())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sampleSub() Subscription {
	return Subscription{
		CallbackURL: "https://proxy.example.com/hooks/client123",
		Secret:      bytes.Repeat([]byte{0xA5, 0x5A, 0x01, 0x02}, 8),
		Event:       "row.created",
		Args:        map[string]string{"database_id": "main", "table_id": "orders"},
		ProjectID:   "6512a9f3c0ffee",
		Expiry:      time.Unix(1_800_000_000, 0).UTC(),
		VerifiedAt:  time.Unix(1_799_000_000, 0).UTC(),
	}
}

func TestRoundTrip(t *testing.T) {
	s := newSealer(t, "k1:"+keyB64(t))
	sub := sampleSub()
	user, pass, err := s.Seal("sub_a3f1c8e2b0d49f7e", sub)
	if err != nil {
		t.Fatal(err)
	}
	if user == "" || pass == "" || len(user) > DefaultUsernameBudget || len(pass) > DefaultPasswordBudget {
		t.Fatalf("split %d/%d outside budget", len(user), len(pass))
	}
	got, err := s.Open("sub_a3f1c8e2b0d49f7e", sub.ProjectID, user, pass)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, sub) {
		t.Fatalf("got %+v\nwant %+v", got, sub)
	}
	t.Logf("sample envelope: %d + %d characters", len(user), len(pass))
}

func TestSplitKeepsPasswordNonEmpty(t *testing.T) {
	r, _ := ParseKeyring("k1:" + keyB64(t))
	s, err := NewSealer(r, Budget{Username: 1000, Password: 10})
	if err != nil {
		t.Fatal(err)
	}
	u, p, err := s.Seal("w", sampleSub())
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 1 {
		t.Fatalf("password %d characters, want 1 (Appwrite sends Basic auth only when both are set)", len(p))
	}
	if _, err := s.Open("w", sampleSub().ProjectID, u, p); err != nil {
		t.Fatal(err)
	}
}

// Every single-bit flip of the sealed text, and of the decoded envelope, is
// rejected.
func TestTamperBitFlips(t *testing.T) {
	s := newSealer(t, "k1:"+keyB64(t)+",k2:"+keyB64(t))
	sub := sampleSub()
	user, pass, err := s.Seal("w1", sub)
	if err != nil {
		t.Fatal(err)
	}
	text := user + pass
	split := len(user)
	for i := range len(text) * 8 {
		b := []byte(text)
		b[i/8] ^= 1 << (i % 8)
		f := string(b)
		if _, err := s.Open("w1", sub.ProjectID, f[:split], f[split:]); !errors.Is(err, ErrOpen) {
			t.Fatalf("text bit %d flipped: err = %v", i, err)
		}
	}
	env, _ := base64.RawURLEncoding.DecodeString(text)
	for i := range len(env) * 8 {
		e := bytes.Clone(env)
		e[i/8] ^= 1 << (i % 8)
		f := base64.RawURLEncoding.EncodeToString(e)
		if _, err := s.Open("w1", sub.ProjectID, f[:split], f[split:]); !errors.Is(err, ErrOpen) {
			t.Fatalf("envelope bit %d flipped: err = %v", i, err)
		}
	}
}

func TestTamperSwapsAndBinding(t *testing.T) {
	// A small username budget makes both halves long, so that halves of different seals never coincide by
	// chance (with the default budget the password part may be a single character).
	r, err := ParseKeyring("k1:" + keyB64(t))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSealer(r, Budget{Username: 100, Password: 400})
	if err != nil {
		t.Fatal(err)
	}
	a, b := sampleSub(), sampleSub()
	b.CallbackURL = "https://other.example.com/hook"
	ua, pa, _ := s.Seal("wa", a)
	ub, pb, _ := s.Seal("wb", b)
	ua2, pa2, _ := s.Seal("wa", a)
	if ua == ua2 {
		t.Fatal("two seals of the same subscription are identical (nonce reuse?)")
	}

	cases := map[string][4]string{
		"username and password swapped": {"wa", a.ProjectID, pa, ua},
		"password from another webhook": {"wa", a.ProjectID, ua, pb},
		"username from another webhook": {"wa", a.ProjectID, ub, pa},
		"halves of two seals":           {"wa", a.ProjectID, ua, pa2},
		"envelope moved to a webhook":   {"wb", a.ProjectID, ua, pa},
		"envelope moved to a project":   {"wa", "otherproject", ua, pa},
		"split point moved":             {"wa", a.ProjectID, ua[:len(ua)-1], ua[len(ua)-1:] + pa + "A"},
		"empty password":                {"wa", a.ProjectID, ua + pa, ""},
		"empty username":                {"wa", a.ProjectID, "", ua + pa},
		"empty webhook id":              {"", a.ProjectID, ua, pa},
		"empty project":                 {"wa", "", ua, pa},
		"padding added":                 {"wa", a.ProjectID, ua, pa + "=="},
		"newline inserted":              {"wa", a.ProjectID, ua[:10] + "\n" + ua[10:], pa},
		"appended garbage":              {"wa", a.ProjectID, ua, pa + "AAAA"},
		"oversized input":               {"wa", a.ProjectID, strings.Repeat("A", MaxSealedLength), pa},
	}
	// Standard base64's alphabet instead of base64url ("-" and "_" written "+" and "/"): only a change when
	// the text has one of those characters, which holds for about 96% of seals; seal until it does.
	std := strings.NewReplacer("-", "+", "_", "/")
	ustd, pstd := ua, pa
	for i := 0; ustd == std.Replace(ustd) && i < 1000; i++ {
		ustd, pstd, _ = s.Seal("wa", a)
	}
	if ustd == std.Replace(ustd) {
		t.Fatal("no seal with '-' or '_' in 1000 tries")
	}
	if _, err := s.Open("wa", a.ProjectID, ustd, pstd); err != nil {
		t.Fatalf("the unaltered seal does not open: %v", err)
	}
	cases["standard base64 alphabet"] = [4]string{"wa", a.ProjectID, std.Replace(ustd), pstd}
	for name, c := range cases {
		if _, err := s.Open(c[0], c[1], c[2], c[3]); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	// The split point itself is not authenticated (only the concatenation
	// is), which is harmless: the same bytes open to the same subscription.
	if _, err := s.Open("wa", a.ProjectID, ua[:len(ua)-1], ua[len(ua)-1:]+pa); err != nil {
		t.Errorf("resplit: %v", err)
	}
}

func TestTruncation(t *testing.T) {
	s := newSealer(t, "k1:"+keyB64(t))
	sub := sampleSub()
	u, p, _ := s.Seal("w1", sub)
	text := u + p
	for n := 1; n < len(text); n++ {
		tr := text[:n]
		cut := max(1, min(len(u), n-1))
		if n == 1 {
			if _, err := s.Open("w1", sub.ProjectID, tr, ""); !errors.Is(err, ErrOpen) {
				t.Fatalf("truncated to %d: %v", n, err)
			}
			continue
		}
		if _, err := s.Open("w1", sub.ProjectID, tr[:cut], tr[cut:]); !errors.Is(err, ErrOpen) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
}

func encodeEnv(t *testing.T, s *Sealer, mutate func(env []byte) []byte) (string, string) {
	u, p, err := s.Seal("w1", sampleSub())
	if err != nil {
		t.Fatal(err)
	}
	env, _ := base64.RawURLEncoding.DecodeString(u + p)
	f := base64.RawURLEncoding.EncodeToString(mutate(env))
	return f[:len(f)/2], f[len(f)/2:]
}

func TestWrongKeyIDAndVersion(t *testing.T) {
	k1, k2 := keyB64(t), keyB64(t)
	s := newSealer(t, "k1:"+k1+",k2:"+k2)
	proj := sampleSub().ProjectID

	// Key id rewritten to another configured key: authentication fails.
	u, p := encodeEnv(t, s, func(e []byte) []byte { e[3] = '2'; return e })
	if _, err := s.Open("w1", proj, u, p); !errors.Is(err, ErrAuth) {
		t.Errorf("k1 -> k2: %v", err)
	}
	// Unknown key id.
	u, p = encodeEnv(t, s, func(e []byte) []byte { e[3] = '9'; return e })
	if _, err := s.Open("w1", proj, u, p); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("k9: %v", err)
	}
	// Key id length changed.
	u, p = encodeEnv(t, s, func(e []byte) []byte { e[1] = 1; return e })
	if _, err := s.Open("w1", proj, u, p); !errors.Is(err, ErrOpen) {
		t.Errorf("id length 1: %v", err)
	}
	u, p = encodeEnv(t, s, func(e []byte) []byte { e[1] = 0; return e })
	if _, err := s.Open("w1", proj, u, p); !errors.Is(err, ErrMalformed) {
		t.Errorf("id length 0: %v", err)
	}
	u, p = encodeEnv(t, s, func(e []byte) []byte { e[1] = 200; return e })
	if _, err := s.Open("w1", proj, u, p); !errors.Is(err, ErrMalformed) {
		t.Errorf("id length 200: %v", err)
	}
	// Unknown versions.
	for _, v := range []byte{0, 2, 0x81, 0xff} {
		u, p = encodeEnv(t, s, func(e []byte) []byte { e[0] = v; return e })
		if _, err := s.Open("w1", proj, u, p); !errors.Is(err, ErrUnknownVersion) {
			t.Errorf("version %d: %v", v, err)
		}
	}
	// Same key id, different key material (a misconfigured replica).
	other := newSealer(t, "k1:"+keyB64(t))
	u, p, _ = s.Seal("w1", sampleSub())
	if _, err := other.Open("w1", proj, u, p); !errors.Is(err, ErrAuth) {
		t.Errorf("other key under same id: %v", err)
	}
}

func TestRotation(t *testing.T) {
	k1, k2 := keyB64(t), keyB64(t)
	before := newSealer(t, "k1:"+k1)
	after := newSealer(t, "k2:"+k2+",k1:"+k1)
	retired := newSealer(t, "k2:"+k2)
	sub := sampleSub()

	u, p, _ := before.Seal("w1", sub)
	got, err := after.Open("w1", sub.ProjectID, u, p)
	if err != nil || !reflect.DeepEqual(got, sub) {
		t.Fatalf("rotated ring cannot open old envelope: %v", err)
	}
	u2, p2, _ := after.Seal("w1", sub)
	env, _ := base64.RawURLEncoding.DecodeString(u2 + p2)
	if string(env[2:2+env[1]]) != "k2" {
		t.Fatalf("new envelope sealed with %q, want primary k2", env[2:2+env[1]])
	}
	if _, err := before.Open("w1", sub.ProjectID, u2, p2); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("old ring opened new-key envelope: %v", err)
	}
	if _, err := retired.Open("w1", sub.ProjectID, u, p); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("retired key still opens: %v", err)
	}
}

func TestTooLong(t *testing.T) {
	s := newSealer(t, "k1:"+keyB64(t))
	sub := sampleSub()
	sub.CallbackURL = "https://proxy.example.com/" + strings.Repeat("a", 200)
	_, _, err := s.Seal("w1", sub)
	var tl *TooLongError
	if !errors.As(err, &tl) {
		t.Fatalf("err = %v, want *TooLongError", err)
	}
	if tl.Field != "authPassword" || tl.Largest != "callbackUrl" || tl.Budget != DefaultPasswordBudget || tl.Length <= tl.Budget {
		t.Fatalf("bad error %+v", tl)
	}
	if !strings.HasPrefix(err.Error(), "authPassword: sealed subscription is ") {
		t.Fatalf("message %q", err)
	}
	t.Log(err)

	// Largest part: arguments.
	sub = sampleSub()
	sub.Args = map[string]string{}
	for i := range 8 {
		sub.Args[fmt.Sprintf("arg_%d", i)] = strings.Repeat("v", 20)
	}
	if _, _, err := s.Seal("w1", sub); !errors.As(err, &tl) || tl.Largest != "arguments" {
		t.Fatalf("err = %v", err)
	}

	// The maximum that fits: exactly on budget succeeds, one byte more fails.
	sub = sampleSub()
	base := len(sub.CallbackURL)
	for extra := 0; ; extra++ {
		sub.CallbackURL = "https://proxy.example.com/hooks/client123" + strings.Repeat("x", extra)
		u, p, err := s.Seal("w1", sub)
		if err != nil {
			if !errors.As(err, &tl) {
				t.Fatal(err)
			}
			t.Logf("largest callback URL that fits beside the sample: %d bytes", base+extra-1)
			break
		}
		if len(u) > DefaultUsernameBudget || len(p) > DefaultPasswordBudget {
			t.Fatalf("over budget: %d/%d", len(u), len(p))
		}
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
		"verifiedAt":          func(s *Subscription) { s.VerifiedAt = time.Unix(-5, 0) },
		"projectId":           func(s *Subscription) { s.ProjectID = "" },
		"arguments":           func(s *Subscription) { s.Args = map[string]string{"": "x"} },
	}
	for field, f := range mut {
		sub := sampleSub()
		f(&sub)
		_, _, err := s.Seal("w1", sub)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != field || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v", field, err)
		}
	}
	sub := sampleSub()
	sub.PrevSecret = make([]byte, 30)
	if _, _, err := s.Seal("w1", sub); err == nil {
		t.Error("previous secret without deadline accepted")
	}
	if _, _, err := s.Seal("", sampleSub()); err == nil {
		t.Error("empty webhook id accepted")
	}
}

// Non-canonical plaintexts, correctly encrypted, are still refused.
func TestNonCanonicalPlaintext(t *testing.T) {
	s := newSealer(t, "k1:"+keyB64(t))
	good, err := encodeSubscription(sampleSub())
	if err != nil {
		t.Fatal(err)
	}
	open := func(pt []byte) error {
		text, err := s.sealText("k1", "w1", "p", pt)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Open("w1", "p", text[:5], text[5:])
		return err
	}
	if err := open(good); err != nil {
		t.Fatalf("canonical plaintext: %v", err)
	}
	nonMinimal := append([]byte{}, good...)
	// Replace the leading expiry varint with a padded (non-minimal) form.
	v, n := binary.Uvarint(nonMinimal)
	pad := binary.AppendUvarint(nil, v)
	pad[len(pad)-1] |= 0x80
	pad = append(pad, 0)
	nonMinimal = append(pad, nonMinimal[n:]...)
	args := sampleSub()
	args.Args = nil
	noArgs, _ := encodeSubscription(args)
	unsorted := append(noArgs[:len(noArgs)-1:len(noArgs)-1], 2, 1, 'b', 0, 1, 'a', 0)
	dup := append(noArgs[:len(noArgs)-1:len(noArgs)-1], 2, 1, 'a', 0, 1, 'a', 0)
	for name, pt := range map[string][]byte{
		"trailing byte":      append(bytes.Clone(good), 0),
		"truncated":          good[:len(good)-1],
		"empty":              {},
		"non-minimal varint": nonMinimal,
		"unsorted args":      unsorted,
		"duplicate args":     dup,
	} {
		if err := open(pt); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", name, err)
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

func randSub(r *mrand.Rand) Subscription {
	sub := Subscription{
		CallbackURL: "https://" + randString(r, 1, 60),
		Secret:      randBytes(r, MinSecretBytes+r.IntN(MaxSecretBytes-MinSecretBytes+1)),
		Event:       randString(r, 1, 20),
		ProjectID:   randString(r, 1, 36),
		Expiry:      time.Unix(1+r.Int64N(1<<40), 0).UTC(),
	}
	if r.IntN(2) == 0 {
		sub.VerifiedAt = time.Unix(1+r.Int64N(1<<40), 0).UTC()
	}
	if r.IntN(3) == 0 {
		sub.PrevSecret = randBytes(r, MinSecretBytes+r.IntN(MaxSecretBytes-MinSecretBytes+1))
		sub.PrevSecretUntil = time.Unix(1+r.Int64N(1<<40), 0).UTC()
	}
	if n := r.IntN(4); n > 0 {
		sub.Args = map[string]string{}
		for range n {
			sub.Args[randString(r, 1, 12)] = randString(r, 0, 24)
		}
	}
	return sub
}

// Property: any valid subscription either round-trips exactly or is refused
// with a *TooLongError, and what is sealed respects the budget.
func TestPropertyRoundTrip(t *testing.T) {
	r := mrand.New(mrand.NewPCG(1, uint64(time.Now().UnixNano())))
	s := newSealer(t, "k1:"+keyB64(t)+",old:"+keyB64(t))
	big, _ := NewSealer(s.ring, Budget{Username: 2000, Password: 2000})
	fit, refused := 0, 0
	for i := range 3000 {
		sub := randSub(r)
		wid := randString(r, 1, 36)
		for _, sl := range []*Sealer{s, big} {
			u, p, err := sl.Seal(wid, sub)
			var tl *TooLongError
			if errors.As(err, &tl) && sl == s {
				refused++
				continue
			}
			if err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			if len(u) > sl.budget.Username || len(p) > sl.budget.Password || u == "" || p == "" {
				t.Fatalf("case %d: split %d/%d", i, len(u), len(p))
			}
			got, err := sl.Open(wid, sub.ProjectID, u, p)
			if err != nil {
				t.Fatalf("case %d: open: %v", i, err)
			}
			if !reflect.DeepEqual(got, sub) {
				t.Fatalf("case %d: got %+v want %+v", i, got, sub)
			}
			if sl == s {
				fit++
			}
		}
	}
	t.Logf("default budget: %d fit, %d refused as too long", fit, refused)
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
	}
	for in, want := range bad {
		if _, err := ParseKeyring(in); !errors.Is(err, want) {
			t.Errorf("ParseKeyring(%.24q) = %v, want %v", in, err, want)
		}
	}
	t.Setenv(EnvKeys, "")
	if _, err := LoadKeyring(); !errors.Is(err, ErrNoKeys) || !strings.Contains(err.Error(), EnvKeys) {
		t.Errorf("LoadKeyring(empty) = %v", err)
	}
	t.Setenv(EnvKeys, "k1:"+k)
	if _, err := LoadKeyring(); err != nil {
		t.Errorf("LoadKeyring = %v", err)
	}
	if _, err := NewSealer(nil, Budget{}); err == nil {
		t.Error("NewSealer(nil)")
	}
	if _, err := NewSealer(r, Budget{Username: 10}); err == nil {
		t.Error("NewSealer with zero password budget")
	}
}

// fuzzSealer is deterministic so that corpus entries stay meaningful.
func fuzzSealer(t testing.TB) *Sealer {
	k1 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 2))
	k2 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 2))
	return newSealer(t, "k1:"+k1+",k2:"+k2)
}

func FuzzOpen(f *testing.F) {
	s := fuzzSealer(f)
	sub := sampleSub()
	sub.ProjectID = "p1"
	u, p, _ := s.Seal("w1", sub)
	f.Add(u, p)
	f.Add(u[:20], u[20:]+p)
	f.Add("AQJrMQ", "AAAA")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, user, pass string) {
		got, err := s.Open("w1", "p1", user, pass)
		if err != nil {
			if !errors.Is(err, ErrOpen) {
				t.Fatalf("error %v does not wrap ErrOpen", err)
			}
			return
		}
		// Whatever opens must be a valid subscription that re-seals.
		if _, err := encodeSubscription(got); err != nil {
			t.Fatalf("opened an invalid subscription: %v", err)
		}
	})
}

// FuzzDecodePlaintext reaches the plaintext decoder directly (the fuzzer
// cannot forge GCM tags): it must never panic and must accept only canonical
// encodings.
func FuzzDecodePlaintext(f *testing.F) {
	good, _ := encodeSubscription(sampleSub())
	f.Add(good)
	rot := sampleSub()
	rot.PrevSecret = bytes.Repeat([]byte{9}, 24)
	rot.PrevSecretUntil = time.Unix(1_800_000_100, 0)
	rotated, _ := encodeSubscription(rot)
	f.Add(rotated)
	f.Add([]byte{})
	f.Add([]byte{1, 0, 1, 'e', 1, 'u', 24})
	f.Fuzz(func(t *testing.T, pt []byte) {
		sub, err := decodeSubscription(pt)
		if err != nil {
			return
		}
		again, err := encodeSubscription(sub)
		if err != nil || !bytes.Equal(again, pt) {
			t.Fatalf("accepted non-canonical plaintext")
		}
	})
}

func benchSub() Subscription { return sampleSub() }

func BenchmarkSealOpen(b *testing.B) {
	s := fuzzSealer(b)
	sub := benchSub()
	for b.Loop() {
		u, p, err := s.Seal("sub_a3f1c8e2b0d49f7e", sub)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Open("sub_a3f1c8e2b0d49f7e", sub.ProjectID, u, p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSeal(b *testing.B) {
	s := fuzzSealer(b)
	sub := benchSub()
	for b.Loop() {
		if _, _, err := s.Seal("sub_a3f1c8e2b0d49f7e", sub); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	s := fuzzSealer(b)
	sub := benchSub()
	u, p, _ := s.Seal("sub_a3f1c8e2b0d49f7e", sub)
	for b.Loop() {
		if _, err := s.Open("sub_a3f1c8e2b0d49f7e", sub.ProjectID, u, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawAESGCM is the floor for Seal+Open: one AES-256-GCM seal and
// open of a plaintext the size of the sample subscription's.
func BenchmarkRawAESGCM(b *testing.B) {
	key := bytes.Repeat([]byte{7, 3}, 16)
	block, _ := aes.NewCipher(key)
	aead, _ := cipher.NewGCM(block)
	pt, _ := encodeSubscription(benchSub())
	nonce := make([]byte, nonceSize)
	ad := []byte("additional data of similar size as ours...")
	b.ReportMetric(float64(len(pt)), "plaintext-bytes")
	for b.Loop() {
		rand.Read(nonce)
		ct := aead.Seal(nil, nonce, pt, ad)
		if _, err := aead.Open(nil, nonce, ct, ad); err != nil {
			b.Fatal(err)
		}
	}
}
