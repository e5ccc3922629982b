// Package seal keeps an MCP events subscription inside the Appwrite webhook that carries it: the
// subscription is encoded in a compact binary layout, encrypted and authenticated with AES-256-GCM, encoded
// base64url (no padding) and spread over three webhook fields that Appwrite stores and sends back with
// every delivery: authUsername, authPassword and the end of the webhook URL.
//
// # What is stored and what is bound
//
// An envelope stores only what Appwrite does not send with each delivery: the callback URL, the Standard
// Webhooks secret (and the previous one during a rotation grace window), the expiry and when the callback
// was verified. Everything Appwrite does send is bound as AES-GCM associated data instead of being stored,
// so it costs no space and keeps its protection: the webhook id (request path and X-Appwrite-Webhook-Id),
// the project id (X-Appwrite-Webhook-Project-Id), the MCP event name and the filter arguments (the
// database, table, bucket or function ids, which Appwrite names in X-Appwrite-Webhook-Events). Open takes
// them from the caller as Targets and only opens when they are exactly the ones the envelope was sealed for.
//
// # Envelope, version 2 (written by Seal)
//
//	offset  size  field
//	0       1     0x20 | (L-1): version 2 in the high nibble, key id length L (1..16) in the low one
//	1       L     key id (ASCII [A-Za-z0-9._-])
//	1+L     12    GCM nonce (random)
//	13+L    n+16  AES-256-GCM ciphertext of the plaintext below, then the tag
//
// Associated data (authenticated, never stored); uv = encoding/binary unsigned varint:
//
//	"appwrite-agent/seal/v2" 0x00 || envelope[0:1+L] || uv len || webhookID || uv len || projectID ||
//	uv len || event || uv count || per argument, names ascending: uv len || name || uv len || value
//
// Plaintext, version 2; times are big-endian uint32 seconds since 2026-01-01T00:00:00Z (Epoch), which
// reaches 2162:
//
//	u8        flags: 0x01 the callback URL starts with "https://" (not stored), 0x02 verified,
//	          0x04 previous secret present; other bits zero
//	u32       expiry (> 0)
//	[u32]     verifiedAt (> 0), when flag 0x02
//	u8 + n    Standard Webhooks secret bytes (24..64)
//	[u8 + n]  previous secret bytes (24..64), when flag 0x04
//	[u32]     previous secret valid until (> 0), when flag 0x04
//	rest      callback URL, without "https://" under flag 0x01 (1..2048 bytes in all)
//
// Only the canonical encoding opens (no unknown flag, no zero time, no stored "https://" prefix without
// its flag, every length in range), so each subscription has exactly one plaintext.
//
// # Where the text goes
//
// The base64url text is cut in order: authUsername takes up to Budget.Username characters (always leaving
// at least one), authPassword up to Budget.Password (never empty: Appwrite sends Basic auth only when both
// are set), and the rest, up to Budget.URL, goes after the webhook's ingress path as one more path segment
// (…/appwrite/webhooks/{id}/{rest}). Open concatenates the three in the same order. base64url has only
// unreserved URL characters, so the URL never holds a '%' (Appwrite 1.9.6 and earlier sign the URL
// percent-decoded, later versions as stored).
//
// # Budget arithmetic
//
// Appwrite stores the webhook url and authUsername as given in 255-character columns. authPassword is
// stored through the `encrypt` filter as the JSON document
//
//	{"data":"<base64 of n bytes>","method":"aes-128-gcm","iv":"<24 hex>","tag":"<32 hex>","version":"1"}
//
// written by PHP's json_encode, which escapes '/' as '\/': 121 + 4*ceil(n/3) characters plus one per '/'
// in the base64 data (StoredPasswordLength), and it must stay <= 255. The data is ciphertext, so each of
// its characters is '/' with probability 1/64; DefaultPasswordBudget is the longest password for which
// the chance that one write overflows is below 1e-9 (PasswordOverflowProbability): 90 characters, 241 of
// 255 before slashes, 14 slashes to spare. The URL budget is what the ingress URL leaves of the url column
// (URLBudget). With a Cloud function domain (45 characters) the URL carries 154 characters: 499 in all,
// 374 bytes of envelope.
//
// Keys rotate: see ParseKeyring. Envelopes are sealed with the primary key and name their key; any listed
// key opens the envelopes that name it. Random 96-bit nonces are safe for well over 2^30 envelopes per key;
// rotate keys long before that.
package seal

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Version is the envelope version Seal writes.
const Version = 2

