package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/functions/turn/timeline"
	"appwrite-agent/functions/turn/timeline/timelinetest"
	"appwrite-agent/functions/turn/toolapi"
	"appwrite-agent/shared/convtitle"
	"appwrite-agent/shared/llm"
	"appwrite-agent/shared/turnrequest"
)

// fakeModel answers from a queue without any I/O: streaming calls deliver their content through OnToken.
type fakeModel struct {
	mu      sync.Mutex
	replies []fakeReply
	calls   []llm.Request
}

type fakeReply struct {
	res   llm.Result
	err   error
	panic bool
}

func (f *fakeModel) Complete(ctx context.Context, req llm.Request) (llm.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, req)
	if len(f.replies) == 0 {
		f.mu.Unlock()
		return llm.Result{}, errors.New("fake: no reply")
	}
	r := f.replies[0]
	f.replies = f.replies[1:]
	f.mu.Unlock()
	if r.panic {
		panic("model exploded")
	}
	if r.err != nil {
		return llm.Result{}, r.err
	}
	res := r.res
	if req.OnToken != nil && req.Schema == nil && res.Content != "" {
		for _, w := range strings.SplitAfter(res.Content, " ") {
			req.OnToken(w)
		}
		res.Streamed = true
	}
	return res, nil
}

func routeTo(next string) fakeReply {
	b, _ := json.Marshal(Route{Next: next, Reason: "r"})
	return fakeReply{res: llm.Result{Content: string(b)}}
}

func answer(s string) fakeReply { return fakeReply{res: llm.Result{Content: s}} }

func calls(names ...string) fakeReply {
	var tc []llm.ToolCall
	for i, n := range names {
		tc = append(tc, llm.ToolCall{ID: "c" + string(rune('0'+i)), Name: n, Arguments: `{"q": "x"}`})
	}
	return fakeReply{res: llm.Result{ToolCalls: tc}}
}

type testTool struct {
	name string
	run  func(ctx context.Context, args json.RawMessage) (string, error)
}

func (t testTool) Name() string                { return t.name }
func (t testTool) Description() string         { return "test tool " + t.name }
func (t testTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (t testTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	return t.run(ctx, args)
}

func run(t *testing.T, e *Engine, turn request.Turn) []timelinetest.Decoded {
	t.Helper()
	var rec timeline.Recorder
	e.Run(context.Background(), turn, rec.Emit)
	body, err := timeline.SSE(rec.Events())
	if err != nil {
		t.Fatal(err)
	}
	evs, err := timelinetest.ParseSSE(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := timelinetest.CheckOrder(evs); err != nil {
		t.Fatalf("order: %v\n%s", err, body)
	}
	return evs
}

func typesOf(evs []timelinetest.Decoded) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.Type())
	}
	return strings.Join(s, ",")
}

