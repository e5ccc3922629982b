// Package stdwebhooks signs and verifies webhook deliveries with the Standard
// Webhooks symmetric scheme (https://www.standardwebhooks.com): HMAC-SHA256
// over "webhook-id.webhook-timestamp.body", base64, prefixed "v1,".
//
// Secrets are written "whsec_" + standard base64 of 24 to 64 random bytes.
// During a secret rotation a sender signs with several secrets and sends the
// signatures space-separated in one webhook-signature header; a receiver
// accepts the message when any signature matches one of its secrets.
// All signature comparisons are constant time.
package stdwebhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of a Standard Webhooks delivery (lower case, as the
// specification writes them; http.Header canonicalizes them on use).
const (
	HeaderID        = "webhook-id"        // message id, stable across retries
	HeaderTimestamp = "webhook-timestamp" // Unix seconds of the attempt
	HeaderSignature = "webhook-signature" // space-separated "v1,<base64>" list
)

// Secret format and limits.
const (
	// SecretPrefix starts every serialized symmetric secret.
	SecretPrefix = "whsec_"
	// MinSecretBytes is the smallest accepted secret, in bytes after decoding.
	MinSecretBytes = 24
	// MaxSecretBytes is the largest accepted secret, in bytes after decoding.
	MaxSecretBytes = 64
	// DefaultTolerance is how far a webhook-timestamp may lie in the past or
	// future of the receiver's clock (the reference library uses 5 minutes).
	DefaultTolerance = 5 * time.Minute
	// MaxIDLength bounds webhook-id values this package signs or verifies.
	MaxIDLength = 256
	// MaxSignatureHeaderLength bounds the webhook-signature header a verifier
	// will parse.
	MaxSignatureHeaderLength = 4096
)

// Errors returned by this package. Verification failures wrap exactly one of
// ErrMissingHeaders, ErrInvalidHeaders, ErrTooOld, ErrTooNew or
// ErrNoMatchingSignature.
var (
	ErrInvalidSecret       = errors.New("stdwebhooks: invalid secret")            // not whsec_ + base64 of 24-64 bytes
	ErrInvalidID           = errors.New("stdwebhooks: invalid webhook-id")        // empty, too long, or with . space control non-ASCII
	ErrMissingHeaders      = errors.New("stdwebhooks: missing required headers")  // a webhook-* header is absent
	ErrInvalidHeaders      = errors.New("stdwebhooks: invalid signature headers") // unparsable id, timestamp or v1 signature
	ErrTooOld              = errors.New("stdwebhooks: message timestamp too old") // beyond tolerance in the past
	ErrTooNew              = errors.New("stdwebhooks: message timestamp too new") // beyond tolerance in the future
	ErrNoMatchingSignature = errors.New("stdwebhooks: no matching signature")     // no v1 signature matches any secret
)

// Secret is the raw key of a symmetric Standard Webhooks secret (24 to 64
// bytes). Its String method gives the "whsec_" form.
type Secret []byte

// ParseSecret parses "whsec_" followed by standard base64, padded, of 24 to 64
// bytes: what the official Standard Webhooks libraries decode (libraries/go
// webhook.go decodes with base64.StdEncoding), so that the subscriber can verify
// with the secret it sent. Anything else is refused with an error wrapping
// ErrInvalidSecret; the error never contains the secret.
func ParseSecret(s string) (Secret, error) {
	rest, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: must start with %q", ErrInvalidSecret, SecretPrefix)
	}
	if len(rest) > base64.StdEncoding.EncodedLen(MaxSecretBytes) {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrInvalidSecret, MaxSecretBytes)
	}
	if strings.ContainsAny(rest, "\r\n") {
		// encoding/base64 skips CR and LF even in strict mode.
		return nil, fmt.Errorf("%w: not standard base64", ErrInvalidSecret)
	}
	key, err := base64.StdEncoding.Strict().DecodeString(rest)
	if err != nil {
		return nil, fmt.Errorf("%w: not standard base64", ErrInvalidSecret)
	}
	if err := checkSecretLen(len(key)); err != nil {
		return nil, err
	}
	return Secret(key), nil
}

func checkSecretLen(n int) error {
	if n < MinSecretBytes || n > MaxSecretBytes {
		return fmt.Errorf("%w: %d bytes, want %d to %d", ErrInvalidSecret, n, MinSecretBytes, MaxSecretBytes)
	}
	return nil
}

