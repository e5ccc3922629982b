// Package seal keeps an MCP events subscription inside the Appwrite webhook
// that carries it: the subscription is encoded in a compact binary layout,
// encrypted and authenticated with AES-256-GCM, encoded base64url and split
// over the webhook's authUsername and authPassword fields.
//
// Envelope (version 1), before base64url (no padding):
//
//	offset  size  field
//	0       1     version = 0x01
//	1       1     L = length of the key id (1..16)
//	2       L     key id (ASCII [A-Za-z0-9._-])
//	2+L     12    GCM nonce (random)
//	14+L    n+16  AES-256-GCM ciphertext of the plaintext below, then the tag
//
// The associated data (authenticated, not stored) is
//
//	"appwrite-agent/seal/v1" 0x00 || envelope[0:2+L] || u8 len(webhookID) || webhookID || u8 len(projectID) || projectID
//
// so an envelope only opens for the webhook id and project it was sealed for:
// copied onto another webhook, or into another project, it is rejected. The
// project id is therefore not stored in the plaintext at all; Open takes it
// from the caller (the ingress passes X-Appwrite-Webhook-Project-Id, and a
// mismatch simply fails to open).
//
// Plaintext (version 1); uvarint is encoding/binary's unsigned varint, always
// minimal; times are Unix seconds:
//
//	uvarint  expiry (> 0)
//	uvarint  verifiedAt (0 = never verified)
//	u8 + n   event name (1..255 bytes)
//	uvarint + n  callback URL (1..2048 bytes)
//	u8 + n   Standard Webhooks secret bytes (24..64)
//	u8 + n   previous secret bytes (0, or 24..64)
//	uvarint  previous secret valid until (present only when the previous secret is)
//	uvarint  number of arguments (0..64), then per argument, names strictly ascending:
//	         u8 + n name (1..255 bytes), uvarint + n value (0..1024 bytes)
//
// The base64url text is split: authUsername takes as much as its budget
// allows (leaving at least one character), authPassword the rest. Appwrite
// only sends HTTP Basic auth when both fields are non-empty.
//
// Budget: Appwrite stores authUsername as given in a 255-character column.
// authPassword is stored through the `encrypt` filter as the JSON document
//
//	{"data":"<base64 of n bytes>","method":"aes-128-gcm","iv":"<24 hex>","tag":"<32 hex>","version":"1"}
//
// written by PHP's json_encode, which escapes '/' as '\/'. For an n-character
// password that is 121 + 4*ceil(n/3) characters plus one per '/' in the
// base64 data, and it must stay <= 255. With n = 90: 121 + 120 = 241, leaving
// 14 characters for escaped slashes. Each of the 120 data characters is '/'
// with probability 1/64 (the data is ciphertext), so more than 14 slashes
// happens with probability about 8e-10 per write; n = 96 would leave 6 and
// fail about 0.4% of writes. Hence DefaultPasswordBudget = 90 and
// DefaultUsernameBudget = 255: 345 characters in all, 258 bytes of envelope,
// 258 - 32 = 226 bytes of plaintext with a two-character key id.
//
// Keys rotate: see ParseKeyring. Envelopes are sealed with the primary key
// and name their key; any listed key opens the envelopes that name it.
// Random 96-bit nonces are safe for well over 2^30 envelopes per key; rotate
// keys long before that.
package seal

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Version is the envelope version this package writes.
const Version = 1

// Budget defaults and hard limits, in characters of base64url text.
const (
	// DefaultUsernameBudget is what Appwrite's 255-character httpUser column
	// holds (the API accepts 256, the column 255).
	DefaultUsernameBudget = 255
	// DefaultPasswordBudget keeps Appwrite's encrypted httpPass document
	// within its 255-character column: 121 + 4*ceil(90/3) = 241, plus up to
	// 14 escaped slashes (see the package documentation).
	DefaultPasswordBudget = 90
	// MaxSealedLength bounds the text Open accepts (both fields together).
	MaxSealedLength = 4096
)

// Field limits of the plaintext layout.
const (
	MinSecretBytes   = 24   // smallest Standard Webhooks secret
	MaxSecretBytes   = 64   // largest Standard Webhooks secret
	MaxURLBytes      = 2048 // longest callback URL the layout takes
	MaxEventBytes    = 255  // longest event name
	MaxArgs          = 64   // most filter arguments
	MaxArgNameBytes  = 255  // longest argument name
	MaxArgValueBytes = 1024 // longest argument value
	MaxIDBytes       = 255  // longest webhook or project id
)

