// Package handler is the turn function: one AI agent turn (router, subagents, tools) answered with its event timeline.
package handler

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"appwrite-agent/functions/turn/engine"
	"appwrite-agent/functions/turn/mcptools"
	"appwrite-agent/functions/turn/progress"
	"appwrite-agent/functions/turn/request"
	"appwrite-agent/functions/turn/timeline"
	"appwrite-agent/shared/fnhttp"
	"appwrite-agent/shared/llm"
	"appwrite-agent/shared/turnrequest"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// Messages of the HTTP surface.
const (
	MsgNoLLMKey      = "LLM_API_KEY is not configured"
	MsgUserURLScheme = "llm.base_url must use https://" // llm.ErrUserURLScheme
)

// Main is the entry point the open-runtimes Go server calls for every request: New over the configuration
// read once per process (config.go).
func Main(rt openruntimes.Context) openruntimes.Response { return fromEnv()(rt) }

// New returns the function's entry point over cfg and what is built from it (tests build their own). CORS
// (TURN_CORS_ORIGINS) wraps every route, so preflights are answered before auth and errors carry the headers
// too.
func New(cfg Config) func(openruntimes.Context) openruntimes.Response {
	p := newProcess(cfg)
	return p.cfg.CORS.Wrap(func(rt openruntimes.Context) openruntimes.Response { return serve(rt, p) })
}

func serve(rt openruntimes.Context, p process) openruntimes.Response {
	req := rt.Req
	switch {
	case req.Method == "GET" && req.Path == "/health":
		return fnhttp.Health(rt)
	case req.Method == "GET" && req.Path == "/ready":
		return ready(rt, p.cfg)
	case req.Method == "GET" && req.Path == "/":
		return fnhttp.JSON(rt, http.StatusOK, map[string]string{
			"service": "appwrite-agent", "engine": "go", "build_id": fnhttp.BuildID(), "build_time": p.cfg.BuildTime,
		})
	case req.Method == "GET" && (req.Path == "/meta" || req.Path == "/api/meta"):
		if res, ok := authorize(rt, p.cfg); !ok {
			return res
		}
		return fnhttp.JSON(rt, http.StatusOK, meta(p))
	case req.Method == "POST" && (req.Path == "/" || req.Path == "/api/turn"):
		return turn(rt, p)
	default:
		return fnhttp.NotFound(rt)
	}
}

func fail(rt openruntimes.Context, status int, code, message string) openruntimes.Response {
	return fnhttp.DetailError(rt, status, code, message)
}

// authorize applies the session-key policy (shared/sessionauth).
func authorize(rt openruntimes.Context, cfg Config) (openruntimes.Response, bool) {
	if r := cfg.Auth.Check(rt.Req.Headers); r != nil {
		return fail(rt, http.StatusUnauthorized, r.Code, r.Message), false
	}
	return openruntimes.Response{}, true
}

func ready(rt openruntimes.Context, cfg Config) openruntimes.Response {
	configured := cfg.LLM.APIKey != ""
	return fnhttp.JSON(rt, http.StatusOK, map[string]any{
		"ready": configured, "llm_configured": configured, "build_id": fnhttp.BuildID(), "build_time": cfg.BuildTime,
	})
}

// wantsJSON reports a client that asked for the JSON array variant.
func wantsJSON(accept string) bool {
	a := strings.ToLower(accept)
	return strings.Contains(a, "application/json") && !strings.Contains(a, "text/event-stream")
}

func turn(rt openruntimes.Context, p process) openruntimes.Response {
	cfg := p.cfg
	for _, w := range cfg.Warnings {
		rt.Error("config: " + w)
	}
	if res, ok := authorize(rt, cfg); !ok {
		return res
	}
	t, verr := request.Parse(rt.Req.BodyBinary(), cfg.Limits)
	if verr != nil {
		code := "invalid_request"
		if verr.Status == http.StatusRequestEntityTooLarge {
			code = "too_large"
		}
		return fail(rt, verr.Status, code, verr.Message)
	}
	settings, err := llm.Resolve(cfg.LLM, t.LLM)
	switch {
	case errors.Is(err, llm.ErrUserURLNeedsKey):
		return fail(rt, http.StatusUnprocessableEntity, "invalid_request", err.Error())
	case errors.Is(err, llm.ErrNoAPIKey):
		return fail(rt, http.StatusServiceUnavailable, "llm_not_configured", MsgNoLLMKey)
	case err != nil:
		return fail(rt, http.StatusInternalServerError, "internal", err.Error())
	}
	engCfg := cfg.Engine
	if t.Async {
		engCfg.Budget = cfg.AsyncBudget
	}
	httpClient, release, err := llm.HTTPClient(settings, engCfg.Budget)
	switch {
	case errors.Is(err, llm.ErrUserURLScheme):
		return fail(rt, http.StatusUnprocessableEntity, "invalid_request", MsgUserURLScheme)
	case err != nil:
		rt.Error(err.Error())
		return fail(rt, http.StatusInternalServerError, "internal", "the SSRF policy for llm.base_url is misconfigured")
	}
	defer release()
	sk, serr := openSinks(rt, cfg, t)
	if serr != nil {
		return fail(rt, serr.status, serr.code, serr.message)
	}
	defer sk.close()
	// The turn logs from several goroutines (the title call and the MCP load beside the turn, concurrent
	// tool calls); the runtime's logger is not safe for concurrent writes.
	var logMu sync.Mutex
	log := func(s string) { logMu.Lock(); defer logMu.Unlock(); rt.Error(s) }
	info := func(s string) { logMu.Lock(); defer logMu.Unlock(); rt.Log(s) }
	settings.Retry.OnRetry = func(e llm.RetryEvent) { log(e.String()); info(e.Metric()) }
	eng := &engine.Engine{
		Model:     llm.New(settings, httpClient),
		ModelName: settings.Model,
		Tools:     p.tools(),
		MCP:       &mcptools.Source{HTTP: cfg.Web.Policy, HTTPErr: cfg.Web.PolicyErr, Budget: engCfg.Budget, Log: log, Info: info},
		Config:    engCfg,
		Skills:    p.skills.Prompt,
		Log:       log,
	}
	start := time.Now()
	pub := progress.New(progress.Options{Log: log}, sk.list...)
	// A turn published through Realtime can be stopped by a row in its progress table (docs/turn.md
	// "Stopping a turn"): the watch cancels the turn with engine.ErrStopped.
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	endWatch := func() {}
	if rs := sk.realtime; rs != nil {
		endWatch = progress.StopWatch{Stopped: rs.Stopped, Log: log}.Watch(ctx, func() { stop(engine.ErrStopped) })
	}
	eng.Run(ctx, t, pub.Emit)
	endWatch()
	// The last batches (and complete) get a grace period; a synchronous call still answers within the
	// platform's limit.
	closeBy := time.Now().Add(progressGrace)
	if !t.Async {
		closeBy = later(start.Add(engine.MaxBudget), time.Now().Add(time.Second))
	}
	cctx, cancel := context.WithDeadline(context.Background(), closeBy)
	defer cancel()
	return timelineResponse(rt, pub.Close(cctx))
}

