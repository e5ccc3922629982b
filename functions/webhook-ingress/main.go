// Package handler is the webhook-ingress function: it receives Appwrite's webhooks and delivers signed,
// projected events (see package ingress).
package handler

import (
	"context"
	"net/http"
	"strings"
	"time"

	"appwrite-agent/functions/webhook-ingress/ingress"
	"appwrite-agent/shared/fnhttp"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// requestBudget bounds one execution: Appwrite's webhook worker waits 15 s, synchronous executions 30 s.
const requestBudget = 12 * time.Second

// Main is the entry point the open-runtimes Go server calls for every request.
func Main(Context openruntimes.Context) openruntimes.Response { return serve(Context, time.Now) }

// New returns an entry point that reads the time from now instead of the wall clock (for signatures,
// expiry and scheduling): tests drive a delayed retry minutes ahead with it instead of waiting.
func New(now func() time.Time) func(openruntimes.Context) openruntimes.Response {
	return func(Context openruntimes.Context) openruntimes.Response { return serve(Context, now) }
}

func serve(Context openruntimes.Context, now func() time.Time) openruntimes.Response {
	req := Context.Req
	switch {
	case req.Method == "GET" && req.Path == "/health":
		return fnhttp.Health(Context)
	case strings.HasPrefix(req.Path, ingress.WebhookPathPrefix), req.Path == ingress.JobPath:
	default:
		return fnhttp.NotFound(Context)
	}

	cfg, client, err := ingress.Load()
	if err != nil {
		Context.Error("webhook-ingress is not configured: " + err.Error())
		return fnhttp.Error(Context, http.StatusServiceUnavailable, "not_configured", "webhook-ingress is not configured; see its logs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestBudget)
	defer cancel()
	// Counter lines are written in one Context.Log call at the end (deferred, so a panic keeps them): each
	// call is a write to the execution's log file, and one delivery makes three to five lines.
	var lines []string
	defer func() {
		if len(lines) > 0 {
			Context.Log(strings.Join(lines, "\n"))
		}
	}()
	deps := ingress.Deps{Config: cfg, Client: client, Now: now, Log: func(line string) { lines = append(lines, line) }}
	r := ingress.Request{Method: req.Method, Path: req.Path, Headers: req.Headers, Body: req.BodyBinary(), AppwriteKey: req.Headers["x-appwrite-key"]}
	var a ingress.Answer
	if req.Path == ingress.JobPath {
		a = ingress.HandleJob(ctx, deps, r)
	} else {
		a = ingress.HandleWebhook(ctx, deps, r)
	}
	return fnhttp.JSON(Context, a.Status, a.Body)
}
