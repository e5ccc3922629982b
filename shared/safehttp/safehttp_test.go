package safehttp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// HARD RULE for this file: nothing may connect anywhere but loopback. Every
// client is built by testOpts, whose dial hook refuses (and fails the test
// on) any non-loopback address, and whose resolver is a static map (no DNS
// traffic; unknown names fail).

type staticResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr // successive answers; the last repeats
	calls   map[string]int
}

func newResolver() *staticResolver {
	return &staticResolver{answers: map[string][][]netip.Addr{}, calls: map[string]int{}}
}

func (r *staticResolver) set(host string, answers ...[]netip.Addr) { r.answers[host] = answers }

func (r *staticResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.calls[host], len(seq)-1)
	r.calls[host]++
	return seq[i], nil
}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

type dialLog struct {
	mu    sync.Mutex
	dials []netip.AddrPort
}

func (l *dialLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.dials)
}

// testOpts returns options whose dials are recorded and confined to
// loopback.
func testOpts(t *testing.T, res Resolver, log *dialLog) Options {
	return Options{
		Resolver: res,
		// Generous: no test here is decided by these (the timeout tests set their own against a server that
		// never answers); under load a TLS handshake with the system roots can outlast a couple of seconds.
		ConnectTimeout: 30 * time.Second,
		HeaderTimeout:  30 * time.Second,
		TotalTimeout:   60 * time.Second,
		dialHook: func(ctx context.Context, network string, ap netip.AddrPort) (net.Conn, error) {
			log.mu.Lock()
			log.dials = append(log.dials, ap)
			log.mu.Unlock()
			if !ap.Addr().Unmap().IsLoopback() {
				t.Errorf("attempted to dial non-loopback %s", ap)
				return nil, errors.New("test: non-loopback dial refused")
			}
			var d net.Dialer
			return d.DialContext(ctx, network, ap.String())
		},
	}
}

type receiver struct {
	srv  *httptest.Server
	hits atomic.Int64
	port string
	mu   sync.Mutex
	last *http.Request
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		rc.hits.Add(1)
		rc.mu.Lock()
		rc.last = r
		rc.mu.Unlock()
		io.WriteString(w, "hello")
	})
	mux.HandleFunc("/redirect-metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	mux.HandleFunc("/redirect-self", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://127.0.0.1:"+rc.port+"/", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/redirect-loopback-name", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://localhost:"+rc.port+"/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/status/", func(w http.ResponseWriter, r *http.Request) {
		var code int
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/status/"), "%d", &code)
		w.WriteHeader(code)
		io.WriteString(w, "status body")
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		// Never answers: the client's own deadline is the only thing that ends the request (the server
		// then drops it unanswered, so no late answer can race that deadline).
		<-r.Context().Done()
		panic(http.ErrAbortHandler)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 2048))
	})
	mux.HandleFunc("/big-chunked", func(w http.ResponseWriter, r *http.Request) {
		for range 4 {
			w.Write(make([]byte, 512))
			w.(http.Flusher).Flush()
		}
	})
	rc.srv = httptest.NewUnstartedServer(mux) // listens on 127.0.0.1
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	_, rc.port, _ = net.SplitHostPort(rc.srv.Listener.Addr().String())
	return rc
}

func (rc *receiver) roots() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(rc.srv.Certificate())
	return &tls.Config{RootCAs: pool}
}

var loopbackAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// hostileResolver maps hostile names to blocked addresses.
func hostileResolver() *staticResolver {
	r := newResolver()
	r.set("localhost", addrs("127.0.0.1", "::1"))
	r.set("evil.test", addrs("127.0.0.1"))
	r.set("metadata.test", addrs("169.254.169.254"))
	r.set("internal.test", addrs("10.1.2.3"))
	r.set("corp.test", addrs("172.20.0.5"))
	r.set("home.test", addrs("192.168.0.1"))
	r.set("cgnat.test", addrs("100.100.100.100"))
	r.set("v6loop.test", addrs("::1"))
	r.set("ula.test", addrs("fd00:ec2::254"))
	r.set("linklocal6.test", addrs("fe80::a9fe:a9fe"))
	r.set("mapped.test", addrs("::ffff:127.0.0.1"))
	r.set("nat64.test", addrs("64:ff9b::a9fe:a9fe"))
	r.set("zero.test", addrs("0.0.0.0"))
	// One good-looking answer and one loopback: all-or-nothing refusal.
	r.set("mixed.test", addrs("93.184.216.34", "127.0.0.1"))
	// DNS rebinding: public for the up-front check, loopback afterwards.
	r.set("rebind.test", addrs("93.184.216.34"), addrs("127.0.0.1"))
	return r
}

func hostileTargets(port string) []string {
	return []string{
		// IPv4 literals in every blocked range.
		"https://127.0.0.1:" + port + "/",
		"https://127.1.2.3/",
		"https://10.0.0.1/",
		"https://172.16.5.4/",
		"https://172.31.255.255/",
		"https://192.168.1.1/",
		"https://169.254.169.254/latest/meta-data/",
		"https://100.64.0.1/",
		"https://0.0.0.0:" + port + "/",
		"https://192.0.0.170/",
		"https://192.0.2.1/",
		"https://198.51.100.7/",
		"https://203.0.113.9/",
		"https://198.18.0.1/",
		"https://224.0.0.1/",
		"https://239.255.255.250/",
		"https://240.0.0.1/",
		"https://255.255.255.255/",
		"https://192.88.99.1/",
		// Other IPv4 notations.
		"https://2130706433:" + port + "/",
		"https://0177.0.0.1:" + port + "/",
		"https://0x7f.0.0.1:" + port + "/",
		"https://0x7f000001:" + port + "/",
		"https://017700000001/",
		"https://127.1:" + port + "/",
		"https://127.0.0.1.:" + port + "/",
		"https://%31%32%37.0.0.1:" + port + "/",
		"https://0xa9.0xfe.0xa9.0xfe/",
		"https://169.254.43518/",
		// IPv6 forms.
		"https://[::1]:" + port + "/",
		"https://[::]:" + port + "/",
		"https://[0:0:0:0:0:0:0:1]:" + port + "/",
		"https://[::ffff:127.0.0.1]:" + port + "/",
		"https://[::ffff:7f00:1]:" + port + "/",
		"https://[::ffff:169.254.169.254]/",
		"https://[::ffff:0:7f00:1]/",
		"https://[::127.0.0.1]:" + port + "/",
		"https://[64:ff9b::127.0.0.1]/",
		"https://[64:ff9b::a9fe:a9fe]/",
		"https://[64:ff9b:1::1]/",
		"https://[fe80::1%25eth0]/",
		"https://[fe80::1]/",
		"https://[fc00::1]/",
		"https://[fd12:3456::1]/",
		"https://[fec0::1]/",
		"https://[ff02::1]/",
		"https://[2001:db8::1]/",
		"https://[3fff::1]/",
		"https://[2002:7f00:1::1]/",
		"https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
		"https://[100::1]/",
		// Names resolving to blocked addresses.
		"https://localhost:" + port + "/",
		"https://evil.test:" + port + "/",
		"https://metadata.test/",
		"https://internal.test/",
		"https://corp.test/",
		"https://home.test/",
		"https://cgnat.test/",
		"https://v6loop.test:" + port + "/",
		"https://ula.test/",
		"https://linklocal6.test/",
		"https://mapped.test:" + port + "/",
		"https://nat64.test/",
		"https://zero.test:" + port + "/",
		"https://mixed.test:" + port + "/",
		"https://rebind.test:" + port + "/",
		// Schemes and URL tricks.
		"http://127.0.0.1:" + port + "/",
		"http://example.com/",
		"ftp://example.com/",
		"file:///etc/passwd",
		"gopher://127.0.0.1:" + port + "/",
		"https://example.com@127.0.0.1:" + port + "/",
		"https:///path-only",
		"//127.0.0.1:" + port + "/",
	}
}

