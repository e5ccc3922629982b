// Package tools holds the read-only MCP tools of the mcp-events server: they fetch what an event points at
// (a row, a file's metadata, a user, an execution with its logs and errors) and list the caller's own
// subscriptions, so one connector is enough for an agent that reacts to events. Every call uses the
// caller's own OAuth token in the caller's project; the tools need no scope beyond what Appwrite asks for
// the read, and never write anything (the hosted Appwrite MCP server is the place for writes).
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"appwrite-agent/functions/mcp-events/mcperr"
	"appwrite-agent/functions/mcp-events/oauth"
	"appwrite-agent/functions/mcp-events/subscriptions"
	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/eventcatalog"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool names.
const (
	GetRow            = "get_row"
	GetFile           = "get_file"
	GetUser           = "get_user"
	GetExecution      = "get_execution"
	ListSubscriptions = "list_subscriptions"
)

// Argument names (the event catalog's, so an event's data maps straight onto a tool's arguments).
const (
	argRow       = "row_id"
	argFile      = "file_id"
	argUser      = "user_id"
	argExecution = "execution_id"
)

// scopes lists, per tool, the scope requirements of its read: every inner list must be met by one of its
// members (the first is asked for in a step-up).
var scopes = map[string][][]string{
	GetRow:            {{"project:rows.read", "project:documents.read"}},
	GetFile:           {{"project:files.read"}},
	GetUser:           {{"project:users.read"}},
	GetExecution:      {{"project:executions.read", "project:execution.read"}},
	ListSubscriptions: {{"project:webhooks.read"}},
}

// StepUp returns, for a call of tool by a token with scopes have, the scopes the token lacks (the first
// alternative of each unmet requirement) and a description of what is missing; nil for an unknown tool or
// a token that has what the tool needs.
func StepUp(tool string, have map[string]bool) (missing []string, stepUp []string) {
	for _, group := range eventcatalog.Unmet(scopes[tool], have) {
		missing = append(missing, strings.Join(group, " or "))
		stepUp = append(stepUp, group[0])
	}
	return missing, stepUp
}

type principalKey struct{}

// WithPrincipal returns a context carrying the verified caller, which the tool handlers read.
func WithPrincipal(ctx context.Context, p *oauth.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

func principal(ctx context.Context) *oauth.Principal {
	p, _ := ctx.Value(principalKey{}).(*oauth.Principal)
	return p
}

// Result describes how one tool call ended, for the tools counter and fault reports.
type Result struct {
	// Tool is the tool's name.
	Tool string
	// ProjectID is the project_id argument (empty when the arguments were refused).
	ProjectID string
	// Outcome is ok, not_found, forbidden, unavailable, invalid_arguments or error.
	Outcome string
	// Reason details an unavailable or error outcome (appwrite_503, appwrite_unreachable, ...).
	Reason string
	// Text is what the caller was told.
	Text string
	// Detail is what a fault report tells the operators when it is more than Text (a panic's value).
	Detail string
}

// Fault reports whether the call ended in a server fault (Appwrite failing or unreachable, or an internal
// error) rather than in the caller's bad input or missing access.
func (r Result) Fault() bool { return r.Outcome == "unavailable" || r.Outcome == "error" }

// Tools serves the tools with the users' projects and the subscriptions service.
type Tools struct {
	appwrite *subscriptions.Appwrite
	subs     *subscriptions.Service
	timeout  time.Duration
	observe  func(ctx context.Context, r Result)
}

// New returns the tools. Each call runs within timeout (none when 0); observe, when not nil, is told how
// every call ended.
func New(appwrite *subscriptions.Appwrite, subs *subscriptions.Service, timeout time.Duration, observe func(ctx context.Context, r Result)) *Tools {
	return &Tools{appwrite: appwrite, subs: subs, timeout: timeout, observe: observe}
}

// arg is one argument of a tool: an Appwrite id.
type arg struct{ name, what string }

// inputSchema is a tool's strict input schema: every argument a required Appwrite id, no other property.
// The SDK validates each call's arguments against it before the tool runs.
func inputSchema(args ...arg) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	maxLen := 36
	for _, a := range args {
		s.Properties[a.name] = &jsonschema.Schema{Type: "string", Pattern: eventcatalog.IDPattern, MaxLength: &maxLen,
			Description: a.what + " (an Appwrite id)"}
		s.Required = append(s.Required, a.name)
	}
	return s
}

// readOnly is the annotation of every tool: titled, read-only, idempotent, closed-world.
func readOnly(title string) *sdk.ToolAnnotations {
	no := false
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &no}
}

