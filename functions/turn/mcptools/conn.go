package mcptools

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"

	"appwrite-agent/functions/turn/timeline"
	"appwrite-agent/shared/mcpauth"
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

// credential is the mcp_credentials entry of a connection.
func credential(s server, t mcpauth.Tokens, clientInfo json.RawMessage) timeline.Credential {
	tok, _ := t.MarshalJSON()
	ci := json.RawMessage("null")
	if len(clientInfo) > 0 && json.Valid(clientInfo) {
		ci = clientInfo
	}
	return timeline.Credential{ID: s.ID, Name: s.Name, URL: s.URL, Description: s.Description, Tokens: tok, ClientInfo: ci}
}