func TestToolsErrorsPanicsAndCaps(t *testing.T) {
	reg := NewRegistry().
		Register(Static(testTool{"echo", func(_ context.Context, a json.RawMessage) (string, error) {
			return strings.Repeat("y", 50), nil
		}})).
		Register(Static(testTool{"broken", func(context.Context, json.RawMessage) (string, error) {
			return "", errors.New("backend down")
		}}), AgentPlatform).
		Register(Static(testTool{"wild", func(context.Context, json.RawMessage) (string, error) { panic("tool bug") }}), AgentPlatform)
	m := &fakeModel{replies: []fakeReply{routeTo("platform"), calls("echo", "broken", "wild"), answer("fine")}}
	e := &Engine{Model: m, Tools: reg, Config: Config{ToolInputChars: 5, ToolOutputChars: 10}}
	evs := run(t, e, request.Turn{Message: "m"})
	// The three calls run at once: their tool_end events come in any order, paired by run_id.
	started := map[string]string{} // run_id -> tool
	ends := make([]timelinetest.Decoded, 3)
	for _, ev := range evs {
		if ev.Type() == "tool_start" {
			if ev.Str("input") != `{"q"…` {
				t.Fatalf("input not capped: %q", ev.Str("input"))
			}
			started[ev.Str("run_id")] = ev.Str("tool")
		}
		if ev.Type() == "tool_end" {
			if started[ev.Str("run_id")] != ev.Str("tool") {
				t.Fatalf("tool_end %v does not pair with its tool_start", ev)
			}
			ends[map[string]int{"echo": 0, "broken": 1, "wild": 2}[ev.Str("tool")]] = ev
		}
	}
	if ends[0].Str("output") != "yyyyyyyyy…" || ends[0]["failed"] != nil {
		t.Fatalf("echo %v", ends[0])
	}
	if ends[1].Str("output") != "Error: ba…" || ends[1]["failed"] != true {
		t.Fatalf("broken %v", ends[1])
	}
	if ends[2]["failed"] != true {
		t.Fatalf("panic %v", ends[2])
	}
	// The model got the capped outputs back.
	last := m.calls[len(m.calls)-1].Messages
	if last[len(last)-3].Content != "yyyyyyyyy…" {
		t.Fatalf("tool message %q", last[len(last)-3].Content)
	}
	// researcher does not get the platform-only tools.
	if got := reg.ForTurn(&request.Turn{}); len(got[AgentResearcher]) != 1 || len(got[AgentPlatform]) != 3 {
		t.Fatalf("registry %v", got)
	}
}

func TestModelPanicStillCompletes(t *testing.T) {
	m := &fakeModel{replies: []fakeReply{routeTo("planner"), {panic: true}}}
	evs := run(t, &Engine{Model: m}, request.Turn{Message: "m"})
	if got := typesOf(evs); got != "status,route,subagent_start,subagent_end,error,complete" {
		t.Fatalf("types %s", got)
	}
	if evs[4].Str("code") != timeline.CodeInternal {
		t.Fatalf("error %v", evs[4])
	}
}

type fakeMCP struct{}

func (fakeMCP) Load(context.Context, *request.Turn, map[string]bool) toolapi.MCPTools {
	return toolapi.MCPTools{Tools: []toolapi.Tool{testTool{"appwrite_search_tools", func(context.Context, json.RawMessage) (string, error) { return "[]", nil }}},
		Credentials: []timeline.Credential{{ID: "appwrite", Name: "Appwrite", URL: "https://mcp.appwrite.io/", Tokens: json.RawMessage(`{"access_token":"t"}`)}}}
}

func TestMCPCredentialsAfterTheRoutingStatus(t *testing.T) {
	m := &fakeModel{replies: []fakeReply{routeTo("researcher"), calls("appwrite_search_tools"), answer("ok")}}
	evs := run(t, &Engine{Model: m, MCP: fakeMCP{}}, request.Turn{Message: "m", MCPConnections: []turnrequest.MCPConnection{{ID: "appwrite"}}})
	if got := typesOf(evs); !strings.HasPrefix(got, "status,mcp_credentials,route,subagent_start,") {
		t.Fatalf("types %s", got)
	}
	creds := evs[1]["credentials"].([]any)[0].(map[string]any)
	if creds["id"] != "appwrite" || creds["client_info"] != nil {
		t.Fatalf("credentials %v", creds)
	}
	for _, ev := range evs {
		if ev.Type() == "tool_end" && (ev.Str("output") != "[]" || ev["failed"] != nil) {
			t.Fatalf("mcp tool %v", ev)
		}
	}
}

func TestNonStreamedAnswerIsOneToken(t *testing.T) {
	m := &fakeModel{replies: []fakeReply{routeTo("platform"), answer("[platform] all good")}}
	e := &Engine{Model: nonStreaming{m}}
	evs := run(t, e, request.Turn{Message: "m"})
	if got := typesOf(evs); got != "status,route,subagent_start,answer_start,token,subagent_end,done,complete" {
		t.Fatalf("types %s", got)
	}
	if evs[6].Str("answer") != "all good" {
		t.Fatalf("done %v", evs[6])
	}
}

type nonStreaming struct{ m *fakeModel }

