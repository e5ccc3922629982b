// Package faultreport reports server faults of a function to Sentry (github.com/getsentry/sentry-go) when a
// DSN is configured, and does nothing otherwise.
//
// A server fault is something the operator must look at: Appwrite failing or unreachable, a configuration
// that does not work, a sealed subscription that Appwrite signed but that does not open, a panic. A caller's
// bad input and a subscriber's failing endpoint are not server faults and are never reported.
//
// Reports carry the tags function, event, project_id, outcome and reason and a short message; nothing
// else of the request (no headers, bodies, tokens, URLs with credentials or secrets: the message is
// scrubbed of anything that looks like one). Each report is sent synchronously with a short bound, so it
// has left before the execution ends (a function has no life after its answer).
package faultreport

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/getsentry/sentry-go"
)

// EnvDSN is the variable holding the Sentry DSN; unset or empty, nothing is reported.
const EnvDSN = "SENTRY_DSN"

// EnvEnvironment optionally names the Sentry environment (production, staging, ...).
const EnvEnvironment = "SENTRY_ENVIRONMENT"

// DefaultTimeout bounds the sending of one report.
const DefaultTimeout = 2 * time.Second

// Fault is one server fault.
type Fault struct {
	// Event is the MCP event name the fault happened for, if any.
	Event string
	// ProjectID is the Appwrite project, if any.
	ProjectID string
	// Outcome is the counter outcome of the failed operation (error, schedule_failed, panic, ...).
	Outcome string
	// Reason is a short machine-readable cause (appwrite_503, appwrite_unreachable, not_configured, ...).
	Reason string
	// Operation names what failed (events/subscribe, tools/call get_row, webhook, ...).
	Operation string
	// Detail is a human-readable description; it is scrubbed before sending.
	Detail string
}

// Options configure a Reporter.
type Options struct {
	// DSN is the Sentry DSN; empty means no Reporter.
	DSN string
	// Function names the reporting function (the function tag).
	Function string
	// Environment and Release are Sentry's environment and release (optional).
	Environment, Release string
	// Timeout bounds the sending of one report (DefaultTimeout when 0).
	Timeout time.Duration
	// HTTPTransport carries the reports (http.DefaultTransport when nil).
	HTTPTransport http.RoundTripper
}

// Reporter sends faults to Sentry. A nil *Reporter is valid and reports nothing.
type Reporter struct {
	client   *sentry.Client
	function string
	timeout  time.Duration
}

// OptionsFromEnv returns the Options that SENTRY_DSN and SENTRY_ENVIRONMENT, read through getenv (a
// function's config.go passes the process environment's getter), give function with release (its build
// id); New builds the Reporter.
func OptionsFromEnv(getenv func(string) string, function, release string) Options {
	return Options{DSN: strings.TrimSpace(getenv(EnvDSN)), Function: function,
		Environment: strings.TrimSpace(getenv(EnvEnvironment)), Release: release}
}

// New returns a Reporter, or nil (and no error) when o.DSN is empty.
func New(o Options) (*Reporter, error) {
	if o.DSN == "" {
		return nil, nil
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	tr := sentry.NewHTTPSyncTransport()
	tr.Timeout = o.Timeout
	client, err := sentry.NewClient(sentry.ClientOptions{
		Dsn: o.DSN, Environment: o.Environment, Release: o.Release, ServerName: o.Function,
		Transport: tr, HTTPTransport: o.HTTPTransport, SendDefaultPII: false, MaxBreadcrumbs: -1,
		DisableTelemetryBuffer: true, DisableClientReports: true,
		BeforeSend: func(e *sentry.Event, _ *sentry.EventHint) *sentry.Event { return strip(e) },
	})
	if err != nil {
		return nil, errors.New("faultreport: " + EnvDSN + ": " + scrub(err.Error()))
	}
	return &Reporter{client: client, function: o.Function, timeout: o.Timeout}, nil
}

// Enabled reports whether faults are sent anywhere.
func (r *Reporter) Enabled() bool { return r != nil }

// Report sends f and returns once it was sent or the bound passed. It does nothing on a nil Reporter.
func (r *Reporter) Report(f Fault) {
	if r == nil {
		return
	}
	e := sentry.NewEvent()
	e.Level = sentry.LevelError
	e.Logger = r.function
	msg := r.function + ": " + f.Outcome
	if f.Operation != "" {
		msg += " in " + f.Operation
	}
	if f.Reason != "" {
		msg += " (" + f.Reason + ")"
	}
	if f.Detail != "" {
		msg += ": " + scrub(f.Detail)
	}
	e.Message = msg
	e.Tags = map[string]string{"function": r.function, "outcome": f.Outcome}
	for k, v := range map[string]string{"event": f.Event, "project_id": f.ProjectID, "reason": f.Reason, "operation": f.Operation} {
		if v != "" {
			e.Tags[k] = scrub(v)
		}
	}
	e.Fingerprint = []string{r.function, f.Operation, f.Outcome, f.Reason}
	r.client.CaptureEvent(e, nil, nil)
}

// Flush waits, at most the reporter's bound, for reports still being sent. It does nothing on a nil
// Reporter; with the synchronous transport it returns at once.
func (r *Reporter) Flush() {
	if r != nil {
		r.client.Flush(r.timeout)
	}
}

// strip keeps only what Report put in an event: no request, user, breadcrumbs, extra data or contexts that
// integrations may add.
func strip(e *sentry.Event) *sentry.Event {
	e.Request, e.User, e.Breadcrumbs = nil, sentry.User{}, nil
	e.Contexts = nil
	e.Modules = nil
	return e
}

// secretLike matches what must never leave: Standard Webhooks secrets, bearer tokens and JWTs, Appwrite
// API keys, Basic credentials, long base64 or hex runs, and the query of URLs.
// They compile on first use (a fault), not when the function starts.
var secretLike = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`whsec_[A-Za-z0-9+/=_-]*`),
		regexp.MustCompile(`(?i)(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`),
		regexp.MustCompile(`eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.?[A-Za-z0-9_-]*`),
		regexp.MustCompile(`standard_[A-Za-z0-9]+`),
		regexp.MustCompile(`[A-Za-z0-9+/_-]{32,}={0,2}`),
		regexp.MustCompile(`://[^/\s@]*@`),
		regexp.MustCompile(`\?[^\s"']*`),
	}
})

// scrub replaces secret-looking parts of s with [redacted].
func scrub(s string) string {
	for _, re := range secretLike() {
		s = re.ReplaceAllString(s, "[redacted]")
	}
	return s
}