// The SSRF suite: no hostile target is reached, under the strict default
// policy, whether or not the caller checked the URL first.
func TestSSRFHostileTargets(t *testing.T) {
	rc := newReceiver(t)
	targets := hostileTargets(rc.port)
	if len(targets) < 30 {
		t.Fatalf("only %d targets", len(targets))
	}
	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			log := &dialLog{}
			res := hostileResolver()
			opts := testOpts(t, res, log)
			opts.TLSConfig = rc.roots()
			client := NewClient(opts)

			upfront := CheckDestination(context.Background(), target, opts)
			if upfront == nil && !strings.Contains(target, "rebind.test") {
				t.Errorf("CheckDestination accepted %s", target)
			}
			if upfront != nil && !errors.Is(upfront, ErrBlocked) {
				t.Errorf("CheckDestination error %v does not wrap ErrBlocked", upfront)
			}

			resp, err := client.Get(target)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("request to %s succeeded", target)
			}
			var uerr *url.Error
			if errors.As(err, &uerr) && uerr.Op == "parse" {
				// Not even a URL for net/http: never sent.
			} else if r := Classify(err, resp); r != ReasonBlocked {
				t.Errorf("Classify = %s (%v), want %s", r, err, ReasonBlocked)
			}
			if n := log.count(); n != 0 {
				t.Errorf("%d dials attempted: %v", n, log.dials)
			}
		})
	}
	if n := rc.hits.Load(); n != 0 {
		t.Fatalf("receiver was hit %d times", n)
	}
}

// DNS rebinding: the up-front check sees a public answer, the connection
// resolves again, sees loopback, and refuses; and a connection dials exactly
// the address its one resolution produced.
func TestDNSRebinding(t *testing.T) {
	rc := newReceiver(t)
	res := newResolver()
	res.set("rebind.test", addrs("93.184.216.34"), addrs("127.0.0.1"))
	log := &dialLog{}
	opts := testOpts(t, res, log)
	opts.TLSConfig = rc.roots()
	target := "https://rebind.test:" + rc.port + "/"
	if err := CheckDestination(context.Background(), target, opts); err != nil {
		t.Fatalf("first answer is public, CheckDestination should pass: %v", err)
	}
	_, err := NewClient(opts).Get(target)
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("err = %v, want ErrBlocked", err)
	}
	if res.calls["rebind.test"] != 2 || log.count() != 0 || rc.hits.Load() != 0 {
		t.Fatalf("lookups %d dials %d hits %d", res.calls["rebind.test"], log.count(), rc.hits.Load())
	}

	// The reverse: allowlisted loopback first, then a public answer. The
	// connection uses its own (first) answer and never looks again.
	res.set("flip.test", addrs("127.0.0.1"), addrs("93.184.216.34"))
	log = &dialLog{}
	opts = testOpts(t, res, log)
	opts.AllowPrivate = loopbackAllow
	opts.TLSConfig = rc.roots()
	opts.TLSConfig.InsecureSkipVerify = true // forced off by NewClient
	resp, err := NewClient(opts).Get("https://flip.test:" + rc.port + "/")
	if Classify(err, resp) != ReasonTLSError {
		t.Fatalf("InsecureSkipVerify was honoured: %v", err)
	}
	if res.calls["flip.test"] != 1 || log.count() != 1 || log.dials[0].Addr() != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("lookups %d dials %v", res.calls["flip.test"], log.dials)
	}
}