// progressGrace is how long an async turn waits for its sinks after the engine finished.
const progressGrace = 10 * time.Second

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func timelineResponse(rt openruntimes.Context, events []timeline.Event) openruntimes.Response {
	if wantsJSON(rt.Req.Headers["accept"]) {
		body, err := timeline.JSONArray(events)
		if err != nil {
			return fail(rt, http.StatusInternalServerError, "internal", "could not encode the timeline")
		}
		return openruntimes.Response{Body: body, StatusCode: http.StatusOK, Headers: map[string]string{"content-type": "application/json"}}
	}
	body, err := timeline.SSE(events)
	if err != nil {
		return fail(rt, http.StatusInternalServerError, "internal", "could not encode the timeline")
	}
	return openruntimes.Response{Body: body, StatusCode: http.StatusOK, Headers: map[string]string{
		"content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no",
	}}
}

const masked = "••••••"

func mask(s string) string {
	if s == "" {
		return ""
	}
	return masked
}

// meta is the /meta snapshot: configuration with secrets masked, limits, agents, prompts and tools.
func meta(p process) map[string]any {
	cfg := p.cfg
	model := cfg.LLM.Model
	if model == "" {
		model = llm.DefaultModel
	}
	chat := llm.ChatModel(model)
	var temp any = llm.DefaultTemperature
	api := "chat.completions"
	if llm.IsReasoningModel(chat) {
		temp, api = nil, "responses"
	}
	agents := []map[string]string{}
	for _, a := range []string{engine.AgentPlatform, engine.AgentResearcher, engine.AgentPlanner} {
		agents = append(agents, map[string]string{"name": a, "role": engine.AgentRoles[a], "prompt": engine.AgentPrompt(a, p.skills.Prompt())})
	}
	tools := p.tools().Describe()
	b, _ := json.Marshal(cfg.Engine.Budget.Seconds())
	return map[string]any{
		"llm": map[string]any{"model": model, "chat_model": chat, "base_url": cfg.LLM.BaseURL,
			"api_key_configured": cfg.LLM.APIKey != "", "temperature": temp, "api": api},
		"auth": map[string]any{"session_api_key_configured": cfg.Auth.APIKey != "", "header": "X-Session-API-Key",
			"unauthenticated_allowed": cfg.Auth.APIKey == "" && cfg.Auth.AllowUnauthenticated},
		"runtime": map[string]any{"subagent_max_steps": cfg.Engine.MaxSteps, "history_window": turnrequest.HistoryWindow,
			"turn_budget_seconds": json.RawMessage(b), "graph": "route once -> one ReAct subagent -> optional planner fallback",
			"router_prompt": engine.RouterPrompt, "turn_async_budget_seconds": cfg.AsyncBudget.Seconds()},
		"progress": map[string]any{"realtime_database": cfg.Progress.DatabaseID, "realtime_table": cfg.Progress.TableID,
			"realtime_configured": cfg.Progress.DatabaseID != "" && cfg.Progress.TableID != "" && cfg.Progress.Endpoint != "",
			"interval_ms":         progress.DefaultInterval.Milliseconds(), "max_failures": progress.DefaultMaxFailures},
		"limits": map[string]any{"attachments_max_per_message": cfg.Limits.MaxAttachments,
			"attachments_max_bytes": cfg.Limits.MaxAttachmentBytes, "stream_tool_input_chars": cfg.Engine.ToolInputChars,
			"stream_tool_output_chars": cfg.Engine.ToolOutputChars, "memories_max_chars": cfg.Engine.MemoryChars,
			"tool_concurrency": cfg.Engine.ToolConcurrency, "llm_max_retries": cfg.LLM.MaxRetries},
		"agents": agents,
		"tools":  tools,
		"env": map[string]any{"LLM_MODEL": cfg.LLM.Model, "LLM_BASE_URL": cfg.LLM.BaseURL,
			"LLM_API_KEY": mask(cfg.LLM.APIKey), "AGENT_API_KEY": mask(cfg.Auth.APIKey)},
		"build": map[string]string{"build_id": fnhttp.BuildID(), "build_time": cfg.BuildTime},
	}
}