// Valid reports whether the secret has an acceptable length.
func (s Secret) Valid() bool { return checkSecretLen(len(s)) == nil }

// String returns the "whsec_" form (padded standard base64).
func (s Secret) String() string {
	return SecretPrefix + base64.StdEncoding.EncodeToString(s)
}

// checkID refuses ids a receiver could misread: empty, too long, containing
// '.', whitespace, control or non-ASCII characters.
func checkID(id string) error {
	if id == "" || len(id) > MaxIDLength {
		return ErrInvalidID
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c <= ' ' || c >= 0x7f || c == '.' {
			return ErrInvalidID
		}
	}
	return nil
}

// mac computes HMAC-SHA256(secret, id + "." + ts + "." + body) with a fresh crypto/hmac HMAC.
func mac(secret Secret, id string, ts int64, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "."))
	m.Write(body)
	return m.Sum(nil)
}

// Sign returns the webhook-signature header value for one message: one
// "v1,<base64>" entry per secret, space separated, in the order given (put the
// current secret first, then the one being rotated out).
func Sign(id string, ts time.Time, body []byte, secrets ...Secret) (string, error) {
	if err := checkID(id); err != nil {
		return "", err
	}
	if len(secrets) == 0 {
		return "", fmt.Errorf("%w: no secret", ErrInvalidSecret)
	}
	sigs := make([]string, len(secrets))
	for i, s := range secrets {
		if !s.Valid() {
			return "", checkSecretLen(len(s))
		}
		sigs[i] = "v1," + base64.StdEncoding.EncodeToString(mac(s, id, ts.Unix(), body))
	}
	return strings.Join(sigs, " "), nil
}

// SetHeaders signs body and sets webhook-id, webhook-timestamp and
// webhook-signature on h. Call it again for every delivery attempt: the
// timestamp is the attempt's.
func SetHeaders(h http.Header, id string, ts time.Time, body []byte, secrets ...Secret) error {
	sig, err := Sign(id, ts, body, secrets...)
	if err != nil {
		return err
	}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return nil
}

// ParseSignatures splits a webhook-signature header value into its "v1"
// signatures (decoded). Entries of other versions (such as "v1a") are
// skipped; a malformed "v1" entry or an oversized header is an error wrapping
// ErrInvalidHeaders.
func ParseSignatures(header string) ([][]byte, error) {
	if len(header) > MaxSignatureHeaderLength {
		return nil, fmt.Errorf("%w: signature header too long", ErrInvalidHeaders)
	}
	var out [][]byte
	for _, entry := range strings.Split(header, " ") {
		if entry == "" {
			continue
		}
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(sig)
		if err != nil || strings.ContainsAny(sig, "\r\n") || len(raw) != sha256.Size {
			return nil, fmt.Errorf("%w: malformed v1 signature", ErrInvalidHeaders)
		}
		out = append(out, raw)
	}
	return out, nil
}

// Verify checks a received message: the three headers are present, the
// timestamp is within tolerance of now (tolerance <= 0 means
// DefaultTolerance), and some v1 signature matches some secret. Every
// (signature, secret) pair is compared, in constant time.
func Verify(h http.Header, body []byte, now time.Time, tolerance time.Duration, secrets ...Secret) error {
	id, tsRaw, sigRaw := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || tsRaw == "" || sigRaw == "" {
		return ErrMissingHeaders
	}
	if checkID(id) != nil {
		return fmt.Errorf("%w: webhook-id", ErrInvalidHeaders)
	}
	if len(tsRaw) > 19 || tsRaw[0] == '+' || tsRaw[0] == '-' {
		return fmt.Errorf("%w: webhook-timestamp", ErrInvalidHeaders)
	}
	ts, err := strconv.ParseInt(tsRaw, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: webhook-timestamp", ErrInvalidHeaders)
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	sent := time.Unix(ts, 0)
	if now.Sub(sent) > tolerance {
		return ErrTooOld
	}
	if sent.Sub(now) > tolerance {
		return ErrTooNew
	}
	sigs, err := ParseSignatures(sigRaw)
	if err != nil {
		return err
	}
	match := 0
	for _, s := range secrets {
		if !s.Valid() {
			continue
		}
		want := mac(s, id, ts, body)
		for _, got := range sigs {
			match |= subtleEq(want, got)
		}
	}
	if match == 1 {
		return nil
	}
	return ErrNoMatchingSignature
}

func subtleEq(a, b []byte) int {
	if hmac.Equal(a, b) {
		return 1
	}
	return 0
}