// Redirects are never followed, not even to an allowed host.
func TestSSRFRedirects(t *testing.T) {
	rc := newReceiver(t)
	res := newResolver()
	res.set("example.com", addrs("127.0.0.1"))
	res.set("localhost", addrs("127.0.0.1"))
	for _, path := range []string{"/redirect-metadata", "/redirect-self", "/redirect-loopback-name"} {
		log := &dialLog{}
		opts := testOpts(t, res, log)
		opts.AllowPrivate = loopbackAllow
		opts.TLSConfig = rc.roots()
		resp, err := NewClient(opts).Get("https://example.com:" + rc.port + path)
		if !errors.Is(err, ErrRedirect) {
			t.Fatalf("%s: err = %v, want ErrRedirect", path, err)
		}
		if r := Classify(err, resp); r != ReasonRedirect || r.MCP() != "http_4xx" {
			t.Errorf("%s: Classify = %s", path, r)
		}
		if resp == nil || resp.StatusCode/100 != 3 {
			t.Errorf("%s: want the 3xx response alongside the error", path)
		}
		if n := log.count(); n != 1 {
			t.Errorf("%s: %d dials, want 1", path, n)
		}
	}
	if n := rc.hits.Load(); n != 0 {
		t.Fatalf("redirect target hit %d times", n)
	}
}