// Epoch is the zero of version 2 times.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Appwrite column sizes and budget defaults, in characters.
const (
	// AppwriteColumn is the size of Appwrite's webhook url, httpUser and (encrypted) httpPass columns.
	AppwriteColumn = 255
	// DefaultUsernameBudget is what the httpUser column holds (the API accepts 256, the column 255).
	DefaultUsernameBudget = AppwriteColumn
	// DefaultPasswordBudget keeps Appwrite's encrypted httpPass document within its column with
	// overwhelming probability: 121 + 4*ceil(90/3) = 241, plus up to 14 escaped slashes.
	DefaultPasswordBudget = 90
	// MaxPasswordOverflow is the largest accepted chance that one write of an authPassword of the default
	// budget overflows Appwrite's column (see PasswordOverflowProbability).
	MaxPasswordOverflow = 1e-9
	// MaxSealedLength bounds the text Open accepts (all fields together).
	MaxSealedLength = 4096
)

// Field limits of the plaintext layouts.
const (
	MinSecretBytes   = 24   // smallest Standard Webhooks secret
	MaxSecretBytes   = 64   // largest Standard Webhooks secret
	MaxURLBytes      = 2048 // longest callback URL the layout takes
	MaxEventBytes    = 255  // longest event name
	MaxArgs          = 64   // most filter arguments
	MaxArgNameBytes  = 255  // longest argument name
	MaxArgValueBytes = 1024 // longest argument value
	MaxIDBytes       = 255  // longest webhook or project id
	MaxTargets       = 8    // most Targets one Open tries
)

const (
	nonceSize = 12
	tagSize   = 16
	adLabelV2 = "appwrite-agent/seal/v2\x00"
	httpsPfx  = "https://"

	flagHTTPS    = 0x01
	flagVerified = 0x02
	flagPrev     = 0x04
	flagsKnown   = flagHTTPS | flagVerified | flagPrev
)

// Errors. Every failure of Open wraps ErrOpen; the more specific ones below are for logs and tests, never
// for callers to branch on security decisions (all of them mean: do not deliver).
var (
	ErrOpen           = errors.New("seal: cannot open envelope")         // any Open failure
	ErrMalformed      = fmt.Errorf("%w: malformed", ErrOpen)             // bad encoding, truncation, non-canonical plaintext
	ErrUnknownVersion = fmt.Errorf("%w: unknown version", ErrOpen)       // version is not Version
	ErrUnknownKey     = fmt.Errorf("%w: unknown key id", ErrOpen)        // key id not in the Keyring
	ErrAuth           = fmt.Errorf("%w: authentication failed", ErrOpen) // tampered, or another webhook/project/target/key
	ErrInvalid        = errors.New("seal: invalid subscription")         // wrapped by *FieldError
)

// Subscription is everything a delivery needs. Times are stored with one-second precision (Seal
// truncates) and come back from Open in UTC.
type Subscription struct {
	// CallbackURL is where events are delivered (validated by the caller). Stored.
	CallbackURL string
	// Secret is the raw Standard Webhooks secret (the bytes after "whsec_"). Stored.
	Secret []byte
	// PrevSecret is the secret being rotated out, if any; deliveries are signed with both until
	// PrevSecretUntil. Stored.
	PrevSecret []byte
	// PrevSecretUntil ends the rotation grace window; required with PrevSecret and zero without it.
	PrevSecretUntil time.Time
	// Event is the MCP event name, e.g. "row.created". Bound, not stored.
	Event string
	// Args are the filter arguments other than the project id, in canonical order. Bound, not stored.
	// After Open they are those of the Target that opened the envelope.
	Args Args
	// ProjectID is the Appwrite project. Bound, not stored: Open returns the project id it was given.
	ProjectID string
	// Expiry is when the subscription ends; required. Stored.
	Expiry time.Time
	// VerifiedAt is when the callback URL passed the challenge handshake; zero if it has not. Stored.
	VerifiedAt time.Time
}

// Expired reports whether the subscription has expired at now.
func (s Subscription) Expired(now time.Time) bool { return !now.Before(s.Expiry) }

