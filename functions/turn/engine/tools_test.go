package engine

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

	"appwrite-agent/functions/turn/request"
)

var updateToolSnapshot = flag.Bool("update-tools", false, "rewrite testdata/tool_schemas.json")

func names(list []Tool) []string {
	var out []string
	for _, t := range list {
		out = append(out, t.Name())
	}
	return out
}

func TestDefaultToolListsFollowTheReferenceOrder(t *testing.T) {
	byAgent := DefaultRegistry().ForTurn(&request.Turn{})
	want := map[string][]string{AgentResearcher: GeneralToolOrder, AgentPlanner: GeneralToolOrder, AgentPlatform: PlatformToolOrder}
	for agent, order := range want {
		if got := names(byAgent[agent]); !slices.Equal(got, order) {
			t.Errorf("%s tools\n got %v\nwant %v", agent, got, order)
		}
	}
	if len(GeneralToolOrder) != 12 || !slices.Equal(slices.Sorted(slices.Values(GeneralToolOrder)), slices.Sorted(slices.Values(PlatformToolOrder))) {
		t.Fatal("the same twelve built-ins for every agent")
	}
}

func TestToolsArePerTurnAndSharedAcrossAgents(t *testing.T) {
	reg := DefaultRegistry()
	find := func(list []Tool, name string) Tool {
		for _, t := range list {
			if t.Name() == name {
				return t
			}
		}
		return nil
	}
	a := reg.ForTurn(&request.Turn{})
	b := reg.ForTurn(&request.Turn{Attachments: []request.Attachment{{ID: "f", Name: "f.txt", Kind: "text", Data: []byte("hello")}}})
	if find(a[AgentPlatform], "appwrite_skill") != find(a[AgentPlanner], "appwrite_skill") {
		t.Error("one appwrite_skill per turn, shared by the agents (per-turn dedupe)")
	}
	if find(a[AgentPlatform], "appwrite_skill") == find(b[AgentPlatform], "appwrite_skill") {
		t.Error("a new appwrite_skill for every turn")
	}
	out, err := find(b[AgentResearcher], "read_attachment").Run(context.Background(), json.RawMessage(`{"attachment_id":"f"}`))
	if err != nil || !strings.HasSuffix(out, "\n\nhello") {
		t.Errorf("read_attachment sees its turn's files: %q %v", out, err)
	}
	if out, _ := find(a[AgentResearcher], "read_attachment").Run(context.Background(), json.RawMessage(`{"attachment_id":"f"}`)); !strings.HasPrefix(out, "Unknown attachment") {
		t.Errorf("and only those: %q", out)
	}
}

func TestRegistryOrderKeepsUnlistedToolsAfter(t *testing.T) {
	mk := func(name string) Builder { return Static(stubTool{name}) }
	r := NewRegistry().Register(mk("a")).Register(mk("b")).Register(mk("c"), AgentPlatform).Order(AgentPlatform, "b", "a")
	got := r.ForTurn(&request.Turn{})
	if n := names(got[AgentPlatform]); !slices.Equal(n, []string{"b", "a", "c"}) {
		t.Errorf("platform %v", n)
	}
	if n := names(got[AgentPlanner]); !slices.Equal(n, []string{"a", "b"}) {
		t.Errorf("planner %v", n)
	}
}

type stubTool struct{ name string }

func (s stubTool) Name() string                { return s.name }
func (s stubTool) Description() string         { return s.name }
func (s stubTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (s stubTool) Run(context.Context, json.RawMessage) (string, error) {
	return s.name, nil
}

// TestToolSchemaSnapshot pins every built-in tool's name, description and JSON Schema, per agent and in
// order, in testdata/tool_schemas.json (go test ./engine -run ToolSchemaSnapshot -update-tools rewrites it).
// The installed-skills suffix of appwrite_skill's description depends on the build and is left out.
func TestToolSchemaSnapshot(t *testing.T) {
	type entry struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	byAgent := DefaultRegistry().ForTurn(&request.Turn{})
	snap := map[string][]entry{}
	for _, agent := range Agents {
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
		t.Fatalf("the tool schemas changed; review and run go test ./engine -run ToolSchemaSnapshot -update-tools\n%s", got.String())
	}
}