// An allowlisted loopback TLS receiver is reached, with the original Host
// and SNI, dialing only the checked address.
func TestAllowlistedLoopbackReceiverIsReached(t *testing.T) {
	rc := newReceiver(t)
	res := newResolver()
	res.set("example.com", addrs("127.0.0.1")) // the httptest cert is for example.com
	log := &dialLog{}
	opts := testOpts(t, res, log)
	opts.AllowPrivate = loopbackAllow
	opts.TLSConfig = rc.roots()
	target := "https://example.com:" + rc.port + "/hook"
	if err := CheckDestination(context.Background(), target, opts); err != nil {
		t.Fatalf("CheckDestination: %v", err)
	}
	resp, err := NewClient(opts).Post(target, "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(body) != "hello" || Classify(nil, resp) != ReasonOK {
		t.Fatalf("body %q err %v status %d", body, err, resp.StatusCode)
	}
	rc.mu.Lock()
	last := rc.last
	rc.mu.Unlock()
	if last.Host != "example.com:"+rc.port || last.TLS == nil || last.TLS.ServerName != "example.com" {
		t.Fatalf("Host %q SNI %q", last.Host, last.TLS.ServerName)
	}
	if log.count() != 1 || log.dials[0] != netip.MustParseAddrPort("127.0.0.1:"+rc.port) {
		t.Fatalf("dials %v", log.dials)
	}
	// Literal loopback works too when allowlisted.
	resp, err = NewClient(opts).Get("https://127.0.0.1:" + rc.port + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Plain http stays refused unless AllowHTTP.
	if _, err := NewClient(opts).Get("http://127.0.0.1:" + rc.port + "/"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("http with allowlist only: %v", err)
	}
}

// The same over IPv6 loopback, when the machine has it.
func TestAllowlistedIPv6LoopbackReceiver(t *testing.T) {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	var hits atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	srv.Listener.Close()
	srv.Listener = l
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	res := newResolver()
	res.set("example.com", addrs("::1"))
	dl := &dialLog{}
	opts := testOpts(t, res, dl)
	opts.TLSConfig = &tls.Config{RootCAs: pool}
	if _, err := NewClient(opts).Get("https://example.com:" + port + "/"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("without allowlist: %v", err)
	}
	opts.AllowPrivate = loopbackAllow
	resp, err := NewClient(opts).Get("https://example.com:" + port + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hits.Load() != 1 || dl.count() != 1 {
		t.Fatalf("hits %d dials %d", hits.Load(), dl.count())
	}
}

func TestHostHeaderMismatchRefused(t *testing.T) {
	rc := newReceiver(t)
	res := newResolver()
	res.set("example.com", addrs("127.0.0.1"))
	opts := testOpts(t, res, &dialLog{})
	opts.AllowPrivate = loopbackAllow
	opts.TLSConfig = rc.roots()
	req, _ := http.NewRequest("GET", "https://example.com:"+rc.port+"/", nil)
	req.Host = "169.254.169.254"
	if _, err := NewClient(opts).Do(req); !errors.Is(err, ErrBlocked) {
		t.Fatalf("err = %v", err)
	}
}

func TestClassify(t *testing.T) {
	rc := newReceiver(t)
	res := newResolver()
	res.set("example.com", addrs("127.0.0.1"))
	base := func() Options {
		o := testOpts(t, res, &dialLog{})
		o.AllowPrivate = loopbackAllow
		o.TLSConfig = rc.roots()
		return o
	}
	get := func(o Options, url string) Reason {
		resp, err := NewClient(o).Get(url)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		return Classify(err, resp)
	}
	u := "https://example.com:" + rc.port

	for code, want := range map[int]Reason{200: ReasonOK, 204: ReasonOK, 400: ReasonHTTP4xx, 404: ReasonHTTP4xx,
		410: ReasonHTTP4xx, 413: ReasonHTTP4xx, 500: ReasonHTTP5xx, 503: ReasonHTTP5xx} {
		if got := get(base(), fmt.Sprintf("%s/status/%d", u, code)); got != want {
			t.Errorf("status %d: %s want %s", code, got, want)
		}
	}

	o := base()
	o.HeaderTimeout = 200 * time.Millisecond
	if got := get(o, u+"/slow"); got != ReasonTimeout {
		t.Errorf("header timeout: %s", got)
	}
	o = base()
	o.TotalTimeout = 300 * time.Millisecond
	if got := get(o, u+"/slow"); got != ReasonTimeout {
		t.Errorf("total timeout: %s", got)
	}

	// Connection refused: a loopback port with no listener.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	_, closedPort, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	if got := get(base(), "https://127.0.0.1:"+closedPort+"/"); got != ReasonConnectionRefused {
		t.Errorf("refused: %s", got)
	}

	// TLS errors: untrusted certificate; wrong name; plain HTTP server.
	o = base()
	o.TLSConfig = nil
	if got := get(o, u+"/"); got != ReasonTLSError {
		t.Errorf("untrusted cert: %s", got)
	}
	res.set("wrong-name.test", addrs("127.0.0.1"))
	if got := get(base(), "https://wrong-name.test:"+rc.port+"/"); got != ReasonTLSError {
		t.Errorf("hostname mismatch: %s", got)
	}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	_, plainPort, _ := net.SplitHostPort(plain.Listener.Addr().String())
	if got := get(base(), "https://127.0.0.1:"+plainPort+"/"); got != ReasonTLSError {
		t.Errorf("plain server: %s", got)
	}

	// Response size.
	o = base()
	o.MaxResponseBytes = 1024
	if got := get(o, u+"/big"); got != ReasonTooLarge {
		t.Errorf("big (content-length): %s", got)
	}
	if got := get(o, u+"/big-chunked"); got != ReasonTooLarge {
		t.Errorf("big (chunked): %s", got)
	}
	o.MaxResponseBytes = 2048
	if got := get(o, u+"/big"); got != ReasonOK {
		t.Errorf("exactly at limit: %s", got)
	}

	// DNS failure.
	if got := get(base(), "https://unknown.test/"); got != ReasonConnectionFailed || got.MCP() != "connection_refused" {
		t.Errorf("unknown host: %s", got)
	}
	if got := get(testOpts(t, res, &dialLog{}), "https://10.0.0.1/"); got != ReasonBlocked || got.MCP() != "connection_refused" {
		t.Errorf("blocked: %s", got)
	}
	if Classify(nil, nil) != ReasonConnectionFailed {
		t.Error("nil, nil")
	}
	for r, want := range map[Reason]string{ReasonOK: "", ReasonTimeout: "timeout", ReasonTLSError: "tls_error",
		ReasonHTTP5xx: "http_5xx", ReasonTooLarge: "http_4xx", ReasonConnectionRefused: "connection_refused"} {
		if r.MCP() != want {
			t.Errorf("%s.MCP() = %q", r, r.MCP())
		}
	}
}

func TestAddrPolicy(t *testing.T) {
	allowed := []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "172.32.0.1", "100.128.0.1", "192.0.3.1",
		"2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "::ffff:8.8.8.8", "64:ff9b::808:808"}
	for _, a := range allowed {
		if err := CheckAddr(netip.MustParseAddr(a), Options{}); err != nil {
			t.Errorf("%s refused: %v", a, err)
		}
	}
	blocked := []string{"127.0.0.1", "10.255.255.255", "172.16.0.0", "192.168.255.255", "169.254.0.1",
		"100.127.255.255", "0.1.2.3", "198.19.255.255", "224.0.0.251", "255.255.255.255",
		"::1", "::", "::ffff:10.0.0.1", "fe80::1", "fd00::1", "ff05::2", "2001:db8::", "64:ff9b::a00:1",
		"2002::1", "2001::1", "1::1", "4000::1", "fe80::1%eth0"}
	for _, a := range blocked {
		if err := CheckAddr(netip.MustParseAddr(a), Options{}); !errors.Is(err, ErrBlocked) {
			t.Errorf("%s allowed", a)
		}
	}
	if err := CheckAddr(netip.MustParseAddr("::ffff:127.0.0.1"), Options{AllowPrivate: loopbackAllow}); err != nil {
		t.Errorf("mapped loopback with allowlist: %v", err)
	}
	// The socket-level re-check.
	d := &dialer{o: Options{}.withDefaults()}
	if err := d.control("tcp4", "127.0.0.1:443", nil); !errors.Is(err, ErrBlocked) {
		t.Errorf("control allowed loopback: %v", err)
	}
	if err := d.control("tcp4", "8.8.8.8:443", nil); err != nil {
		t.Errorf("control refused public: %v", err)
	}
}

func TestParseAllowlistAndEnv(t *testing.T) {
	p, err := ParseAllowlist(" 127.0.0.0/8, ::1 ,10.1.2.3,::ffff:192.168.0.0/112,")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"127.0.0.0/8", "::1/128", "10.1.2.3/32", "192.168.0.0/16"}
	if len(p) != len(want) {
		t.Fatalf("%v", p)
	}
	for i := range want {
		if p[i].String() != want[i] {
			t.Errorf("%d: %s want %s", i, p[i], want[i])
		}
	}
	for _, bad := range []string{"127.0.0.1/33", "nonsense", "fe80::1%eth0"} {
		if _, err := ParseAllowlist(bad); err == nil {
			t.Errorf("ParseAllowlist(%q) accepted", bad)
		}
	}
	t.Setenv(EnvAllow, "127.0.0.0/8")
	t.Setenv(EnvAllowHTTP, "true")
	o, err := FromEnv(os.Getenv, Options{})
	if err != nil || !o.AllowHTTP || len(o.AllowPrivate) != 1 {
		t.Fatalf("FromEnv = %+v, %v", o, err)
	}
	t.Setenv(EnvAllow, "bogus")
	if _, err := FromEnv(os.Getenv, Options{}); err == nil {
		t.Fatal("bad env accepted")
	}
}

