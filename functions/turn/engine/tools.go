package engine

import (
	"context"
	"slices"
	"sort"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/functions/turn/toolapi"
)

// Agent names.
const (
	AgentPlatform   = "platform"
	AgentResearcher = "researcher"
	AgentPlanner    = "planner"
	// AgentSupervisor is the agent name of a FINISH answer's events.
	AgentSupervisor = "supervisor"
	// AgentTitle is the agent name of the title call's usage event.
	AgentTitle = "title"
	// RouteFinish is the router's "answer directly" decision.
	RouteFinish = "FINISH"
)

// Agents are the three subagents, in the reference's order of the route enum.
var Agents = []string{AgentResearcher, AgentPlatform, AgentPlanner}

// Builder makes a tool for one turn, so a tool may keep per-turn state (the turn's attachments, a dedupe
// set); it is called once per turn and the tool is shared by every agent it is registered for.
type Builder func(turn *request.Turn) toolapi.Tool

type registration struct {
	build  Builder
	agents []string
}

// Registry says which tools each subagent gets, in which order.
type Registry struct {
	regs  []registration
	order map[string]map[string]int
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds a tool for the given agents (none given: all three), in registration order.
func (r *Registry) Register(b Builder, agents ...string) *Registry {
	if len(agents) == 0 {
		agents = Agents
	}
	r.regs = append(r.regs, registration{build: b, agents: slices.Clone(agents)})
	return r
}

// Order fixes the order of an agent's tools by name: listed tools come first in the given order, the
// others follow in registration order. Without it an agent's tools are in registration order.
func (r *Registry) Order(agent string, names ...string) *Registry {
	if r.order == nil {
		r.order = map[string]map[string]int{}
	}
	m := make(map[string]int, len(names))
	for i, n := range names {
		m[n] = i
	}
	r.order[agent] = m
	return r
}

// Static wraps a stateless tool as a Builder.
func Static(t toolapi.Tool) Builder { return func(*request.Turn) toolapi.Tool { return t } }

// ForTurn builds the turn's tools and returns them per agent.
func (r *Registry) ForTurn(turn *request.Turn) map[string][]toolapi.Tool {
	out := map[string][]toolapi.Tool{}
	for _, reg := range r.regs {
		t := reg.build(turn)
		if t == nil {
			continue
		}
		for _, a := range reg.agents {
			out[a] = append(out[a], t)
		}
	}
	for agent, rank := range r.order {
		list := out[agent]
		pos := func(t toolapi.Tool) int {
			if i, ok := rank[t.Name()]; ok {
				return i
			}
			return len(rank)
		}
		sort.SliceStable(list, func(i, j int) bool { return pos(list[i]) < pos(list[j]) })
	}
	return out
}

// Describe lists the registered tools of each agent (name and description) for /meta, built for an
// empty turn.
func (r *Registry) Describe() map[string][]map[string]string {
	out := map[string][]map[string]string{}
	for agent, tools := range r.ForTurn(&request.Turn{}) {
		for _, t := range tools {
			out[agent] = append(out[agent], map[string]string{"name": t.Name(), "description": t.Description()})
		}
	}
	return out
}

// MCPSource loads the MCP tools of a turn's connections (functions/turn/mcptools). Tools are given to
// every subagent; taken holds the names of the turn's built-in tools, which MCP tools must not reuse.
type MCPSource interface {
	Load(ctx context.Context, turn *request.Turn, taken map[string]bool) toolapi.MCPTools
}
