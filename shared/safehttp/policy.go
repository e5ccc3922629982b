package safehttp

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// ErrBlocked is wrapped by every refusal of a destination (scheme, host form,
// or an address in a special-purpose range that is not allowlisted).
var ErrBlocked = errors.New("safehttp: destination not allowed")

// BlockedError says why a destination was refused. It wraps ErrBlocked. Its
// message names the range, never the response of anything.
type BlockedError struct {
	// Host is the host name or literal from the URL.
	Host string
	// Addr is the refused address, if the refusal is about an address.
	Addr netip.Addr
	// Why is a short reason ("loopback", "scheme http not allowed", ...).
	Why string
}

// Error describes the refusal.
func (e *BlockedError) Error() string {
	if e.Addr.IsValid() {
		return fmt.Sprintf("safehttp: destination %q not allowed: %s is %s", e.Host, e.Addr, e.Why)
	}
	return fmt.Sprintf("safehttp: destination %q not allowed: %s", e.Host, e.Why)
}

// Unwrap returns ErrBlocked.
func (e *BlockedError) Unwrap() error { return ErrBlocked }

type namedPrefix struct {
	p    netip.Prefix
	name string
}

func mp(s, name string) namedPrefix { return namedPrefix{netip.MustParsePrefix(s), name} }

// blocked4 lists the IPv4 special-purpose ranges refused by default (IANA
// IPv4 Special-Purpose Address Registry, plus multicast and reserved).
var blocked4 = []namedPrefix{
	mp("0.0.0.0/8", "\"this network\" (unspecified)"),
	mp("10.0.0.0/8", "private"),
	mp("100.64.0.0/10", "shared address space (CGNAT)"),
	mp("127.0.0.0/8", "loopback"),
	mp("169.254.0.0/16", "link-local"),
	mp("172.16.0.0/12", "private"),
	mp("192.0.0.0/24", "IETF protocol assignments"),
	mp("192.0.2.0/24", "documentation (TEST-NET-1)"),
	mp("192.88.99.0/24", "6to4 relay anycast (deprecated)"),
	mp("192.168.0.0/16", "private"),
	mp("198.18.0.0/15", "benchmarking"),
	mp("198.51.100.0/24", "documentation (TEST-NET-2)"),
	mp("203.0.113.0/24", "documentation (TEST-NET-3)"),
	mp("224.0.0.0/4", "multicast"),
	mp("240.0.0.0/4", "reserved (incl. broadcast)"),
}

// blocked6 lists the IPv6 special-purpose ranges refused by default (IANA
// IPv6 Special-Purpose Address Registry). Anything outside 2000::/3 (global
// unicast) is refused as well; 64:ff9b::/96 (NAT64) is judged by the IPv4
// address it embeds.
var blocked6 = []namedPrefix{
	mp("::/128", "unspecified"),
	mp("::1/128", "loopback"),
	mp("::ffff:0:0/96", "IPv4-mapped"),
	mp("::/96", "IPv4-compatible (deprecated)"),
	mp("64:ff9b:1::/48", "local-use NAT64"),
	mp("100::/64", "discard-only"),
	mp("2001::/23", "IETF protocol assignments (Teredo, benchmarking, ORCHID)"),
	mp("2001:db8::/32", "documentation"),
	mp("2002::/16", "6to4"),
	mp("3fff::/20", "documentation"),
	mp("5f00::/16", "SRv6 SIDs"),
	mp("fc00::/7", "unique local (ULA)"),
	mp("fe80::/10", "link-local"),
	mp("fec0::/10", "site-local (deprecated)"),
	mp("ff00::/8", "multicast"),
}

var (
	nat64         = netip.MustParsePrefix("64:ff9b::/96")
	globalUnicast = netip.MustParsePrefix("2000::/3")
)

