// Package engine runs one agent turn: one routing decision, then one ReAct subagent (platform,
// researcher or planner) with tools, the planner fallback, a wall-clock budget, and the event timeline.
// Every timeline it emits ends with complete, whatever fails.
package engine

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/functions/turn/timeline"
	"appwrite-agent/functions/turn/toolapi"
	"appwrite-agent/shared/convtitle"
	"appwrite-agent/shared/llm"
)

// Defaults of Config.
const (
	DefaultBudget = 25 * time.Second
	// MaxBudget caps the budget of a synchronous turn, under the platform's 30 s synchronous limit.
	MaxBudget = 29 * time.Second
	// DefaultAsyncBudget is the budget of an async turn: 30 s under the function timeout of 900 s that
	// appwrite.json gives turn, so that error and complete are still published.
	DefaultAsyncBudget = 870 * time.Second
	// MaxAsyncBudget is Appwrite's largest function timeout (_APP_FUNCTIONS_TIMEOUT, 900 s by default;
	// Functions/Http/Functions/Create.php:88 validates timeout in 1..that): no execution runs longer.
	MaxAsyncBudget         = 900 * time.Second
	DefaultMaxSteps        = 20
	DefaultToolInputChars  = 100_000
	DefaultToolOutputChars = 500_000
	DefaultMemoryChars     = 4000
	// DefaultToolConcurrency is TOOL_CONCURRENCY when unset: how many tool calls of one model answer run at
	// once (LangGraph's ToolNode, the reference's, runs them all at once on its thread pool).
	DefaultToolConcurrency = 8
	// SummaryChars caps subagent_end.summary.
	SummaryChars = 2000
	// TitleMinRemaining is the budget a first turn must have when it starts to ask for a title; the title
	// call ends TitleMinRemaining/2 before the turn's deadline at the latest.
	TitleMinRemaining = time.Second
	// TitleTimeout caps the title call (which runs beside the turn from its start).
	TitleTimeout = 8 * time.Second
)

// Status messages.
const (
	StatusRouting  = "Routing request…"
	StatusFallback = "Primary agent stalled — falling back to planner…"
)

// Notices of how a model answer stopped.
const (
	// NoticeCut ends an answer the model stopped at its output limit (finish_reason length).
	NoticeCut = "\n\n[The answer was cut short: the model reached its output limit.]"
	// MsgContentFilter is the error detail when the provider's content filter stopped an answer.
	MsgContentFilter = "The model provider's content filter stopped the answer."
)

// Config are the engine's limits.
type Config struct {
	// Budget is the wall-clock budget of a turn: TURN_BUDGET (at most MaxBudget) for a synchronous call,
	// TURN_ASYNC_BUDGET (at most MaxAsyncBudget) for an async execution; the caller chooses.
	Budget time.Duration
	// MaxSteps caps the model calls of one subagent run (SUBAGENT_MAX_STEPS).
	MaxSteps int
	// ToolInputChars and ToolOutputChars cap tool_start.input and tool_end.output (and what goes back to
	// the model) in characters (STREAM_TOOL_INPUT_CHARS, STREAM_TOOL_OUTPUT_CHARS).
	ToolInputChars, ToolOutputChars int
	// MemoryChars is the size budget of the memories block (MEMORIES_MAX_CHARS).
	MemoryChars int
	// ToolConcurrency bounds the tool calls of one model answer that run at once (TOOL_CONCURRENCY; 1 runs
	// them one after another).
	ToolConcurrency int
}

func (c Config) withDefaults() Config {
	if c.Budget <= 0 {
		c.Budget = DefaultBudget
	}
	if c.Budget > MaxAsyncBudget {
		c.Budget = MaxAsyncBudget
	}
	if c.MaxSteps <= 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	if c.ToolInputChars <= 0 {
		c.ToolInputChars = DefaultToolInputChars
	}
	if c.ToolOutputChars <= 0 {
		c.ToolOutputChars = DefaultToolOutputChars
	}
	if c.MemoryChars <= 0 {
		c.MemoryChars = DefaultMemoryChars
	}
	if c.ToolConcurrency <= 0 {
		c.ToolConcurrency = DefaultToolConcurrency
	}
	return c
}

