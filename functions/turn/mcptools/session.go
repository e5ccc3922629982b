package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"appwrite-agent/shared/mcpauth"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// ClientName and ClientVersion identify the agent to MCP servers.
const (
	ClientName    = "appwrite-agent"
	ClientVersion = "1.0.0"
)

// legacyProtocol is the newest protocol version of the initialize handshake: asking for it makes the
// SDK's client skip server/discover.
const legacyProtocol = "2025-11-25"

// MaxToolsPerConnection bounds the tools listed from one server (tools/list is paged: a server that
// keeps handing out cursors is cut off here, and the connection is skipped).
const MaxToolsPerConnection = 1000

// authRequired is a 401 from the server: resourceMetadata is the challenge's resource_metadata URL.
type authRequired struct{ resourceMetadata string }

func (a *authRequired) Error() string {
	return "the server answered HTTP 401 (authorization required)"
}

// bearer is a session's auth.OAuthHandler for the official SDK's Streamable HTTP transport: every request
// carries the connection's access token, and a 401 is not authorised again here but ends the request with
// *authRequired (the refresh is loadOne's, once, before any tool call; a tools/call is never re-sent).
type bearer struct{ token oauth2.TokenSource }

func newBearer(accessToken string) *bearer {
	return &bearer{token: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: accessToken, TokenType: "Bearer"})}
}

// TokenSource implements auth.OAuthHandler.
func (b *bearer) TokenSource(context.Context) (oauth2.TokenSource, error) { return b.token, nil }

// Authorize implements auth.OAuthHandler (the SDK calls it on 401 and 403): it reads the refusal and
// returns it as the request's error, so the transport does not send the request again.
func (b *bearer) Authorize(_ context.Context, _ *http.Request, res *http.Response) error {
	defer res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 200))
		r := &refused{status: res.StatusCode, body: strings.ToValidUTF8(strings.TrimSpace(string(body)), "?")}
		if p := bearerParams(res.Header.Values("WWW-Authenticate")); p["error"] == "insufficient_scope" {
			r.insufficientScope, r.scope = true, strings.ToValidUTF8(p["scope"], "?")
		}
		return r
	}
	return &authRequired{resourceMetadata: bearerParams(res.Header.Values("WWW-Authenticate"))["resource_metadata"]}
}

// refused is a 403 from the server, with the start of its body; insufficientScope when its Bearer challenge
// says error="insufficient_scope" (RFC 6750 §3.1, the MCP spec's step-up), with the scope it asks for.
type refused struct {
	status            int
	body              string
	insufficientScope bool
	scope             string
}

func (r *refused) Error() string {
	switch {
	case r.insufficientScope && r.scope != "":
		return fmt.Sprintf("the server needs more access than the connection was granted (HTTP %d insufficient_scope, scope %q): connect it again to grant it", r.status, r.scope)
	case r.insufficientScope:
		return fmt.Sprintf("the server needs more access than the connection was granted (HTTP %d insufficient_scope): connect it again to grant it", r.status)
	case r.body == "":
		return fmt.Sprintf("the server answered HTTP %d", r.status)
	}
	return fmt.Sprintf("the server answered HTTP %d: %s", r.status, r.body)
}

// bearerParams are the parameters of the first Bearer challenge (RFC 6750 §3: resource_metadata, scope,
// error), none when there is none or the header does not parse.
func bearerParams(challenges []string) map[string]string {
	cs, err := oauthex.ParseWWWAuthenticate(challenges)
	if err != nil {
		return nil
	}
	for _, c := range cs {
		if c.Scheme == "bearer" {
			return c.Params
		}
	}
	return nil
}

// session is one connected MCP server of the turn.
type session struct {
	srv server
	cs  *mcp.ClientSession
	// protocol is the negotiated protocol version (2026-07-28 when the server offers it).
	protocol string
}

// dial connects to srv with the bearer token through hc with the official MCP Go SDK (protocol 2026-07-28
// through server/discover where the server offers it, the initialize handshake otherwise) and lists its
// tools. A 401 comes back as *authRequired. The session is closed on error.
//
// The connection is made again on the legacy handshake alone when the first one failed in a way the SDK's
// own fallback does not cover: a server that answers server/discover, offering 2026-07-28, and then
// refuses 2026-07-28 on the next request; or an answer to server/discover that broke the SDK's connection
// (a web page, a body that is not JSON-RPC), after which the SDK's fallback initialize cannot be sent.
// Nothing but server/discover and tools/list has been sent at that point.
func dial(ctx context.Context, hc *http.Client, srv server, accessToken string) (*session, []*mcp.Tool, error) {
	s, tools, err := dialOnce(ctx, hc, srv, accessToken, "")
	if err != nil && ctx.Err() == nil {
		werr := serverError(err)
		if (werr != nil && werr.Code == mcp.CodeUnsupportedProtocolVersion) || errors.Is(err, mcp.ErrConnectionClosed) {
			s, tools, err = dialOnce(ctx, hc, srv, accessToken, legacyProtocol)
		}
	}
	if err != nil {
		return nil, nil, connError(err)
	}
	return s, tools, nil
}

