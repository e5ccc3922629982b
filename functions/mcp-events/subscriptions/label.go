package subscriptions

import (
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"strings"
	"time"

	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/seal"
)

// A subscription's webhook name is its label: what mcp-events needs to read back when Appwrite returns no
// authPassword (Appwrite Cloud never does, so the envelope cannot be opened from a read), in the clear and
// authenticated with the sealing keys:
//
//	MCP events | <event> | until <expiry, RFC 3339 UTC> | <tag>
//
// The tag is base64url (no padding) of 30 bytes:
//
//	u32  verifiedAt: when the callback passed the challenge (seconds since seal.Epoch; 0: never)
//	u32  previous secret valid until (seconds since seal.Epoch; 0: no rotation grace window)
//	6    secret fingerprint: label MAC of ("secret", id, the Standard Webhooks secret)
//	8    owner MAC: label MAC of ("owner", id, project, principal, event, canonical arguments, expiry,
//	     verifiedAt, previous secret until, secret fingerprint)
//	8    URL MAC: label MAC of ("url", id, project, principal, callback URL, event, canonical arguments,
//	     expiry, verifiedAt)
//
// It is ASCII (Appwrite sends the name back in X-Appwrite-Webhook-Name on every delivery) and holds nothing
// secret: the expiry and times are not secret, the MACs reveal nothing of the principal, secret or URL. At most
// 85 characters plus the event name (128 allowed). The owner MAC proves, without the callback URL, that the
// webhook is the caller's and what its label says (cleanup, list_subscriptions); the URL MAC proves a
// verification of that callback URL by that principal (the per-(principal, URL) verification cache); the
// fingerprint tells a refresh from a rotation. Only this deployment's sealing keys make them, so a label
// edited or copied by a project member does not verify.

// Label layout.
const (
	labelPrefix = "MCP events"
	labelSep    = " | "
	labelUntil  = "until "
	labelStamp  = "2006-01-02T15:04:05Z"
	labelTagLen = 4 + 4 + fingerprintLen + ownerMACLen + urlMACLen
	// MaxLabel is Appwrite's limit on a webhook name.
	MaxLabel = 128

	fingerprintLen = 6
	ownerMACLen    = 8
	urlMACLen      = 8
)

// label is what a webhook name says.
type label struct {
	Event       string
	Expiry      time.Time
	VerifiedAt  time.Time // zero: never verified
	PrevUntil   time.Time // zero: no previous secret
	Fingerprint []byte
	Owner       []byte
	URLMAC      []byte
}

// labelFor builds the label of a subscription of principal sealed as sub, and its name.
func (s *Service) labelFor(id, principal string, sub seal.Subscription) label {
	l := label{Event: sub.Event, Expiry: sub.Expiry.UTC().Truncate(time.Second), VerifiedAt: sub.VerifiedAt,
		Fingerprint: s.fingerprint(id, sub.Secret)}
	if len(sub.PrevSecret) > 0 {
		l.PrevUntil = sub.PrevSecretUntil
	}
	l.Owner = s.o.Sealer.Keyring().LabelMAC(ownerMACLen, l.ownerParts(id, sub.ProjectID, principal, sub.Args.Map())...)
	l.URLMAC = s.o.Sealer.Keyring().LabelMAC(urlMACLen, l.urlParts(id, sub.ProjectID, principal, sub.CallbackURL, sub.Args.Map())...)
	return l
}

func (s *Service) fingerprint(id string, secret []byte) []byte {
	return s.o.Sealer.Keyring().LabelMAC(fingerprintLen, "secret", id, string(secret))
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return strconv.FormatInt(t.Unix(), 10)
}

func (l label) ownerParts(id, project, principal string, args map[string]string) []string {
	return []string{"owner", id, project, principal, l.Event, eventcatalog.Canonical(withoutProject(args)),
		stamp(l.Expiry), stamp(l.VerifiedAt), stamp(l.PrevUntil), string(l.Fingerprint)}
}

func (l label) urlParts(id, project, principal, callbackURL string, args map[string]string) []string {
	return []string{"url", id, project, principal, callbackURL, l.Event, eventcatalog.Canonical(withoutProject(args)),
		stamp(l.Expiry), stamp(l.VerifiedAt)}
}

// String renders the label as a webhook name.
func (l label) String() string {
	tag := make([]byte, 0, labelTagLen)
	tag = binary.BigEndian.AppendUint32(tag, epochSeconds(l.VerifiedAt))
	tag = binary.BigEndian.AppendUint32(tag, epochSeconds(l.PrevUntil))
	tag = append(append(append(tag, l.Fingerprint...), l.Owner...), l.URLMAC...)
	return strings.Join([]string{labelPrefix, l.Event, labelUntil + l.Expiry.UTC().Format(labelStamp),
		base64.RawURLEncoding.EncodeToString(tag)}, labelSep)
}

func epochSeconds(t time.Time) uint32 {
	if t.IsZero() || !t.After(seal.Epoch) {
		return 0
	}
	return uint32(t.Sub(seal.Epoch) / time.Second)
}

func fromEpoch(s uint32) time.Time {
	if s == 0 {
		return time.Time{}
	}
	return seal.Epoch.Add(time.Duration(s) * time.Second)
}

// parseLabel reads a webhook name written by String; ok is false for anything else (a name of the
// previous layout, a name edited in the Console, another webhook's).
func parseLabel(name string) (label, bool) {
	parts := strings.Split(name, labelSep)
	if len(parts) != 4 || parts[0] != labelPrefix || parts[1] == "" || !strings.HasPrefix(parts[2], labelUntil) {
		return label{}, false
	}
	expiry, err := time.Parse(labelStamp, strings.TrimPrefix(parts[2], labelUntil))
	if err != nil {
		return label{}, false
	}
	tag, err := base64.RawURLEncoding.Strict().DecodeString(parts[3])
	if err != nil || len(tag) != labelTagLen {
		return label{}, false
	}
	l := label{Event: parts[1], Expiry: expiry.UTC(),
		VerifiedAt: fromEpoch(binary.BigEndian.Uint32(tag[0:4])), PrevUntil: fromEpoch(binary.BigEndian.Uint32(tag[4:8]))}
	rest := tag[8:]
	l.Fingerprint, rest = rest[:fingerprintLen], rest[fingerprintLen:]
	l.Owner, l.URLMAC = rest[:ownerMACLen], rest[ownerMACLen:]
	return l, true
}

// ownedBy reports whether l, on webhook id in project with these arguments, was written for principal: its
// owner MAC verifies (which also authenticates every field of the label but the URL MAC).
func (s *Service) ownedBy(l label, id, project, principal string, args map[string]string) bool {
	return s.o.Sealer.Keyring().LabelMACValid(l.Owner, l.ownerParts(id, project, principal, args)...)
}

// ownedByAny is ownedBy for the arguments webhook w's events give l's event: the ones the owner MAC
// verifies with (project_id not included), and whether there are any.
func (s *Service) ownedByAny(l label, w *awclient.Webhook, project, principal string) (map[string]string, bool) {
	for _, args := range argsFor(w, l.Event) {
		if s.ownedBy(l, w.ID, project, principal, args) {
			return args, true
		}
	}
	return nil, false
}

// provesURL reports whether l proves that principal's subscription on webhook id was verified for
// callbackURL: its URL MAC verifies and it records a verification.
func (s *Service) provesURL(l label, id, project, principal, callbackURL string, args map[string]string) bool {
	return !l.VerifiedAt.IsZero() && s.o.Sealer.Keyring().LabelMACValid(l.URLMAC, l.urlParts(id, project, principal, callbackURL, args)...)
}
