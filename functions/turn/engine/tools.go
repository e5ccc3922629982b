package engine

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"time"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/functions/turn/skills"
	"appwrite-agent/functions/turn/timeline"
	"appwrite-agent/functions/turn/tools"
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
	r.regs = append(r.regs, registration{build: b, agents: append([]string(nil), agents...)})
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
	for agent, rank := range r.order {
		list := out[agent]
		pos := func(t Tool) int {
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
	Load(ctx context.Context, turn *request.Turn, taken map[string]bool) MCPTools
}

// MCPTools is what an MCPSource loaded for one turn.
type MCPTools struct {
	// Tools are the connections' tools, under names unique in the turn.
	Tools []Tool
	// Credentials are echoed first in mcp_credentials (none: no event).
	Credentials []timeline.Credential
	// Notices are status messages (one per skipped connection), emitted after mcp_credentials.
	Notices []string
	// Close, when set, ends the MCP sessions and closes their connections; the engine calls it when the
	// turn ends.
	Close func()
}

// Built-in tool order of each subagent, as in the reference: build_tools() for the researcher and the
// planner, build_appwrite_tools() for platform. All three get the same twelve tools.
var (
	GeneralToolOrder = []string{"calculator", "current_time", "web_search", "browser_fetch", "http_get",
		"appwrite_skill", "read_attachment", "sandbox_exec", "console", "clarify", "memory", "report_threat"}
	PlatformToolOrder = []string{"appwrite_skill", "browser_fetch", "http_get", "web_search", "current_time",
		"calculator", "read_attachment", "sandbox_exec", "console", "clarify", "memory", "report_threat"}
)

// installedSkills parses the embedded skills once per process (they are fixed at build time).
var installedSkills = sync.OnceValue(func() []tools.Skill { return tools.LoadSkills(skills.FS) })

// DefaultRegistry is the registry the function serves with: the twelve built-in tools for every agent, in
// each agent's reference order (GeneralToolOrder, PlatformToolOrder). It reads the web tools'
// environment (SSRF policy, search API) when called; the function calls it for every request. Each
// turn gets its own appwrite_skill (per-turn dedupe) and read_attachment (the turn's files); the
// others are stateless, except browser_fetch's bounded process-wide page cache.
func DefaultRegistry() *Registry {
	web := tools.WebFromEnv()
	r := NewRegistry().
		Register(Static(tools.Calculator{})).
		Register(Static(CurrentTime{Now: time.Now})).
		Register(Static(tools.WebSearch{Web: web})).
		Register(Static(tools.BrowserFetch{Web: web, Cache: tools.DefaultPageCache()})).
		Register(Static(tools.HTTPGet{Web: web})).
		Register(func(*request.Turn) Tool { return tools.NewSkillToolFrom(installedSkills()) }).
		Register(func(t *request.Turn) Tool { return tools.ReadAttachment{Attachments: t.Attachments} }).
		Register(Static(tools.SandboxExec{})).
		Register(Static(tools.Console())).
		Register(Static(tools.Clarify())).
		Register(Static(tools.Memory())).
		Register(Static(tools.ReportThreat()))
	r.Order(AgentResearcher, GeneralToolOrder...)
	r.Order(AgentPlanner, GeneralToolOrder...)
	r.Order(AgentPlatform, PlatformToolOrder...)
	return r
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