func (n nonStreaming) Complete(ctx context.Context, req llm.Request) (llm.Result, error) {
	req.OnToken = nil
	return n.m.Complete(ctx, req)
}

func TestBudgetCancelsATool(t *testing.T) {
	reg := NewRegistry().Register(Static(testTool{"slow", func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}}))
	m := &fakeModel{replies: []fakeReply{routeTo("planner"), calls("slow")}}
	start := time.Now()
	evs := run(t, &Engine{Model: m, Tools: reg, Config: Config{Budget: 100 * time.Millisecond}}, request.Turn{Message: "m"})
	// The tool only ends when its context does, so the turn ending at all shows the budget stopped it; the
	// ceiling is a safety net far above the 100 ms budget.
	if time.Since(start) > 20*time.Second {
		t.Fatal("the budget did not stop the tool")
	}
	last := evs[len(evs)-2]
	if last.Type() != "error" || last.Str("code") != timeline.CodeBudget {
		t.Fatalf("types %s", typesOf(evs))
	}
}

func TestMemoryBlock(t *testing.T) {
	mems := []turnrequest.Memory{
		{Key: "a", Content: "first  line\nsecond", Category: "fact", Priority: 9},
		{Key: "b", Content: strings.Repeat("z", 300), Category: "preference", Priority: 5},
		{Key: "c", Content: "small", Category: "instruction", Priority: 1},
	}
	got := MemoryBlock(mems, 300)
	if !strings.Contains(got, "- (fact) a: first line second\n- (instruction) c: small") || strings.Contains(got, "zzz") {
		t.Fatalf("block %q", got)
	}
	if MemoryBlock(mems, 10) != "" || MemoryBlock(nil, 1000) != "" {
		t.Fatal("expected empty blocks")
	}
}

func TestLooksLikeFailureAndClean(t *testing.T) {
	for _, s := range []string{"", "  Error: x", "error - y", "I could not complete it", "Unable to run", "failed to fetch",
		"sandbox_exec is not configured in this POC", "browser_fetch is disabled"} {
		if !LooksLikeFailure(s) {
			t.Errorf("%q should look like a failure", s)
		}
	}
	if LooksLikeFailure("Done: the error was fixed") {
		t.Error("false positive")
	}
	if CleanFinal(" [researcher] hi ") != "hi" || Cap("héllo", 3) != "hé…" || Cap("abc", 3) != "abc" {
		t.Error("CleanFinal or Cap")
	}
}

func TestToolCallsWithoutIDs(t *testing.T) {
	m := &fakeModel{replies: []fakeReply{routeTo("planner"),
		{res: llm.Result{ToolCalls: []llm.ToolCall{{Name: "current_time"}, {Name: "current_time"}}}}, answer("ok")}}
	evs := run(t, &Engine{Model: m}, request.Turn{Message: "m"})
	// The two calls run at once: each ends after it starts, in any interleaving (consumers pair by run_id).
	runs := map[string]string{}
	for _, ev := range evs {
		switch ev.Type() {
		case "tool_start":
			runs[ev.Str("run_id")] += "s"
		case "tool_end":
			runs[ev.Str("run_id")] += "e"
		}
	}
	if len(runs) != 2 {
		t.Fatalf("runs %v in %s", runs, typesOf(evs))
	}
	for id, seq := range runs {
		if seq != "se" {
			t.Fatalf("run %s: %q in %s", id, seq, typesOf(evs))
		}
	}
	msgs := m.calls[2].Messages
	a, t1, t2 := msgs[len(msgs)-3], msgs[len(msgs)-2], msgs[len(msgs)-1]
	if a.ToolCalls[0].ID == "" || a.ToolCalls[0].ID == a.ToolCalls[1].ID || t1.ToolCallID != a.ToolCalls[0].ID || t2.ToolCallID != a.ToolCalls[1].ID {
		t.Fatalf("ids %+v %+v %+v", a.ToolCalls, t1, t2)
	}
}