// Engine runs turns. It holds no per-turn state; one value may serve concurrent turns.
type Engine struct {
	// Model answers every model call of the turn (router, subagents, title).
	Model llm.Model
	// ModelName names the model in usage events (the model the settings send).
	ModelName string
	// Tools is the per-agent tool registry (no tools when nil); the function wires the built-ins
	// (functions/turn/builtins).
	Tools *Registry
	// MCP loads the MCP tools of the turn's connections (none when nil).
	MCP MCPSource
	// Config are the limits.
	Config Config
	// Skills returns the installed Appwrite skills the platform prompt names (none when nil or empty: the
	// prompt says so). It is called only when a platform prompt is built, so the skills are read only by
	// a turn that needs them.
	Skills func() []SkillInfo
	// Log, when set, receives diagnostic lines (the function's error log).
	Log func(string)
}

// skills are the skills agent's prompt names: Skills(), for the platform agent only.
func (e *Engine) skills(agent string) []SkillInfo {
	if e.Skills == nil || agent != AgentPlatform {
		return nil
	}
	return e.Skills()
}

// Route is the router's structured decision.
type Route struct {
	Next        string `json:"next"`
	Reason      string `json:"reason"`
	FinalAnswer string `json:"final_answer"`
}

// RouteSchema is the JSON Schema of Route given to the model.
var RouteSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"next":{"type":"string","enum":["researcher","platform","planner","FINISH"],"description":"Who handles the message, or FINISH to answer directly."},` +
	`"reason":{"type":"string","description":"One short sentence explaining why this agent (or FINISH) was chosen."},` +
	`"final_answer":{"type":"string","description":"Required when next is FINISH: the complete answer for the user."}},` +
	`"required":["next","reason","final_answer"],"additionalProperties":false}`)

var failurePrefixes = []string{"error:", "error -", "i could not complete", "i could not run", "unable to complete",
	"unable to run", "failed to", "browser_fetch is disabled", "sandbox_exec is not configured"}

// LooksLikeFailure is the reference's stall test on a subagent's final text (empty text counts as failure).
func LooksLikeFailure(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	if t == "" {
		return true
	}
	for _, p := range failurePrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// CleanFinal strips whitespace and a leading "[researcher] ", "[platform] " or "[planner] " tag.
func CleanFinal(text string) string {
	t := strings.TrimSpace(text)
	for _, a := range []string{AgentResearcher, AgentPlatform, AgentPlanner, AgentSupervisor} {
		t = strings.TrimSpace(strings.TrimPrefix(t, "["+a+"] "))
	}
	return t
}

// Cap cuts s to limit characters the reference's way: s[:limit-1] + "…".
func Cap(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	r := []rune(s)
	if len(r) <= limit {
		return s
	}
	return string(r[:limit-1]) + "…"
}

// turnState is one run's mutable state.
type turnState struct {
	e   *Engine
	cfg Config
	// emit sends an event; the tool calls of one answer run at once, so emit serialises (emitMu).
	emitTo   func(timeline.Event)
	emitMu   sync.Mutex
	turn     *request.Turn
	tools    map[string][]toolapi.Tool
	memories string
	history  []llm.Message
	human    llm.Message
	deadline time.Time
	runSeq   int
	open     string // agent of the open subagent block
	// partial answer tracking of the open block
	runText  strings.Builder
	lastText string
	inRun    bool
	toolRuns int
	// mcp is the MCP load running beside the router (nil without connections); titleJob the first turn's
	// title call (nil on later turns).
	mcp      *mcpLoad
	titleJob *titleJob
	// ctx is the turn's context: once it is stopped (ErrStopped) no token is emitted.
	ctx context.Context
}

// stopped reports whether the caller stopped the turn.
func (s *turnState) stopped() bool { return errors.Is(context.Cause(s.ctx), ErrStopped) }

// usage emits the usage event of one model call of agent, unless the provider reported no tokens.
func (s *turnState) usage(agent string, u llm.Usage) {
	if u.Zero() {
		return
	}
	s.emit(timeline.Usage(s.e.ModelName, agent, u.PromptTokens, u.CompletionTokens, u.TotalTokens))
}

// BudgetError is returned when the turn's wall-clock budget ran out.
type BudgetError struct{ Budget time.Duration }

// Error implements error.
func (b BudgetError) Error() string {
	return fmt.Sprintf("The turn ran out of its %s time budget before the agent finished; the answer is partial.", b.Budget)
}

// errBadDecision marks a router answer that is not a routing decision.
var errBadDecision = errors.New("the router's answer is not a routing decision")

// MsgBadDecision is the error detail of a router answer that is not a routing decision (the reference's
// f9ca6fc wording).
const MsgBadDecision = "Supervisor returned an unusable route decision"

// ErrStopped is the cause a caller cancels Run's context with to stop the turn (context.WithCancelCause):
// the model stream is closed, no further model or tool call starts, the calls in flight are cancelled, and
// the timeline ends with an error of code cancelled (with the partial answer), then complete.
var ErrStopped = errors.New("the turn was stopped")

// MsgStopped is the error detail of a stopped turn.
const MsgStopped = "The turn was stopped; the answer is partial."

// errContentFilter is an answer the provider's content filter stopped.
var errContentFilter = errors.New("the model provider's content filter stopped the answer")

// Run runs one turn and emits its timeline; the last event is always complete. parent's cancellation and
// deadline apply on top of the budget.
func (e *Engine) Run(parent context.Context, turn request.Turn, emit func(timeline.Event)) {
	cfg := e.Config.withDefaults()
	ctx, cancel := context.WithTimeout(parent, cfg.Budget)
	defer cancel()
	deadline, _ := ctx.Deadline()
	s := &turnState{e: e, cfg: cfg, emitTo: emit, turn: &turn, deadline: deadline, ctx: ctx}
	defer func() {
		if p := recover(); p != nil {
			e.logf("turn panic: %v", p)
			s.closeBlock()
			s.emit(timeline.Error(timeline.CodeInternal, fmt.Sprintf("internal error: %v", p), s.partial()))
			s.emit(timeline.Complete())
		}
	}()
	s.run(ctx)
}

// emit sends ev to the timeline, one event at a time.
func (s *turnState) emit(ev timeline.Event) {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.emitTo(ev)
}

func (e *Engine) logf(format string, args ...any) {
	if e.Log != nil {
		e.Log(fmt.Sprintf(format, args...))
	}
}

// The critical path of a turn is the router call, then the chosen subagent's calls. Two things run beside
// it, each on a goroutine that the turn waits for before it returns:
//
//   - the MCP connections load while the router decides (the router needs no tool). A subagent route waits
//     for them; a FINISH answer does not: it is answered at once, the load is cancelled, and only the
//     credentials it refreshed are echoed, after done (a refresh is never cut short, see mcptools).
//   - a first turn's title is asked for from the user's message while the turn runs, and is emitted after
//     done when it is ready by then, or within what is left of the title's time; otherwise nothing.
func (s *turnState) run(ctx context.Context) {
	s.tools = map[string][]toolapi.Tool{}
	if s.e.Tools != nil {
		s.tools = s.e.Tools.ForTurn(s.turn)
	}
	if s.e.MCP != nil && len(s.turn.MCPConnections) > 0 {
		taken := map[string]bool{}
		for _, ts := range s.tools {
			for _, t := range ts {
				taken[t.Name()] = true
			}
		}
		s.mcp = startMCP(ctx, s.e.MCP, s.turn, taken)
		defer s.mcp.close()
	}
	if s.turn.FirstTurn {
		if s.titleJob = s.startTitle(ctx); s.titleJob != nil {
			defer s.titleJob.stop()
		}
	}
	s.memories = MemoryBlock(s.turn.Memories, s.cfg.MemoryChars)
	for _, h := range s.turn.History {
		s.history = append(s.history, llm.Message{Role: h.Role, Content: h.Content})
	}
	text, images := request.HumanContent(s.turn.Message, s.turn.Attachments, base64.StdEncoding.EncodeToString)
	s.human = llm.Message{Role: "user", Content: text, Images: images}

	s.emit(timeline.Status(StatusRouting))
	route, err := s.route(ctx)
	if err != nil {
		code := timeline.CodeModel
		if errors.Is(err, errBadDecision) {
			code = timeline.CodeRouter
		}
		s.settleMCP(true) // the credentials still reach the client, before the error
		s.fail(ctx, err, code)
		return
	}
	reason := strings.TrimSpace(route.Reason)
	if reason == "" {
		reason = "Routed to " + route.Next
	}
	switch {
	case route.Next != RouteFinish:
		s.settleMCP(false) // a subagent (or an unknown route's error) waits for the tools
	case s.mcp.ready():
		s.settleMCP(false) // loaded in time: echoed as for any route
	}
	s.emit(timeline.Route(route.Next, reason))

	var final string
	switch route.Next {
	case RouteFinish:
		final = CleanFinal(route.FinalAnswer)
		if final != "" {
			s.emit(timeline.AnswerStart(AgentSupervisor))
			s.emit(timeline.Token(AgentSupervisor, final))
		}
	case AgentPlatform, AgentResearcher, AgentPlanner:
		final, err = s.runAgent(ctx, route.Next, "Task focus: "+reason)
		if err != nil {
			s.fail(ctx, err, timeline.CodeModel)
			return
		}
		if route.Next != AgentPlanner && final != "" && LooksLikeFailure(final) {
			s.emit(timeline.Status(StatusFallback))
			s.emit(timeline.Route(AgentPlanner, "Fallback after "+route.Next+" could not complete the task"))
			focus := "The " + route.Next + " agent failed with:\n" + final + "\n\nComplete the user's request with the tools you have."
			final, err = s.runAgent(ctx, AgentPlanner, focus)
			if err != nil {
				s.fail(ctx, err, timeline.CodeModel)
				return
			}
		}
	default:
		s.emit(timeline.Error(timeline.CodeUnknownRoute, fmt.Sprintf("Unknown route '%s'", route.Next), ""))
		s.emit(timeline.Complete())
		return
	}
	s.emit(timeline.Done(final))
	s.settleMCP(true) // a FINISH answer did not wait for the MCP connections
	if s.titleJob != nil {
		s.emitTitle()
	}
	s.emit(timeline.Complete())
}

// fail ends the timeline after err: a budget error when the turn's deadline passed, code otherwise.
func (s *turnState) fail(ctx context.Context, err error, code string) {
	s.settleMCP(true)
	s.closeBlock()
	partial := s.partial()
	detail := err.Error()
	var wait *llm.WaitTooLongError
	switch {
	case s.stopped():
		s.emit(timeline.Error(timeline.CodeCancelled, MsgStopped, partial))
		s.emit(timeline.Complete())
		return
	case errors.As(err, &wait):
		code = timeline.CodeRateLimited
	case errors.Is(err, errContentFilter):
		code, detail = timeline.CodeContentFilter, MsgContentFilter
	case errors.Is(err, errBadDecision):
		detail = MsgBadDecision
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		s.emit(timeline.Error(timeline.CodeBudget, BudgetError{s.cfg.Budget}.Error(), partial))
	} else {
		s.emit(timeline.Error(code, detail, partial))
	}
	s.emit(timeline.Complete())
}

// closeBlock ends an open subagent block as failed, so that the timeline stays well-formed.
func (s *turnState) closeBlock() {
	if s.open == "" {
		return
	}
	s.emit(timeline.SubagentEnd(s.open, Cap(s.partial(), SummaryChars), s.toolRuns, true))
	s.open = ""
}

func (s *turnState) partial() string {
	if t := strings.TrimSpace(s.runText.String()); t != "" {
		return t
	}
	return strings.TrimSpace(s.lastText)
}

func (s *turnState) system(prompt string) llm.Message {
	if s.memories != "" {
		prompt += "\n\n" + s.memories
	}
	return llm.Message{Role: "system", Content: prompt}
}

func (s *turnState) route(ctx context.Context) (Route, error) {
	msgs := append([]llm.Message{s.system(RouterPrompt)}, s.history...)
	msgs = append(msgs, s.human)
	res, err := s.e.Model.Complete(ctx, llm.Request{Messages: msgs, Schema: &llm.Schema{Name: "Route", Schema: RouteSchema}})
	if err != nil {
		return Route{}, err
	}
	s.usage(AgentSupervisor, res.Usage)
	var r Route
	raw := strings.TrimSpace(res.Content)
	raw = strings.TrimPrefix(raw, "```json")
	raw = strings.TrimPrefix(raw, "```")
	raw = strings.TrimSuffix(strings.TrimSpace(raw), "```")
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	if err := dec.Decode(&r); err != nil {
		return Route{}, fmt.Errorf("%w: %v", errBadDecision, err)
	}
	r.Next = strings.TrimSpace(r.Next)
	return r, nil
}

