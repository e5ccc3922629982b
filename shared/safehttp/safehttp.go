// Package safehttp is the HTTP client for destinations chosen by strangers:
// webhook callback URLs and the agent's fetch tools. It refuses server-side
// request forgery (SSRF):
//
//   - https only, unless Options.AllowHTTP;
//   - the host is resolved once per connection, every resolved address is
//     checked against the IPv4 and IPv6 special-purpose ranges (loopback,
//     private, link-local, CGNAT, ULA, multicast, documentation,
//     benchmarking, unspecified, reserved; IPv4-mapped forms are judged as
//     IPv4 and NAT64 forms by the IPv4 address they embed), and if any is
//     refused the connection is refused; then the checked address itself is
//     dialed (no second resolution, so DNS rebinding fails) while TLS
//     verification and SNI use the original host name;
//   - the socket layer re-checks the address actually connected to;
//   - no redirects, no proxies from the environment;
//   - bounded connect, TLS handshake, response header and total time, and a
//     bounded response body.
//
// Options.AllowPrivate (off by default; see FromEnv) lets tests and local
// development reach receivers on listed prefixes such as loopback.
//
// Classify maps the outcome of a request to the MCP delivery error
// categories.
package safehttp

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Defaults used when an Options field is zero or negative.
const (
	DefaultConnectTimeout   = 5 * time.Second  // Options.ConnectTimeout
	DefaultHeaderTimeout    = 10 * time.Second // Options.HeaderTimeout
	DefaultTotalTimeout     = 15 * time.Second // Options.TotalTimeout
	DefaultMaxResponseBytes = 1 << 20          // Options.MaxResponseBytes
	// MaxResponseHeaderBytes bounds the response headers.
	MaxResponseHeaderBytes = 64 << 10
)

// ErrRedirect is returned (wrapped in a *url.Error) when a response is a
// redirect: redirects are never followed.
var ErrRedirect = errors.New("safehttp: redirects are not followed")

// ErrResponseTooLarge is returned while reading a body beyond the limit.
var ErrResponseTooLarge = errors.New("safehttp: response body too large")

// Resolver looks up the addresses of a host. *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configures NewClient, CheckURL and CheckDestination. The zero
// value is the strict default: https only, nothing private allowed, default
// timeouts and limits, the system resolver.
type Options struct {
	// AllowHTTP permits plain http URLs (tests and local development only).
	AllowHTTP bool
	// AllowPrivate is the allowlist: addresses inside these prefixes are
	// permitted even when they are special-purpose. Nil means none.
	AllowPrivate []netip.Prefix
	// ConnectTimeout bounds each TCP connect and the TLS handshake.
	ConnectTimeout time.Duration
	// HeaderTimeout bounds the wait for response headers after the request
	// is written. One no shorter than TotalTimeout is not set on the
	// transport: TotalTimeout (or the request's earlier deadline) always
	// ends the wait first, and the transport would otherwise start a timer
	// for every request that can never fire.
	HeaderTimeout time.Duration
	// TotalTimeout bounds the whole exchange including reading the body
	// (http.Client.Timeout).
	TotalTimeout time.Duration
	// MaxResponseBytes bounds every response body; reading past it fails
	// with ErrResponseTooLarge.
	MaxResponseBytes int64
	// DisableCompression stops the transport asking for gzip
	// (Accept-Encoding), for callers that use little or nothing of the
	// answer but its status: the request is one header shorter, and no
	// decompressor is set up for a compressed answer.
	DisableCompression bool
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// TLSConfig, if set, is cloned for the transport (e.g. RootCAs in
	// tests). MinVersion is raised to TLS 1.2; InsecureSkipVerify is
	// refused (forced off).
	TLSConfig *tls.Config
	// Roots, if set, supplies the root pool (it replaces TLSConfig.RootCAs), built on the first NewClient
	// that carries it (LazyCAFromEnv). When it cannot be built, the client refuses every request with
	// its error, so nothing is sent without the trust the configuration asked for.
	Roots *Roots

	// dialHook, when set (tests only), replaces the final dial of a checked
	// address.
	dialHook func(ctx context.Context, network string, addr netip.AddrPort) (net.Conn, error)
}

