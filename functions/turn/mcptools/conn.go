package mcptools

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"
	"time"

	"appwrite-agent/functions/turn/timeline"
	"appwrite-agent/shared/pyjson"
	"appwrite-agent/shared/turnrequest"
)

// The builtin Appwrite MCP server (reference app/mcp/registry.py).
const (
	BuiltinID          = "appwrite"
	BuiltinName        = "Appwrite"
	BuiltinURL         = "https://mcp.appwrite.io/"
	BuiltinDescription = "Appwrite Cloud project tools and docs search (OAuth — no API key)."
)

// Validation messages of a connection, as the reference words them.
const (
	MsgBadID  = "id must be 2–64 chars, start with a letter, and use a-z, 0-9, _, -"
	MsgBadURL = "url must be http:// or https://"
)

// connID is what a connection id must match, compiled on first use.
var connID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]{1,63}$`) })

// server is a validated connection: the reference's resolve_server.
type server struct {
	ID, Name, URL, Description string
}

// resolveServer validates a connection: the builtin appwrite id without a URL is the hosted server;
// otherwise the id is lower-cased and checked, and the URL must be http(s).
func resolveServer(c turnrequest.MCPConnection) (server, error) {
	if c.ID == BuiltinID && strings.TrimSpace(c.URL) == "" {
		return server{ID: BuiltinID, Name: BuiltinName, URL: BuiltinURL, Description: BuiltinDescription}, nil
	}
	sid := strings.ToLower(strings.TrimSpace(c.ID))
	if !connID().MatchString(sid) {
		return server{ID: sid}, errors.New(MsgBadID)
	}
	builtin := c.ID == BuiltinID
	u := strings.TrimSpace(c.URL)
	if u == "" && builtin {
		u = BuiltinURL
	}
	if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return server{ID: sid}, errors.New(MsgBadURL)
	}
	name := c.Name
	if name == "" {
		name = sid
		if builtin {
			name = BuiltinName
		}
	}
	desc := c.Description
	if desc == "" && builtin {
		desc = BuiltinDescription
	}
	return server{ID: sid, Name: strings.TrimSpace(name), URL: u, Description: desc}, nil
}

// tokens is the mcp OAuthToken model the client stores per connection, plus expires_at (ours: absolute
// expiry in Unix seconds, kept when the client sends it and set after a refresh).
type tokens struct {
	AccessToken  string
	TokenType    string
	ExpiresIn    *int64
	Scope        *string
	RefreshToken *string
	ExpiresAt    *int64
}

// parseTokens reads the connection's tokens; ok is false without an access_token.
func parseTokens(raw json.RawMessage) (tokens, bool) {
	var t struct {
		AccessToken  string   `json:"access_token"`
		TokenType    string   `json:"token_type"`
		ExpiresIn    *float64 `json:"expires_in"`
		Scope        *string  `json:"scope"`
		RefreshToken *string  `json:"refresh_token"`
		ExpiresAt    *float64 `json:"expires_at"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &t) != nil || strings.TrimSpace(t.AccessToken) == "" {
		return tokens{}, false
	}
	out := tokens{AccessToken: strings.TrimSpace(t.AccessToken), TokenType: "Bearer", Scope: t.Scope, RefreshToken: t.RefreshToken}
	if t.ExpiresIn != nil {
		n := int64(*t.ExpiresIn)
		out.ExpiresIn = &n
	}
	if t.ExpiresAt != nil {
		n := int64(*t.ExpiresAt)
		out.ExpiresAt = &n
	}
	return out, true
}

// refreshToken is the refresh token, "" when there is none.
func (t tokens) refreshToken() string {
	if t.RefreshToken == nil {
		return ""
	}
	return strings.TrimSpace(*t.RefreshToken)
}

// ExpirySkew counts an access token that expires within it as expired already.
const ExpirySkew = 30 * time.Second

// expiry is when the access token expires: expires_at when given, else the exp claim of a JWT access
// token (Appwrite's are RS256 JWTs); zero when unknown.
func (t tokens) expiry() time.Time {
	if t.ExpiresAt != nil && *t.ExpiresAt > 0 {
		return time.Unix(*t.ExpiresAt, 0)
	}
	parts := strings.Split(t.AccessToken, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp *float64 `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp == nil {
		return time.Time{}
	}
	return time.Unix(int64(*claims.Exp), 0)
}

// expired reports an access token known to be expired (or about to) at now.
func (t tokens) expired(now time.Time) bool {
	exp := t.expiry()
	return !exp.IsZero() && !now.Add(ExpirySkew).Before(exp)
}

// MarshalJSON writes the OAuthToken shape the reference echoes (model_dump: every field, null when
// unset), with expires_at after it when known.
func (t tokens) MarshalJSON() ([]byte, error) {
	o := pyjson.NewObject()
	o.Set("access_token", pyjson.StringValue(t.AccessToken))
	o.Set("token_type", pyjson.StringValue("Bearer"))
	o.Set("expires_in", optInt(t.ExpiresIn))
	o.Set("scope", optStr(t.Scope))
	o.Set("refresh_token", optStr(t.RefreshToken))
	if t.ExpiresAt != nil {
		o.Set("expires_at", optInt(t.ExpiresAt))
	}
	return toJSON(o), nil
}

func optInt(p *int64) pyjson.Value {
	if p == nil {
		return pyjson.Value{}
	}
	return pyjson.IntValue(*p)
}

func optStr(p *string) pyjson.Value {
	if p == nil {
		return pyjson.Value{}
	}
	return pyjson.StringValue(*p)
}

// credential is the mcp_credentials entry of a connection.
func credential(s server, t tokens, clientInfo json.RawMessage) timeline.Credential {
	tok, _ := t.MarshalJSON()
	ci := json.RawMessage("null")
	if len(clientInfo) > 0 && json.Valid(clientInfo) {
		ci = clientInfo
	}
	return timeline.Credential{ID: s.ID, Name: s.Name, URL: s.URL, Description: s.Description, Tokens: tok, ClientInfo: ci}
}

// clientInfo is what a refresh needs from the connection's OAuth client registration.
type clientInfo struct {
	ClientID                string `json:"client_id"`
	ClientSecret            string `json:"client_secret"`
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method"`
	// Issuer is the authorization server that registered the client (chat's page records it): the
	// credentials are used with that server only. Empty for a registration made elsewhere.
	Issuer string `json:"issuer"`
}

func parseClientInfo(raw json.RawMessage) clientInfo {
	var ci clientInfo
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &ci)
	}
	ci.ClientID = strings.TrimSpace(ci.ClientID)
	return ci
}