func (s *turnState) token(agent, text string) {
	if text == "" || s.stopped() {
		return
	}
	if !s.inRun {
		s.emit(timeline.AnswerStart(agent))
		s.inRun = true
	}
	s.runText.WriteString(text)
	s.emit(timeline.Token(agent, text))
}

// runAgent runs one ReAct subagent block and returns its cleaned final text. An error (model failure or
// budget) leaves the block open for fail to close.
func (s *turnState) runAgent(ctx context.Context, agent, focus string) (string, error) {
	s.emit(timeline.SubagentStart(agent))
	s.open, s.toolRuns, s.inRun, s.lastText = agent, 0, false, ""
	s.runText.Reset()

	tools := s.tools[agent]
	byName := make(map[string]toolapi.Tool, len(tools))
	specs := make([]llm.ToolSpec, 0, len(tools))
	for _, t := range tools {
		if _, dup := byName[t.Name()]; dup {
			continue
		}
		byName[t.Name()] = t
		specs = append(specs, llm.ToolSpec{Name: t.Name(), Description: t.Description(), Parameters: t.Parameters()})
	}
	msgs := []llm.Message{s.system(AgentPrompt(agent, s.e.skills(agent))), {Role: "system", Content: focus}}
	msgs = append(msgs, s.history...)
	msgs = append(msgs, s.human)

	final := ""
	finished := false
	for step := 0; step < s.cfg.MaxSteps; step++ {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		res, err := s.e.Model.Complete(ctx, llm.Request{Messages: msgs, Tools: specs,
			OnToken: func(t string) { s.token(agent, t) }})
		if err != nil {
			return "", err
		}
		if !res.Streamed {
			s.token(agent, res.Content)
		}
		s.usage(agent, res.Usage)
		switch res.Stop {
		case llm.StopContentFilter:
			return "", errContentFilter
		case llm.StopLength:
			if len(res.ToolCalls) == 0 {
				s.token(agent, NoticeCut)
				res.Content += NoticeCut
			}
		}
		for i := range res.ToolCalls {
			if res.ToolCalls[i].ID == "" {
				res.ToolCalls[i].ID = "call_" + strconv.Itoa(step) + "_" + strconv.Itoa(i)
			}
		}
		msgs = append(msgs, llm.Message{Role: "assistant", Content: res.Content, ToolCalls: res.ToolCalls, Reasoning: res.Reasoning})
		if len(res.ToolCalls) == 0 {
			final, finished = res.Content, true
			break
		}
		outs := s.runTools(ctx, agent, byName, res.ToolCalls)
		for i, call := range res.ToolCalls {
			msgs = append(msgs, llm.Message{Role: "tool", ToolCallID: call.ID, Content: outs[i]})
		}
	}
	if !finished {
		final = fmt.Sprintf("I could not complete the task within the step limit (%d model calls).", s.cfg.MaxSteps)
		s.token(agent, final)
	}
	final = CleanFinal(final)
	if final == "" {
		final = strings.TrimSpace(s.runText.String())
	}
	s.emit(timeline.SubagentEnd(agent, Cap(final, SummaryChars), s.toolRuns, LooksLikeFailure(final)))
	s.open = ""
	return final, nil
}

