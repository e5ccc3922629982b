package mcptools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// remoteTool is one tool of a connected server, as the engine sees it (toolapi.Tool).
type remoteTool struct {
	sess   *session
	name   string // what the model calls it
	remote string // the server's name
	desc   string
	params json.RawMessage
}

func newRemoteTool(s *session, name string, t *mcp.Tool) *remoteTool {
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = "Tool " + t.Name + " of the MCP server " + s.srv.Name + "."
	}
	return &remoteTool{sess: s, name: name, remote: t.Name, desc: desc, params: inputSchema(t)}
}

// inputSchema is the tool's JSON Schema as an object schema with properties, as the model APIs want it.
func inputSchema(t *mcp.Tool) json.RawMessage {
	raw, _ := json.Marshal(t.InputSchema)
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		m = map[string]any{}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	if p, ok := m["properties"]; !ok || p == nil {
		m["properties"] = map[string]any{}
	}
	out, _ := json.Marshal(m)
	return out
}

// Name implements toolapi.Tool.
func (t *remoteTool) Name() string { return t.name }

// Description implements toolapi.Tool.
func (t *remoteTool) Description() string { return t.desc }

// Parameters implements toolapi.Tool.
func (t *remoteTool) Parameters() json.RawMessage { return t.params }

// Run implements toolapi.Tool: one tools/call; a result flagged isError is an error with its text.
func (t *remoteTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	return t.sess.call(ctx, t.remote, args)
}