func (o Options) withDefaults() Options {
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = DefaultHeaderTimeout
	}
	if o.TotalTimeout <= 0 {
		o.TotalTimeout = DefaultTotalTimeout
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	o.AllowPrivate = append([]netip.Prefix(nil), o.AllowPrivate...)
	return o
}

// Resolve resolves host (a name or IP literal, without port) and checks
// every address. It returns the addresses (IPv4-mapped forms unmapped) when
// all of them are allowed, otherwise a *BlockedError; a lookup failure is
// returned as is.
func Resolve(ctx context.Context, host string, opts Options) ([]netip.Addr, error) {
	return resolve(ctx, "ip", host, opts.withDefaults())
}

func resolve(ctx context.Context, network, host string, o Options) ([]netip.Addr, error) {
	lit, err := checkHost(host, o)
	if err != nil {
		return nil, err
	}
	if lit.IsValid() {
		return []netip.Addr{lit}, nil
	}
	addrs, err := o.Resolver.LookupNetIP(ctx, network, host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if why := addrBlockReason(a, o.AllowPrivate); why != "" {
			return nil, &BlockedError{Host: host, Addr: a, Why: why}
		}
		out = append(out, a.Unmap())
	}
	return out, nil
}

// CheckDestination runs CheckURL and then resolves the host and checks every
// address (use it to validate a callback URL before storing it). The client
// repeats the resolution and check at dial time, which is what defeats DNS
// rebinding; this up-front check only gives early, clear errors.
//
// Unlike the client, it also refuses host names that designate this machine or a local network whatever
// they resolve to (see LocalNameReason), before any DNS query leaves the machine: a destination to store
// must be a public name or address.
func CheckDestination(ctx context.Context, raw string, opts Options) error {
	u, err := checkURL(raw, opts)
	if err != nil {
		return err
	}
	if why := LocalNameReason(u.Hostname()); why != "" {
		return &BlockedError{Host: u.Hostname(), Why: why}
	}
	_, err = Resolve(ctx, u.Hostname(), opts)
	return err
}

type dialer struct {
	o Options
	d net.Dialer
}

func (d *dialer) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, ok := atoiPort(portStr)
	if !ok || port == 0 {
		return nil, &BlockedError{Host: host, Why: "bad port"}
	}
	lookup := "ip"
	switch network {
	case "tcp4":
		lookup = "ip4"
	case "tcp6":
		lookup = "ip6"
	case "tcp":
	default:
		return nil, &BlockedError{Host: host, Why: "network " + network + " not allowed"}
	}
	addrs, err := resolve(ctx, lookup, host, d.o)
	if err != nil {
		return nil, err
	}
	var first error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, uint16(port))
		var c net.Conn
		if d.o.dialHook != nil {
			c, err = d.o.dialHook(ctx, network, ap)
		} else {
			c, err = d.d.DialContext(ctx, network, ap.String())
		}
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// control re-checks, at the socket layer, the address actually connected to.
func (d *dialer) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedError{Host: address, Why: "unparsable socket address"}
	}
	return CheckAddr(ap.Addr(), d.o)
}

// NewClient returns an *http.Client that enforces the policy described in the
// package documentation. Reuse it: it owns a connection pool.
func NewClient(opts Options) *http.Client {
	o := opts.withDefaults()
	d := &dialer{o: o}
	d.d = net.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 30 * time.Second, Control: d.control}
	tlsConf := &tls.Config{}
	if o.TLSConfig != nil {
		tlsConf = o.TLSConfig.Clone()
	}
	var rootsErr error
	if o.Roots != nil {
		tlsConf.RootCAs, rootsErr = o.Roots.Pool()
	}
	tlsConf.InsecureSkipVerify = false
	if tlsConf.MinVersion < tls.VersionTLS12 {
		tlsConf.MinVersion = tls.VersionTLS12
	}
	headerTimeout := o.HeaderTimeout
	if headerTimeout >= o.TotalTimeout {
		headerTimeout = 0
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.dialContext,
		TLSClientConfig:        tlsConf,
		TLSHandshakeTimeout:    o.ConnectTimeout,
		ResponseHeaderTimeout:  headerTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
		ForceAttemptHTTP2:      true,
		DisableCompression:     o.DisableCompression,
		// A subscriber such as ChatGPT receives many events from one ingress: keep enough connections
		// to it alive that concurrent deliveries do not each pay a TLS handshake.
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	}
	var next http.RoundTripper = tr
	if rootsErr != nil {
		next = refuse{rootsErr}
	}
	return &http.Client{
		Transport: &guard{o: o, next: next},
		Timeout:   o.TotalTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return ErrRedirect
		},
	}
}