// titleModel answers title requests (the convtitle system prompt) with title and everything else with the
// router's FINISH decision; it is safe for the concurrent calls a first turn makes.
type titleModel struct {
	title string
	mu    sync.Mutex
	calls int
}

func (m *titleModel) Complete(_ context.Context, req llm.Request) (llm.Result, error) {
	m.mu.Lock()
	m.calls++
	m.mu.Unlock()
	if len(req.Messages) > 0 && req.Messages[0].Content == convtitle.SystemPrompt {
		return llm.Result{Content: m.title}, nil
	}
	return llm.Result{Content: `{"next":"FINISH","reason":"r","final_answer":"Hi."}`}, nil
}

// TestFirstTurnTitleBesideTheRouter: a first turn asks for its title beside the router and emits it after
// done; with less budget than TitleMinRemaining there is no title call at all, and the timeline stays whole.
func TestFirstTurnTitleBesideTheRouter(t *testing.T) {
	m := &titleModel{title: "Greeting"}
	evs := run(t, &Engine{Model: m}, request.Turn{Message: "hello", FirstTurn: true})
	if got := typesOf(evs); got != "status,route,answer_start,token,done,conversation_title,complete" || m.calls != 2 {
		t.Fatalf("types %s, %d calls", got, m.calls)
	}
	m = &titleModel{title: "Greeting"}
	evs = run(t, &Engine{Model: m, Config: Config{Budget: TitleMinRemaining / 2}}, request.Turn{Message: "hello", FirstTurn: true})
	if got := typesOf(evs); got != "status,route,answer_start,token,done,complete" || m.calls != 1 {
		t.Fatalf("short budget: types %s, %d calls", got, m.calls)
	}
}

