// Package handler is the title function: a short conversation title, over HTTP (POST / or /api/title) and
// from an Appwrite row-create event (see package rowevent).
package handler

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"appwrite-agent/functions/title/rowevent"
	"appwrite-agent/shared/convtitle"
	"appwrite-agent/shared/fnhttp"
	"appwrite-agent/shared/llm"
	"appwrite-agent/shared/turnrequest"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// Budget bounds one execution, well inside the 30 s synchronous limit.
const Budget = 20 * time.Second

// Messages of the HTTP surface (the reference engine's where it has one).
const (
	MsgNoLLMKey       = "LLM_API_KEY is not configured"
	MsgNoTitle        = "Could not generate a title"
	MsgMessageMissing = "message is required"
)

// Request is the body of POST /: the conversation's first user message and, optionally, the start of the
// agent's reply and a per-request model.
type Request struct {
	Message          string           `json:"message"`
	AssistantMessage string           `json:"assistant_message"`
	LLM              *turnrequest.LLM `json:"llm"`
}

// Main is the entry point the open-runtimes Go server calls for every request: New over the configuration
// read once per process (config.go).
func Main(rt openruntimes.Context) openruntimes.Response { return fromEnv()(rt) }

// New returns the function's entry point over cfg (tests build their own). CORS (TITLE_CORS_ORIGINS) wraps
// every route, so preflights are answered before auth and errors carry the headers too.
func New(cfg Config) func(openruntimes.Context) openruntimes.Response {
	routes := cfg.CORS.Wrap(func(rt openruntimes.Context) openruntimes.Response { return route(rt, cfg) })
	return func(rt openruntimes.Context) openruntimes.Response {
		for _, w := range cfg.Warnings {
			rt.Error("config: " + w)
		}
		return routes(rt)
	}
}

func route(rt openruntimes.Context, cfg Config) openruntimes.Response {
	req := rt.Req
	switch {
	case req.Headers["x-appwrite-trigger"] == "event":
		// Only Appwrite sets the trigger to event (a function domain forces it to http), so the event header
		// is trusted here and nowhere else.
		return onEvent(rt, cfg)
	case req.Method == "GET" && req.Path == "/health":
		return fnhttp.Health(rt)
	case req.Method == "POST" && (req.Path == "/" || req.Path == "/api/title"):
		return onHTTP(rt, cfg)
	default:
		return fnhttp.NotFound(rt)
	}
}

func fail(rt openruntimes.Context, status int, code, message string) openruntimes.Response {
	return fnhttp.DetailError(rt, status, code, message)
}

func onHTTP(rt openruntimes.Context, cfg Config) openruntimes.Response {
	if r := cfg.Auth.Check(rt.Req.Headers); r != nil {
		return fail(rt, http.StatusUnauthorized, r.Code, r.Message)
	}
	var in Request
	dec := json.NewDecoder(strings.NewReader(rt.Req.BodyText()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return fail(rt, http.StatusBadRequest, "invalid_request", "the body must be a JSON object {message, assistant_message?, llm?}: "+err.Error())
	}
	if strings.TrimSpace(in.Message) == "" {
		return fail(rt, http.StatusUnprocessableEntity, "invalid_request", MsgMessageMissing)
	}
	settings, err := llm.Resolve(cfg.LLM, in.LLM)
	switch {
	case errors.Is(err, llm.ErrNoAPIKey):
		return fail(rt, http.StatusServiceUnavailable, "llm_not_configured", MsgNoLLMKey)
	case err != nil:
		return fail(rt, http.StatusUnprocessableEntity, "invalid_request", err.Error())
	}
	httpClient, release, err := llm.HTTPClient(settings, Budget)
	switch {
	case errors.Is(err, llm.ErrUserURLScheme):
		return fail(rt, http.StatusUnprocessableEntity, "invalid_request", err.Error())
	case err != nil:
		rt.Error(err.Error())
		return fail(rt, http.StatusInternalServerError, "internal", "the SSRF policy for llm.base_url is misconfigured")
	}
	defer release()
	settings.Retry.OnRetry = logRetry(rt)
	ctx, cancel := context.WithTimeout(context.Background(), Budget)
	defer cancel()
	title, _, err := convtitle.Generate(ctx, llm.New(settings, httpClient), in.Message, in.AssistantMessage)
	if err != nil {
		rt.Error("title: " + err.Error())
		return fail(rt, http.StatusBadGateway, "model_error", err.Error())
	}
	if title == "" {
		return fail(rt, http.StatusUnprocessableEntity, "no_title", MsgNoTitle)
	}
	return fnhttp.JSON(rt, http.StatusOK, map[string]string{"title": title})
}

// logRetry logs a model-call retry (llm.RetryEvent) and counts it (llm.MetricRetries).
func logRetry(rt openruntimes.Context) func(llm.RetryEvent) {
	return func(e llm.RetryEvent) {
		rt.Error(e.String())
		rt.Log(e.Metric())
	}
}

func onEvent(rt openruntimes.Context, cfg Config) openruntimes.Response {
	ctx, cancel := context.WithTimeout(context.Background(), Budget)
	defer cancel()
	titler := func(ctx context.Context, message string) (string, error) {
		settings, err := llm.Resolve(cfg.LLM, nil)
		if err != nil {
			return "", err
		}
		httpClient, release, err := llm.HTTPClient(settings, Budget)
		if err != nil {
			return "", err
		}
		defer release()
		settings.Retry.OnRetry = logRetry(rt)
		title, _, err := convtitle.Generate(ctx, llm.New(settings, httpClient), message, "")
		return title, err
	}
	out := rowevent.Handle(ctx, cfg.Rows, rt.Req.Headers["x-appwrite-event"], rt.Req.BodyBinary(), titler,
		rowevent.SDKWriter(cfg.Rows, rt.Req.Headers["x-appwrite-key"], 10*time.Second))
	switch out.Status {
	case "failed":
		// The execution is marked failed (status >= 500) so operators see it; Appwrite does not retry
		// executions, and the title column stays empty.
		rt.Error("title for row " + out.RowID + " failed: " + out.Reason)
		return fnhttp.JSON(rt, http.StatusInternalServerError, out)
	case "skipped":
		rt.Log("skipped: " + out.Reason)
	default:
		rt.Log("titled row " + out.RowID + ": " + out.Title)
	}
	return fnhttp.JSON(rt, http.StatusOK, out)
}