// guard checks every request URL and limits every response body.
// refuse is the transport of a client whose Options.Roots could not be built: every request fails.
type refuse struct{ err error }

func (r refuse) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, r.err
}

type guard struct {
	o    Options
	next http.RoundTripper
}

// RoundTrip checks the URL, then delegates and wraps the body.
func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkParsedURL(req.URL, g.o); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if req.Host != "" && req.Host != req.URL.Host {
		// A different Host header would make TLS verification and routing
		// disagree with what was checked.
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &BlockedError{Host: req.Host, Why: "Host header differs from URL host"}
	}
	resp, err := g.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.ContentLength >= 0 && resp.ContentLength <= g.o.MaxResponseBytes:
		// The transport's body already ends at Content-Length: nothing past
		// the limit can be read, so it needs no wrapper.
	case resp.ContentLength > g.o.MaxResponseBytes:
		// Still returned: the status is useful; reading fails early.
		resp.Body = &limitedBody{rc: resp.Body, left: -1}
	default:
		resp.Body = &limitedBody{rc: resp.Body, left: g.o.MaxResponseBytes}
	}
	return resp, nil
}

// CloseIdleConnections closes the pooled connections, so http.Client.CloseIdleConnections reaches them.
func (g *guard) CloseIdleConnections() {
	if c, ok := g.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

// Read reads at most the remaining allowance.
func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, ErrResponseTooLarge
	}
	if l.left == 0 {
		var one [1]byte
		n, err := l.rc.Read(one[:])
		if n > 0 {
			l.left = -1
			return 0, ErrResponseTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.rc.Read(p)
	l.left -= int64(n)
	return n, err
}

// Close closes the underlying body.
func (l *limitedBody) Close() error { return l.rc.Close() }

// ReadLimited reads all of r, failing with ErrResponseTooLarge when it holds
// more than max bytes. Use it for bodies not obtained from NewClient, or to
// apply a tighter limit than Options.MaxResponseBytes.
func ReadLimited(r io.Reader, max int64) ([]byte, error) {
	if max < 0 {
		max = 0
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return b, err
	}
	if int64(len(b)) > max {
		return b[:max], ErrResponseTooLarge
	}
	return b, nil
}

// StatusError is GetJSON's answer to a status other than 200: the URL asked and the status it answered.
type StatusError struct {
	URL  string
	Code int
}

// Error implements error: "<url> answered HTTP <code>".
func (e *StatusError) Error() string { return fmt.Sprintf("%s answered HTTP %d", e.URL, e.Code) }

// GetJSON GETs url through client (Accept: application/json) and decodes its 200 answer into v. The body is
// read with ReadLimited(max): a longer one is ErrResponseTooLarge. Another status is a *StatusError naming url
// and the status; a body that does not decode, an error naming url. A transport error is returned as the
// client gave it.
func GetJSON(ctx context.Context, client *http.Client, url string, max int64, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := ReadLimited(res.Body, max)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return &StatusError{URL: url, Code: res.StatusCode}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s is not JSON: %v", url, err)
	}
	return nil
}

var errLongerThanDeclared = errors.New("safehttp: response body is longer than its Content-Length")

// ReadResponse reads resp's body as ReadLimited(resp.Body, max) does. A body whose Content-Length is
// known and within max is read into a buffer of exactly that size, to its end (so the connection is reused):
// one allocation, none when it is empty.
func ReadResponse(resp *http.Response, max int64) ([]byte, error) {
	n := resp.ContentLength
	if n < 0 || n > max {
		return ReadLimited(resp.Body, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(resp.Body, b); err != nil {
		return nil, err
	}
	// The transport's body reports EOF with its last bytes; one more read makes sure of it for any other
	// body (one that ends at its Content-Length reports EOF here, with nothing read).
	var one [1]byte
	if k, err := resp.Body.Read(one[:]); k > 0 {
		return b, errLongerThanDeclared
	} else if err != nil && err != io.EOF {
		return b, err
	}
	return b, nil
}
