package tools

import (
	"context"
	"encoding/json"

	"appwrite-agent/shared/protocol/clarify"
	"appwrite-agent/shared/protocol/console"
	"appwrite-agent/shared/protocol/memory"
	"appwrite-agent/shared/protocol/threat"
)

// Protocol is a protocol tool (console, clarify, memory, report_threat): the shared validator's schema,
// and its Call, which returns the compact envelope or the protocol's exact error text (never a Go error,
// so a refused call is a normal tool_end the model can correct).
type Protocol struct {
	name, description string
	schema            func() json.RawMessage
	call              func(json.RawMessage) string
}

// Name implements toolapi.Tool.
func (p Protocol) Name() string { return p.name }

// Description implements toolapi.Tool.
func (p Protocol) Description() string { return p.description }

// Parameters implements toolapi.Tool.
func (p Protocol) Parameters() json.RawMessage { return p.schema() }

// Run implements toolapi.Tool.
func (p Protocol) Run(_ context.Context, args json.RawMessage) (string, error) {
	return p.call(args), nil
}

// Console is the console tool (appwrite.console/v1).
func Console() Protocol {
	return Protocol{console.ToolName, console.ToolDescription, console.ToolSchema, console.Call}
}

// Clarify is the clarify tool (appwrite.clarify/v1).
func Clarify() Protocol {
	return Protocol{clarify.ToolName, clarify.ToolDescription, clarify.ToolSchema, clarify.Call}
}

// Memory is the memory tool (appwrite.memory/v1).
func Memory() Protocol {
	return Protocol{memory.ToolName, memory.ToolDescription, memory.ToolSchema, memory.Call}
}

// ReportThreat is the report_threat tool (appwrite.threat/v1).
func ReportThreat() Protocol {
	return Protocol{threat.ToolName, threat.ToolDescription, threat.ToolSchema, threat.Call}
}
