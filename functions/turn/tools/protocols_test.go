package tools

import (
	"context"
	"encoding/json"
	"testing"

	"appwrite-agent/shared/protocol/clarify"
	"appwrite-agent/shared/protocol/console"
	"appwrite-agent/shared/protocol/memory"
	"appwrite-agent/shared/protocol/threat"
)

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