// runTools runs the tool calls of one model answer at once, at most Config.ToolConcurrency at a time, and
// returns what goes back to the model for each, in call order. Calls start in call order as slots free up;
// each emits tool_start when it starts and tool_end when it ends (consumers pair them by run_id). A failing
// or panicking tool fails only its own call; the turn's context (its deadline) reaches every call, and
// runTools returns when all have ended.
func (s *turnState) runTools(ctx context.Context, agent string, byName map[string]toolapi.Tool, calls []llm.ToolCall) []string {
	if t := strings.TrimSpace(s.runText.String()); t != "" {
		s.lastText = t
	}
	s.runText.Reset()
	s.inRun = false
	outs := make([]string, len(calls))
	slots := make(chan struct{}, s.cfg.ToolConcurrency)
	var wg sync.WaitGroup
	for i, call := range calls {
		slots <- struct{}{}
		s.runSeq++
		s.toolRuns++
		runID := "run_" + strconv.Itoa(s.runSeq)
		wg.Add(1)
		// The call's goroutine ends before runTools returns (wg.Wait below).
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			outs[i] = s.runTool(ctx, agent, byName, call, runID)
		}()
	}
	wg.Wait()
	return outs
}

// runTool runs one tool call between tool_start and tool_end and returns what goes back to the model.
func (s *turnState) runTool(ctx context.Context, agent string, byName map[string]toolapi.Tool, call llm.ToolCall, runID string) string {
	args := strings.TrimSpace(call.Arguments)
	if args == "" {
		args = "{}"
	}
	input := args
	var compact bytes.Buffer
	if json.Compact(&compact, []byte(args)) == nil {
		input = compact.String()
	}
	s.emit(timeline.ToolStart(agent, call.Name, runID, Cap(input, s.cfg.ToolInputChars)))
	out, failed := s.execTool(ctx, byName[call.Name], call.Name, args)
	out = Cap(out, s.cfg.ToolOutputChars)
	s.emit(timeline.ToolEnd(agent, call.Name, runID, out, failed))
	return out
}

