package engine

import (
	"context"
	"encoding/json"
	"time"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/functions/turn/timeline"
)

// Agent names.
const (
	AgentPlatform   = "platform"
	AgentResearcher = "researcher"
	AgentPlanner    = "planner"
	// AgentSupervisor is the agent name of a FINISH answer's events.
	AgentSupervisor = "supervisor"
	// RouteFinish is the router's "answer directly" decision.
	RouteFinish = "FINISH"
)

// Agents are the three subagents, in the reference's order of the route enum.
var Agents = []string{AgentResearcher, AgentPlatform, AgentPlanner}

// Tool is one tool the model can call.
type Tool interface {
	// Name is the function name given to the model (unique within an agent's tools).
	Name() string
	// Description tells the model what the tool does.
	Description() string
	// Parameters is the JSON Schema of the arguments object.
	Parameters() json.RawMessage
	// Run executes one call with the model's arguments (a JSON object). The returned text goes back to the
	// model and into tool_end; an error is reported as "Error: <err>" with failed:true. ctx carries the
	// turn's deadline.
	Run(ctx context.Context, args json.RawMessage) (string, error)
}

// Builder makes a tool for one turn, so a tool may keep per-turn state (the turn's attachments, a dedupe
// set); it is called once per turn and the tool is shared by every agent it is registered for.
type Builder func(turn *request.Turn) Tool

type registration struct {
	build  Builder
	agents []string
}

// Registry says which tools each subagent gets. Issue 9's built-in tools register here.
type Registry struct {
	regs []registration
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds a tool for the given agents (none given: all three), in registration order.
func (r *Registry) Register(b Builder, agents ...string) *Registry {
	if len(agents) == 0 {
		agents = Agents
	}
	r.regs = append(r.regs, registration{build: b, agents: append([]string(nil), agents...)})
	return r
}

// Static wraps a stateless tool as a Builder.
func Static(t Tool) Builder { return func(*request.Turn) Tool { return t } }

// ForTurn builds the turn's tools and returns them per agent.
func (r *Registry) ForTurn(turn *request.Turn) map[string][]Tool {
	out := map[string][]Tool{}
	for _, reg := range r.regs {
		t := reg.build(turn)
		if t == nil {
			continue
		}
		for _, a := range reg.agents {
			out[a] = append(out[a], t)
		}
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

// MCPSource loads the MCP tools of a turn's connections (issue 9). Tools are given to every subagent;
// credentials of the connections that loaded are echoed in mcp_credentials.
type MCPSource interface {
	Load(ctx context.Context, conns []request.MCPConnection) ([]Tool, []timeline.Credential)
}

// DefaultRegistry is the registry the function serves with: current_time for every agent (issue 9 adds
// the other built-in tools).
func DefaultRegistry() *Registry {
	return NewRegistry().Register(Static(CurrentTime{Now: time.Now}))
}

// CurrentTime is the current_time tool: the current UTC time in ISO 8601 with microseconds and +00:00,
// as Python's datetime.isoformat writes it.
type CurrentTime struct {
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Name implements Tool.
func (CurrentTime) Name() string { return "current_time" }

// Description implements Tool.
func (CurrentTime) Description() string {
	return "Return the current date and time in UTC (ISO 8601). Use it for relative dates such as 'yesterday' or 'last week'."
}

// Parameters implements Tool.
func (CurrentTime) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
}

// Run implements Tool.
func (c CurrentTime) Run(context.Context, json.RawMessage) (string, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	return now().UTC().Format("2006-01-02T15:04:05.000000+00:00"), nil
}
