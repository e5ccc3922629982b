package handler

import (
	"os"
	"strconv"
	"strings"
	"time"

	"appwrite-agent/functions/turn/engine"
	"appwrite-agent/functions/turn/request"
	"appwrite-agent/shared/llm"
	"appwrite-agent/shared/sessionauth"
)

// Config is everything the function reads from its environment; it is read again for every request, so
// nothing is cached between executions.
type Config struct {
	// Auth is AGENT_API_KEY (compared with X-Session-API-Key) and AGENT_ALLOW_UNAUTHENTICATED.
	Auth sessionauth.Policy
	// LLM is LLM_API_KEY, LLM_MODEL, LLM_BASE_URL.
	LLM llm.Env
	// Limits are ATTACHMENTS_MAX_PER_MESSAGE and ATTACHMENTS_MAX_BYTES.
	Limits request.Limits
	// Engine are TURN_BUDGET, SUBAGENT_MAX_STEPS, STREAM_TOOL_INPUT_CHARS, STREAM_TOOL_OUTPUT_CHARS,
	// MEMORIES_MAX_CHARS.
	Engine engine.Config
	// BuildTime is AGENT_BUILD_TIME ("unknown" when unset).
	BuildTime string
	// Warnings lists environment values that were ignored.
	Warnings []string
}

// LoadConfig reads the configuration from the environment.
func LoadConfig() Config {
	c := Config{
		Auth:      sessionauth.FromEnv(),
		LLM:       llm.Env{APIKey: strings.TrimSpace(os.Getenv("LLM_API_KEY")), Model: strings.TrimSpace(os.Getenv("LLM_MODEL")), BaseURL: strings.TrimSpace(os.Getenv("LLM_BASE_URL"))},
		BuildTime: os.Getenv("AGENT_BUILD_TIME"),
	}
	if c.BuildTime == "" {
		c.BuildTime = "unknown"
	}
	c.Limits.MaxAttachments = c.envInt("ATTACHMENTS_MAX_PER_MESSAGE", request.DefaultMaxAttachments)
	c.Limits.MaxAttachmentBytes = c.envInt("ATTACHMENTS_MAX_BYTES", request.DefaultMaxAttachmentBytes)
	c.Engine.MaxSteps = c.envInt("SUBAGENT_MAX_STEPS", engine.DefaultMaxSteps)
	c.Engine.ToolInputChars = c.envInt("STREAM_TOOL_INPUT_CHARS", engine.DefaultToolInputChars)
	c.Engine.ToolOutputChars = c.envInt("STREAM_TOOL_OUTPUT_CHARS", engine.DefaultToolOutputChars)
	c.Engine.MemoryChars = c.envInt("MEMORIES_MAX_CHARS", engine.DefaultMemoryChars)
	c.Engine.Budget = engine.DefaultBudget
	if raw := strings.TrimSpace(os.Getenv("TURN_BUDGET")); raw != "" {
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