// Register adds the tools to srv.
func (t *Tools) Register(srv *sdk.Server) {
	project := arg{eventcatalog.ArgProject, "The Appwrite project"}
	add := func(name, title, description string, h handler, args ...arg) {
		sdk.AddTool(srv, &sdk.Tool{Name: name, Description: description, Annotations: readOnly(title),
			InputSchema: inputSchema(append([]arg{project}, args...)...)}, t.handle(name, h))
	}
	add(GetRow, "Get a row",
		"Read one TablesDB row (the one a row.* event names) with your own access: every column Appwrite returns to you, plus its ids and timestamps.",
		t.getRow, arg{eventcatalog.ArgDatabase, "The database"}, arg{eventcatalog.ArgTable, "The table"}, arg{argRow, "The row"})
	add(GetFile, "Get a file's metadata",
		"Read a Storage file's metadata (name, MIME type, size, checksum, permissions, timestamps; not its content), e.g. the file a file.created event names.",
		t.getFile, arg{eventcatalog.ArgBucket, "The bucket"}, arg{argFile, "The file"})
	add(GetUser, "Get a user",
		"Read a project user (the one a user.created event names) as your access lets you see it: name, email, phone, status, labels, verification, preferences, timestamps. Password hashes are never returned.",
		t.getUser, arg{argUser, "The user"})
	add(GetExecution, "Get a function execution",
		"Read a function execution (the one an execution.failed event names): status, trigger, HTTP status, duration, logs and errors.",
		t.getExecution, arg{eventcatalog.ArgFunction, "The function"}, arg{argExecution, "The execution"})
	add(ListSubscriptions, "List my event subscriptions",
		"List your own event subscriptions in a project: the event, its arguments, where deliveries go, until when it runs (expires_at), whether it was verified and whether Appwrite still delivers. Other users' subscriptions and all secrets are never shown.",
		t.listSubscriptions)
}

type handler func(ctx context.Context, p *oauth.Principal, args map[string]string) (any, error)

// handle wraps a tool: it runs the read on arguments the SDK has validated against the tool's input schema
// and turns failures into tool errors with a clear text (the model reads them and can correct itself). A
// panic is one of them, reported as a fault: the SDK runs the tool on a goroutine of its own, which the
// function's recover (main.go) does not cover, and which the SDK does not recover either.
func (t *Tools) handle(name string, h handler) sdk.ToolHandlerFor[map[string]string, any] {
	return func(ctx context.Context, _ *sdk.CallToolRequest, args map[string]string) (res *sdk.CallToolResult, out any, err error) {
		defer func() {
			if v := recover(); v != nil {
				res, out, err = t.fail(ctx, Result{Tool: name, ProjectID: args[eventcatalog.ArgProject], Outcome: "error",
					Reason: "panic", Text: "internal error", Detail: fmt.Sprint(v)}), nil, nil
			}
		}()
		if t.timeout > 0 {
			// The SDK's context for a legacy request carries no deadline of the request's.
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, t.timeout)
			defer cancel()
		}
		p := principal(ctx)
		if p == nil {
			return t.fail(ctx, Result{Tool: name, Outcome: "error", Reason: "no_principal", Text: "no verified caller for this call"}), nil, nil
		}
		read, err := h(ctx, p, args)
		if err != nil {
			r := describe(err)
			r.Tool, r.ProjectID = name, args[eventcatalog.ArgProject]
			return t.fail(ctx, r), nil, nil
		}
		if t.observe != nil {
			t.observe(ctx, Result{Tool: name, ProjectID: args[eventcatalog.ArgProject], Outcome: "ok"})
		}
		return nil, read, nil // the SDK sends what was read as structuredContent and as its JSON text
	}
}

func (t *Tools) fail(ctx context.Context, r Result) *sdk.CallToolResult {
	if t.observe != nil {
		t.observe(ctx, r)
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: r.Text}}}
}

// readErr is a failed Appwrite read with what was being read.
type readErr struct {
	what string // "row r1 in table t of database d"
	err  error
}

func (e *readErr) Error() string { return e.what + ": " + e.err.Error() }
func (e *readErr) Unwrap() error { return e.err }

// describe turns a failure into the outcome and the text the model reads: not found, forbidden, Appwrite
// unavailable, or the subscriptions service's own error.
func describe(err error) Result {
	var re *readErr
	var ae *awclient.Error
	if errors.As(err, &re) && errors.As(err, &ae) {
		switch {
		case ae.Status == http.StatusNotFound:
			return Result{Outcome: "not_found", Text: fmt.Sprintf("Not found: %s does not exist or is not visible to you (Appwrite: %s)", re.what, ae.Message)}
		case ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden:
			return Result{Outcome: "forbidden", Text: fmt.Sprintf("Forbidden: Appwrite refused your access to %s (%s: %s)", re.what, ae.Type, ae.Message)}
		case ae.Status == http.StatusBadRequest:
			return Result{Outcome: "invalid_arguments", Text: fmt.Sprintf("Appwrite refused the request for %s: %s", re.what, ae.Message)}
		case ae.Status == 0:
			return Result{Outcome: "unavailable", Reason: "appwrite_unreachable",
				Text: fmt.Sprintf("Appwrite unavailable: %s could not be read because Appwrite could not be reached; retry later", re.what)}
		default:
			return Result{Outcome: "unavailable", Reason: fmt.Sprintf("appwrite_%d", ae.Status),
				Text: fmt.Sprintf("Appwrite unavailable: reading %s failed with HTTP %d (%s); retry later", re.what, ae.Status, ae.Type)}
		}
	}
	var me *mcperr.Error
	if errors.As(err, &me) {
		switch me.Kind {
		case mcperr.NotFound:
			return Result{Outcome: "not_found", Text: "Not found: " + me.Message}
		case mcperr.Forbidden:
			return Result{Outcome: "forbidden", Text: "Forbidden: " + me.Message}
		case mcperr.Internal:
			return Result{Outcome: "unavailable", Reason: me.FaultReason(), Text: "Appwrite unavailable: " + me.Message}
		}
		return Result{Outcome: "error", Reason: string(me.Kind), Text: me.Message}
	}
	return Result{Outcome: "error", Reason: "internal", Text: "internal error"}
}

