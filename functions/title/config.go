package handler

import (
	"cmp"
	"os"
	"strings"
	"sync"

	"appwrite-agent/functions/title/rowevent"
	"appwrite-agent/shared/fnhttp"
	"appwrite-agent/shared/llm"
	"appwrite-agent/shared/platform"
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
	// Rows says which rows get titles from row-create events: TITLE_DATABASE_ID, TITLE_TABLE_ID,
	// TITLE_MESSAGE_COLUMN, TITLE_COLUMN, and the platform's endpoint and project.
	Rows rowevent.Config
	// Platform is what Appwrite sets for every function (shared/platform): the endpoint and project of Rows,
	// the deployment /health names.
	Platform platform.Env
	// Warnings lists environment values that were ignored.
	Warnings []string
}

// LoadConfig reads the configuration from the environment.
func LoadConfig() Config {
	getenv := os.Getenv // the process environment, read here only
	c := Config{
		Platform: platform.FromEnv(getenv),
		Auth:     sessionauth.FromEnv(getenv),
		LLM:      llm.FromEnv(getenv),
	}
	c.Rows = rowevent.Config{
		DatabaseID:    strings.TrimSpace(getenv(rowevent.EnvDatabaseID)),
		TableID:       strings.TrimSpace(getenv(rowevent.EnvTableID)),
		MessageColumn: cmp.Or(strings.TrimSpace(getenv(rowevent.EnvMessageColumn)), rowevent.DefaultMessageColumn),
		TitleColumn:   cmp.Or(strings.TrimSpace(getenv(rowevent.EnvTitleColumn)), rowevent.DefaultTitleColumn),
		Endpoint:      c.Platform.Endpoint,
		ProjectID:     c.Platform.ProjectID,
	}
	c.Warnings = append(c.Warnings, c.LLM.Warnings...)
	var err error
	if c.CORS, err = fnhttp.ParseCORS(EnvCORSOrigins, getenv(EnvCORSOrigins)); err != nil {
		c.Warnings = append(c.Warnings, err.Error())
	}
	return c
}

// fromEnv is the function's only process-wide value: its entry point over the configuration, read once per
// process (a deployment's environment never changes while it runs).
var fromEnv = sync.OnceValue(func() func(openruntimes.Context) openruntimes.Response { return New(LoadConfig()) })
