package tools

import (
	"context"
	"encoding/json"

	"appwrite-agent/shared/pyjson"
)

// MsgSandboxPrefix starts every sandbox_exec answer; it is one of the failure prefixes that send a
// stalled platform or researcher run to the planner.
const MsgSandboxPrefix = "sandbox_exec is not configured"

// SandboxExec is the sandbox_exec stub: there is no code sandbox inside the turn function, and the tool
// says so for every call.
type SandboxExec struct{}

// Name implements toolapi.Tool.
func (SandboxExec) Name() string { return "sandbox_exec" }

// Description implements toolapi.Tool.
func (SandboxExec) Description() string {
	return "Run code or shell work in a per-project sandbox. Not available in this deployment: every call answers " +
		"that it is not configured, so only use it when the user explicitly asks for sandbox execution, and otherwise " +
		"explain the steps instead."
}

// Parameters implements toolapi.Tool.
func (SandboxExec) Parameters() json.RawMessage {
	return schema([][2]string{{"instruction", prop("string", "What to run in the sandbox.", "")}}, "instruction")
}

// Run implements toolapi.Tool.
func (SandboxExec) Run(_ context.Context, args json.RawMessage) (string, error) {
	var a struct {
		Instruction string `json:"instruction"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	return MsgSandboxPrefix + " in this deployment. In Cloud this will call a per-project Function sandbox MCP — " +
		"not the agent host. Requested: " + pyjson.ReprString(a.Instruction), nil
}