func TestCAFromEnv(t *testing.T) {
	rc := newReceiver(t)
	dir := t.TempDir()
	pemFile := dir + "/ca.pem"
	if err := os.WriteFile(pemFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvCAFile, pemFile)
	res := newResolver()
	res.set("example.com", addrs("127.0.0.1"))
	opts := testOpts(t, res, &dialLog{})
	opts.AllowPrivate = loopbackAllow
	opts, err := CAFromEnv(os.Getenv, opts)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := NewClient(opts).Get("https://example.com:" + rc.port + "/")
	if err != nil {
		t.Fatalf("CA from %s not trusted: %v", EnvCAFile, err)
	}
	resp.Body.Close()
	t.Setenv(EnvCAFile, dir+"/missing.pem")
	if _, err := CAFromEnv(os.Getenv, Options{}); err == nil {
		t.Error("missing file accepted")
	}
	os.WriteFile(dir+"/empty.pem", []byte("nothing"), 0o600)
	t.Setenv(EnvCAFile, dir+"/empty.pem")
	if _, err := CAFromEnv(os.Getenv, Options{}); err == nil {
		t.Error("file without certificates accepted")
	}
	t.Setenv(EnvCAFile, "")
	if o, err := CAFromEnv(os.Getenv, Options{}); err != nil || o.TLSConfig != nil {
		t.Error("unset changed options")
	}
}

