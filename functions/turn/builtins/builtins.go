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
// dedupe) and read_attachment (the turn's files); the other tools are stateless.
func Registry(web tools.Web, cache *tools.PageCache) *engine.Registry {
	if cache == nil {
		cache = tools.NewPageCache(0, 0)
	}
	installed := installedSkills()
	r := engine.NewRegistry().
		Register(engine.Static(tools.Calculator{})).
		Register(engine.Static(tools.CurrentTime{Now: time.Now})).
		Register(engine.Static(tools.WebSearch{Web: web})).
		Register(engine.Static(tools.BrowserFetch{Web: web, Cache: cache})).
		Register(engine.Static(tools.HTTPGet{Web: web})).
		Register(func(*request.Turn) toolapi.Tool { return tools.NewSkillToolFrom(installed) }).
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

// installedSkills are the skills embedded at build time (functions/turn/skills): fixed for the life of
// the process, so they are parsed once.
var installedSkills = sync.OnceValue(func() []tools.Skill { return tools.LoadSkills(skills.FS) })

// PromptSkills lists the installed skills (name and description, sorted by name) for the platform prompt
// (engine.Engine.Skills): the same skills appwrite_skill serves.
func PromptSkills() []engine.SkillInfo {
	var out []engine.SkillInfo
	for _, s := range installedSkills() {
		out = append(out, engine.SkillInfo{Name: s.Name, Description: s.Description})
	}
	return out
}
