package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/shared/protocol/clarify"
	"appwrite-agent/shared/protocol/console"
	"appwrite-agent/shared/protocol/memory"
	"appwrite-agent/shared/protocol/threat"
)

func TestReadAttachment(t *testing.T) {
	ra := ReadAttachment{Attachments: []request.Attachment{
		{ID: "att1", Name: "notes.md", Mime: "text/markdown", Kind: "text", Data: []byte("# Notes\n" + strings.Repeat("é", 1000))},
		{ID: "img", Name: "pic.png", Mime: "image/png", Kind: "image", Data: []byte("\x89PNG\r\n\x1a\n\xff\xfe")},
		{ID: "latin", Name: "old.txt", Mime: "text/plain", Kind: "text", Data: []byte("caf\xe9")},
	}}
	if out := run(t, ra, map[string]any{"attachment_id": "att1"}); out != "name='notes.md' mime=text/markdown size=2008\n\n# Notes\n"+strings.Repeat("é", 1000) {
		t.Errorf("by id: %q", out[:60])
	}
	out := run(t, ra, map[string]any{"attachment_id": "notes.md", "max_chars": 10})
	if out != "name='notes.md' mime=text/markdown size=2008\n\n# Notes\n"+strings.Repeat("é", 492)+"\n\n… truncated at 500 characters" {
		t.Errorf("by name, clamped to 500: %q", out)
	}
	if out := run(t, ra, map[string]any{"attachment_id": "pic.png"}); out != "name='pic.png' mime=image/png size=10\n\n(binary image file; 10 bytes not shown as text)" {
		t.Errorf("binary: %q", out)
	}
	if out := run(t, ra, map[string]any{"attachment_id": "latin"}); out != "name='old.txt' mime=text/plain size=4\n\ncaf\uFFFD" {
		t.Errorf("invalid UTF-8 is replaced: %q", out)
	}
	if out := run(t, ra, map[string]any{"attachment_id": "other"}); out != "Unknown attachment id='other'. Only files attached on this turn are available." {
		t.Errorf("unknown: %q", out)
	}
}

func TestSandboxExecStub(t *testing.T) {
	out := run(t, SandboxExec{}, map[string]any{"instruction": "ls -la"})
	want := "sandbox_exec is not configured in this deployment. In Cloud this will call a per-project Function sandbox MCP — not the agent host. Requested: 'ls -la'"
	if out != want || !strings.HasPrefix(strings.ToLower(out), MsgSandboxPrefix) {
		t.Fatalf("got %q", out)
	}
}

func TestProtocolToolsUseTheSharedValidators(t *testing.T) {
	for _, c := range []struct {
		tool      Protocol
		name      string
		schema    json.RawMessage
		args, out string
	}{
		{Console(), "console", console.ToolSchema(), `{"actions":"[{\"type\":\"set_theme\",\"theme\":\"Dark\"}]"}`,
			`{"protocol":"appwrite.console/v1","actions":[{"type":"set_theme","theme":"dark"}]}`},
		{Console(), "console", console.ToolSchema(), `{"actions":"[{\"type\":\"fly\"}]"}`,
			console.ErrorPrefix + "unknown or missing type 'fly'; expected one of ['chart', 'navigate', 'open_create', 'open_dialog', 'refresh', 'resource', 'resource_list', 'scroll_to_card', 'set_theme', 'show_pane', 'toast', 'toggle_terminal']"},
		{Clarify(), "clarify", clarify.ToolSchema(), `{"prompts":"[]"}`, clarify.ErrorPrefix + "prompts array is empty"},
		{Memory(), "memory", memory.ToolSchema(), `{"actions":"{\"type\":\"forget\",\"key\":\"style.concise\"}"}`,
			`{"protocol":"appwrite.memory/v1","actions":[{"type":"forget","key":"style.concise","scope":"user"}]}`},
		{Memory(), "memory", memory.ToolSchema(), `{"actions":""}`, memory.ErrorPrefix + "actions is empty"},
		{ReportThreat(), "report_threat", threat.ToolSchema(), `{"category":"weird","summary":"s","details":"d"}`,
			threat.ErrorPrefix + "category must be one of ['illegal', 'immoral']; got 'weird'"},
	} {
		if c.tool.Name() != c.name || string(c.tool.Parameters()) != string(c.schema) || c.tool.Description() == "" {
			t.Errorf("%s: name %q", c.name, c.tool.Name())
		}
		out, err := c.tool.Run(context.Background(), json.RawMessage(c.args))
		if err != nil || out != c.out {
			t.Errorf("%s %s:\n got %q, %v\nwant %q", c.name, c.args, out, err, c.out)
		}
	}
}
