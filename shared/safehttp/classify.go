package safehttp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"
)

// Reason is the outcome category of a request.
type Reason string

// Reasons. The first five are the MCP delivery categories (lastError and
// CallbackEndpointError data.reason); the others are finer and map onto them
// through MCP.
const (
	// ReasonOK: a 2xx response.
	ReasonOK Reason = "ok"
	// ReasonTimeout: connect, TLS handshake, header or total time ran out.
	ReasonTimeout Reason = "timeout"
	// ReasonConnectionRefused: the peer refused the connection.
	ReasonConnectionRefused Reason = "connection_refused"
	// ReasonTLSError: the TLS handshake failed (certificate, protocol).
	ReasonTLSError Reason = "tls_error"
	// ReasonHTTP4xx: a 4xx response.
	ReasonHTTP4xx Reason = "http_4xx"
	// ReasonHTTP5xx: a 5xx (or higher) response.
	ReasonHTTP5xx Reason = "http_5xx"
	// ReasonBlocked: the policy refused the destination; nothing was sent.
	ReasonBlocked Reason = "blocked_destination"
	// ReasonRedirect: a 3xx response, not followed.
	ReasonRedirect Reason = "redirect"
	// ReasonTooLarge: the response body exceeded the limit.
	ReasonTooLarge Reason = "response_too_large"
	// ReasonConnectionFailed: any other network failure (DNS, reset, ...).
	ReasonConnectionFailed Reason = "connection_failed"
)

// MCP returns the MCP delivery category for r: one of "timeout",
// "connection_refused", "tls_error", "http_4xx", "http_5xx", or "" for
// ReasonOK. Blocked destinations and other network failures count as
// connection_refused (no connection was made); redirects and oversized
// responses as http_4xx (the receiver answered, but not acceptably).
func (r Reason) MCP() string {
	switch r {
	case ReasonOK:
		return ""
	case ReasonTimeout, ReasonConnectionRefused, ReasonTLSError, ReasonHTTP4xx, ReasonHTTP5xx:
		return string(r)
	case ReasonRedirect, ReasonTooLarge:
		return string(ReasonHTTP4xx)
	default:
		return string(ReasonConnectionRefused)
	}
}

// Classify categorizes the result of client.Do (or of reading the body
// afterwards: pass the read error with the response). An error takes
// precedence over the response, except that a refused redirect reports
// ReasonRedirect.
func Classify(err error, resp *http.Response) Reason {
	if err != nil {
		return classifyErr(err)
	}
	if resp == nil {
		return ReasonConnectionFailed
	}
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return ReasonOK
	case c >= 300 && c < 400:
		return ReasonRedirect
	case c >= 500:
		return ReasonHTTP5xx
	default:
		return ReasonHTTP4xx
	}
}

func classifyErr(err error) Reason {
	var (
		certErr    *tls.CertificateVerificationError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
		recErr     tls.RecordHeaderError
		alertErr   tls.AlertError
		netErr     net.Error
	)
	switch {
	case errors.Is(err, ErrBlocked):
		return ReasonBlocked
	case errors.Is(err, ErrRedirect):
		return ReasonRedirect
	case errors.Is(err, ErrResponseTooLarge):
		return ReasonTooLarge
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return ReasonTimeout
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr),
		errors.As(err, &invalidErr), errors.As(err, &recErr), errors.As(err, &alertErr),
		strings.Contains(err.Error(), "tls: "),
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return ReasonTLSError
	case errors.Is(err, syscall.ECONNREFUSED):
		return ReasonConnectionRefused
	default:
		return ReasonConnectionFailed
	}
}