func (s *turnState) execTool(ctx context.Context, t toolapi.Tool, name, args string) (out string, failed bool) {
	if t == nil {
		return fmt.Sprintf("Error: unknown tool '%s'", name), true
	}
	if !json.Valid([]byte(args)) {
		return "Error: tool arguments are not valid JSON", true
	}
	defer func() {
		if p := recover(); p != nil {
			s.e.logf("tool %s panic: %v", name, p)
			out, failed = "Error: Tool execution failed", true
		}
	}()
	res, err := t.Run(ctx, json.RawMessage(args))
	if err != nil {
		detail := strings.TrimSpace(err.Error())
		if detail == "" {
			detail = "Tool execution failed"
		}
		return "Error: " + detail, true
	}
	return res, false
}

// mcpLoad is an MCP source's Load running on its own goroutine.
type mcpLoad struct {
	cancel  context.CancelFunc
	done    chan struct{}
	res     toolapi.MCPTools
	settled bool
}

func startMCP(ctx context.Context, src MCPSource, turn *request.Turn, taken map[string]bool) *mcpLoad {
	lctx, cancel := context.WithCancel(ctx)
	l := &mcpLoad{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.res = src.Load(lctx, turn, taken)
	}()
	return l
}

// ready reports whether the load has finished (false without a load).
func (l *mcpLoad) ready() bool {
	if l == nil {
		return false
	}
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// close cancels the load if it still runs, waits for it and ends its sessions.
func (l *mcpLoad) close() {
	l.cancel()
	<-l.done
	if l.res.Close != nil {
		l.res.Close()
	}
}

// settleMCP waits for the MCP load, once, and emits what it brought: its tools join every agent's, its
// credentials go out in mcp_credentials and, unless cut, one status per skipped connection. cut (the turn
// no longer needs tools: a FINISH answer or a failure) cancels a load that still runs first; its notices
// are then dropped (they would only tell of the cancellation), its refreshed credentials never.
func (s *turnState) settleMCP(cut bool) {
	l := s.mcp
	if l == nil || l.settled {
		return
	}
	l.settled = true
	notices := true
	if cut && !l.ready() {
		l.cancel()
		notices = false
	}
	<-l.done
	for _, a := range Agents {
		s.tools[a] = append(s.tools[a], l.res.Tools...)
	}
	if len(l.res.Credentials) > 0 {
		s.emit(timeline.MCPCredentials(l.res.Credentials))
	}
	if notices {
		for _, n := range l.res.Notices {
			s.emit(timeline.Status(n))
		}
	}
}

// titleJob is a first turn's title call, running beside the turn.
type titleJob struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	title  string
	usage  llm.Usage
	err    error
}

