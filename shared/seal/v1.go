package seal

// Version 1 of the envelope, the first release's: written by SealVersion1 (for compatibility tests and
// rollbacks), read by Open until every such subscription has been refreshed or has expired.
//
//	offset  size  field
//	0       1     version = 0x01
//	1       1     L = length of the key id (1..16)
//	2       L     key id
//	2+L     12    GCM nonce (random)
//	14+L    n+16  AES-256-GCM ciphertext of the plaintext below, then the tag
//
// Associated data: "appwrite-agent/seal/v1" 0x00 || envelope[0:2+L] || u8 len(webhookID) || webhookID ||
// u8 len(projectID) || projectID.
//
// Plaintext (uvarint = encoding/binary's unsigned varint, always minimal; times are Unix seconds):
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
// The base64url text is split: authUsername takes as much as its budget allows (leaving at least one
// character), authPassword the rest.

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/url"
	"time"
	"unicode/utf8"
)

const adLabel = "appwrite-agent/seal/v1\x00"

// SealVersion1 seals sub in the version 1 format (everything stored, username and password only) under
// the primary key. Production code seals with Seal; this exists so that compatibility with subscriptions
// sealed by the first release can be tested and so that a rollback can still be prepared.
func (s *Sealer) SealVersion1(webhookID string, sub Subscription) (Fields, error) {
	if webhookID == "" || len(webhookID) > MaxIDBytes {
		return Fields{}, &FieldError{"webhookId", fmt.Sprintf("must be 1 to %d bytes", MaxIDBytes)}
	}
	if sub.ProjectID == "" || len(sub.ProjectID) > MaxIDBytes {
		return Fields{}, &FieldError{"projectId", fmt.Sprintf("must be 1 to %d bytes", MaxIDBytes)}
	}
	pt, err := encodeSubscription(sub)
	if err != nil {
		return Fields{}, err
	}
	kid := s.ring.ids[0]
	envLen := 2 + len(kid) + nonceSize + len(pt) + tagSize
	budget := s.budget.Username + s.budget.Password
	if total := base64.RawURLEncoding.EncodedLen(envLen); total > budget {
		return Fields{}, &TooLongError{Length: total, Budget: budget, CallbackURL: len(sub.CallbackURL),
			MaxCallbackURL: len(sub.CallbackURL) - (envLen - budget*6/8), SecretBytes: len(sub.Secret), PrevSecretBytes: len(sub.PrevSecret)}
	}
	text, err := s.sealText(kid, webhookID, sub.ProjectID, pt)
	if err != nil {
		return Fields{}, err
	}
	cut := min(s.budget.Username, len(text)-1)
	return Fields{Username: text[:cut], Password: text[cut:]}, nil
}

// sealText encrypts pt under key kid and returns the base64url version 1 envelope.
func (s *Sealer) sealText(kid, webhookID, projectID string, pt []byte) (string, error) {
	env := make([]byte, 0, 2+len(kid)+nonceSize+len(pt)+tagSize)
	env = append(env, Version1, byte(len(kid)))
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

// openV1 opens a decoded version 1 envelope.
func (s *Sealer) openV1(webhookID, projectID string, env []byte) (Subscription, error) {
	if len(env) < 2 {
		return Subscription{}, ErrMalformed
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
	for _, a := range sub.Args {
		if a.Name == "" || len(a.Name) > MaxArgNameBytes {
			return nil, &FieldError{"arguments", fmt.Sprintf("name must be 1 to %d bytes", MaxArgNameBytes)}
		}
		if len(a.Value) > MaxArgValueBytes {
			return nil, &FieldError{"arguments." + a.Name, fmt.Sprintf("longer than %d bytes", MaxArgValueBytes)}
		}
	}
	if !sub.Args.canonical() {
		return nil, &FieldError{"arguments", "not in canonical order (sorted by name, each name once: see ArgsOf)"}
	}

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
	b = binary.AppendUvarint(b, uint64(len(sub.Args)))
	for _, a := range sub.Args {
		b = append(b, byte(len(a.Name)))
		b = append(b, a.Name...)
		b = binary.AppendUvarint(b, uint64(len(a.Value)))
		b = append(b, a.Value...)
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
			sub.Args = make(Args, 0, nargs)
		}
		sub.Args = append(sub.Args, Arg{k, v})
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
