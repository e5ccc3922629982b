package handler

import (
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"appwrite-agent/functions/turn/builtins"
	"appwrite-agent/functions/turn/engine"
	"appwrite-agent/functions/turn/request"
	"appwrite-agent/functions/turn/tools"
	"appwrite-agent/shared/fnhttp"
	"appwrite-agent/shared/llm"
	"appwrite-agent/shared/platform"
	"appwrite-agent/shared/sessionauth"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// Config is everything the function reads from its environment. This file is the only place that reads
// it; the function builds its process state from it once per process (see fromEnv).
type Config struct {
	// Platform is what Appwrite sets for every function (shared/platform): the endpoint and project the
	// Realtime sink writes to (Progress), the deployment /health names.
	Platform platform.Env
	// Auth is AGENT_API_KEY (compared with X-Session-API-Key) and AGENT_ALLOW_UNAUTHENTICATED.
	Auth sessionauth.Policy
	// LLM is LLM_API_KEY, LLM_MODEL, LLM_BASE_URL, LLM_MAX_RETRIES and the SSRF policy of a per-request
	// llm.base_url.
	LLM llm.Env
	// Limits are ATTACHMENTS_MAX_PER_MESSAGE and ATTACHMENTS_MAX_BYTES.
	Limits request.Limits
	// Engine are TURN_BUDGET, SUBAGENT_MAX_STEPS, STREAM_TOOL_INPUT_CHARS, STREAM_TOOL_OUTPUT_CHARS,
	// MEMORIES_MAX_CHARS, TOOL_CONCURRENCY.
	Engine engine.Config
	// AsyncBudget is TURN_ASYNC_BUDGET: the budget of a turn called as an async execution ("async": true).
	AsyncBudget time.Duration
	// Progress locates the Realtime progress table and the project's API (TURN_PROGRESS_DATABASE,
	// TURN_PROGRESS_TABLE, APPWRITE_FUNCTION_API_ENDPOINT, APPWRITE_FUNCTION_PROJECT_ID).
	Progress ProgressConfig
	// Web is the outbound side of the web tools and of the MCP connections: the SSRF policy
	// (SAFEHTTP_ALLOW, SAFEHTTP_ALLOW_HTTP, SAFEHTTP_CA_FILE) and the search providers (BRAVE_SEARCH_API_KEY,
	// BRAVE_SEARCH_URL, SEARXNG_URL, DUCKDUCKGO_ENABLED, DUCKDUCKGO_URL, WEB_SEARCH_ENABLED).
	Web tools.Web
	// CORS is TURN_CORS_ORIGINS: the browser origins allowed to call the function (none: no CORS headers).
	CORS fnhttp.CORS
	// BuildTime is AGENT_BUILD_TIME ("unknown" when unset).
	BuildTime string
	// Warnings lists environment values that were ignored.
	Warnings []string
}

// EnvCORSOrigins lists the browser origins allowed to call the function (fnhttp.ParseCORS).
const EnvCORSOrigins = "TURN_CORS_ORIGINS"

// LoadConfig reads the configuration from the environment.
func LoadConfig() Config {
	getenv := os.Getenv // the process environment, read here only
	c := Config{
		Platform:  platform.FromEnv(getenv),
		Auth:      sessionauth.FromEnv(getenv),
		LLM:       llm.FromEnv(getenv),
		BuildTime: getenv("AGENT_BUILD_TIME"),
	}
	if c.BuildTime == "" {
		c.BuildTime = "unknown"
	}
	c.Warnings = append(c.Warnings, c.LLM.Warnings...)
	c.Limits.MaxAttachments = c.envInt("ATTACHMENTS_MAX_PER_MESSAGE", request.DefaultMaxAttachments)
	c.Limits.MaxAttachmentBytes = c.envInt("ATTACHMENTS_MAX_BYTES", request.DefaultMaxAttachmentBytes)
	if base64.StdEncoding.EncodedLen(c.Limits.MaxAttachmentBytes) > request.MaxBodyBytes {
		c.Warnings = append(c.Warnings, fmt.Sprintf("ATTACHMENTS_MAX_BYTES=%d cannot be reached: base64-encoded, such a file is more than the %d bytes Appwrite accepts for a request body",
			c.Limits.MaxAttachmentBytes, request.MaxBodyBytes))
	}
	c.Engine.MaxSteps = c.envInt("SUBAGENT_MAX_STEPS", engine.DefaultMaxSteps)
	c.Engine.ToolInputChars = c.envInt("STREAM_TOOL_INPUT_CHARS", engine.DefaultToolInputChars)
	c.Engine.ToolOutputChars = c.envInt("STREAM_TOOL_OUTPUT_CHARS", engine.DefaultToolOutputChars)
	c.Engine.MemoryChars = c.envInt("MEMORIES_MAX_CHARS", engine.DefaultMemoryChars)
	c.Engine.ToolConcurrency = c.envInt("TOOL_CONCURRENCY", engine.DefaultToolConcurrency)
	c.Engine.Budget = engine.DefaultBudget
	if raw := strings.TrimSpace(getenv("TURN_BUDGET")); raw != "" {
		d, err := time.ParseDuration(raw)
		switch {
		case err != nil || d <= 0:
			c.Warnings = append(c.Warnings, "TURN_BUDGET must be a positive Go duration such as 25s; using the default")
		case d > engine.MaxBudget:
			c.Warnings = append(c.Warnings, "TURN_BUDGET is capped at "+engine.MaxBudget.String())
			c.Engine.Budget = engine.MaxBudget
		default:
			c.Engine.Budget = d
		}
	}
	c.AsyncBudget = c.envDuration("TURN_ASYNC_BUDGET", engine.DefaultAsyncBudget, engine.MaxAsyncBudget)
	c.Progress = ProgressConfig{
		DatabaseID: strings.TrimSpace(getenv("TURN_PROGRESS_DATABASE")),
		TableID:    strings.TrimSpace(getenv("TURN_PROGRESS_TABLE")),
		Endpoint:   c.Platform.Endpoint,
		ProjectID:  c.Platform.ProjectID,
	}
	// The web tools, the MCP connections and a per-request llm.base_url share one SSRF policy, read once
	// with the LLM settings; its CA file (and the system roots) are parsed on the first outbound request.
	c.Web.Policy, c.Web.PolicyErr = c.LLM.UserPolicy, c.LLM.UserPolicyErr
	c.Web.Search = tools.SearchConfig{
		BraveKey:      strings.TrimSpace(getenv(tools.EnvBraveKey)),
		BraveURL:      strings.TrimSpace(getenv(tools.EnvBraveURL)),
		SearXNGURL:    strings.TrimSpace(getenv(tools.EnvSearXNG)),
		DuckDuckGoURL: strings.TrimSpace(getenv(tools.EnvDuckDuckGoURL)),
		NoDuckDuckGo:  isFalse(getenv(tools.EnvDuckDuckGoEnabled)),
		Disabled:      isFalse(getenv(tools.EnvWebSearchEnabled)),
	}
	var err error
	if c.CORS, err = fnhttp.ParseCORS(EnvCORSOrigins, getenv(EnvCORSOrigins)); err != nil {
		c.Warnings = append(c.Warnings, err.Error())
	}
	return c
}

func (c *Config) envInt(name string, def int) int {
	raw := strings.TrimSpace(os.Getenv(name))
	if raw == "" {
		return def
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n <= 0 {
		c.Warnings = append(c.Warnings, name+" must be a positive integer; using the default "+strconv.Itoa(def))
		return def
	}
	return n
}

// ProgressConfig is where the Realtime progress sink writes.
type ProgressConfig struct {
	// DatabaseID and TableID name the progress table (TURN_PROGRESS_DATABASE, TURN_PROGRESS_TABLE); the
	// Realtime sink is refused while either is empty.
	DatabaseID, TableID string
	// Endpoint and ProjectID are the function's own project (APPWRITE_FUNCTION_API_ENDPOINT,
	// APPWRITE_FUNCTION_PROJECT_ID, set by Appwrite for every execution).
	Endpoint, ProjectID string
}

// envDuration reads a positive Go duration capped at max.
func (c *Config) envDuration(name string, def, max time.Duration) time.Duration {
	raw := strings.TrimSpace(os.Getenv(name))
	if raw == "" {
		return def
	}
	d, err := time.ParseDuration(raw)
	switch {
	case err != nil || d <= 0:
		c.Warnings = append(c.Warnings, name+" must be a positive Go duration such as "+def.String()+"; using the default")
		return def
	case d > max:
		c.Warnings = append(c.Warnings, name+" is capped at "+max.String())
		return max
	}
	return d
}

func isFalse(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "no", "off":
		return true
	}
	return false
}

// process is what the function builds from its configuration and keeps between requests. Building it
// reads the environment only: /health answers without more, and what a request needs is built on its
// first use, once per process (the skills, the tool registry, the TLS roots of Web.Policy).
type process struct {
	cfg Config
	// skills are the installed skills (appwrite_skill and the platform prompt), parsed on first use.
	skills *builtins.Skills
	// tools returns the built-in tool registry (with browser_fetch's page cache, shared by the process's
	// turns), built on the first call.
	tools func() *engine.Registry
}

// newProcess builds the process state of cfg.
func newProcess(cfg Config) process {
	sk := builtins.NewSkills()
	return process{cfg: cfg, skills: sk, tools: sync.OnceValue(func() *engine.Registry { return builtins.Registry(cfg.Web, nil, sk) })}
}

// fromEnv is the function's only process-wide value: its entry point over the configuration, read once per
// process (a deployment's environment never changes while it runs).
var fromEnv = sync.OnceValue(func() func(openruntimes.Context) openruntimes.Response { return New(LoadConfig()) })