const (
	nonceSize = 12
	tagSize   = 16
	adLabel   = "appwrite-agent/seal/v1\x00"
)

// Errors. Every failure of Open wraps ErrOpen; the more specific ones below
// are for logs and tests, never for callers to branch on security decisions
// (all of them mean: do not deliver).
var (
	ErrOpen           = errors.New("seal: cannot open envelope")         // any Open failure
	ErrMalformed      = fmt.Errorf("%w: malformed", ErrOpen)             // bad encoding, truncation, non-canonical plaintext
	ErrUnknownVersion = fmt.Errorf("%w: unknown version", ErrOpen)       // version byte is not Version
	ErrUnknownKey     = fmt.Errorf("%w: unknown key id", ErrOpen)        // key id not in the Keyring
	ErrAuth           = fmt.Errorf("%w: authentication failed", ErrOpen) // tampered, or another webhook/project/key
	ErrInvalid        = errors.New("seal: invalid subscription")         // wrapped by *FieldError
)

// Subscription is everything a delivery needs, sealed in the webhook.
// Times are stored with one-second precision (Seal truncates) and come back
// from Open in UTC.
type Subscription struct {
	// CallbackURL is where events are delivered (validated by the caller).
	CallbackURL string
	// Secret is the raw Standard Webhooks secret (the bytes after "whsec_").
	Secret []byte
	// PrevSecret is the secret being rotated out, if any; deliveries are
	// signed with both until PrevSecretUntil.
	PrevSecret []byte
	// PrevSecretUntil ends the rotation grace window; required with
	// PrevSecret and zero without it.
	PrevSecretUntil time.Time
	// Event is the MCP event name, e.g. "row.created".
	Event string
	// Args are the filter arguments (canonical string values) other than the
	// project id.
	Args map[string]string
	// ProjectID is the Appwrite project. It is bound as associated data, not
	// stored: Open returns the project id it was given when the envelope
	// opens.
	ProjectID string
	// Expiry is when the subscription ends; required.
	Expiry time.Time
	// VerifiedAt is when the callback URL passed the challenge handshake;
	// zero if it has not.
	VerifiedAt time.Time
}

// Expired reports whether the subscription has expired at now.
func (s Subscription) Expired(now time.Time) bool { return !now.Before(s.Expiry) }

// SigningSecrets returns the secrets to sign a delivery with at now: the
// current secret, then the previous one while its grace window lasts.
func (s Subscription) SigningSecrets(now time.Time) [][]byte {
	out := [][]byte{s.Secret}
	if len(s.PrevSecret) > 0 && now.Before(s.PrevSecretUntil) {
		out = append(out, s.PrevSecret)
	}
	return out
}

// Budget is the number of base64url characters each webhook field may hold.
type Budget struct {
	// Username is the authUsername budget (DefaultUsernameBudget).
	Username int
	// Password is the authPassword budget (DefaultPasswordBudget).
	Password int
}

// DefaultBudget returns the budget that fits Appwrite (see the package
// documentation for the arithmetic).
func DefaultBudget() Budget {
	return Budget{Username: DefaultUsernameBudget, Password: DefaultPasswordBudget}
}

// TooLongError reports a subscription whose envelope does not fit the
// budget. Field is the webhook field that overflows ("authPassword": the
// username is filled first); Largest names the biggest part of the
// subscription, the one to shorten.
type TooLongError struct {
	Field        string // webhook field that overflows: "authPassword"
	Length       int    // characters that field would need
	Budget       int    // characters it may hold
	Largest      string // largest subscription part: "callbackUrl", "arguments", ...
	LargestBytes int    // size of that part in bytes
}

// Error formats e.g. "authPassword: sealed subscription is 131 characters,
// budget 90 (largest part: callbackUrl, 180 bytes)".
func (e *TooLongError) Error() string {
	return fmt.Sprintf("%s: sealed subscription is %d characters, budget %d (largest part: %s, %d bytes)",
		e.Field, e.Length, e.Budget, e.Largest, e.LargestBytes)
}

