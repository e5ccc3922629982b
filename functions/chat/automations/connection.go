package automations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"appwrite-agent/functions/chat/store"
	"appwrite-agent/shared/eventsclient"
	"appwrite-agent/shared/mcpauth"
)

// ClientName is how chat names itself to MCP servers.
const ClientName = "appwrite-agent-chat"

// conn is one of a user's MCP connections, opened to call its events extension with the user's tokens: a
// known-expired access token is refreshed before the call, a 401 refreshes once and calls again, and a
// refreshed token is stored (sealed) at once, as the refresh token rotates.
type conn struct {
	s       *Service
	userID  string
	mc      store.MCPConnection
	tok     mcpauth.Tokens
	ci      mcpauth.ClientInfo
	ciRaw   json.RawMessage
	refresh bool // refreshed already during this use
}

// ConnectionError is a connection that cannot be used: not connected, or its tokens refused and not
// refreshable. The user reconnects it (the page's OAuth flow).
type ConnectionError struct {
	ConnectionID string
	Reason       string
}

func (e *ConnectionError) Error() string {
	return fmt.Sprintf("MCP connection '%s': %s: reconnect it", e.ConnectionID, e.Reason)
}

// open reads the user's connection and opens its tokens.
func (s *Service) open(ctx context.Context, userID, connectionID string) (*conn, error) {
	mc, err := s.st.MCPConnection(ctx, userID, connectionID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &ConnectionError{ConnectionID: connectionID, Reason: "there is no such MCP connection"}
	}
	if err != nil {
		return nil, err
	}
	rawTok, rawCI, err := s.st.OpenMCP(userID, mc)
	if err != nil {
		return nil, err
	}
	tok, ok := mcpauth.ParseTokens(rawTok)
	if !ok {
		return nil, &ConnectionError{ConnectionID: connectionID, Reason: "it is not connected (no access token)"}
	}
	return &conn{s: s, userID: userID, mc: mc, tok: tok, ci: mcpauth.ParseClientInfo(rawCI), ciRaw: rawCI}, nil
}

// call runs f with a client of the connection, refreshing the access token first when it is known to have
// expired, and once more when the server answers 401. As in turn (docs/turn.md "Token refresh"), an expiry
// refresh that stops at discovery (no protected-resource metadata at the well-known URLs) sends the token
// once to read the server's 401 challenge, which may name the metadata or, naming none, show a 2025-03-26
// server; a refresh the token endpoint refused is final.
func (c *conn) call(ctx context.Context, f func(*eventsclient.Client) error) error {
	if c.tok.Expired(c.s.now()) && c.tok.Refreshable() != "" {
		if err := c.refreshTokens(ctx, "", false); err != nil {
			var de *mcpauth.DiscoveryError
			if !errors.As(err, &de) {
				return &ConnectionError{ConnectionID: c.mc.ID, Reason: "the access token expired and could not be refreshed: " + err.Error()}
			}
		}
	}
	client := &eventsclient.Client{Endpoint: c.mc.URL, Token: c.tok.AccessToken, HTTP: c.s.mcpHTTP, Name: ClientName}
	err := f(client)
	if !eventsclient.Unauthorized(err) {
		return describe(err)
	}
	if c.refresh || c.tok.Refreshable() == "" {
		return &ConnectionError{ConnectionID: c.mc.ID, Reason: "the MCP server refused the access token (HTTP 401) and there is no refresh token left to try"}
	}
	var e *eventsclient.Error
	errors.As(err, &e)
	if rerr := c.refreshTokens(ctx, resourceMetadata(e.Challenge), true); rerr != nil {
		return &ConnectionError{ConnectionID: c.mc.ID, Reason: "the MCP server refused the access token (HTTP 401) and the refresh failed: " + rerr.Error()}
	}
	client.Token = c.tok.AccessToken
	err = f(client)
	if eventsclient.Unauthorized(err) {
		return &ConnectionError{ConnectionID: c.mc.ID, Reason: "the MCP server refused the refreshed access token (HTTP 401)"}
	}
	return describe(err)
}

// refreshTokens refreshes the access token (shared/mcpauth, the authorization server bound to the client's
// registration) and stores the new tokens sealed before anything else: the old refresh token is spent.
// challenged says the server answered 401 (hint is its resource_metadata, "" when it named none).
func (c *conn) refreshTokens(ctx context.Context, hint string, challenged bool) error {
	nt, err := mcpauth.Refresh(ctx, c.s.mcpHTTP, c.mc.URL, hint, challenged, c.tok, c.ci, c.s.now())
	if err != nil {
		return err
	}
	c.tok, c.refresh = nt, true
	raw, _ := nt.MarshalJSON()
	if err := c.s.st.UpdateMCPTokens(ctx, c.userID, c.mc.ID, raw, nil); err != nil {
		return fmt.Errorf("the refreshed tokens could not be stored: %w", err)
	}
	return nil
}

// resourceMetadata is the resource_metadata parameter of a Bearer challenge (RFC 9728 §5.1), "" when none.
func resourceMetadata(challenge string) string {
	const key = `resource_metadata="`
	i := strings.Index(challenge, key)
	if i < 0 {
		return ""
	}
	rest := challenge[i+len(key):]
	if j := strings.IndexByte(rest, '"'); j >= 0 {
		return rest[:j]
	}
	return ""
}

// describe turns what the events client answered into a sentence a user can act on: a JSON-RPC error keeps
// the server's message and the reason it gave (a callback that failed verification says why), a scope the
// token lacks is named.
func describe(err error) error {
	var e *eventsclient.Error
	if err == nil || !errors.As(err, &e) {
		return err
	}
	if e.Code == 0 {
		return fmt.Errorf("the MCP server answered HTTP %d: %s", e.HTTPStatus, e.Message)
	}
	msg := e.Message
	if r, ok := e.Data["reason"].(string); ok && r != "" && !strings.Contains(msg, r) {
		msg += " (" + r + ")"
	}
	if miss, ok := e.Data["missingScopes"].([]any); ok && len(miss) > 0 {
		msg += fmt.Sprintf(": the connection's token lacks %v; reconnect it and approve them", miss)
	}
	return &RemoteError{Code: e.Code, Message: msg}
}

// RemoteError is the MCP server refusing a call (a JSON-RPC error), in its words.
type RemoteError struct {
	Code    int
	Message string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("the MCP server refused: %s (code %d)", e.Message, e.Code)
}
