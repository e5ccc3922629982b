package builtins_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
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
)

var updateToolSnapshot = flag.Bool("update-tools", false, "rewrite testdata/tool_schemas.json")

func names(list []toolapi.Tool) []string {
	var out []string
	for _, t := range list {
		out = append(out, t.Name())
	}
	return out
}

func TestDefaultToolListsFollowTheReferenceOrder(t *testing.T) {
	byAgent := builtins.Registry(tools.Web{}, nil).ForTurn(&request.Turn{})
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
	reg := builtins.Registry(tools.Web{}, nil)
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

// TestToolSchemaSnapshot pins every built-in tool's name, description and JSON Schema, per agent and in
// order, in testdata/tool_schemas.json (go test ./builtins -run ToolSchemaSnapshot -update-tools rewrites it).
// The installed-skills suffix of appwrite_skill's description depends on the build and is left out.
func TestToolSchemaSnapshot(t *testing.T) {
	type entry struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	byAgent := builtins.Registry(tools.Web{}, nil).ForTurn(&request.Turn{})
	snap := map[string][]entry{}
	for _, agent := range engine.Agents {
		for _, tool := range byAgent[agent] {
			var schema map[string]any
			if err := json.Unmarshal(tool.Parameters(), &schema); err != nil || schema["type"] != "object" {
				t.Fatalf("%s: parameters are not a JSON Schema object: %v", tool.Name(), err)
			}
			if _, ok := schema["properties"].(map[string]any); !ok {
				t.Fatalf("%s: no properties", tool.Name())
			}
			desc := tool.Description()
			if tool.Name() == "appwrite_skill" {
				desc, _, _ = strings.Cut(desc, " Installed: ")
				desc, _, _ = strings.Cut(desc, " No skills are installed")
			}
			var compact bytes.Buffer
			json.Compact(&compact, tool.Parameters())
			snap[agent] = append(snap[agent], entry{tool.Name(), desc, compact.Bytes()})
		}
	}
	var got bytes.Buffer
	enc := json.NewEncoder(&got)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(snap); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "tool_schemas.json")
	if *updateToolSnapshot {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-tools to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("the tool schemas changed; review and run go test ./builtins -run ToolSchemaSnapshot -update-tools\n%s", got.String())
	}
}