// addrBlockReason returns "" when a is an allowed destination, otherwise the
// name of the range it falls in.
func addrBlockReason(a netip.Addr, allow []netip.Prefix) string {
	if !a.IsValid() {
		return "invalid"
	}
	if a.Zone() != "" {
		return "a zoned (scoped) address"
	}
	a = a.Unmap()
	for _, p := range allow {
		if p.Contains(a) {
			return ""
		}
	}
	if a.Is4() {
		for _, b := range blocked4 {
			if b.p.Contains(a) {
				return b.name
			}
		}
		return ""
	}
	if nat64.Contains(a) {
		b := a.As16()
		v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		if why := addrBlockReason(v4, nil); why != "" {
			return "NAT64 form of " + why
		}
		return ""
	}
	for _, b := range blocked6 {
		if b.p.Contains(a) {
			return b.name
		}
	}
	if !globalUnicast.Contains(a) {
		return "not global unicast"
	}
	return ""
}

// CheckAddr reports whether a may be dialed under opts: nil, or a
// *BlockedError. IPv4-mapped IPv6 addresses are judged as IPv4.
func CheckAddr(a netip.Addr, opts Options) error {
	if why := addrBlockReason(a, opts.AllowPrivate); why != "" {
		return &BlockedError{Host: a.String(), Addr: a, Why: why}
	}
	return nil
}

// MaxURLLength bounds the URLs CheckURL accepts.
const MaxURLLength = 2048

// CheckURL validates raw without any network access: absolute https URL
// (http only with opts.AllowHTTP), no user info, a port in 1-65535 if given,
// and a host that is either a canonical IP literal outside the blocked ranges
// or a DNS name. Hosts in other IPv4 notations (decimal "2130706433", octal
// "0177.0.0.1", hex "0x7f.1", short "127.1"), zoned IPv6 literals and names
// with characters outside [A-Za-z0-9._-] are refused. Names are resolved and
// checked at dial time by the client (and by CheckDestination).
func CheckURL(raw string, opts Options) error {
	_, err := checkURL(raw, opts)
	return err
}

func checkURL(raw string, opts Options) (*url.URL, error) {
	if len(raw) > MaxURLLength {
		return nil, &BlockedError{Why: "URL too long"}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &BlockedError{Why: "not a URL"}
	}
	return u, checkParsedURL(u, opts)
}

func checkParsedURL(u *url.URL, opts Options) error {
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && opts.AllowHTTP:
	default:
		return &BlockedError{Host: u.Host, Why: fmt.Sprintf("scheme %q not allowed", u.Scheme)}
	}
	if u.Opaque != "" || u.Host == "" {
		return &BlockedError{Host: u.Host, Why: "no host"}
	}
	if u.User != nil {
		return &BlockedError{Host: u.Host, Why: "user info in URL"}
	}
	if p := u.Port(); p != "" {
		if n, ok := atoiPort(p); !ok || n == 0 {
			return &BlockedError{Host: u.Host, Why: "bad port"}
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return &BlockedError{Host: u.Host, Why: "bad port"}
	}
	_, err := checkHost(u.Hostname(), opts)
	return err
}

func atoiPort(s string) (int, bool) {
	if len(s) == 0 || len(s) > 5 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n <= 65535
}

// checkHost validates a host (no port, no brackets). For an IP literal it
// returns the address (checked); for a DNS name it returns the zero Addr.
func checkHost(host string, opts Options) (netip.Addr, error) {
	if host == "" {
		return netip.Addr{}, &BlockedError{Why: "empty host"}
	}
	if strings.ContainsRune(host, ':') || strings.ContainsRune(host, '%') {
		a, err := netip.ParseAddr(host)
		if err != nil {
			return netip.Addr{}, &BlockedError{Host: host, Why: "malformed IPv6 literal"}
		}
		if err := CheckAddr(a, opts); err != nil {
			return netip.Addr{}, &BlockedError{Host: host, Addr: a, Why: err.(*BlockedError).Why}
		}
		return a.Unmap(), nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if err := CheckAddr(a, opts); err != nil {
			return netip.Addr{}, &BlockedError{Host: host, Addr: a, Why: err.(*BlockedError).Why}
		}
		return a, nil
	}
	name := strings.TrimSuffix(host, ".")
	if name == "" || len(name) > 253 {
		return netip.Addr{}, &BlockedError{Host: host, Why: "bad host name"}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return netip.Addr{}, &BlockedError{Host: host, Why: "bad character in host name"}
		}
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return netip.Addr{}, &BlockedError{Host: host, Why: "bad host name"}
		}
	}
	// WHATWG URL "ends in a number": browsers and libc read such hosts as
	// IPv4 in decimal, octal or hex notation. Refuse them outright.
	if last := labels[len(labels)-1]; isNumericLabel(last) {
		return netip.Addr{}, &BlockedError{Host: host, Why: "non-canonical IPv4 notation"}
	}
	return netip.Addr{}, nil
}