// FieldError reports a subscription field that is invalid on its own. It
// wraps ErrInvalid.
type FieldError struct {
	Field  string // e.g. "secret", "callbackUrl", "arguments.table_id"
	Reason string // what is wrong with it
}

// Error formats "field: reason".
func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap returns ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Sealer seals and opens subscriptions with a Keyring within a Budget. It is
// safe for concurrent use.
type Sealer struct {
	ring   *Keyring
	budget Budget
}

// NewSealer returns a Sealer. Both budget fields must be at least 1 (a zero
// Budget means DefaultBudget).
func NewSealer(ring *Keyring, budget Budget) (*Sealer, error) {
	if ring == nil || len(ring.ids) == 0 {
		return nil, ErrNoKeys
	}
	if budget == (Budget{}) {
		budget = DefaultBudget()
	}
	if budget.Username < 1 || budget.Password < 1 || budget.Username+budget.Password > MaxSealedLength {
		return nil, fmt.Errorf("seal: invalid budget %+v", budget)
	}
	return &Sealer{ring: ring, budget: budget}, nil
}

// Budget returns the sealer's budget.
func (s *Sealer) Budget() Budget { return s.budget }

// Seal encrypts sub for the webhook webhookID (bound as associated data
// together with sub.ProjectID) under the primary key and returns the two
// webhook fields. A subscription that does not fit the budget is refused with
// a *TooLongError; an invalid field with a *FieldError.
func (s *Sealer) Seal(webhookID string, sub Subscription) (authUsername, authPassword string, err error) {
	if webhookID == "" || len(webhookID) > MaxIDBytes {
		return "", "", &FieldError{"webhookId", fmt.Sprintf("must be 1 to %d bytes", MaxIDBytes)}
	}
	if sub.ProjectID == "" || len(sub.ProjectID) > MaxIDBytes {
		return "", "", &FieldError{"projectId", fmt.Sprintf("must be 1 to %d bytes", MaxIDBytes)}
	}
	pt, err := encodeSubscription(sub)
	if err != nil {
		return "", "", err
	}
	kid := s.ring.ids[0]
	envLen := 2 + len(kid) + nonceSize + len(pt) + tagSize
	total := base64.RawURLEncoding.EncodedLen(envLen)
	if total-s.budget.Username > s.budget.Password {
		name, size := largestPart(sub)
		return "", "", &TooLongError{
			Field: "authPassword", Length: total - s.budget.Username, Budget: s.budget.Password,
			Largest: name, LargestBytes: size,
		}
	}
	text, err := s.sealText(kid, webhookID, sub.ProjectID, pt)
	if err != nil {
		return "", "", err
	}
	cut := min(s.budget.Username, len(text)-1)
	return text[:cut], text[cut:], nil
}

// sealText encrypts pt under key kid and returns the base64url envelope.
func (s *Sealer) sealText(kid, webhookID, projectID string, pt []byte) (string, error) {
	env := make([]byte, 0, 2+len(kid)+nonceSize+len(pt)+tagSize)
	env = append(env, Version, byte(len(kid)))
	env = append(env, kid...)
	hdrLen := len(env)
	env = env[:hdrLen+nonceSize]
	if _, err := rand.Read(env[hdrLen:]); err != nil {
		return "", err
	}
	ad := associatedData(env[:hdrLen], webhookID, projectID)
	env = s.ring.aeads[kid].Seal(env, env[hdrLen:hdrLen+nonceSize], pt, ad)
	return base64.RawURLEncoding.EncodeToString(env), nil
}

