// Package mcpauth is the OAuth side of an MCP client that keeps a user's tokens for a server it calls
// without the user: the tokens as MCP clients store them (the mcp OAuthToken model, plus expires_at), when
// an access token has expired, the client registration a refresh needs, and the refresh itself (RFC 6749
// §6), with the authorization server found the way the MCP authorization spec says and bound to the one
// that registered the client. turn refreshes the tokens of a turn's MCP connections with it (docs/turn.md
// "Token refresh"); chat refreshes the tokens its automations subscribe and refresh with (docs/chat.md
// "Automations").
package mcpauth

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"appwrite-agent/shared/pyjson"
)

// Tokens is the mcp OAuthToken model a client stores per connection, plus ExpiresAt (ours: the absolute
// expiry in Unix seconds, kept when the client sends it and set after a refresh).
type Tokens struct {
	AccessToken  string
	TokenType    string
	ExpiresIn    *int64
	Scope        *string
	RefreshToken *string
	ExpiresAt    *int64
}

// ParseTokens reads a connection's tokens; ok is false without an access_token.
func ParseTokens(raw json.RawMessage) (Tokens, bool) {
	var t struct {
		AccessToken  string   `json:"access_token"`
		TokenType    string   `json:"token_type"`
		ExpiresIn    *float64 `json:"expires_in"`
		Scope        *string  `json:"scope"`
		RefreshToken *string  `json:"refresh_token"`
		ExpiresAt    *float64 `json:"expires_at"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &t) != nil || strings.TrimSpace(t.AccessToken) == "" {
		return Tokens{}, false
	}
	out := Tokens{AccessToken: strings.TrimSpace(t.AccessToken), TokenType: "Bearer", Scope: t.Scope, RefreshToken: t.RefreshToken}
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

// Refreshable is the refresh token, "" when there is none.
func (t Tokens) Refreshable() string {
	if t.RefreshToken == nil {
		return ""
	}
	return strings.TrimSpace(*t.RefreshToken)
}

// ExpirySkew counts an access token that expires within it as expired already.
const ExpirySkew = 30 * time.Second

// Expiry is when the access token expires: expires_at when given, else the exp claim of a JWT access
// token (Appwrite's are RS256 JWTs); zero when unknown.
func (t Tokens) Expiry() time.Time {
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

// Expired reports an access token known to be expired (or about to, within ExpirySkew) at now.
func (t Tokens) Expired(now time.Time) bool {
	exp := t.Expiry()
	return !exp.IsZero() && !now.Add(ExpirySkew).Before(exp)
}

// MarshalJSON writes the OAuthToken shape the reference engine echoes (model_dump: every field, null when
// unset), with expires_at after it when known.
func (t Tokens) MarshalJSON() ([]byte, error) {
	o := pyjson.NewObject()
	o.Set("access_token", pyjson.StringValue(t.AccessToken))
	o.Set("token_type", pyjson.StringValue("Bearer"))
	o.Set("expires_in", optInt(t.ExpiresIn))
	o.Set("scope", optStr(t.Scope))
	o.Set("refresh_token", optStr(t.RefreshToken))
	if t.ExpiresAt != nil {
		o.Set("expires_at", optInt(t.ExpiresAt))
	}
	return pyjson.AppendDumps(nil, o, false), nil
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

// ClientInfo is what a refresh needs from the connection's OAuth client registration.
type ClientInfo struct {
	ClientID                string `json:"client_id"`
	ClientSecret            string `json:"client_secret"`
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method"`
	// Issuer is the authorization server that registered the client (chat's page records it): the
	// credentials are used with that server only. Empty for a registration made elsewhere.
	Issuer string `json:"issuer"`
}

// ParseClientInfo reads a connection's client registration (zero when there is none or it does not parse).
func ParseClientInfo(raw json.RawMessage) ClientInfo {
	var ci ClientInfo
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &ci)
	}
	ci.ClientID = strings.TrimSpace(ci.ClientID)
	return ci
}