// TestLazyCAFromEnv: the CA file is read on the first client that needs it, not before, and only once;
// a client whose roots cannot be loaded sends nothing and answers the loading error.
func TestLazyCAFromEnv(t *testing.T) {
	rc := newReceiver(t)
	dir := t.TempDir()
	pemFile := dir + "/ca.pem"
	t.Setenv(EnvCAFile, pemFile)
	opts := LazyCAFromEnv(os.Getenv, Options{}) // the file does not exist yet: nothing is read here
	if opts.Roots == nil || opts.TLSConfig != nil {
		t.Fatalf("LazyCAFromEnv set %+v", opts)
	}
	if err := os.WriteFile(pemFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	res := newResolver()
	res.set("example.com", addrs("127.0.0.1"))
	base := testOpts(t, res, &dialLog{})
	base.AllowPrivate = loopbackAllow
	base.Roots = opts.Roots
	resp, err := NewClient(base).Get("https://example.com:" + rc.port + "/")
	if err != nil {
		t.Fatalf("CA from %s not trusted on first use: %v", EnvCAFile, err)
	}
	resp.Body.Close()
	if err := os.Remove(pemFile); err != nil {
		t.Fatal(err)
	}
	resp, err = NewClient(base).Get("https://example.com:" + rc.port + "/") // a second client: the pool is built once
	if err != nil {
		t.Fatalf("second client re-read the removed file: %v", err)
	}
	resp.Body.Close()

	t.Setenv(EnvCAFile, dir+"/missing.pem")
	bad := LazyCAFromEnv(os.Getenv, base)
	if err := bad.Roots.Err(); err == nil || !strings.Contains(err.Error(), EnvCAFile) {
		t.Fatalf("missing file: Err = %v", err)
	}
	dl := &dialLog{}
	bad.dialHook = testOpts(t, res, dl).dialHook
	if _, err := NewClient(bad).Get("https://example.com:" + rc.port + "/"); err == nil || !strings.Contains(err.Error(), "missing.pem") {
		t.Fatalf("client with unloadable roots: %v", err)
	}
	if dl.count() != 0 {
		t.Fatalf("a client with unloadable roots dialled %d times", dl.count())
	}
	t.Setenv(EnvCAFile, "")
	if o := LazyCAFromEnv(os.Getenv, Options{}); o.Roots != nil || o.Roots.Err() != nil {
		t.Error("unset set Roots")
	}
}

func TestReadLimited(t *testing.T) {
	b, err := ReadLimited(strings.NewReader("12345"), 5)
	if err != nil || string(b) != "12345" {
		t.Fatal(b, err)
	}
	if _, err := ReadLimited(strings.NewReader("123456"), 5); !errors.Is(err, ErrResponseTooLarge) {
		t.Fatal(err)
	}
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range hostileTargets("8443") {
		f.Add(s)
	}
	f.Add("https://example.com/hooks?x=1")
	f.Add("https://[2606:4700::1111]:443/")
	f.Fuzz(func(t *testing.T, raw string) {
		err := CheckURL(raw, Options{})
		if err == nil {
			u, perr := checkURL(raw, Options{})
			if perr != nil || u.Scheme != "https" || u.User != nil || u.Hostname() == "" {
				t.Fatalf("accepted %q", raw)
			}
			if a, aerr := netip.ParseAddr(u.Hostname()); aerr == nil {
				if addrBlockReason(a, nil) != "" {
					t.Fatalf("accepted blocked literal %q", raw)
				}
			} else if isNumericLabel(u.Hostname()[strings.LastIndex(strings.TrimSuffix(u.Hostname(), "."), ".")+1:]) {
				t.Fatalf("accepted numeric host %q", raw)
			}
		} else if !errors.Is(err, ErrBlocked) {
			t.Fatalf("error %v does not wrap ErrBlocked", err)
		}
	})
}

// TestReadResponse: a body of known length is read whole and to its end (the connection is reused), one of
// unknown length through ReadLimited, and the limit holds either way.
func TestReadResponse(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/known":
			w.Header().Set("Content-Length", "5")
			_, _ = io.WriteString(w, "hello")
		case "/empty":
			w.Header().Set("Content-Length", "0")
		case "/big":
			w.Header().Set("Content-Length", "6")
			_, _ = io.WriteString(w, "123456")
		case "/chunked":
			_, _ = io.WriteString(w, "abc")
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, r.URL.Query().Get("more"))
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	get := func(path string) ([]byte, error) {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return ReadResponse(resp, 5)
	}
	for range 3 {
		if b, err := get("/known"); err != nil || string(b) != "hello" {
			t.Fatalf("known length: %q %v", b, err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for three answers of known length read by ReadResponse, want 1 (reused)", n)
	}
	if b, err := get("/empty"); err != nil || b == nil || len(b) != 0 {
		t.Fatalf("empty: %#v %v", b, err)
	}
	if _, err := get("/big"); !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("Content-Length over the limit: %v", err)
	}
	if b, err := get("/chunked?more=de"); err != nil || string(b) != "abcde" {
		t.Fatalf("unknown length within the limit: %q %v", b, err)
	}
	if _, err := get("/chunked?more=def"); !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("unknown length over the limit: %v", err)
	}
	// A body that runs past the length it declared (not net/http's, which ends there) is an error.
	lying := &http.Response{ContentLength: 2, Body: io.NopCloser(strings.NewReader("abc"))}
	if _, err := ReadResponse(lying, 5); err == nil || !strings.Contains(err.Error(), "longer than its Content-Length") {
		t.Fatalf("body longer than declared: %v", err)
	}
	short := &http.Response{ContentLength: 4, Body: io.NopCloser(strings.NewReader("abc"))}
	if _, err := ReadResponse(short, 5); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("body shorter than declared: %v", err)
	}
}

