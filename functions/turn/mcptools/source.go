// Package mcptools gives a turn the tools of its MCP connections (the reference's app/mcp/manager.py and
// write_guard.py): each connection of the request is validated, connected with the official MCP Go SDK's
// Streamable HTTP client and its bearer token through the SSRF-safe client (protocol 2026-07-28 where the
// server offers it, the legacy handshake otherwise), its access token refreshed once when it is expired or
// refused before any tool call, and its tools listed and exposed under safe, unique names.
// appwrite_call_tool is wrapped in the write guard. A connection that fails is skipped with a status
// notice; the turn goes on.
package mcptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/functions/turn/toolapi"
	"appwrite-agent/shared/mcpauth"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/turnrequest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of Source.
const (
	// DefaultConnectTimeout bounds loading one connection (refresh, handshake, tools/list).
	DefaultConnectTimeout = 8 * time.Second
	// DefaultDiscoverTimeout bounds the server/discover probe before falling back to initialize.
	DefaultDiscoverTimeout = 4 * time.Second
	// DefaultMaxResponseBytes bounds every MCP response body.
	DefaultMaxResponseBytes = 4 << 20
)

// Source is the function's MCP source (it implements engine.MCPSource). It holds no per-turn state: every
// Load builds its own HTTP client, sessions and write guards, and the returned Close releases them.
type Source struct {
	// HTTP is the SSRF policy for connection URLs and the OAuth endpoints (its timeouts are set per turn);
	// the function reads it from SAFEHTTP_ALLOW, SAFEHTTP_ALLOW_HTTP and SAFEHTTP_CA_FILE.
	HTTP safehttp.Options
	// HTTPErr, when set, is why the SSRF policy could not be read; every connection is then skipped (so
	// is every connection when HTTP.Roots cannot be loaded, which Load finds on its first connection).
	HTTPErr error
	// Budget bounds every MCP HTTP exchange (the turn's budget).
	Budget time.Duration
	// ConnectTimeout bounds loading one connection (DefaultConnectTimeout when zero).
	ConnectTimeout time.Duration
	// DiscoverTimeout bounds each server/discover probe (DefaultDiscoverTimeout, at most half of the
	// connection's time, when zero).
	DiscoverTimeout time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Log, when set, receives what went wrong (a connection skipped, and why).
	Log func(string)
	// Info, when set, receives what went as expected (a connection loaded).
	Info func(string)
	// NewID generates the ids of "unique()" (random when nil; tests set it).
	NewID func() string
}

// Skip notice texts.
const (
	noticePrefix = "MCP connection '%s' skipped: %s"
	// MsgNoToken is why a connection without an access token is skipped.
	MsgNoToken = "no access token; connect it again"
	// MsgDuplicate is why a second connection with the same id is skipped.
	MsgDuplicate = "another connection has the same id"
)

// Notice is the status message of a skipped connection.
func Notice(id, why string) string { return fmt.Sprintf(noticePrefix, id, why) }

// loaded is the outcome of one connection.
type loaded struct {
	srv       server
	sess      *session
	tools     []*mcp.Tool
	tok       mcpauth.Tokens
	refreshed bool
	err       error
}

