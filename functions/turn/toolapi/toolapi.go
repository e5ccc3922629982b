// Package toolapi is the contract between the turn engine and the tools it runs: the Tool interface every
// tool implements (built-in tools in package tools, MCP tools in package mcptools) and what an MCP source
// loads for one turn. It sits below both sides, so neither imports the other.
package toolapi

import (
	"context"
	"encoding/json"

	"appwrite-agent/functions/turn/timeline"
)

// Tool is one tool the model can call.
type Tool interface {
	// Name is the function name given to the model (unique within an agent's tools).
	Name() string
	// Description tells the model what the tool does.
	Description() string
	// Parameters is the JSON Schema of the arguments object.
	Parameters() json.RawMessage
	// Run executes one call with the model's arguments (a JSON object). The returned text goes back to the
	// model and into tool_end; an error is reported as "Error: <err>" with failed:true. ctx carries the
	// turn's deadline.
	Run(ctx context.Context, args json.RawMessage) (string, error)
}

// MCPTools is what an MCP source loaded for one turn.
type MCPTools struct {
	// Tools are the connections' tools, under names unique in the turn.
	Tools []Tool
	// Credentials are echoed first in mcp_credentials (none: no event).
	Credentials []timeline.Credential
	// Notices are status messages (one per skipped connection), emitted after mcp_credentials.
	Notices []string
	// Close, when set, ends the MCP sessions and closes their connections; the engine calls it when the
	// turn ends.
	Close func()
}
