package engine

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/functions/turn/toolapi"
)

func names(list []toolapi.Tool) []string {
	var out []string
	for _, t := range list {
		out = append(out, t.Name())
	}
	return out
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
