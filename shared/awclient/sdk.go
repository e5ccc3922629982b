package awclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/appwrite/sdk-for-go/client"
)

// Do runs one call of the official Go SDK as auth within ctx, and returns its result or an *Error. call gets
// an SDK client made for this call only:
//
//	row, err := awclient.Do(ctx, aw, awclient.Key(key), func(sdk client.Client) (*models.Row, error) {
//		return tablesdb.New(sdk).GetRow(databaseID, tableID, rowID)
//	})
//
// The SDK builds its requests without a context; the client's transport gives every request ctx, so the
// call ends with ctx (and within the *http.Client's Timeout), and bounds the answer as Call does. An error
// answer is an *Error with Appwrite's status, type and message; an answer the SDK cannot read into its model
// is an *Error of type invalid_response.
//
// The SDK writes ids into the path as they are. A request whose path below the endpoint has a segment that
// is not an Appwrite id or a route word (1 or more of A-Z, a-z, 0-9, '.', '_' and '-', but not "." or "..")
// is refused before it is sent, and so is a query or fragment on anything but a GET: no id climbs out of its
// place in the path. An id with a '/' or a '?' still names another route below it, which this check cannot
// tell: the caller checks every id that comes from a user (ValidID) before it reaches the SDK.
func Do[T any](ctx context.Context, c *Client, auth Auth, call func(sdk client.Client) (T, error)) (T, error) {
	if c.hc.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.hc.Timeout)
		defer cancel()
	}
	base := c.hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	t := &callTransport{ctx: ctx, base: base, maxAnswer: c.maxAnswer, prefix: pathOf(c.endpoint)}
	sdk := client.New()
	sdk.Endpoint = c.endpoint
	// The call's client: the transport above, the redirect policy and cookies of the Client's; the timeout is
	// in ctx (a client Timeout would end a context the transport replaces).
	sdk.Client = &http.Client{Transport: t, CheckRedirect: c.hc.CheckRedirect, Jar: c.hc.Jar}
	sdk.Timeout = 0
	for k, v := range auth.headers(c.project) {
		sdk.Headers[k] = v
	}
	v, err := call(sdk)
	if err != nil {
		var zero T
		return zero, t.fail(err)
	}
	return v, nil
}

// pathOf is the path of the endpoint URL, without a trailing slash ("/v1").
func pathOf(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	return strings.TrimRight(u.EscapedPath(), "/")
}

// callTransport is the transport of one SDK call: it gives each request the call's context, refuses a path
// that is not made of ids and route words, and bounds the answer. The SDK's *http.Client calls it on the
// call's goroutine, so status and readErr are read after the call without a lock.
type callTransport struct {
	ctx       context.Context
	base      http.RoundTripper
	maxAnswer int64
	prefix    string // the endpoint's path: what comes after it is checked

	status  int   // the status of the last answer
	readErr error // a failure to read the last answer's body
}

// idChars are the characters of Appwrite ids and route words.
const idChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"

// appwriteID is ^[a-zA-Z0-9][a-zA-Z0-9._-]{0,35}$ (eventcatalog.IDPattern, in the tools' schemas),
// utopia-php/database's UID validator.
var appwriteID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,35}$`) })

// ValidID reports whether id is an Appwrite id: 1 to 36 characters of A-Z, a-z, 0-9, '.', '_' and '-', not
// starting with one of the last three (utopia-php/database's UID validator, which Appwrite applies to every
// id in a route's path).
func ValidID(id string) bool { return appwriteID().MatchString(id) }

// RoundTrip implements http.RoundTripper.
func (t *callTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.checkPath(req); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	res, err := t.base.RoundTrip(req.WithContext(t.ctx))
	if err != nil {
		return nil, err
	}
	t.status, t.readErr = res.StatusCode, nil
	res.Body = &boundedBody{t: t, body: res.Body, status: res.StatusCode}
	return res, nil
}

// checkPath refuses a request whose path below the endpoint is not made of ids and route words, or that
// carries a fragment, or a query on another method than GET (the SDK sends parameters in the body then).
func (t *callTransport) checkPath(req *http.Request) error {
	rest, ok := strings.CutPrefix(req.URL.EscapedPath(), t.prefix)
	if !ok || !strings.HasPrefix(rest, "/") {
		return fmt.Errorf("refused before sending: the path %q is not below the endpoint's %q", req.URL.EscapedPath(), t.prefix)
	}
	for _, seg := range strings.Split(rest[1:], "/") {
		if seg == "" || seg == "." || seg == ".." || strings.Trim(seg, idChars) != "" {
			return fmt.Errorf("refused before sending: the path segment %q is not an Appwrite id", seg)
		}
	}
	if req.URL.Fragment != "" || (req.Method != http.MethodGet && req.URL.RawQuery != "") {
		return fmt.Errorf("refused before sending: an id of %s %s carries a query or a fragment", req.Method, req.URL.EscapedPath())
	}
	return nil
}

// fail turns the error of an SDK call into an *Error.
func (t *callTransport) fail(err error) *Error {
	var ae *client.AppwriteError
	if errors.As(err, &ae) {
		return errorAnswer(ae.GetStatusCode(), []byte(ae.GetResponse()))
	}
	var e *Error
	if errors.As(err, &e) {
		return e // the answer was over the bound
	}
	var ue *url.Error
	if errors.As(err, &ue) || t.readErr != nil || t.status == 0 {
		return &Error{Err: err} // no answer, or a body that could not be read
	}
	// An answer arrived and the SDK could not read it into its model (not JSON, not the model's types).
	return invalidAnswer(t.status, "the answer is not the expected JSON: %v", err)
}

// boundedBody is an answer's body read at most to the client's bound: a successful answer longer than the
// bound fails with an *Error (never a truncated value); an error answer is cut there (its message is what
// could be read).
type boundedBody struct {
	t      *callTransport
	body   io.ReadCloser
	status int
	read   int64
}

// Read implements io.Reader.
func (b *boundedBody) Read(p []byte) (int, error) {
	if b.read > b.t.maxAnswer {
		if b.status >= 300 {
			return 0, io.EOF
		}
		return 0, invalidAnswer(b.status, "the answer is over %d bytes", b.t.maxAnswer)
	}
	if left := b.t.maxAnswer + 1 - b.read; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.body.Read(p)
	b.read += int64(n)
	if err != nil && err != io.EOF {
		b.t.readErr = err
	}
	return n, err
}

// Close implements io.Closer.
func (b *boundedBody) Close() error { return b.body.Close() }
