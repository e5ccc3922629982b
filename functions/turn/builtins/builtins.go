// Package builtins wires the turn's twelve built-in tools (package tools, the skills of package skills)
// into the engine's registry, in each subagent's reference order. It is the only place that knows both
// the engine and the concrete tools; the engine sees them only through toolapi.Tool.
package builtins

import (
	"sync"
	"time"

	"appwrite-agent/functions/turn/engine"
	"appwrite-agent/functions/turn/request"
	"appwrite-agent/functions/turn/skills"
	"appwrite-agent/functions/turn/toolapi"
	"appwrite-agent/functions/turn/tools"
)

// Built-in tool order of each subagent, as in the reference: build_tools() for the researcher and the
// planner, build_appwrite_tools() for platform. All three get the same twelve tools.
var (
	GeneralToolOrder = []string{"calculator", "current_time", "web_search", "browser_fetch", "http_get",
		"appwrite_skill", "read_attachment", "sandbox_exec", "console", "clarify", "memory", "report_threat"}
	PlatformToolOrder = []string{"appwrite_skill", "browser_fetch", "http_get", "web_search", "current_time",
		"calculator", "read_attachment", "sandbox_exec", "console", "clarify", "memory", "report_threat"}
)

// Registry returns the registry the function serves with: the twelve built-in tools for every agent, in
// each agent's reference order (GeneralToolOrder, PlatformToolOrder). web is the outbound configuration of
// the web tools and cache browser_fetch's page cache (a new one when nil). The function builds it once per
// process, so the cache spares a re-fetch when the same page is asked for again within its TTL (a retry,
// the planner fallback, the next turn of the same chat). Each turn gets its own appwrite_skill (per-turn
// dedupe) and read_attachment (the turn's files); the other tools are stateless. sk are the installed
// skills appwrite_skill serves (NewSkills when nil), parsed on the first turn that builds the tool.
func Registry(web tools.Web, cache *tools.PageCache, sk *Skills) *engine.Registry {
	if cache == nil {
		cache = tools.NewPageCache(0, 0)
	}
	if sk == nil {
		sk = NewSkills()
	}
	r := engine.NewRegistry().
		Register(engine.Static(tools.Calculator{})).
		Register(engine.Static(tools.CurrentTime{Now: time.Now})).
		Register(engine.Static(tools.WebSearch{Web: web})).
		Register(engine.Static(tools.BrowserFetch{Web: web, Cache: cache})).
		Register(engine.Static(tools.HTTPGet{Web: web})).
		Register(func(*request.Turn) toolapi.Tool { return tools.NewSkillToolFrom(sk.Installed()) }).
		Register(func(t *request.Turn) toolapi.Tool { return tools.ReadAttachment{Attachments: t.Attachments} }).
		Register(engine.Static(tools.SandboxExec{})).
		Register(engine.Static(tools.Console())).
		Register(engine.Static(tools.Clarify())).
		Register(engine.Static(tools.Memory())).
		Register(engine.Static(tools.ReportThreat()))
	r.Order(engine.AgentResearcher, GeneralToolOrder...)
	r.Order(engine.AgentPlanner, GeneralToolOrder...)
	r.Order(engine.AgentPlatform, PlatformToolOrder...)
	return r
}

// Skills are the skills embedded at build time (functions/turn/skills). They are fixed for the life of
// the process, so they are parsed once, on first use: a process that never loads a skill or builds the
// platform prompt never parses them. The function keeps one in its process state; it is safe for
// concurrent use.
type Skills struct {
	installed func() []tools.Skill
	prompt    func() []engine.SkillInfo
}

// NewSkills returns the installed skills, not parsed yet.
func NewSkills() *Skills {
	s := &Skills{installed: sync.OnceValue(func() []tools.Skill { return tools.LoadSkills(skills.FS) })}
	s.prompt = sync.OnceValue(func() []engine.SkillInfo {
		var out []engine.SkillInfo
		for _, k := range s.installed() {
			out = append(out, engine.SkillInfo{Name: k.Name, Description: k.Description})
		}
		return out
	})
	return s
}

// Installed returns the skills appwrite_skill serves (parsed on the first call).
func (s *Skills) Installed() []tools.Skill { return s.installed() }

// Prompt lists the installed skills (name and description, sorted by name) for the platform prompt
// (engine.Engine.Skills): the same skills appwrite_skill serves.
func (s *Skills) Prompt() []engine.SkillInfo { return s.prompt() }

// PromptSkills is NewSkills().Prompt(): the installed skills as the platform prompt lists them.
func PromptSkills() []engine.SkillInfo { return NewSkills().Prompt() }
