package tools

import (
	"strings"
	"testing"
)

func TestSandboxExecStub(t *testing.T) {
	out := run(t, SandboxExec{}, map[string]any{"instruction": "ls -la"})
	want := "sandbox_exec is not configured in this deployment. In Cloud this will call a per-project Function sandbox MCP — not the agent host. Requested: 'ls -la'"
	if out != want || !strings.HasPrefix(strings.ToLower(out), MsgSandboxPrefix) {
		t.Fatalf("got %q", out)
	}
}