// Load implements engine.MCPSource: the connections load in parallel, each within ConnectTimeout and the
// turn's deadline.
func (s *Source) Load(ctx context.Context, turn *request.Turn, taken map[string]bool) toolapi.MCPTools {
	var out toolapi.MCPTools
	conns := turn.MCPConnections
	if len(conns) == 0 {
		return out
	}
	results := make([]loaded, len(conns))
	httpErr := s.HTTPErr
	if httpErr == nil {
		httpErr = s.HTTP.Roots.Err()
	}
	var hc *http.Client
	if httpErr == nil {
		opts := s.HTTP
		if s.Budget > 0 {
			opts.HeaderTimeout, opts.TotalTimeout = s.Budget, s.Budget
		}
		if opts.MaxResponseBytes <= 0 {
			opts.MaxResponseBytes = DefaultMaxResponseBytes
		}
		hc = safehttp.NewClient(opts)
		hc.Transport = boundedRequests{next: hc.Transport, discover: s.discoverTimeout()}
	}
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for i, c := range conns {
		srv, err := resolveServer(c)
		results[i] = loaded{srv: srv, err: err}
		if err != nil {
			continue
		}
		if seen[srv.ID] {
			results[i].err = errors.New(MsgDuplicate)
			continue
		}
		seen[srv.ID] = true
		if httpErr != nil {
			results[i].err = fmt.Errorf("the SSRF policy is misconfigured: %v", httpErr)
			continue
		}
		wg.Add(1)
		go func(i int, c turnrequest.MCPConnection) {
			defer wg.Done()
			results[i] = s.loadOne(ctx, hc, results[i].srv, c)
		}(i, c)
	}
	wg.Wait()

	names := newNamer(taken)
	var sessions []*session
	for i, r := range results {
		if r.refreshed || r.err == nil {
			out.Credentials = append(out.Credentials, credential(r.srv, r.tok, conns[i].ClientInfo))
		}
		if r.err != nil {
			id := r.srv.ID
			if id == "" {
				id = conns[i].ID
			}
			out.Notices = append(out.Notices, Notice(id, r.err.Error()))
			if errors.Is(r.err, errNotNeeded) {
				s.infof("mcp: connection %q not loaded: %v", id, r.err)
			} else {
				s.logf("mcp: connection %q skipped: %v", id, r.err)
			}
			continue
		}
		sessions = append(sessions, r.sess)
		var guard *writeGuard
		for _, t := range r.tools {
			rt := newRemoteTool(r.sess, names.name(r.srv.ID, t.Name), t)
			if t.Name == GuardedTool && guard == nil {
				guard = newWriteGuard(rt, rt.Run, turn.Attachments, s.NewID)
				out.Tools = append(out.Tools, guard)
				continue
			}
			out.Tools = append(out.Tools, rt)
		}
	}
	out.Close = func() {
		var wg sync.WaitGroup
		for _, sess := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sess.close()
			}()
		}
		wg.Wait()
		if hc != nil {
			hc.CloseIdleConnections()
		}
	}
	return out
}

// SessionCloseTimeout bounds the DELETE that ends a legacy session when the turn ends (the SDK allows 5 s,
// which a slow server could add to a turn already near the platform's limit).
const SessionCloseTimeout = 2 * time.Second

// boundedRequests gives session-ending DELETE requests SessionCloseTimeout and each server/discover probe
// its own deadline: a server that does not answer the probe in time is spoken to with the initialize
// handshake (the SDK falls back on any failed probe) within what is left of the connection's time. The
// probe is the request the SDK marks "Mcp-Method: server/discover" (the 2026-07-28 standard headers).
type boundedRequests struct {
	next     http.RoundTripper
	discover time.Duration
}