func isNumericLabel(l string) bool {
	digits := true
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			digits = false
			break
		}
	}
	if digits {
		return true
	}
	if len(l) >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X') {
		for i := 2; i < len(l); i++ {
			c := l[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
		return true
	}
	return false
}

// EnvAllow is the environment variable FromEnv reads the allowlist from:
// comma-separated CIDR prefixes or single addresses, e.g.
// "127.0.0.0/8,::1/128". Unset means no allowlist.
const EnvAllow = "SAFEHTTP_ALLOW"

// EnvAllowHTTP is the environment variable FromEnv reads AllowHTTP from
// ("1" or "true"; anything else, or unset, is false).
const EnvAllowHTTP = "SAFEHTTP_ALLOW_HTTP"

// ParseAllowlist parses comma-separated prefixes ("10.1.0.0/16") or single
// addresses ("::1"); IPv4-mapped forms are converted to IPv4. Empty input is
// a nil list.
func ParseAllowlist(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		var p netip.Prefix
		if strings.Contains(f, "/") {
			var err error
			if p, err = netip.ParsePrefix(f); err != nil {
				return nil, fmt.Errorf("safehttp: allowlist entry %q: %v", f, err)
			}
		} else {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("safehttp: allowlist entry %q: %v", f, err)
			}
			if a.Zone() != "" {
				return nil, fmt.Errorf("safehttp: allowlist entry %q: zones not allowed", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if !p.IsValid() {
			return nil, fmt.Errorf("safehttp: allowlist entry %q: invalid prefix", f)
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// FromEnv returns base with AllowPrivate and AllowHTTP taken from EnvAllow and EnvAllowHTTP, read through
// getenv (a function's config.go passes the process environment's getter), when they are set (not empty).
// Both are off by default; they exist for tests and local development (scripts/dev) to reach loopback
// receivers.
func FromEnv(getenv func(string) string, base Options) (Options, error) {
	if v := getenv(EnvAllow); v != "" {
		p, err := ParseAllowlist(v)
		if err != nil {
			return base, fmt.Errorf("%s: %w", EnvAllow, err)
		}
		base.AllowPrivate = p
	}
	if v := getenv(EnvAllowHTTP); v != "" {
		base.AllowHTTP = v == "1" || strings.EqualFold(v, "true")
	}
	return base, nil
}

// localSuffixes are name suffixes reserved for this machine or local networks: localhost (RFC 6761 §6.3),
// local (mDNS, RFC 6762), home.arpa (RFC 8375), internal (reserved for private use by ICANN, 2024) and the
// conventional localdomain of /etc/hosts.
var localSuffixes = []string{"localhost", "local", "home.arpa", "internal", "localdomain"}

// LocalNameReason returns why host, a DNS name (any case, trailing dots allowed), designates this machine
// or a local network, or "" for a name that may be public. IP literals return "" (CheckAddr judges them).
// Single-label names ("metadata", "intranet") are local too: resolvers complete them with local search
// domains.
func LocalNameReason(host string) string {
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return ""
	}
	name := strings.ToLower(strings.TrimRight(host, "."))
	if name == "" {
		return "empty host"
	}
	for _, s := range localSuffixes {
		if name == s || strings.HasSuffix(name, "."+s) {
			return "local host name (." + s + ")"
		}
	}
	if !strings.Contains(name, ".") {
		return "single-label host name (resolved through local search domains)"
	}
	return ""
}
