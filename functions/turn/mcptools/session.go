package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// ClientName and ClientVersion identify the agent to MCP servers.
const (
	ClientName    = "appwrite-agent"
	ClientVersion = "1.0.0"
)

// authRequired is a 401 from the server: resourceMetadata is the challenge's resource_metadata URL.
type authRequired struct{ resourceMetadata string }

func (a *authRequired) Error() string {
	return "the server answered HTTP 401 (authorization required)"
}

// session is one connected MCP server of the turn.
type session struct {
	srv    server
	client *client.Client
	// protocol is the negotiated protocol version (2026-07-28 when the server offers it).
	protocol string
}

// dial connects to srv with the bearer token through hc (protocol 2026-07-28 through server/discover
// where the server offers it, the initialize handshake otherwise) and lists its tools. A 401 comes back as
// *authRequired. The session is closed on error.
//
// A server may answer server/discover and then refuse 2026-07-28 on the next request (the official Go
// SDK's stateful handler does): the connection is then made again on the legacy handshake. Nothing but
// the handshake and tools/list has been sent at that point.
func dial(ctx context.Context, hc *http.Client, srv server, accessToken string, discoverTimeout time.Duration) (*session, []mcp.Tool, error) {
	s, tools, err := dialOnce(ctx, hc, srv, accessToken, discoverTimeout, false)
	var unsupported mcp.UnsupportedProtocolVersionError
	if err != nil && errors.As(err, &unsupported) && mcp.IsModernProtocol(unsupported.Version) {
		s, tools, err = dialOnce(ctx, hc, srv, accessToken, discoverTimeout, true)
	}
	if err != nil {
		return nil, nil, connError(err)
	}
	return s, tools, nil
}

func dialOnce(ctx context.Context, hc *http.Client, srv server, accessToken string, discoverTimeout time.Duration, legacy bool) (*session, []mcp.Tool, error) {
	tr, err := transport.NewStreamableHTTP(srv.URL,
		transport.WithHTTPBasicClient(hc),
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + accessToken}),
		transport.WithHTTPLogger(slog.New(slog.DiscardHandler)),
	)
	if err != nil {
		return nil, nil, err
	}
	opts := []client.ClientOption{client.WithDiscoverTimeout(discoverTimeout)}
	if legacy {
		//lint:ignore SA1019 the initialize handshake is the fallback for servers that do not answer
		// server/discover (docs/turn.md "MCP connections"); it goes when mcp-go removes it.
		opts = append(opts, client.WithLegacyProtocolOnly())
	}
	c := client.NewClient(tr, opts...)
	s := &session{srv: srv, client: c}
	if err := c.Start(ctx); err != nil {
		s.close()
		return nil, nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: ClientName, Version: ClientVersion}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		s.close()
		return nil, nil, err
	}
	s.protocol = res.ProtocolVersion
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		s.close()
		return nil, nil, err
	}
	return s, list.Tools, nil
}

// connError turns a 401 into *authRequired and shortens transport errors.
func connError(err error) error {
	var ar *transport.AuthorizationRequiredError
	if errors.As(err, &ar) {
		return &authRequired{resourceMetadata: ar.ResourceMetadataURL}
	}
	var te *transport.Error
	if errors.As(err, &te) && te.Err != nil {
		err = te.Err
	}
	return errors.New(strings.TrimPrefix(describeHTTPError(err).Error(), "failed to send request: "))
}

// close ends the session (a legacy session is deleted on the server) within a short deadline.
func (s *session) close() {
	if s != nil && s.client != nil {
		_ = s.client.Close()
	}
}

// toolError is a tool result the server flagged with isError; its text is the error's.
type toolError struct{ text string }

func (e *toolError) Error() string { return e.text }

// call sends one tools/call and returns the result as text. A result with isError comes back as a
// *toolError carrying its text. The call is sent once: a 401 here is reported, never retried.
func (s *session) call(ctx context.Context, name string, args json.RawMessage) (string, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	if len(args) > 0 {
		req.Params.Arguments = args
	}
	res, err := s.client.CallTool(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("MCP server '%s' did not answer in time: %v", s.srv.ID, ctx.Err())
		}
		var ar *authRequired
		if err := connError(err); errors.As(err, &ar) {
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
		case mcp.TextContent:
			parts = append(parts, t.Text)
		case *mcp.TextContent:
			parts = append(parts, t.Text)
		case mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image content, %s, not shown]", t.MIMEType))
		case mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio content, %s, not shown]", t.MIMEType))
		case mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", t.URI))
		case mcp.EmbeddedResource:
			if tr, ok := t.Resource.(mcp.TextResourceContents); ok {
				parts = append(parts, tr.Text)
			} else {
				parts = append(parts, "[embedded resource, not shown]")
			}
		}
	}
	if len(parts) == 0 {
		switch {
		case len(res.RawStructuredContent) > 0:
			return string(res.RawStructuredContent)
		case res.StructuredContent != nil:
			b, _ := json.Marshal(res.StructuredContent)
			return string(b)
		}
	}
	return strings.Join(parts, "\n")
}