// RoundTrip implements http.RoundTripper.
func (b boundedRequests) RoundTrip(r *http.Request) (*http.Response, error) {
	var timeout time.Duration
	switch {
	case r.Method == http.MethodDelete:
		timeout = SessionCloseTimeout
	case r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "server/discover" && b.discover > 0:
		timeout = b.discover
	default:
		return b.next.RoundTrip(r)
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	res, err := b.next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	// The deadline holds until the body is read and closed (the SDK reads it after RoundTrip returns).
	res.Body = cancelOnClose{ReadCloser: res.Body, cancel: cancel}
	return res, nil
}

// CloseIdleConnections forwards to the wrapped transport.
func (b boundedRequests) CloseIdleConnections() {
	if c, ok := b.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// cancelOnClose releases a request's deadline when its response body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// loadOne connects one validated connection: a known-expired access token is refreshed first; a 401
// before any tool call refreshes once (when not done already) and connects again.
func (s *Source) loadOne(ctx context.Context, hc *http.Client, srv server, c turnrequest.MCPConnection) loaded {
	out := loaded{srv: srv}
	tok, ok := mcpauth.ParseTokens(c.Tokens)
	if !ok {
		out.err = errors.New(MsgNoToken)
		return out
	}
	out.tok = tok
	timeout := s.connectTimeout()
	turnCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ci := mcpauth.ParseClientInfo(c.ClientInfo)
	refresh := func(hint string, challenged bool) error {
		nt, err := mcpauth.Refresh(ctx, hc, srv.URL, hint, challenged, out.tok, ci, s.now())
		if err != nil {
			return err
		}
		out.tok, out.refreshed = nt, true
		return nil
	}
	// A known-expired token is refreshed before it is sent. When that stops at discovery (the metadata is
	// not at the well-known URLs), the server's own 401 challenge may name where it is, or by naming nothing
	// show a 2025-03-26 server: the token is sent once to get the challenge, and the refresh is tried again
	// with it. A refresh the token endpoint refused is final.
	if tok.Expired(s.now()) && tok.Refreshable() != "" {
		if err := refresh("", false); err != nil {
			var de *mcpauth.DiscoveryError
			if !errors.As(err, &de) {
				out.err = fmt.Errorf("the access token expired and could not be refreshed: %v", err)
				return out
			}
		}
	}
	sess, tools, err := dial(ctx, hc, srv, out.tok.AccessToken)
	var ar *authRequired
	if errors.As(err, &ar) && !out.refreshed {
		if out.tok.Refreshable() == "" {
			out.err = errors.New("the server refused the access token (HTTP 401) and there is no refresh token; connect it again")
			return out
		}
		if rerr := refresh(ar.resourceMetadata, true); rerr != nil {
			out.err = fmt.Errorf("the server refused the access token (HTTP 401) and the refresh failed: %v", rerr)
			return out
		}
		sess, tools, err = dial(ctx, hc, srv, out.tok.AccessToken)
	}
	switch {
	case errors.As(err, &ar):
		out.err = errors.New("the server refused the access token (HTTP 401); connect it again")
	case err != nil && errors.Is(turnCtx.Err(), context.Canceled):
		out.err = errNotNeeded
	case err != nil && turnCtx.Err() != nil:
		out.err = errors.New("the turn's time ran out before the server answered")
	case err != nil && ctx.Err() != nil:
		out.err = fmt.Errorf("the server did not answer within %s", timeout)
	case err != nil:
		out.err = fmt.Errorf("could not connect to %s: %v", srv.URL, err)
	default:
		out.sess, out.tools = sess, tools
		s.infof("mcp: connection %q loaded %d tools (protocol %s, refreshed %v)", srv.ID, len(tools), sess.protocol, out.refreshed)
	}
	return out
}

// connectTimeout is ConnectTimeout, DefaultConnectTimeout when unset.
func (s *Source) connectTimeout() time.Duration {
	if s.ConnectTimeout > 0 {
		return s.ConnectTimeout
	}
	return DefaultConnectTimeout
}

// discoverTimeout is DiscoverTimeout, by default DefaultDiscoverTimeout but at most half the connection's
// time.
func (s *Source) discoverTimeout() time.Duration {
	if s.DiscoverTimeout > 0 {
		return s.DiscoverTimeout
	}
	return min(DefaultDiscoverTimeout, s.connectTimeout()/2)
}

func (s *Source) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// errNotNeeded: the turn cancelled the load (it answered without tools, or failed) before the connection
// was made. Not a fault of the server: it is logged as information, not as an error.
var errNotNeeded = errors.New("the turn no longer needed its tools")

func (s *Source) infof(format string, args ...any) {
	if s.Info != nil {
		s.Info(fmt.Sprintf(format, args...))
	}
}

func (s *Source) logf(format string, args ...any) {
	if s.Log != nil {
		s.Log(fmt.Sprintf(format, args...))
	}
}
