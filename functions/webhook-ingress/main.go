// Package handler is the webhook-ingress function: it receives Appwrite's webhooks and delivers signed,
// projected events (see package ingress).
package handler

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"appwrite-agent/functions/webhook-ingress/ingress"
	"appwrite-agent/shared/envcache"
	"appwrite-agent/shared/faultreport"
	"appwrite-agent/shared/fnhttp"
	"appwrite-agent/shared/safehttp"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// process is what the function builds from its environment and keeps between requests: the configuration
// and the subscriber HTTP client (a client per request would pay a TLS handshake to every subscriber for
// every event).
type process struct {
	cfg    ingress.Config
	client *http.Client
	faults *faultreport.Reporter // nil without SENTRY_DSN
}

// state is the function's only process-wide value, built once per process environment (shared/envcache).
// A configuration that does not work is reported once per environment, with the reporter built first.
var state = envcache.New(func() (process, error) {
	faults, ferr := faultreport.FromEnv(os.Getenv, "webhook-ingress", fnhttp.BuildID())
	cfg, err := ingress.LoadConfig()
	if err == nil {
		err = ferr
	} else {
		faults.Report(faultreport.Fault{Operation: "configuration", Outcome: "misconfigured", Reason: "not_configured", Detail: err.Error()})
	}
	return process{cfg: cfg, client: safehttp.NewClient(cfg.HTTP), faults: faults}, err
})

// Main is the entry point the open-runtimes Go server calls for every request.
func Main(rt openruntimes.Context) openruntimes.Response { return serve(rt, time.Now) }

// New returns an entry point that reads the time from now instead of the wall clock (for signatures,
// expiry and scheduling): tests drive a delayed retry minutes ahead with it instead of waiting.
func New(now func() time.Time) func(openruntimes.Context) openruntimes.Response {
	return func(rt openruntimes.Context) openruntimes.Response { return serve(rt, now) }
}

func serve(rt openruntimes.Context, now func() time.Time) (resp openruntimes.Response) {
	req := rt.Req
	switch {
	case req.Method == "GET" && req.Path == "/health":
		return fnhttp.Health(rt)
	case strings.HasPrefix(req.Path, ingress.WebhookPathPrefix), req.Path == ingress.JobPath:
	default:
		return fnhttp.NotFound(rt)
	}

	p, err := state.Get()
	if err != nil {
		rt.Error("webhook-ingress is not configured: " + err.Error())
		return fnhttp.Error(rt, http.StatusServiceUnavailable, "not_configured", "webhook-ingress is not configured; see its logs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), ingress.ExecutionTimeout)
	defer cancel()
	defer p.faults.Flush()
	defer func() {
		if v := recover(); v != nil {
			rt.Error(fmt.Sprintf("webhook-ingress: panic serving %s: %v", req.Path, v))
			p.faults.Report(faultreport.Fault{Operation: req.Method + " " + req.Path, Outcome: "panic", Reason: "panic", Detail: fmt.Sprint(v)})
			resp = fnhttp.Error(rt, http.StatusInternalServerError, "internal", "internal error; see the function's logs")
		}
	}()
	// Counter lines are written in one rt.Log call at the end (deferred, so a panic keeps them): each
	// call is a write to the execution's log file, and one delivery makes three to five lines.
	// The lines are joined with "\n" as they come, in one buffer.
	var lines strings.Builder
	n := 0
	defer func() {
		if n > 0 {
			rt.Log(lines.String())
		}
	}()
	log := func(line string) {
		if n++; n > 1 {
			lines.WriteByte('\n')
		} else {
			lines.Grow(512)
		}
		lines.WriteString(line)
	}
	deps := ingress.Deps{Config: p.cfg, Client: p.client, Now: now, Log: log, Error: func(s string) { rt.Error(s) },
		Fault: func(f ingress.Fault) {
			op := "webhook"
			if req.Path == ingress.JobPath {
				op = "retry job"
			}
			p.faults.Report(faultreport.Fault{Operation: op, Event: f.Event, ProjectID: f.ProjectID, Outcome: f.Outcome, Reason: f.Reason, Detail: f.Detail})
		}}
	r := ingress.Request{Method: req.Method, Path: req.Path, Headers: req.Headers, Body: req.BodyBinary(), AppwriteKey: req.Headers["x-appwrite-key"]}
	var a ingress.Answer
	if req.Path == ingress.JobPath {
		a = ingress.HandleJob(ctx, deps, r)
	} else {
		a = ingress.HandleWebhook(ctx, deps, r)
	}
	return fnhttp.JSON(rt, a.Status, a.Body)
}