// Open reverses Seal for the webhook webhookID in project projectID. Any
// failure (tampering, another webhook's or project's envelope, unknown key id
// or version, truncation, malformed plaintext) wraps ErrOpen. Open does not
// check expiry; see Subscription.Expired.
func (s *Sealer) Open(webhookID, projectID, authUsername, authPassword string) (Subscription, error) {
	if authUsername == "" || authPassword == "" || len(authUsername)+len(authPassword) > MaxSealedLength {
		return Subscription{}, ErrMalformed
	}
	if webhookID == "" || len(webhookID) > MaxIDBytes || projectID == "" || len(projectID) > MaxIDBytes {
		return Subscription{}, ErrMalformed
	}
	text := authUsername + authPassword
	if strings.ContainsAny(text, "\r\n") { // encoding/base64 skips CR and LF
		return Subscription{}, ErrMalformed
	}
	env, err := base64.RawURLEncoding.Strict().DecodeString(text)
	if err != nil {
		return Subscription{}, ErrMalformed
	}
	if len(env) < 2 {
		return Subscription{}, ErrMalformed
	}
	if env[0] != Version {
		return Subscription{}, ErrUnknownVersion
	}
	l := int(env[1])
	if l < 1 || l > MaxKeyIDLength || len(env) < 2+l+nonceSize+tagSize {
		return Subscription{}, ErrMalformed
	}
	aead, ok := s.ring.aeads[string(env[2:2+l])]
	if !ok {
		return Subscription{}, ErrUnknownKey
	}
	hdr := env[:2+l]
	nonce := env[2+l : 2+l+nonceSize]
	pt, err := aead.Open(nil, nonce, env[2+l+nonceSize:], associatedData(hdr, webhookID, projectID))
	if err != nil {
		return Subscription{}, ErrAuth
	}
	sub, err := decodeSubscription(pt)
	if err != nil {
		return Subscription{}, err
	}
	sub.ProjectID = projectID
	return sub, nil
}

func associatedData(hdr []byte, webhookID, projectID string) []byte {
	ad := make([]byte, 0, len(adLabel)+len(hdr)+2+len(webhookID)+len(projectID))
	ad = append(ad, adLabel...)
	ad = append(ad, hdr...)
	ad = append(ad, byte(len(webhookID)))
	ad = append(ad, webhookID...)
	ad = append(ad, byte(len(projectID)))
	ad = append(ad, projectID...)
	return ad
}

func largestPart(sub Subscription) (string, int) {
	args := 0
	for k, v := range sub.Args {
		args += 2 + len(k) + len(v)
	}
	parts := []struct {
		name string
		n    int
	}{
		{"callbackUrl", len(sub.CallbackURL)},
		{"arguments", args},
		{"secret", len(sub.Secret)},
		{"previousSecret", len(sub.PrevSecret)},
		{"event", len(sub.Event)},
	}
	best := parts[0]
	for _, p := range parts[1:] {
		if p.n > best.n {
			best = p
		}
	}
	return best.name, best.n
}

func unixSeconds(field string, t time.Time, required bool) (uint64, error) {
	if t.IsZero() {
		if required {
			return 0, &FieldError{field, "required"}
		}
		return 0, nil
	}
	sec := t.Unix()
	if sec <= 0 {
		return 0, &FieldError{field, "must be after 1970-01-01"}
	}
	return uint64(sec), nil
}

func encodeSubscription(sub Subscription) ([]byte, error) {
	exp, err := unixSeconds("expiry", sub.Expiry, true)
	if err != nil {
		return nil, err
	}
	ver, err := unixSeconds("verifiedAt", sub.VerifiedAt, false)
	if err != nil {
		return nil, err
	}
	if sub.Event == "" || len(sub.Event) > MaxEventBytes || !utf8.ValidString(sub.Event) {
		return nil, &FieldError{"event", fmt.Sprintf("must be 1 to %d bytes of UTF-8", MaxEventBytes)}
	}
	if sub.CallbackURL == "" || len(sub.CallbackURL) > MaxURLBytes {
		return nil, &FieldError{"callbackUrl", fmt.Sprintf("must be 1 to %d bytes", MaxURLBytes)}
	}
	if _, err := url.Parse(sub.CallbackURL); err != nil {
		return nil, &FieldError{"callbackUrl", "not a URL"}
	}
	if len(sub.Secret) < MinSecretBytes || len(sub.Secret) > MaxSecretBytes {
		return nil, &FieldError{"secret", fmt.Sprintf("%d bytes, want %d to %d", len(sub.Secret), MinSecretBytes, MaxSecretBytes)}
	}
	var prevUntil uint64
	if len(sub.PrevSecret) > 0 {
		if len(sub.PrevSecret) < MinSecretBytes || len(sub.PrevSecret) > MaxSecretBytes {
			return nil, &FieldError{"previousSecret", fmt.Sprintf("%d bytes, want %d to %d", len(sub.PrevSecret), MinSecretBytes, MaxSecretBytes)}
		}
		if prevUntil, err = unixSeconds("previousSecretUntil", sub.PrevSecretUntil, true); err != nil {
			return nil, err
		}
	} else if !sub.PrevSecretUntil.IsZero() {
		return nil, &FieldError{"previousSecretUntil", "set without previousSecret"}
	}
	if len(sub.Args) > MaxArgs {
		return nil, &FieldError{"arguments", fmt.Sprintf("more than %d", MaxArgs)}
	}
	names := make([]string, 0, len(sub.Args))
	for k, v := range sub.Args {
		if k == "" || len(k) > MaxArgNameBytes {
			return nil, &FieldError{"arguments", fmt.Sprintf("name must be 1 to %d bytes", MaxArgNameBytes)}
		}
		if len(v) > MaxArgValueBytes {
			return nil, &FieldError{"arguments." + k, fmt.Sprintf("longer than %d bytes", MaxArgValueBytes)}
		}
		names = append(names, k)
	}
	sort.Strings(names)

	b := make([]byte, 0, 64+len(sub.CallbackURL)+len(sub.Event))
	b = binary.AppendUvarint(b, exp)
	b = binary.AppendUvarint(b, ver)
	b = append(b, byte(len(sub.Event)))
	b = append(b, sub.Event...)
	b = binary.AppendUvarint(b, uint64(len(sub.CallbackURL)))
	b = append(b, sub.CallbackURL...)
	b = append(b, byte(len(sub.Secret)))
	b = append(b, sub.Secret...)
	b = append(b, byte(len(sub.PrevSecret)))
	if len(sub.PrevSecret) > 0 {
		b = append(b, sub.PrevSecret...)
		b = binary.AppendUvarint(b, prevUntil)
	}
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, k := range names {
		b = append(b, byte(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(sub.Args[k])))
		b = append(b, sub.Args[k]...)
	}
	return b, nil
}