// dialOnce connects and lists the tools; protocol "" lets the SDK probe server/discover first.
func dialOnce(ctx context.Context, hc *http.Client, srv server, accessToken, protocol string) (*session, []*mcp.Tool, error) {
	tr := &mcp.StreamableClientTransport{
		Endpoint:   srv.URL,
		HTTPClient: hc,
		// The turn only calls tools: no standalone GET stream for server-initiated messages (a legacy
		// session would otherwise hold one open for the whole turn).
		DisableStandaloneSSE: true,
		OAuthHandler:         newBearer(accessToken),
	}
	client := mcp.NewClient(&mcp.Implementation{Name: ClientName, Version: ClientVersion}, &mcp.ClientOptions{
		// No roots, sampling or elicitation: the turn does not answer server requests.
		Capabilities: &mcp.ClientCapabilities{},
	})
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		return nil, nil, err
	}
	s := &session{srv: srv, cs: cs}
	if res := cs.InitializeResult(); res != nil {
		s.protocol = res.ProtocolVersion
	}
	var tools []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			s.close()
			return nil, nil, err
		}
		if len(tools) == MaxToolsPerConnection {
			s.close()
			return nil, nil, fmt.Errorf("the server listed more than %d tools", MaxToolsPerConnection)
		}
		tools = append(tools, t)
	}
	return s, tools, nil
}

// connError keeps a 401 as *authRequired and says in one line what else failed: a 403, the HTTP client's
// cause (an SSRF refusal, a refused connection, a redirect), the server's JSON-RPC error, or else the
// SDK's account of the request that failed ("sending "initialize": Not Found").
func connError(err error) error {
	var ar *authRequired
	if errors.As(err, &ar) {
		return ar
	}
	var rf *refused
	if errors.As(err, &rf) {
		return rf
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return mcpauth.DescribeHTTPError(ue)
	}
	if werr := serverError(err); werr != nil {
		return fmt.Errorf("the server answered error %d: %s", werr.Code, werr.Message)
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, `sending "`); i >= 0 {
		msg = msg[i:]
	}
	return errors.New(msg)
}

// The JSON-RPC codes the SDK gives its own transport failures (client or server closing, rejected by the
// transport): they are not the server's answer.
const (
	codeClientClosing = -32003
	codeServerClosing = -32004
	codeRejected      = -32005
)

// serverError is the first JSON-RPC error in err's tree that the server sent, nil when there is none.
func serverError(err error) *jsonrpc.Error {
	switch e := err.(type) {
	case nil:
		return nil
	case *jsonrpc.Error:
		if e.Code != codeClientClosing && e.Code != codeServerClosing && e.Code != codeRejected {
			return e
		}
		return nil
	case interface{ Unwrap() []error }:
		for _, w := range e.Unwrap() {
			if werr := serverError(w); werr != nil {
				return werr
			}
		}
		return nil
	default:
		return serverError(errors.Unwrap(err))
	}
}

// close ends the session (a legacy session is deleted on the server, within SessionCloseTimeout).
func (s *session) close() {
	if s != nil && s.cs != nil {
		_ = s.cs.Close()
	}
}

// toolError is a tool result the server flagged with isError; its text is the error's.
type toolError struct{ text string }

func (e *toolError) Error() string { return e.text }

// call sends one tools/call and returns the result as text. A result with isError comes back as a
// *toolError carrying its text. The call is sent once: a 401 here is reported, never retried.
func (s *session) call(ctx context.Context, name string, args json.RawMessage) (string, error) {
	params := &mcp.CallToolParams{Name: name}
	if len(args) > 0 {
		params.Arguments = args
	}
	res, err := s.cs.CallTool(ctx, params)
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("MCP server '%s' did not answer in time: %v", s.srv.ID, ctx.Err())
		}
		var ar *authRequired
		if errors.As(err, &ar) {
			return "", fmt.Errorf("MCP server '%s' refused the access token (HTTP 401); the call was not retried", s.srv.ID)
		}
		return "", fmt.Errorf("MCP server '%s': %v", s.srv.ID, connError(err))
	}
	text := resultText(res)
	if res.IsError {
		if strings.TrimSpace(text) == "" {
			text = "Tool execution failed"
		}
		return "", &toolError{text: text}
	}
	return text, nil
}

// resultText renders a tool result for the model: the text parts joined by newlines (embedded text
// resources included), a short note for other content, the structured content when nothing else came.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch t := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, t.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image content, %s, not shown]", t.MIMEType))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio content, %s, not shown]", t.MIMEType))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", t.URI))
		case *mcp.EmbeddedResource:
			if t.Resource != nil && t.Resource.Blob == nil {
				parts = append(parts, t.Resource.Text)
			} else {
				parts = append(parts, "[embedded resource, not shown]")
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		return string(b)
	}
	return strings.Join(parts, "\n")
}