// TestTransportOptions: a header timeout that cannot fire before the total one is not set, and
// DisableCompression sends no Accept-Encoding.
func TestTransportOptions(t *testing.T) {
	transport := func(c *http.Client) *http.Transport { return c.Transport.(*guard).next.(*http.Transport) }
	if got := transport(NewClient(Options{HeaderTimeout: 10 * time.Second, TotalTimeout: 15 * time.Second})).ResponseHeaderTimeout; got != 10*time.Second {
		t.Fatalf("header timeout under the total: transport has %v, want 10s", got)
	}
	for _, h := range []time.Duration{15 * time.Second, 20 * time.Second} {
		if got := transport(NewClient(Options{HeaderTimeout: h, TotalTimeout: 15 * time.Second})).ResponseHeaderTimeout; got != 0 {
			t.Fatalf("header timeout %v with a total of 15s: transport has %v, want none", h, got)
		}
	}

	rc := newReceiver(t)
	res := newResolver()
	res.set("example.com", addrs("127.0.0.1"))
	for _, disable := range []bool{false, true} {
		opts := testOpts(t, res, &dialLog{})
		opts.AllowPrivate = loopbackAllow
		opts.TLSConfig = rc.roots()
		opts.DisableCompression = disable
		resp, err := NewClient(opts).Get("https://example.com:" + rc.port + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		rc.mu.Lock()
		got := rc.last.Header.Get("Accept-Encoding")
		rc.mu.Unlock()
		if want := map[bool]string{false: "gzip", true: ""}[disable]; got != want {
			t.Fatalf("DisableCompression %v: Accept-Encoding %q, want %q", disable, got, want)
		}
	}
}