// startTitle asks for the title of a first turn from the user's message (the answer is not known yet),
// with at most TitleTimeout and never past the turn's deadline less TitleMinRemaining/2. It returns nil
// when the budget leaves no room for it.
func (s *turnState) startTitle(ctx context.Context) *titleJob {
	remaining := time.Until(s.deadline)
	if remaining < TitleMinRemaining || ctx.Err() != nil {
		return nil
	}
	tctx, cancel := context.WithTimeout(ctx, min(remaining-TitleMinRemaining/2, TitleTimeout))
	j := &titleJob{ctx: tctx, cancel: cancel, done: make(chan struct{})}
	msg := s.turn.Message
	if msg == "" {
		msg = request.DefaultPrompt
	}
	go func() {
		defer close(j.done)
		j.title, j.usage, j.err = convtitle.Generate(tctx, s.e.Model, msg, "")
	}()
	return j
}

// stop cancels the title call if it still runs and waits for it.
func (j *titleJob) stop() {
	j.cancel()
	<-j.done
}

// emitTitle emits conversation_title after done: at once when the title is ready, else when it arrives
// within its own time limit (which ends before the turn's deadline); a failed or late title is only logged.
func (s *turnState) emitTitle() {
	j := s.titleJob
	select {
	case <-j.done:
	case <-j.ctx.Done():
		j.stop()
	}
	if j.err != nil {
		s.e.logf("conversation title: %v", j.err)
		return
	}
	s.usage(AgentTitle, j.usage)
	if j.title != "" {
		s.emit(timeline.ConversationTitle(j.title))
	}
}