// read reads one resource of a project (path: its route segments) with the caller's token, as Appwrite's
// JSON document (response format awclient.ResponseFormat). A file is read as its metadata, not its content.
func (t *Tools) read(ctx context.Context, project, token string, path ...string) (json.RawMessage, error) {
	proj := t.appwrite.Project(project, token)
	var out json.RawMessage
	if err := proj.Client.Call(ctx, proj.Auth, awclient.Request{Method: http.MethodGet, Path: awclient.Path(path...)}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func (t *Tools) getRow(ctx context.Context, p *oauth.Principal, a map[string]string) (any, error) {
	raw, err := t.read(ctx, a[eventcatalog.ArgProject], p.Token, "tablesdb", a[eventcatalog.ArgDatabase], "tables", a[eventcatalog.ArgTable], "rows", a[argRow])
	if err != nil {
		return nil, &readErr{fmt.Sprintf("row %s in table %s of database %s (project %s)", a[argRow], a[eventcatalog.ArgTable], a[eventcatalog.ArgDatabase], a[eventcatalog.ArgProject]), err}
	}
	return object(raw)
}

func (t *Tools) getFile(ctx context.Context, p *oauth.Principal, a map[string]string) (any, error) {
	raw, err := t.read(ctx, a[eventcatalog.ArgProject], p.Token, "storage", "buckets", a[eventcatalog.ArgBucket], "files", a[argFile])
	if err != nil {
		return nil, &readErr{fmt.Sprintf("file %s in bucket %s (project %s)", a[argFile], a[eventcatalog.ArgBucket], a[eventcatalog.ArgProject]), err}
	}
	return object(raw)
}

// userSecrets are user fields that are credentials, not information: Appwrite returns the password hash
// and its parameters to server-side callers; the tool never passes them on.
var userSecrets = []string{"password", "hash", "hashOptions"}

func (t *Tools) getUser(ctx context.Context, p *oauth.Principal, a map[string]string) (any, error) {
	raw, err := t.read(ctx, a[eventcatalog.ArgProject], p.Token, "users", a[argUser])
	if err != nil {
		return nil, &readErr{fmt.Sprintf("user %s (project %s)", a[argUser], a[eventcatalog.ArgProject]), err}
	}
	m, err := object(raw)
	if err != nil {
		return nil, err
	}
	for _, k := range userSecrets {
		delete(m, k)
	}
	return m, nil
}

// executionFields are what get_execution returns of Appwrite's execution model: what failed and why. The
// request and response headers and bodies are left out (they may carry the caller's secrets).
var executionFields = []string{
	"$id", "$createdAt", "$updatedAt", "functionId", "deploymentId", "trigger", "status", "requestMethod",
	"requestPath", "responseStatusCode", "duration", "logs", "errors", "scheduledAt",
}

func (t *Tools) getExecution(ctx context.Context, p *oauth.Principal, a map[string]string) (any, error) {
	raw, err := t.read(ctx, a[eventcatalog.ArgProject], p.Token, "functions", a[eventcatalog.ArgFunction], "executions", a[argExecution])
	if err != nil {
		return nil, &readErr{fmt.Sprintf("execution %s of function %s (project %s)", a[argExecution], a[eventcatalog.ArgFunction], a[eventcatalog.ArgProject]), err}
	}
	m, err := object(raw)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, k := range executionFields {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

func (t *Tools) listSubscriptions(ctx context.Context, p *oauth.Principal, a map[string]string) (any, error) {
	if t.subs == nil {
		return nil, mcperr.New(mcperr.Internal, nil, "subscriptions are not enabled on this server")
	}
	list, merr := t.subs.List(ctx, subscriptions.Call{Principal: p}, a[eventcatalog.ArgProject])
	if merr != nil {
		return nil, merr
	}
	return map[string]any{"project_id": a[eventcatalog.ArgProject], "subscriptions": list}, nil
}

// object decodes an Appwrite document.
func object(raw json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, &readErr{"the answer", &awclient.Error{Status: http.StatusBadGateway, Type: "invalid_response", Message: "not a JSON object"}}
	}
	return m, nil
}

// Names lists the tool names, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(scopes))
}