// SigningSecrets returns the secrets to sign a delivery with at now: the current secret, then the previous
// one while its grace window lasts.
func (s Subscription) SigningSecrets(now time.Time) [][]byte {
	out := [][]byte{s.Secret}
	if len(s.PrevSecret) > 0 && now.Before(s.PrevSecretUntil) {
		out = append(out, s.PrevSecret)
	}
	return out
}

// Target is what an envelope is bound to without storing it, besides the webhook and project
// ids: the MCP event and its filter arguments. The ingress reads the candidates from the Appwrite events
// of a delivery, mcp-events from the subscription it acts on.
type Target struct {
	Event string
	Args  Args
}

// Fields are the three webhook fields that carry a sealed subscription.
type Fields struct {
	// Username is the webhook's authUsername.
	Username string
	// Password is the webhook's authPassword.
	Password string
	// URLTail is the sealed text in the webhook URL, the path segment after WebhookPath + id + "/"; empty
	// when the envelope fits in the other two fields.
	URLTail string
}

// Budget is the number of base64url characters each webhook field may hold.
type Budget struct {
	// Username is the authUsername budget (DefaultUsernameBudget).
	Username int
	// Password is the authPassword budget (DefaultPasswordBudget).
	Password int
	// URL is how many characters the webhook URL may carry after its path and a '/' (URLBudget); 0 keeps
	// the URL free of sealed data.
	URL int
}

// DefaultBudget returns the authUsername and authPassword budgets that fit Appwrite, and no URL budget
// (that depends on the ingress URL: see URLBudget).
func DefaultBudget() Budget {
	return Budget{Username: DefaultUsernameBudget, Password: DefaultPasswordBudget}
}

func (b Budget) total() int { return b.Username + b.Password + b.URL }

// URLBudget returns how many sealed characters fit after webhookURL (the ingress URL, WebhookPath and the
// id) and a '/' in Appwrite's 255-character url column; 0 when none do.
func URLBudget(webhookURL string) int { return max(0, AppwriteColumn-len(webhookURL)-1) }

// StoredPasswordLength is the length of the document Appwrite stores for an authPassword of n bytes
// whose encrypted base64 data holds slashes '/' characters (each written "\/" by json_encode).
func StoredPasswordLength(n, slashes int) int { return 121 + 4*((n+2)/3) + slashes }

