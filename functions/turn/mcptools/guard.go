package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/shared/pyjson"
)

// GuardedTool is the one tool the write guard wraps (the Appwrite MCP server's generic caller).
const GuardedTool = "appwrite_call_tool"

// Texts of the write guard, as the reference words them.
const (
	guardBlocked = "Blocked duplicate %s for the same id in this turn.\nPrevious result:\n%s\n\n" +
		"This create did NOT run again. Use the previous result. Do not claim a new resource was created."
	guardRecovered = "Create completed successfully. Resource is ready (id=%s).\n\n%s\n\n" +
		"Report this as a successful create to the user. Do not create again."
	guardExists = "\n\nThe resource already exists (likely created by this request). " +
		"Treat as success: list/get it and report it. Do NOT create again."
)

var alreadyExistsRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)already_exists|already exists|code=409`) })

// caller sends one call of the wrapped tool with the given arguments object.
type caller func(ctx context.Context, args json.RawMessage) (string, error)

// writeGuard wraps appwrite_call_tool for one turn (the reference's app/mcp/write_guard.py): calls run one at a time; a create
// that names a concrete id runs at most once per id; "unique()" becomes generated ids with slot reuse;
// an "already exists" answer is recovered through the matching get tool; queries are normalised and an
// attachment named in "file" goes inline.
type writeGuard struct {
	inner    toolMeta
	call     caller
	atts     []request.Attachment
	sem      chan struct{}
	exp      expander
	attempts map[string]int
	results  map[string]string
}

// toolMeta is what the model sees of a tool.
type toolMeta interface {
	Name() string
	Description() string
	Parameters() json.RawMessage
}

func newWriteGuard(inner toolMeta, call caller, atts []request.Attachment, gen func() string) *writeGuard {
	if gen == nil {
		gen = newID
	}
	return &writeGuard{inner: inner, call: call, atts: atts, sem: make(chan struct{}, 1),
		exp: expander{ids: map[string]string{}, newID: gen}, attempts: map[string]int{}, results: map[string]string{}}
}

// Name implements toolapi.Tool.
func (g *writeGuard) Name() string { return g.inner.Name() }

// Description implements toolapi.Tool.
func (g *writeGuard) Description() string { return g.inner.Description() }

// Parameters implements toolapi.Tool.
func (g *writeGuard) Parameters() json.RawMessage { return g.inner.Parameters() }

// Run implements toolapi.Tool. A failure the guard does not turn into a success text comes back as an
// error, which the engine reports as "Error: <text>" (the reference's text) with failed:true.
func (g *writeGuard) Run(ctx context.Context, raw json.RawMessage) (string, error) {
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-g.sem }()

	payload, err := parseJSON(raw)
	if err != nil {
		return "", fmt.Errorf("arguments are not a JSON object: %v", err)
	}
	if payload.Kind() != pyjson.Object {
		return "", errors.New("arguments are not a JSON object")
	}
	tool := payloadToolName(payload)
	create := isCreate(tool)
	rawArgs, hasArgs := payload.Get("arguments")

	dedupe := ""
	if create {
		dedupe = dedupeKey(tool, rawArgs)
		if prev, seen := g.results[dedupe]; dedupe != "" && seen {
			return fmt.Sprintf(guardBlocked, tool, prev), nil
		}
	}
	attempt := 0
	var own map[string]bool
	if create {
		attempt, own = g.attempts[tool], ownIDKeys(tool)
	}
	if hasArgs {
		payload = payload.Clone()
		payload.Set("arguments", g.normalize(g.exp.expand(rawArgs, "", own, attempt)))
	}
	args, _ := payload.Get("arguments")
	if create {
		expanded := dedupeKey(tool, args)
		if prev, seen := g.results[expanded]; expanded != "" && seen {
			return fmt.Sprintf(guardBlocked, tool, prev), nil
		}
		dedupe = expanded
		g.attempts[tool] = attempt + 1
	}

	text, callErr := g.call(ctx, toJSON(payload))
	if callErr != nil {
		text = callErr.Error()
	}
	remember := func(s string) {
		if create && dedupe != "" {
			g.results[dedupe] = s
		}
	}
	if create && alreadyExistsRE().MatchString(text) {
		if recovered, ok := g.recover(ctx, payload, tool, args); ok {
			remember(recovered)
			return recovered, nil
		}
		annotated := strings.TrimRight(text, " \t\r\n") + guardExists
		remember(annotated)
		return annotated, nil
	}
	remember(text)
	if callErr != nil {
		return "", errors.New(text)
	}
	return text, nil
}

// normalize rewrites an attachment "file" argument and the queries.
func (g *writeGuard) normalize(args pyjson.Value) pyjson.Value {
	if args.Kind() != pyjson.Object {
		return args
	}
	return normalizeQueries(resolveFileArgument(args, g.atts))
}

// recover asks the create's get tool for the id the create named; a usable answer makes the create a
// success. The get call carries only the id (not parent ids) plus the top-level project or organisation.
func (g *writeGuard) recover(ctx context.Context, payload pyjson.Value, tool string, args pyjson.Value) (string, bool) {
	get := getToolFor(tool)
	idKey, idValue, ok := idFromArguments(args)
	if get == "" || !ok {
		return "", false
	}
	gp := pyjson.NewObject()
	gp.Set("tool_name", pyjson.StringValue(get))
	ga := pyjson.NewObject()
	ga.Set(idKey, pyjson.StringValue(idValue))
	gp.Set("arguments", ga)
	for _, k := range []string{"project_id", "projectId", "organization_id", "organizationId"} {
		if v, has := payload.Get(k); has && !v.IsNone() {
			gp.Set(k, v)
		}
	}
	body, err := g.call(ctx, toJSON(gp))
	if err != nil || strings.TrimSpace(body) == "" {
		return "", false
	}
	lower := strings.ToLower(body)
	if strings.Contains(lower, "request failed") && alreadyExistsRE().MatchString(body) {
		return "", false
	}
	if strings.HasPrefix(lower, "error") && !strings.Contains(lower, "ready") {
		return "", false
	}
	return fmt.Sprintf(guardRecovered, idValue, body), true
}

// payloadToolName is tool_name (or toolName), stripped.
func payloadToolName(p pyjson.Value) string {
	v, ok := p.Get("tool_name")
	if !ok || v.Kind() != pyjson.String || v.Text() == "" {
		v, _ = p.Get("toolName")
	}
	if v.IsNone() {
		return ""
	}
	return strings.TrimSpace(v.PyStr())
}
