// Package handler is the webhook-ingress function: it receives Appwrite's webhooks and delivers signed,
// projected events (see package ingress).
package handler

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"appwrite-agent/functions/webhook-ingress/ingress"
	"appwrite-agent/shared/faultreport"
	"appwrite-agent/shared/fnhttp"
	"appwrite-agent/shared/opsmetrics"
	"appwrite-agent/shared/safehttp"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// process is what the function builds from its configuration and keeps between requests: the sender, with
// the subscriber HTTP client (a client per request would pay a TLS handshake to every subscriber for every
// event), and the fault reporter.
type process struct {
	cfg    ingress.Config
	sender *ingress.Sender
	faults *faultreport.Reporter // nil without SENTRY_DSN
	err    error                 // the configuration's problem: every webhook and job is answered 503
}

// FromEnv builds the function's entry point from the environment as it is now (LoadConfig), reading the time
// from now (for signatures, expiry and scheduling: tests drive a delayed retry minutes ahead with it). The
// process state is built on the first webhook or job (/health answers without it); a configuration that
// does not work is reported then, once, with the reporter built first.
func FromEnv(now func() time.Time) func(openruntimes.Context) openruntimes.Response {
	cfg, err := LoadConfig()
	state := sync.OnceValue(func() *process { return newProcess(cfg, err) })
	return func(rt openruntimes.Context) openruntimes.Response {
		return serve(rt, cfg.Platform.BuildID(), state, now)
	}
}

// newProcess builds the process state of cfg, whose reading failed with err (nil when it did not).
func newProcess(cfg Config, err error) *process {
	faults, ferr := faultreport.New(cfg.Faults)
	if err == nil {
		err = ferr
	} else {
		faults.Report(faultreport.Fault{Operation: "configuration", Outcome: "misconfigured", Reason: "not_configured", Detail: err.Error()})
	}
	return &process{cfg: cfg.Ingress, sender: ingress.NewSender(safehttp.NewClient(cfg.Ingress.HTTP)), faults: faults, err: err}
}

// fromEnv is the function's only process-wide value: its entry point over the configuration, read once per
// process (a deployment's environment never changes while it runs).
var fromEnv = sync.OnceValue(func() func(openruntimes.Context) openruntimes.Response { return FromEnv(time.Now) })

// Main is the entry point the open-runtimes Go server calls for every request.
func Main(rt openruntimes.Context) openruntimes.Response { return fromEnv()(rt) }

// execution is one request's ingress.Reporter: faults go to the fault reporter, diagnostic text and the
// counter lines to the execution's logs at its end (serve writes them; the execution keeps no copy of the
// runtime's context).
type execution struct {
	faults *faultreport.Reporter
	op     string // the fault's operation
	// lines are the execution's counter lines, written in one rt.Log call at the end.
	lines opsmetrics.Lines
	// errors are the diagnostic texts, written with rt.Error at the end.
	errors []string
}

func (e *execution) Error(text string) { e.errors = append(e.errors, text) }

func (e *execution) Fault(f ingress.Fault) {
	e.faults.Report(faultreport.Fault{Operation: e.op, Event: f.Event, ProjectID: f.ProjectID, Outcome: f.Outcome, Reason: f.Reason, Detail: f.Detail})
}

func serve(rt openruntimes.Context, buildID string, process func() *process, now func() time.Time) (resp openruntimes.Response) {
	req := &rt.Req
	switch {
	case req.Method == "GET" && req.Path == "/health":
		return fnhttp.Health(rt, buildID)
	case strings.HasPrefix(req.Path, ingress.WebhookPathPrefix), req.Path == ingress.JobPath:
	default:
		return fnhttp.NotFound(rt)
	}

	p := process()
	if p.err != nil {
		rt.Error("webhook-ingress is not configured: " + p.err.Error())
		return fnhttp.Error(rt, http.StatusServiceUnavailable, "not_configured", "webhook-ingress is not configured; see its logs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), ingress.ExecutionTimeout)
	defer cancel()
	defer p.faults.Flush()
	e := &execution{faults: p.faults, op: "webhook"}
	if req.Path == ingress.JobPath {
		e.op = "retry job"
	}
	defer func() {
		if v := recover(); v != nil {
			rt.Error(fmt.Sprintf("webhook-ingress: panic serving %s: %v", req.Path, v))
			p.faults.Report(faultreport.Fault{Operation: req.Method + " " + req.Path, Outcome: "panic", Reason: "panic", Detail: fmt.Sprint(v)})
			resp = fnhttp.Error(rt, http.StatusInternalServerError, "internal", "internal error; see the function's logs")
		}
	}()
	// Counter lines (and any diagnostic text) are written at the end, deferred so a panic keeps them: each
	// call is a write to the execution's log file, and one delivery makes three to five lines.
	defer func() {
		for _, text := range e.errors {
			rt.Error(text)
		}
		if e.lines.Len() > 0 {
			rt.Log(e.lines.String())
		}
	}()
	deps := ingress.Deps{Config: &p.cfg, Sender: p.sender, Now: now, Counters: &e.lines, Report: e}
	r := ingress.Request{Method: req.Method, Path: req.Path, Headers: req.Headers, Body: req.BodyBinary(), AppwriteKey: req.Headers["x-appwrite-key"]}
	var a ingress.Answer
	if req.Path == ingress.JobPath {
		a = ingress.HandleJob(ctx, deps, r)
	} else {
		a = ingress.HandleWebhook(ctx, deps, r)
	}
	if a.Status == http.StatusOK {
		return fnhttp.JSON(rt, a.Status, a.Outcome)
	}
	return fnhttp.JSON(rt, a.Status, a.Error)
}