// TestToolCallsRunAtOnce: the three calls of one answer overlap (each waits until all three have started:
// run one after another they would never finish, and the turn's budget would end them), their results go
// back in call order under their own tool_call_id, and TOOL_CONCURRENCY 1 runs them one at a time.
func TestToolCallsRunAtOnce(t *testing.T) {
	for _, limit := range []int{0, 1} {
		var mu sync.Mutex
		running, most := 0, 0
		all := make(chan struct{})
		reg := NewRegistry()
		for _, name := range []string{"a", "b", "c"} {
			reg.Register(Static(testTool{name, func(ctx context.Context, _ json.RawMessage) (string, error) {
				mu.Lock()
				running++
				most = max(most, running)
				if running == 3 {
					close(all)
				}
				mu.Unlock()
				defer func() { mu.Lock(); running--; mu.Unlock() }()
				if limit == 1 {
					return "result " + name, nil
				}
				select {
				case <-all:
					return "result " + name, nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}}))
		}
		m := &fakeModel{replies: []fakeReply{routeTo("platform"), calls("a", "b", "c"), answer("fine")}}
		e := &Engine{Model: m, Tools: reg, Config: Config{ToolConcurrency: limit, Budget: time.Minute}}
		evs := run(t, e, request.Turn{Message: "m"})
		if d := evs[len(evs)-2]; d.Type() != "done" || d.Str("answer") != "fine" {
			t.Fatalf("limit %d: %s", limit, typesOf(evs))
		}
		if (limit == 1) != (most == 1) || (limit == 0 && most != 3) {
			t.Fatalf("limit %d: %d calls ran at once", limit, most)
		}
		last := m.calls[len(m.calls)-1].Messages
		for i, name := range []string{"a", "b", "c"} {
			msg := last[len(last)-3+i]
			if msg.Role != "tool" || msg.ToolCallID != "c"+string(rune('0'+i)) || msg.Content != "result "+name {
				t.Fatalf("limit %d: message %d %+v", limit, i, msg)
			}
		}
		if limit == 1 && typesOf(evs) != "status,route,subagent_start,tool_start,tool_end,tool_start,tool_end,tool_start,tool_end,answer_start,token,subagent_end,done,complete" {
			t.Fatalf("one at a time: %s", typesOf(evs))
		}
	}
}

// TestToolCallsEndWithTheBudget: the turn's deadline reaches every running call; each still ends with its
// tool_end before the budget error.
func TestToolCallsEndWithTheBudget(t *testing.T) {
	// The deadline passes once both calls are running (the parent's deadline, which applies on top of the
	// budget: a wall-clock budget would race the calls' start on a loaded machine).
	var started sync.WaitGroup
	started.Add(2)
	block := testTool{"wait", func(ctx context.Context, _ json.RawMessage) (string, error) {
		started.Done()
		<-ctx.Done()
		return "", ctx.Err()
	}}
	running := make(chan struct{})
	go func() { started.Wait(); close(running) }()
	m := &fakeModel{replies: []fakeReply{routeTo("platform"), calls("wait", "wait")}}
	e := &Engine{Model: m, Tools: NewRegistry().Register(Static(block))}
	evs := runUntil(t, e, running, context.DeadlineExceeded)
	if got := typesOf(evs); !strings.HasSuffix(got, "tool_start,tool_start,tool_end,tool_end,subagent_end,error,complete") {
		t.Fatalf("%s", got)
	}
	if e := evs[len(evs)-2]; e.Str("code") != timeline.CodeBudget {
		t.Fatalf("%v", e)
	}
}

// TestModelStops: an answer cut at the output limit keeps its text with a notice; a content-filter stop
// ends the turn with its own error and the partial answer.
func TestModelStops(t *testing.T) {
	m := &fakeModel{replies: []fakeReply{routeTo("platform"), {res: llm.Result{Content: "The first half", Stop: llm.StopLength}}}}
	evs := run(t, &Engine{Model: m}, request.Turn{Message: "m"})
	if d := evs[len(evs)-2]; d.Type() != "done" || d.Str("answer") != "The first half"+NoticeCut {
		t.Fatalf("%v", d)
	}
	m = &fakeModel{replies: []fakeReply{routeTo("platform"), {res: llm.Result{Content: "Some", Stop: llm.StopContentFilter}}}}
	evs = run(t, &Engine{Model: m}, request.Turn{Message: "m"})
	if e := evs[len(evs)-2]; e.Type() != "error" || e.Str("code") != timeline.CodeContentFilter || e.Str("detail") != MsgContentFilter || e.Str("answer") != "Some" {
		t.Fatalf("%v", e)
	}
}

// stallModel routes to platform, then streams "Hello " and waits for the turn to be stopped; once it is, it
// tries one more token, as a stream with bytes still buffered would, and returns the context's error.
type stallModel struct {
	streaming chan struct{} // closed once the first token is out
	calls     int
}

func (m *stallModel) Complete(ctx context.Context, req llm.Request) (llm.Result, error) {
	m.calls++
	if req.Schema != nil {
		b, _ := json.Marshal(Route{Next: AgentPlatform, Reason: "r"})
		return llm.Result{Content: string(b)}, nil
	}
	req.OnToken("Hello ")
	close(m.streaming)
	<-ctx.Done()
	req.OnToken("late")
	return llm.Result{}, ctx.Err()
}

// runStopped runs a turn and stops it with ErrStopped once ready is closed.
func runStopped(t *testing.T, e *Engine, ready <-chan struct{}) []timelinetest.Decoded {
	t.Helper()
	return runUntil(t, e, ready, ErrStopped)
}

// runUntil runs a turn and ends its parent context with cause once ready is closed.
func runUntil(t *testing.T, e *Engine, ready <-chan struct{}, cause error) []timelinetest.Decoded {
	t.Helper()
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	var rec timeline.Recorder
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Run(ctx, request.Turn{Message: "m"}, rec.Emit)
	}()
	<-ready
	stop(cause)
	<-done
	body, err := timeline.SSE(rec.Events())
	if err != nil {
		t.Fatal(err)
	}
	evs, err := timelinetest.ParseSSE(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := timelinetest.CheckOrder(evs); err != nil {
		t.Fatalf("order: %v\n%s", err, body)
	}
	return evs
}

func TestStopMidStreamEndsCancelledWithThePartialAnswer(t *testing.T) {
	m := &stallModel{streaming: make(chan struct{})}
	evs := runStopped(t, &Engine{Model: m}, m.streaming)
	if got := typesOf(evs); got != "status,route,subagent_start,answer_start,token,subagent_end,error,complete" {
		t.Fatalf("types %s", got)
	}
	e := evs[len(evs)-2]
	if e.Str("code") != timeline.CodeCancelled || e.Str("detail") != MsgStopped || e.Str("answer") != "Hello" {
		t.Fatalf("error %v", e)
	}
	if m.calls != 2 {
		t.Fatalf("%d model calls after the stop, want the router's and the one stopped", m.calls)
	}
}

func TestStopDuringToolCallsCancelsThemAndStartsNothing(t *testing.T) {
	running := make(chan struct{})
	var once sync.Once
	reg := NewRegistry().Register(Static(testTool{"slow", func(ctx context.Context, _ json.RawMessage) (string, error) {
		once.Do(func() { close(running) })
		<-ctx.Done()
		return "", context.Cause(ctx)
	}}))
	m := &fakeModel{replies: []fakeReply{routeTo("platform"), calls("slow", "slow"), answer("never")}}
	evs := runStopped(t, &Engine{Model: m, Tools: reg}, running)
	ends := find(evs, timeline.TypeToolEnd)
	if len(ends) != 2 || ends[0]["failed"] != true || ends[1]["failed"] != true {
		t.Fatalf("tool ends %v", ends)
	}
	if e := evs[len(evs)-2]; e.Str("code") != timeline.CodeCancelled {
		t.Fatalf("error %v", e)
	}
	if len(m.calls) != 2 {
		t.Fatalf("%d model calls, want 2: nothing starts after the stop", len(m.calls))
	}
}

func find(evs []timelinetest.Decoded, typ string) []timelinetest.Decoded {
	var out []timelinetest.Decoded
	for _, e := range evs {
		if e.Type() == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestUsageOnePerModelCallSkippingZero(t *testing.T) {
	withUsage := func(r fakeReply, p, c int) fakeReply {
		r.res.Usage = llm.Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
		return r
	}
	reg := NewRegistry().Register(Static(testTool{"echo", func(context.Context, json.RawMessage) (string, error) { return "ok", nil }}))
	m := &fakeModel{replies: []fakeReply{
		withUsage(routeTo("platform"), 30, 5),
		withUsage(calls("echo"), 40, 2),
		answer("done"), // a provider that reported nothing: no usage event
	}}
	e := &Engine{Model: m, ModelName: "gpt-test", Tools: reg}
	evs := run(t, e, request.Turn{Message: "m"})
	var got []string
	for _, u := range find(evs, timeline.TypeUsage) {
		got = append(got, u.Str("agent")+":"+u.Str("model")+":"+strings.Join([]string{
			jsonNum(u["prompt_tokens"]), jsonNum(u["completion_tokens"]), jsonNum(u["total_tokens"])}, "/"))
	}
	if want := "supervisor:gpt-test:30/5/35 platform:gpt-test:40/2/42"; strings.Join(got, " ") != want {
		t.Fatalf("usage %q, want %q", got, want)
	}
	// The router's usage comes before its route, the step's before the tool it asked for.
	if typesWithUsage := strings.Join(func() []string {
		var s []string
		for _, e := range evs {
			s = append(s, e.Type())
		}
		return s
	}(), ","); !strings.HasPrefix(typesWithUsage, "status,usage,route,subagent_start,usage,tool_start") {
		t.Fatalf("types %s", typesWithUsage)
	}
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestUnusableRouteDecision(t *testing.T) {
	m := &fakeModel{replies: []fakeReply{answer("I think the researcher should do it")}}
	evs := run(t, &Engine{Model: m}, request.Turn{Message: "m"})
	e := evs[len(evs)-2]
	if e.Type() != timeline.TypeError || e.Str("detail") != MsgBadDecision || e.Str("code") != timeline.CodeRouter {
		t.Fatalf("error %v", e)
	}
}
