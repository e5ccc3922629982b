package builtins_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"appwrite-agent/functions/turn/builtins"
	"appwrite-agent/functions/turn/engine"
	"appwrite-agent/functions/turn/request"
	"appwrite-agent/functions/turn/toolapi"
	"appwrite-agent/functions/turn/tools"
	"appwrite-agent/shared/devkit/snapshot"
)

func names(list []toolapi.Tool) []string {
	var out []string
	for _, t := range list {
		out = append(out, t.Name())
	}
	return out
}

func TestDefaultToolListsFollowTheReferenceOrder(t *testing.T) {
	byAgent := builtins.Registry(tools.Web{}, nil, nil).ForTurn(&request.Turn{})
	want := map[string][]string{engine.AgentResearcher: builtins.GeneralToolOrder, engine.AgentPlanner: builtins.GeneralToolOrder, engine.AgentPlatform: builtins.PlatformToolOrder}
	for agent, order := range want {
		if got := names(byAgent[agent]); !slices.Equal(got, order) {
			t.Errorf("%s tools\n got %v\nwant %v", agent, got, order)
		}
	}
	if len(builtins.GeneralToolOrder) != 12 || !slices.Equal(slices.Sorted(slices.Values(builtins.GeneralToolOrder)), slices.Sorted(slices.Values(builtins.PlatformToolOrder))) {
		t.Fatal("the same twelve built-ins for every agent")
	}
}

func TestToolsArePerTurnAndSharedAcrossAgents(t *testing.T) {
	reg := builtins.Registry(tools.Web{}, nil, nil)
	find := func(list []toolapi.Tool, name string) toolapi.Tool {
		for _, t := range list {
			if t.Name() == name {
				return t
			}
		}
		return nil
	}
	a := reg.ForTurn(&request.Turn{})
	b := reg.ForTurn(&request.Turn{Attachments: []request.Attachment{{ID: "f", Name: "f.txt", Kind: "text", Data: []byte("hello")}}})
	if find(a[engine.AgentPlatform], "appwrite_skill") != find(a[engine.AgentPlanner], "appwrite_skill") {
		t.Error("one appwrite_skill per turn, shared by the agents (per-turn dedupe)")
	}
	if find(a[engine.AgentPlatform], "appwrite_skill") == find(b[engine.AgentPlatform], "appwrite_skill") {
		t.Error("a new appwrite_skill for every turn")
	}
	out, err := find(b[engine.AgentResearcher], "read_attachment").Run(context.Background(), json.RawMessage(`{"attachment_id":"f"}`))
	if err != nil || !strings.HasSuffix(out, "\n\nhello") {
		t.Errorf("read_attachment sees its turn's files: %q %v", out, err)
	}
	if out, _ := find(a[engine.AgentResearcher], "read_attachment").Run(context.Background(), json.RawMessage(`{"attachment_id":"f"}`)); !strings.HasPrefix(out, "Unknown attachment") {
		t.Errorf("and only those: %q", out)
	}
}

// TestToolSnapshots pins each built-in tool's name, description and JSON Schema in its own file,
// testdata/toolsnaps/<name>.json (UPDATE_SNAPSHOTS=1 rewrites them, shared/devkit/snapshot). The protocol
// tools (console, clarify, memory, report_threat) are the shared validators' surfaces, pinned once in
// shared/protocol/<name>/testdata/tool_schema.json. The installed-skills suffix of appwrite_skill's
// description depends on the build and is left out.
func TestToolSnapshots(t *testing.T) {
	want := map[string]bool{}
	for _, tool := range builtins.Registry(tools.Web{}, nil, nil).ForTurn(&request.Turn{})[engine.AgentPlatform] {
		if _, shared := tool.(tools.Protocol); shared {
			continue
		}
		var schema map[string]any
		if err := json.Unmarshal(tool.Parameters(), &schema); err != nil {
			t.Fatalf("%s: %v", tool.Name(), err)
		}
		if _, ok := schema["properties"].(map[string]any); !ok {
			t.Fatalf("%s: no properties", tool.Name())
		}
		desc := tool.Description()
		if tool.Name() == "appwrite_skill" {
			desc, _, _ = strings.Cut(desc, " Installed: ")
			desc, _, _ = strings.Cut(desc, " No skills are installed")
		}
		file := tool.Name() + ".json"
		want[file] = true
		snapshot.CheckTool(t, filepath.Join("testdata", "toolsnaps", file), snapshot.Tool{Name: tool.Name(), Description: desc, Parameters: tool.Parameters()})
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "toolsnaps"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !want[e.Name()] {
			t.Errorf("testdata/toolsnaps/%s pins no built-in tool; delete it", e.Name())
		}
	}
	if len(want) != 8 {
		t.Errorf("%d tools of package tools, want 8 (12 built-ins, 4 of them protocol tools)", len(want))
	}
}
