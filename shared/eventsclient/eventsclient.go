// Package eventsclient speaks to an MCP server's events extension (docs/events.md) the way ChatGPT does: raw
// JSON-RPC over HTTP POST to the MCP endpoint with a bearer token, protocol 2026-07-28 (server/discover, then
// events/list, events/subscribe, events/unsubscribe). chat subscribes its automations with it (docs/chat.md
// "Automations"); the demo, the end-to-end tests and the load harness use it too.
package eventsclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// ProtocolVersion is the MCP revision the client speaks.
const ProtocolVersion = "2026-07-28"

// MaxAnswerBytes bounds an answer read (events/list of the whole catalog is a few tens of KiB).
const MaxAnswerBytes = 4 << 20

// DefaultClientName is the clientInfo name sent when Client.Name is empty.
const DefaultClientName = "appwrite-agent-eventsclient"

// Client calls one MCP endpoint (the function's URL + "/mcp") with one access token.
type Client struct {
	// Endpoint is the MCP endpoint URL.
	Endpoint string
	// Token is the OAuth access token.
	Token string
	// HTTP carries the requests (http.DefaultClient when nil). A caller that takes the endpoint from a user
	// passes the SSRF-safe client (shared/safehttp).
	HTTP *http.Client
	// Name is the clientInfo name the requests carry (DefaultClientName when empty).
	Name string

	ids atomic.Int64
}

// Error is a JSON-RPC error answer, or (Code 0) an HTTP refusal without one.
type Error struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
	// HTTPStatus is the answer's HTTP status when it was not 200.
	HTTPStatus int `json:"-"`
	// Challenge is the answer's WWW-Authenticate header (a 401's resource_metadata, a 403's
	// insufficient_scope), when it has one.
	Challenge string `json:"-"`
}

func (e *Error) Error() string {
	if e.Code == 0 {
		return fmt.Sprintf("the MCP server answered HTTP %d: %s", e.HTTPStatus, e.Message)
	}
	return fmt.Sprintf("MCP error %d: %s %v", e.Code, e.Message, e.Data)
}

// Unauthorized reports whether err is the server refusing the access token (HTTP 401): the token expired or
// was revoked, and a refresh may help.
func Unauthorized(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.HTTPStatus == http.StatusUnauthorized
}

// Call posts one request and decodes its result into out (may be nil). A JSON-RPC error, and an HTTP
// refusal, is returned as *Error.
func (c *Client) Call(ctx context.Context, method string, params, out any) error {
	id := c.ids.Add(1)
	obj, err := withMeta(params, c.name())
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": obj})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", ProtocolVersion)
	req.Header.Set("Mcp-Method", method)
	// SEP-2243: methods that name a tool, prompt or resource mirror it in Mcp-Name.
	switch method {
	case "tools/call", "prompts/get":
		if n, ok := obj["name"].(string); ok {
			req.Header.Set("Mcp-Name", n)
		}
	case "resources/read":
		if u, ok := obj["uri"].(string); ok {
			req.Header.Set("Mcp-Name", u)
		}
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, MaxAnswerBytes+1))
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", method, err)
	}
	if len(raw) > MaxAnswerBytes {
		return fmt.Errorf("%s: the answer is larger than %d bytes", method, MaxAnswerBytes)
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *Error          `json:"error"`
	}
	if res.StatusCode != http.StatusOK {
		// A JSON-RPC error may come with an HTTP error status (InvalidParams as 400, the 403 step-up).
		if json.Unmarshal(raw, &msg) == nil && msg.Error != nil {
			msg.Error.HTTPStatus, msg.Error.Challenge = res.StatusCode, res.Header.Get("WWW-Authenticate")
			return msg.Error
		}
		return &Error{HTTPStatus: res.StatusCode, Challenge: res.Header.Get("WWW-Authenticate"), Message: describeBody(raw)}
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		return fmt.Errorf("%s: the answer is not JSON-RPC: %w: %s", method, err, describeBody(raw))
	}
	if msg.Error != nil {
		return msg.Error
	}
	if out != nil {
		return json.Unmarshal(msg.Result, out)
	}
	return nil
}

// describeBody is the start of an answer's body, for an error message.
func describeBody(raw []byte) string {
	s := strings.ToValidUTF8(strings.TrimSpace(string(raw)), "?")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		return "(no body)"
	}
	return s
}

func (c *Client) name() string {
	if c.Name != "" {
		return c.Name
	}
	return DefaultClientName
}

// Discover calls server/discover and returns its result.
func (c *Client) Discover(ctx context.Context) (map[string]any, error) {
	var out map[string]any
	err := c.Call(ctx, "server/discover", map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/events": map[string]any{}}},
	}}, &out)
	return out, err
}

// Event is one entry of events/list.
type Event struct {
	Name          string          `json:"name"`
	Description   string          `json:"description"`
	Delivery      []string        `json:"delivery"`
	InputSchema   json.RawMessage `json:"inputSchema"`
	PayloadSchema json.RawMessage `json:"payloadSchema"`
}

// List calls events/list.
func (c *Client) List(ctx context.Context) ([]Event, error) {
	var out struct {
		Events []Event `json:"events"`
	}
	err := c.Call(ctx, "events/list", map[string]any{}, &out)
	return out.Events, err
}

// Subscription is the result of events/subscribe.
type Subscription struct {
	ID            string  `json:"id"`
	RefreshBefore *string `json:"refreshBefore"`
	Cursor        *string `json:"cursor"`
	Truncated     bool    `json:"truncated"`
}

// Subscribe calls events/subscribe for webhook delivery to url signed with secret (a "whsec_" string);
// ttlMs 0 leaves the TTL to the server. The same call again before refreshBefore is a refresh.
func (c *Client) Subscribe(ctx context.Context, name string, args map[string]string, url, secret string, ttlMs int64) (Subscription, error) {
	p := map[string]any{
		"name": name, "arguments": args, "cursor": nil,
		"delivery": map[string]any{"mode": "webhook", "url": url, "secret": secret},
	}
	if ttlMs > 0 {
		p["ttlMs"] = ttlMs
	}
	var out Subscription
	err := c.Call(ctx, "events/subscribe", p, &out)
	return out, err
}

// Unsubscribe calls events/unsubscribe.
func (c *Client) Unsubscribe(ctx context.Context, name string, args map[string]string, url string) error {
	return c.Call(ctx, "events/unsubscribe", map[string]any{"name": name, "arguments": args, "delivery": map[string]any{"url": url}}, nil)
}

// withMeta returns params as an object whose _meta carries the protocol version, the client's info and
// capabilities: protocol 2026-07-28 is stateless, so every request states them in its body (the version
// also in the MCP-Protocol-Version header; servers refuse a request whose two disagree or whose body lacks
// them, with a 400).
func withMeta(params any, name string) (map[string]any, error) {
	m := map[string]any{}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &m); err != nil || m == nil {
			return nil, fmt.Errorf("params must be a JSON object: %s", b)
		}
	}
	meta, _ := m["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	for k, v := range map[string]any{
		"io.modelcontextprotocol/protocolVersion":    ProtocolVersion,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": name, "version": "1.0.0"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	} {
		if _, ok := meta[k]; !ok {
			meta[k] = v
		}
	}
	m["_meta"] = meta
	return m, nil
}
