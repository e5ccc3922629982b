// Package handler is the title function: a short conversation title, over HTTP (POST / or /api/title) and
// from an Appwrite row-create event (see package rowevent).
package handler

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"time"

	"appwrite-agent/functions/title/rowevent"
	"appwrite-agent/shared/convtitle"
	"appwrite-agent/shared/fnhttp"
	"appwrite-agent/shared/llm"
	"appwrite-agent/shared/sessionauth"

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
	Message          string        `json:"message"`
	AssistantMessage string        `json:"assistant_message"`
	LLM              *llm.Override `json:"llm"`
}

// EnvCORSOrigins lists the browser origins allowed to call the function (fnhttp.ParseCORS).
const EnvCORSOrigins = "TITLE_CORS_ORIGINS"

// Main is the entry point the open-runtimes Go server calls for every request. CORS (TITLE_CORS_ORIGINS)
// wraps every route, so preflights are answered before auth and errors carry the headers too.
func Main(Context openruntimes.Context) openruntimes.Response {
	cors, err := fnhttp.CORSFromEnv(EnvCORSOrigins)
	if err != nil {
		Context.Error("config: " + err.Error())
	}
	return cors.Wrap(route)(Context)
}

func route(Context openruntimes.Context) openruntimes.Response {
	req := Context.Req
	switch {
	case req.Headers["x-appwrite-trigger"] == "event":
		// Only Appwrite sets the trigger to event (a function domain forces it to http), so the event header
		// is trusted here and nowhere else.
		return onEvent(Context)
	case req.Method == "GET" && req.Path == "/health":
		return fnhttp.Health(Context)
	case req.Method == "POST" && (req.Path == "/" || req.Path == "/api/title"):
		return onHTTP(Context)
	default:
		return fnhttp.NotFound(Context)
	}
}

func fail(ctx openruntimes.Context, status int, code, message string) openruntimes.Response {
	return fnhttp.DetailError(ctx, status, code, message)
}

func envLLM() llm.Env {
	return llm.Env{APIKey: strings.TrimSpace(os.Getenv("LLM_API_KEY")), Model: strings.TrimSpace(os.Getenv("LLM_MODEL")), BaseURL: strings.TrimSpace(os.Getenv("LLM_BASE_URL"))}
}

func onHTTP(ctx openruntimes.Context) openruntimes.Response {
	if r := sessionauth.FromEnv().Check(ctx.Req.Headers); r != nil {
		return fail(ctx, http.StatusUnauthorized, r.Code, r.Message)
	}
	var in Request
	dec := json.NewDecoder(strings.NewReader(ctx.Req.BodyText()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return fail(ctx, http.StatusBadRequest, "invalid_request", "the body must be a JSON object {message, assistant_message?, llm?}: "+err.Error())
	}
	if strings.TrimSpace(in.Message) == "" {
		return fail(ctx, http.StatusUnprocessableEntity, "invalid_request", MsgMessageMissing)
	}
	settings, err := llm.Resolve(envLLM(), in.LLM)
	switch {
	case errors.Is(err, llm.ErrNoAPIKey):
		return fail(ctx, http.StatusServiceUnavailable, "llm_not_configured", MsgNoLLMKey)
	case err != nil:
		return fail(ctx, http.StatusUnprocessableEntity, "invalid_request", err.Error())
	}
	httpClient, release, err := llm.HTTPClient(settings, Budget)
	switch {
	case errors.Is(err, llm.ErrUserURLScheme):
		return fail(ctx, http.StatusUnprocessableEntity, "invalid_request", err.Error())
	case err != nil:
		ctx.Error(err.Error())
		return fail(ctx, http.StatusInternalServerError, "internal", "the SSRF policy for llm.base_url is misconfigured")
	}
	defer release()
	c, cancel := context.WithTimeout(context.Background(), Budget)
	defer cancel()
	title, err := convtitle.Generate(c, llm.New(settings, httpClient), in.Message, in.AssistantMessage)
	if err != nil {
		ctx.Error("title: " + err.Error())
		return fail(ctx, http.StatusBadGateway, "model_error", err.Error())
	}
	if title == "" {
		return fail(ctx, http.StatusUnprocessableEntity, "no_title", MsgNoTitle)
	}
	return fnhttp.JSON(ctx, http.StatusOK, map[string]string{"title": title})
}

func onEvent(ctx openruntimes.Context) openruntimes.Response {
	cfg := rowevent.ConfigFromEnv()
	c, cancel := context.WithTimeout(context.Background(), Budget)
	defer cancel()
	titler := func(c context.Context, message string) (string, error) {
		settings, err := llm.Resolve(envLLM(), nil)
		if err != nil {
			return "", err
		}
		httpClient, release, err := llm.HTTPClient(settings, Budget)
		if err != nil {
			return "", err
		}
		defer release()
		return convtitle.Generate(c, llm.New(settings, httpClient), message, "")
	}
	out := rowevent.Handle(c, cfg, ctx.Req.Headers["x-appwrite-event"], ctx.Req.BodyBinary(), titler,
		rowevent.SDKWriter(cfg, ctx.Req.Headers["x-appwrite-key"], 10*time.Second))
	switch out.Status {
	case "failed":
		// The execution is marked failed (status >= 500) so operators see it; Appwrite does not retry
		// executions, and the title column stays empty.
		ctx.Error("title for row " + out.RowID + " failed: " + out.Reason)
		return fnhttp.JSON(ctx, http.StatusInternalServerError, out)
	case "skipped":
		ctx.Log("skipped: " + out.Reason)
	default:
		ctx.Log("titled row " + out.RowID + ": " + out.Title)
	}
	return fnhttp.JSON(ctx, http.StatusOK, out)
}