// reader decodes the plaintext strictly: minimal varints, bounded lengths,
// no trailing bytes.
type reader struct {
	b   []byte
	err bool
}

func (r *reader) uvarint(max uint64) uint64 {
	if r.err {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n != len(binary.AppendUvarint(nil, v)) || v > max {
		r.err = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if r.err || n > uint64(len(r.b)) {
		r.err = true
		return nil
	}
	out := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return out
}

func (r *reader) u8() uint64 {
	if r.err || len(r.b) < 1 {
		r.err = true
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return uint64(v)
}

const maxUnix = 1<<63 - 1

func decodeSubscription(pt []byte) (Subscription, error) {
	r := &reader{b: pt}
	var sub Subscription
	exp := r.uvarint(maxUnix)
	ver := r.uvarint(maxUnix)
	sub.Event = string(r.bytes(r.u8()))
	sub.CallbackURL = string(r.bytes(r.uvarint(MaxURLBytes)))
	sub.Secret = r.bytes(r.u8())
	if n := r.u8(); n > 0 {
		sub.PrevSecret = r.bytes(n)
		until := r.uvarint(maxUnix)
		if until == 0 {
			r.err = true
		}
		sub.PrevSecretUntil = time.Unix(int64(until), 0).UTC()
	}
	nargs := r.uvarint(MaxArgs)
	prev := ""
	for i := uint64(0); i < nargs && !r.err; i++ {
		k := string(r.bytes(r.u8()))
		v := string(r.bytes(r.uvarint(MaxArgValueBytes)))
		if k == "" || (i > 0 && k <= prev) {
			r.err = true
			break
		}
		if sub.Args == nil {
			sub.Args = make(map[string]string, nargs)
		}
		sub.Args[k] = v
		prev = k
	}
	if r.err || len(r.b) != 0 || exp == 0 || sub.Event == "" || sub.CallbackURL == "" ||
		len(sub.Secret) < MinSecretBytes || len(sub.Secret) > MaxSecretBytes ||
		(len(sub.PrevSecret) > 0 && len(sub.PrevSecret) < MinSecretBytes) || len(sub.PrevSecret) > MaxSecretBytes {
		return Subscription{}, ErrMalformed
	}
	sub.Expiry = time.Unix(int64(exp), 0).UTC()
	if ver != 0 {
		sub.VerifiedAt = time.Unix(int64(ver), 0).UTC()
	}
	// Only the canonical encoding is accepted: re-encoding must reproduce
	// the input exactly (this also applies every validation Seal applies).
	if again, err := encodeSubscription(sub); err != nil || !bytes.Equal(again, pt) {
		return Subscription{}, ErrMalformed
	}
	return sub, nil
}
