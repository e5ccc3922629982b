package handler

import (
	"sync"

	"appwrite-agent/functions/title/rowevent"
	"appwrite-agent/shared/fnhttp"
	"appwrite-agent/shared/llm"
	"appwrite-agent/shared/sessionauth"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// EnvCORSOrigins lists the browser origins allowed to call the function (fnhttp.ParseCORS).
const EnvCORSOrigins = "TITLE_CORS_ORIGINS"

// Config is everything the function reads from its environment. This file is the only place that reads
// it; the function reads it once per process (see fromEnv).
type Config struct {
	// Auth is AGENT_API_KEY and AGENT_ALLOW_UNAUTHENTICATED (the HTTP route).
	Auth sessionauth.Policy
	// LLM is LLM_API_KEY, LLM_MODEL, LLM_BASE_URL, LLM_MAX_RETRIES and the SSRF policy of a per-request
	// llm.base_url.
	LLM llm.Env
	// CORS is TITLE_CORS_ORIGINS.
	CORS fnhttp.CORS
	// Rows says which rows get titles from row-create events (rowevent.ConfigFromEnv).
	Rows rowevent.Config
	// Warnings lists environment values that were ignored.
	Warnings []string
}

// LoadConfig reads the configuration from the environment.
func LoadConfig() Config {
	c := Config{
		Auth: sessionauth.FromEnv(),
		LLM:  llm.EnvFromOS(),
		Rows: rowevent.ConfigFromEnv(),
	}
	c.Warnings = append(c.Warnings, c.LLM.Warnings...)
	var err error
	if c.CORS, err = fnhttp.CORSFromEnv(EnvCORSOrigins); err != nil {
		c.Warnings = append(c.Warnings, err.Error())
	}
	return c
}

// fromEnv is the function's only process-wide value: its entry point over the configuration, read once per
// process (a deployment's environment never changes while it runs).
var fromEnv = sync.OnceValue(func() func(openruntimes.Context) openruntimes.Response { return New(LoadConfig()) })
