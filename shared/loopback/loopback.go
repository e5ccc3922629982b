// Package loopback treats localhost names as RFC 6761 §6.3 allows: "localhost" and every name under
// ".localhost" are this machine. Browsers and curl resolve them to the loopback address themselves; Go's
// resolver asks the system, which usually knows only "localhost". Local Appwrite servers serve function
// domains under such names (Appwrite's own .env sets _APP_DOMAIN_FUNCTIONS=functions.localhost), so the tools
// that call them dial with this package.
package loopback

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"
)

// IsLocalhostName reports whether host (without a port) is "localhost" or a name under ".localhost", in any
// case, with or without a final dot.
func IsLocalhostName(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// Dial returns a DialContext that sends a localhost name to 127.0.0.1 (same port) and every other address
// to d (a net.Dialer with 30 s timeouts when nil).
func Dial(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if d == nil {
		d = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, port, err := net.SplitHostPort(addr); err == nil && IsLocalhostName(host) {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
		return d.DialContext(ctx, network, addr)
	}
}

// Client is an HTTP client with timeout whose connections to localhost names go to 127.0.0.1 (Dial), with
// http.DefaultTransport's other settings.
func Client(timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = Dial(nil)
	return &http.Client{Timeout: timeout, Transport: tr}
}