// PasswordOverflowProbability is the chance that Appwrite's stored document for an authPassword of n
// bytes exceeds its 255-character column: that more of the 4*ceil(n/3) base64 characters of the
// ciphertext are '/' (probability 1/64 each, independently) than the column leaves room for.
func PasswordOverflowProbability(n int) float64 {
	chars := 4 * ((n + 2) / 3)
	room := AppwriteColumn - StoredPasswordLength(n, 0)
	if room < 0 {
		return 1
	}
	// P(X > room) for X ~ Binomial(chars, 1/64), summed in logs.
	p := 0.0
	for k := room + 1; k <= chars; k++ {
		lg := lchoose(chars, k) + float64(k)*math.Log(1.0/64) + float64(chars-k)*math.Log(63.0/64)
		p += math.Exp(lg)
	}
	return p
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// TooLongError reports a subscription whose envelope does not fit the budget. CallbackURL and
// MaxCallbackURL say what the client can shorten: the callback URL is the only part whose length is free
// (the ids are the user's resources, the secret is 24 to 64 bytes).
type TooLongError struct {
	// Length is the number of characters the envelope needs; Budget the number the fields hold.
	Length, Budget int
	// CallbackURL is the callback URL's length in bytes; MaxCallbackURL the longest that fits with this
	// subscription's other parts (negative when none does).
	CallbackURL, MaxCallbackURL int
	// SecretBytes and PrevSecretBytes are the sizes of the secrets sealed (PrevSecretBytes 0 without one).
	SecretBytes, PrevSecretBytes int
}

// Error formats e.g. "callback URL is 301 bytes; at most 280 fit with a 32-byte secret".
func (e *TooLongError) Error() string {
	with := fmt.Sprintf("a %d-byte secret", e.SecretBytes)
	if e.PrevSecretBytes > 0 {
		with = fmt.Sprintf("a %d-byte secret and the %d-byte previous secret", e.SecretBytes, e.PrevSecretBytes)
	}
	if e.MaxCallbackURL < 1 {
		return fmt.Sprintf("callback URL is %d bytes; no callback URL fits with %s (the envelope needs %d characters, the webhook holds %d)",
			e.CallbackURL, with, e.Length, e.Budget)
	}
	return fmt.Sprintf("callback URL is %d bytes; at most %d fit with %s", e.CallbackURL, e.MaxCallbackURL, with)
}

// FieldError reports a subscription field that is invalid on its own. It wraps ErrInvalid.
type FieldError struct {
	Field  string // e.g. "secret", "callbackUrl", "arguments.table_id"
	Reason string // what is wrong with it
}

// Error formats "field: reason".
func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap returns ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Sealer seals and opens subscriptions with a Keyring within a Budget. It is safe for concurrent use.
type Sealer struct {
	ring   *Keyring
	budget Budget
}

// Keyring is the keyring s seals with (its label MACs authenticate what is written beside an envelope).
func (s *Sealer) Keyring() *Keyring { return s.ring }

// NewSealer returns a Sealer. Username and Password must be at least 1 and URL at least 0 (a zero Budget
// means DefaultBudget).
func NewSealer(ring *Keyring, budget Budget) (*Sealer, error) {
	if ring == nil || len(ring.ids) == 0 {
		return nil, ErrNoKeys
	}
	if budget == (Budget{}) {
		budget = DefaultBudget()
	}
	if budget.Username < 1 || budget.Password < 1 || budget.URL < 0 || budget.total() > MaxSealedLength {
		return nil, fmt.Errorf("seal: invalid budget %+v (username and password at least 1, URL at least 0, %d in all at most)", budget, MaxSealedLength)
	}
	return &Sealer{ring: ring, budget: budget}, nil
}

// Budget returns the sealer's budget.
func (s *Sealer) Budget() Budget { return s.budget }

// MaxCallbackURL returns the longest callback URL (in bytes) that fits beside the rest of sub under the
// primary key; negative when even an empty one does not. The scheme counts: "https://" is not stored.
func (s *Sealer) MaxCallbackURL(sub Subscription) int {
	maxEnv := s.budget.total() * 6 / 8
	n := maxEnv - envOverhead(len(s.ring.ids[0])) - fixedPlaintext(&sub)
	if strings.HasPrefix(sub.CallbackURL, httpsPfx) || sub.CallbackURL == "" {
		n += len(httpsPfx)
	}
	return n
}

func envOverhead(kidLen int) int { return 1 + kidLen + nonceSize + tagSize }

func fixedPlaintext(sub *Subscription) int {
	n := 1 + 4 + 1 + len(sub.Secret)
	if !sub.VerifiedAt.IsZero() {
		n += 4
	}
	if len(sub.PrevSecret) > 0 {
		n += 1 + len(sub.PrevSecret) + 4
	}
	return n
}

// Seal encrypts sub for the webhook webhookID under the primary key, bound to webhookID, sub.ProjectID,
// sub.Event and sub.Args, and returns the webhook fields. A subscription that does not fit the budget is
// refused with a *TooLongError; an invalid field with a *FieldError.
func (s *Sealer) Seal(webhookID string, sub Subscription) (Fields, error) {
	if err := checkBinding(webhookID, sub.ProjectID, sub.Event, sub.Args); err != nil {
		return Fields{}, err
	}
	kid := s.ring.ids[0]
	hdr := append([]byte{byte(Version<<4 | (len(kid) - 1))}, kid...)
	pt, err := appendPlaintextV2(nil, &sub)
	if err != nil {
		return Fields{}, err
	}
	envLen := len(hdr) + nonceSize + len(pt) + tagSize
	if total := base64.RawURLEncoding.EncodedLen(envLen); total > s.budget.total() {
		return Fields{}, &TooLongError{
			Length: total, Budget: s.budget.total(), CallbackURL: len(sub.CallbackURL), MaxCallbackURL: s.MaxCallbackURL(sub),
			SecretBytes: len(sub.Secret), PrevSecretBytes: len(sub.PrevSecret),
		}
	}
	nonce := make([]byte, nonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return Fields{}, err
	}
	ad := appendADV2(nil, hdr, webhookID, sub.ProjectID, sub.Event, sub.Args)
	env := s.ring.aeads[s.ring.ids[0]].Seal(append(hdr, nonce...), nonce, pt, ad)
	return s.split(base64.RawURLEncoding.EncodeToString(env)), nil
}

// split cuts text into the fields: username first, then password, then the URL.
func (s *Sealer) split(text string) Fields {
	u := min(s.budget.Username, len(text)-1)
	p := min(s.budget.Password, len(text)-u)
	return Fields{Username: text[:u], Password: text[u : u+p], URLTail: text[u+p:]}
}

func checkBinding(webhookID, projectID, event string, args Args) error {
	if webhookID == "" || len(webhookID) > MaxIDBytes {
		return &FieldError{"webhookId", fmt.Sprintf("must be 1 to %d bytes", MaxIDBytes)}
	}
	if projectID == "" || len(projectID) > MaxIDBytes {
		return &FieldError{"projectId", fmt.Sprintf("must be 1 to %d bytes", MaxIDBytes)}
	}
	if event == "" || len(event) > MaxEventBytes || !utf8.ValidString(event) {
		return &FieldError{"event", fmt.Sprintf("must be 1 to %d bytes of UTF-8", MaxEventBytes)}
	}
	if len(args) > MaxArgs {
		return &FieldError{"arguments", fmt.Sprintf("more than %d", MaxArgs)}
	}
	for _, a := range args {
		if a.Name == "" || len(a.Name) > MaxArgNameBytes {
			return &FieldError{"arguments", fmt.Sprintf("name must be 1 to %d bytes", MaxArgNameBytes)}
		}
		if len(a.Value) > MaxArgValueBytes {
			return &FieldError{"arguments." + a.Name, fmt.Sprintf("longer than %d bytes", MaxArgValueBytes)}
		}
	}
	if !args.canonical() {
		return &FieldError{"arguments", "not in canonical order (sorted by name, each name once: see ArgsOf)"}
	}
	return nil
}

// epochSeconds converts t for the version 2 layout.
func epochSeconds(field string, t time.Time) (uint32, error) {
	sec := t.Unix() - epochUnix
	if t.IsZero() || sec <= 0 || sec > math.MaxUint32 {
		return 0, &FieldError{field, fmt.Sprintf("must be after %s and before %s", Epoch.Format(time.DateOnly),
			Epoch.Add(math.MaxUint32*time.Second).Format(time.DateOnly))}
	}
	return uint32(sec), nil
}

func fromEpoch(sec uint32) time.Time { return time.Unix(epochUnix+int64(sec), 0).UTC() }

// epochUnix is Epoch in Unix seconds (TestEpochUnix checks).
const epochUnix = 1767225600

func checkSecret(field string, b []byte) error {
	if len(b) < MinSecretBytes || len(b) > MaxSecretBytes {
		return &FieldError{field, fmt.Sprintf("%d bytes, want %d to %d", len(b), MinSecretBytes, MaxSecretBytes)}
	}
	return nil
}

// appendPlaintextV2 appends the version 2 plaintext of sub to b.
func appendPlaintextV2(b []byte, sub *Subscription) ([]byte, error) {
	exp, err := epochSeconds("expiry", sub.Expiry)
	if err != nil {
		return nil, err
	}
	if sub.CallbackURL == "" || len(sub.CallbackURL) > MaxURLBytes {
		return nil, &FieldError{"callbackUrl", fmt.Sprintf("must be 1 to %d bytes", MaxURLBytes)}
	}
	if sub.CallbackURL == httpsPfx {
		return nil, &FieldError{"callbackUrl", "has no host"}
	}
	if err := checkSecret("secret", sub.Secret); err != nil {
		return nil, err
	}
	var flags byte
	url := sub.CallbackURL
	if strings.HasPrefix(url, httpsPfx) {
		flags |= flagHTTPS
		url = url[len(httpsPfx):]
	}
	var ver, until uint32
	if !sub.VerifiedAt.IsZero() {
		flags |= flagVerified
		if ver, err = epochSeconds("verifiedAt", sub.VerifiedAt); err != nil {
			return nil, err
		}
	}
	if len(sub.PrevSecret) > 0 {
		flags |= flagPrev
		if err := checkSecret("previousSecret", sub.PrevSecret); err != nil {
			return nil, err
		}
		if sub.PrevSecretUntil.IsZero() {
			return nil, &FieldError{"previousSecretUntil", "required"}
		}
		if until, err = epochSeconds("previousSecretUntil", sub.PrevSecretUntil); err != nil {
			return nil, err
		}
	} else if !sub.PrevSecretUntil.IsZero() {
		return nil, &FieldError{"previousSecretUntil", "set without previousSecret"}
	}
	b = append(b, flags)
	b = binary.BigEndian.AppendUint32(b, exp)
	if flags&flagVerified != 0 {
		b = binary.BigEndian.AppendUint32(b, ver)
	}
	b = append(b, byte(len(sub.Secret)))
	b = append(b, sub.Secret...)
	if flags&flagPrev != 0 {
		b = append(b, byte(len(sub.PrevSecret)))
		b = append(b, sub.PrevSecret...)
		b = binary.BigEndian.AppendUint32(b, until)
	}
	return append(b, url...), nil
}

// decodePlaintextV2 is the strict inverse of appendPlaintextV2. The secrets alias pt.
func decodePlaintextV2(pt []byte) (Subscription, error) {
	var sub Subscription
	rest, err := parsePlaintextV2(pt, &sub)
	if err != nil {
		return Subscription{}, err
	}
	url := string(pt[rest:])
	if pt[0]&flagHTTPS != 0 {
		url = httpsPfx + url
	}
	if len(url) > MaxURLBytes {
		return Subscription{}, ErrMalformed
	}
	sub.CallbackURL = url
	return sub, nil
}

// parsePlaintextV2 checks and decodes a version 2 plaintext but for its callback URL, which starts at
// pt[rest:] (after "https://" when pt[0] has flagHTTPS), into sub (left partly filled on an error).
func parsePlaintextV2(pt []byte, sub *Subscription) (rest int, err error) {
	if len(pt) < 1+4 {
		return 0, ErrMalformed
	}
	flags := pt[0]
	exp := binary.BigEndian.Uint32(pt[1:5])
	if flags&^flagsKnown != 0 || exp == 0 {
		return 0, ErrMalformed
	}
	i := 5
	var ver uint32
	if flags&flagVerified != 0 {
		if len(pt) < i+4 {
			return 0, ErrMalformed
		}
		if ver = binary.BigEndian.Uint32(pt[i:]); ver == 0 {
			return 0, ErrMalformed
		}
		i += 4
	}
	secret, i, ok := parseSecret(pt, i)
	if !ok {
		return 0, ErrMalformed
	}
	if flags&flagPrev != 0 {
		if sub.PrevSecret, i, ok = parseSecret(pt, i); !ok || len(pt) < i+4 {
			return 0, ErrMalformed
		}
		until := binary.BigEndian.Uint32(pt[i:])
		if until == 0 {
			return 0, ErrMalformed
		}
		sub.PrevSecretUntil = fromEpoch(until)
		i += 4
	}
	if i >= len(pt) {
		return 0, ErrMalformed
	}
	if flags&flagHTTPS == 0 && bytes.HasPrefix(pt[i:], []byte(httpsPfx)) {
		return 0, ErrMalformed // not canonical: the prefix has its flag
	}
	sub.Secret = secret
	sub.Expiry = fromEpoch(exp)
	if ver != 0 {
		sub.VerifiedAt = fromEpoch(ver)
	}
	return i, nil
}

// parseSecret reads a length-prefixed secret at pt[i:] and returns it (sharing pt) and where it ends.
func parseSecret(pt []byte, i int) ([]byte, int, bool) {
	if i >= len(pt) {
		return nil, 0, false
	}
	n := int(pt[i])
	if n < MinSecretBytes || n > MaxSecretBytes || len(pt)-i-1 < n {
		return nil, 0, false
	}
	return pt[i+1 : i+1+n : i+1+n], i + 1 + n, true
}

// Arg is one filter argument: a name and its value, e.g. table_id and the table's id.
type Arg struct{ Name, Value string }

// Args are filter arguments in canonical order: sorted by name, each name once (the order in which the
// associated data binds them). Seal refuses others with a *FieldError and Open skips a Target that holds
// others, so that one set of arguments has exactly one binding. Build them with ArgsOf, or
// in order by hand; they are read, never written, by Seal and Open.
type Args []Arg

// ArgsOf returns the arguments of m in canonical order (nil when m is empty).
func ArgsOf(m map[string]string) Args {
	var a Args
	for k, v := range m {
		a = append(a, Arg{k, v})
	}
	slices.SortFunc(a, func(x, y Arg) int { return strings.Compare(x.Name, y.Name) })
	return a
}

// Get returns the value of the argument name and whether a holds it.
func (a Args) Get(name string) (string, bool) {
	for _, x := range a {
		if x.Name == name {
			return x.Value, true
		}
	}
	return "", false
}

// Map returns the arguments as a new map (empty, not nil, when there are none).
func (a Args) Map() map[string]string {
	m := make(map[string]string, len(a))
	for _, x := range a {
		m[x.Name] = x.Value
	}
	return m
}

// Equal reports whether a holds exactly the arguments of m.
func (a Args) Equal(m map[string]string) bool {
	if len(a) != len(m) {
		return false
	}
	for _, x := range a {
		if v, ok := m[x.Name]; !ok || v != x.Value {
			return false
		}
	}
	return true
}

// canonical reports whether the names are non-empty and strictly ascending.
func (a Args) canonical() bool {
	for i := range a {
		if a[i].Name == "" || i > 0 && a[i].Name <= a[i-1].Name {
			return false
		}
	}
	return true
}

// appendADV2 appends the version 2 associated data; args are canonical.
func appendADV2(ad, hdr []byte, webhookID, projectID, event string, args Args) []byte {
	ad = append(ad, adLabelV2...)
	ad = append(ad, hdr...)
	ad = appendLenString(ad, webhookID)
	ad = appendLenString(ad, projectID)
	ad = appendLenString(ad, event)
	ad = binary.AppendUvarint(ad, uint64(len(args)))
	for _, a := range args {
		ad = appendLenString(ad, a.Name)
		ad = appendLenString(ad, a.Value)
	}
	return ad
}

// appendLenString appends uv len(s) || s.
func appendLenString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// Open reverses Seal for the webhook webhookID in project projectID. The envelope opens only for one of
// targets (at most MaxTargets are tried, in order), and the returned subscription carries that target's
// event and arguments. Any failure (tampering, another
// webhook's, project's or target's envelope, parts swapped, unknown key id or version, truncation,
// malformed plaintext) wraps ErrOpen. Open does not check expiry; see Subscription.Expired.
func (s *Sealer) Open(webhookID, projectID string, f Fields, targets ...Target) (Subscription, error) {
	n := len(f.Username) + len(f.Password) + len(f.URLTail)
	if f.Username == "" || f.Password == "" || n > MaxSealedLength {
		return Subscription{}, ErrMalformed
	}
	if webhookID == "" || len(webhookID) > MaxIDBytes || projectID == "" || len(projectID) > MaxIDBytes {
		return Subscription{}, ErrMalformed
	}
	text := f.Username + f.Password + f.URLTail
	if strings.ContainsAny(text, "\r\n") { // encoding/base64 skips CR and LF; an envelope has none
		return Subscription{}, ErrMalformed
	}
	env, err := base64.RawURLEncoding.Strict().DecodeString(text)
	if err != nil || len(env) < 1 {
		return Subscription{}, ErrMalformed
	}
	if env[0]>>4 != Version {
		return Subscription{}, ErrUnknownVersion
	}
	l := int(env[0]&0x0f) + 1
	if len(env) < 1+l+nonceSize+tagSize {
		return Subscription{}, ErrMalformed
	}
	aead, ok := s.ring.aead(env[1 : 1+l])
	if !ok {
		return Subscription{}, ErrUnknownKey
	}
	hdr := env[:1+l]
	nonce := env[1+l : 1+l+nonceSize]
	ct := env[1+l+nonceSize:]
	if len(targets) > MaxTargets {
		targets = targets[:MaxTargets]
	}
	for _, t := range targets {
		if t.Event == "" || len(t.Event) > MaxEventBytes || len(t.Args) > MaxArgs || !t.Args.canonical() {
			continue
		}
		pt, err := aead.Open(nil, nonce, ct, appendADV2(nil, hdr, webhookID, projectID, t.Event, t.Args))
		if err != nil {
			continue
		}
		sub, err := decodePlaintextV2(pt)
		if err != nil {
			return Subscription{}, err
		}
		sub.Event, sub.Args, sub.ProjectID = t.Event, t.Args, projectID
		return sub, nil
	}
	return Subscription{}, ErrAuth
}
