package handler_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/turn"
	"appwrite-agent/functions/turn/builtins"
	"appwrite-agent/functions/turn/engine"
	"appwrite-agent/functions/turn/timeline"
	"appwrite-agent/functions/turn/timeline/timelinetest"
	"appwrite-agent/shared/convtitle"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/scriptedllm"
	"appwrite-agent/shared/sessionauth"
)

const testKey = "test-session-key"

// env starts a scripted model and the function behind the local runtime, with a configured environment.
func env(t testing.TB, replies ...scriptedllm.Reply) (*scriptedllm.Server, *httptest.Server) {
	t.Helper()
	return startEnv(t, nil, replies...)
}

// startEnv is env with the runtime's OnLog (nil: the log files stay in a temporary directory).
func startEnv(t testing.TB, onLog func(id, logs, errs string), replies ...scriptedllm.Reply) (*scriptedllm.Server, *httptest.Server) {
	t.Helper()
	model := scriptedllm.New(replies...)
	t.Cleanup(model.Close)
	// A first turn asks for its title beside the scripted conversation: those calls have their own script
	// (none by default: the title fails and is only logged).
	model.Divert(isTitle)
	t.Setenv("AGENT_API_KEY", testKey)
	t.Setenv("AGENT_ALLOW_UNAUTHENTICATED", "")
	t.Setenv("LLM_API_KEY", "env-llm-key")
	t.Setenv("LLM_MODEL", "openai/gpt-4o-mini")
	t.Setenv("LLM_BASE_URL", model.BaseURL())
	t.Setenv("SAFEHTTP_ALLOW", "")
	t.Setenv("SAFEHTTP_ALLOW_HTTP", "")
	t.Setenv("TURN_BUDGET", "10s")
	srv := httptest.NewServer(localruntime.New(envMain, localruntime.Options{LogDir: t.TempDir(), OnLog: onLog}))
	t.Cleanup(srv.Close)
	return model, srv
}

// isTitle reports whether a model call asks for a conversation title.
func isTitle(r scriptedllm.Request) bool {
	msgs, _ := r.JSON()["messages"].([]any)
	if len(msgs) == 0 {
		return false
	}
	first, _ := msgs[0].(map[string]any)
	return first["content"] == convtitle.SystemPrompt
}

func route(next, reason, final string) scriptedllm.Reply {
	b, _ := json.Marshal(map[string]string{"next": next, "reason": reason, "final_answer": final})
	return scriptedllm.Reply{JSON: string(b)}
}

type result struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, srv *httptest.Server, method, path string, body any, headers map[string]string) result {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return result{status: res.StatusCode, header: res.Header, body: data}
}

var auth = map[string]string{"X-Session-API-Key": testKey}

// turn posts a turn with the session key and returns its parsed, order-checked timeline.
func turn(t *testing.T, srv *httptest.Server, body any) []timelinetest.Decoded {
	t.Helper()
	r := do(t, srv, "POST", "/", body, auth)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") || r.header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("content-type %q, cache-control %q", ct, r.header.Get("Cache-Control"))
	}
	evs, err := timelinetest.ParseSSE(r.body)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.body)
	}
	if err := timelinetest.CheckOrder(evs); err != nil {
		t.Fatalf("order: %v\n%s", err, r.body)
	}
	return evs
}

// withoutUsage is the timeline without its usage events (TestUsagePerModelCall pins those).
func withoutUsage(evs []timelinetest.Decoded) []timelinetest.Decoded {
	var out []timelinetest.Decoded
	for _, e := range evs {
		if e.Type() != timeline.TypeUsage {
			out = append(out, e)
		}
	}
	return out
}

// types lists the timeline's event types, usage events left out.
func types(evs []timelinetest.Decoded) string {
	var out []string
	for _, e := range withoutUsage(evs) {
		out = append(out, e.Type())
	}
	return strings.Join(out, ",")
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

func tokens(evs []timelinetest.Decoded, agent string) string {
	var b strings.Builder
	for _, e := range find(evs, "token") {
		if e.Str("agent") == agent {
			b.WriteString(e.Str("content"))
		}
	}
	return b.String()
}

// messages returns the "messages" of a recorded chat request.
func messages(t *testing.T, r scriptedllm.Request) []map[string]any {
	t.Helper()
	raw, _ := r.JSON()["messages"].([]any)
	var out []map[string]any
	for _, m := range raw {
		out = append(out, m.(map[string]any))
	}
	if len(out) == 0 {
		t.Fatalf("no messages in %s", r.Body)
	}
	return out
}

// inCallOrder returns the tool_start and tool_end events of a timeline, each list in call order: a
// consumer pairs them by run_id, and the engine numbers run ids (run_<n>) in call order. The calls of one
// answer run at once, so their events may come in any order.
func inCallOrder(t *testing.T, evs []timelinetest.Decoded) (starts, ends []timelinetest.Decoded) {
	t.Helper()
	num := func(e timelinetest.Decoded) int {
		n, err := strconv.Atoi(strings.TrimPrefix(e.Str("run_id"), "run_"))
		if err != nil {
			t.Fatalf("run_id %q", e.Str("run_id"))
		}
		return n
	}
	starts, ends = find(evs, "tool_start"), find(evs, "tool_end")
	sort.SliceStable(starts, func(i, j int) bool { return num(starts[i]) < num(starts[j]) })
	sort.SliceStable(ends, func(i, j int) bool { return num(ends[i]) < num(ends[j]) })
	return starts, ends
}

var history = []map[string]string{{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}}

func TestFinishAnswersDirectly(t *testing.T) {
	model, srv := env(t, route("FINISH", "greeting", "[planner] Hello! How can I help?"))
	evs := withoutUsage(turn(t, srv, map[string]any{"message": "hey", "history": history}))
	if got := types(evs); got != "status,route,answer_start,token,done,complete" {
		t.Fatalf("types %s", got)
	}
	if evs[0].Str("message") != engine.StatusRouting {
		t.Fatalf("status %v", evs[0])
	}
	r := evs[1]
	if r.Str("agent") != "FINISH" || r.Str("next") != "FINISH" || r.Str("reason") != "greeting" {
		t.Fatalf("route %v", r)
	}
	if evs[2].Str("agent") != "supervisor" || tokens(evs, "supervisor") != "Hello! How can I help?" {
		t.Fatalf("answer %v %v", evs[2], evs[3])
	}
	if d := evs[4]; d.Str("content") != "Hello! How can I help?" || d.Str("answer") != d.Str("content") {
		t.Fatalf("done %v", d)
	}
	reqs := model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1 (no title with history)", len(reqs))
	}
	body := reqs[0].JSON()
	if reqs[0].Path != "/v1/chat/completions" || reqs[0].Model != "gpt-4o-mini" || reqs[0].Stream {
		t.Fatalf("router call %s model %q stream %v", reqs[0].Path, reqs[0].Model, reqs[0].Stream)
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer env-llm-key" {
		t.Fatalf("authorization %q", got)
	}
	if body["temperature"] != 0.2 {
		t.Fatalf("temperature %v", body["temperature"])
	}
	rf, _ := body["response_format"].(map[string]any)
	if rf["type"] != "json_schema" {
		t.Fatalf("response_format %v", body["response_format"])
	}
	msgs := messages(t, reqs[0])
	if msgs[0]["role"] != "system" || msgs[0]["content"] != engine.RouterPrompt || len(msgs) != 4 || msgs[3]["content"] != "hey" {
		t.Fatalf("router messages %v", msgs)
	}
}

func TestEachSubagentAnswers(t *testing.T) {
	for _, agent := range []string{"platform", "researcher", "planner"} {
		t.Run(agent, func(t *testing.T) {
			model, srv := env(t, route(agent, "because", ""), scriptedllm.Reply{Content: "Here is the answer you need."})
			evs := turn(t, srv, map[string]any{"message": "question", "history": history})
			if got := types(evs); !strings.HasPrefix(got, "status,route,subagent_start,answer_start,token,token") ||
				!strings.HasSuffix(got, "token,subagent_end,done,complete") {
				t.Fatalf("types %s", got)
			}
			if tokens(evs, agent) != "Here is the answer you need." || len(find(evs, "token")) != 6 {
				t.Fatalf("tokens %q (%d events)", tokens(evs, agent), len(find(evs, "token")))
			}
			end := find(evs, "subagent_end")[0]
			if end.Str("agent") != agent || end["failed"] != false || end["tool_calls"] != 0.0 || end.Str("summary") != "Here is the answer you need." {
				t.Fatalf("subagent_end %v", end)
			}
			if find(evs, "done")[0].Str("answer") != "Here is the answer you need." {
				t.Fatalf("done %v", find(evs, "done"))
			}
			reqs := model.Requests()
			if len(reqs) != 2 || !reqs[1].Stream {
				t.Fatalf("%d calls; agent call streamed %v", len(reqs), reqs[len(reqs)-1].Stream)
			}
			msgs := messages(t, reqs[1])
			if msgs[0]["content"] != engine.AgentPrompt(agent, builtins.PromptSkills()) || msgs[1]["content"] != "Task focus: because" {
				t.Fatalf("agent messages %v", msgs[:2])
			}
			tools, _ := reqs[1].JSON()["tools"].([]any)
			if len(tools) == 0 || !strings.Contains(fmt.Sprint(tools), "current_time") {
				t.Fatalf("tools %v", tools)
			}
		})
	}
}

func TestMultiStepToolLoop(t *testing.T) {
	model, srv := env(t,
		route("platform", "needs the time", ""),
		scriptedllm.Reply{Content: "Let me check.", ToolCalls: []scriptedllm.ToolCall{
			{ID: "a", Name: "current_time"}, {ID: "b", Name: "current_time", Arguments: `{ }`}}},
		scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{{ID: "c", Name: "no_such_tool", Arguments: `{"x":1}`}}},
		scriptedllm.Reply{Content: "It is now."},
	)
	evs := turn(t, srv, map[string]any{"message": "what time is it", "history": history})
	// The first answer's two calls run at once: their four events come in either order.
	want := "status,route,subagent_start,answer_start,token,token,token,tool_*,tool_*,tool_*,tool_*," +
		"tool_start,tool_end,answer_start,token,token,token,subagent_end,done,complete"
	if got := strings.NewReplacer("tool_start,tool_end,tool_start,tool_end,tool_start", "tool_*,tool_*,tool_*,tool_*,tool_start",
		"tool_start,tool_start,tool_end,tool_end,tool_start", "tool_*,tool_*,tool_*,tool_*,tool_start").Replace(types(evs)); got != want {
		t.Fatalf("types\n got %s\nwant %s", types(evs), want)
	}
	starts, ends := inCallOrder(t, evs)
	if starts[0].Str("tool") != "current_time" || starts[0].Str("input") != "{}" || starts[2].Str("input") != `{"x":1}` {
		t.Fatalf("tool_start %v", starts)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000000+00:00", ends[0].Str("output")); err != nil || ends[0]["failed"] != nil {
		t.Fatalf("current_time output %v: %v", ends[0], err)
	}
	if ends[2].Str("output") != "Error: unknown tool 'no_such_tool'" || ends[2]["failed"] != true {
		t.Fatalf("unknown tool %v", ends[2])
	}
	if end := find(evs, "subagent_end")[0]; end["tool_calls"] != 3.0 || end["failed"] != false {
		t.Fatalf("subagent_end %v", end)
	}
	reqs := model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model calls", len(reqs))
	}
	// The third agent call carries both earlier rounds: assistant tool calls and tool results by id.
	msgs := messages(t, reqs[3])
	var toolIDs []string
	for _, m := range msgs {
		if m["role"] == "tool" {
			toolIDs = append(toolIDs, m["tool_call_id"].(string))
		}
	}
	if strings.Join(toolIDs, ",") != "a,b,c" {
		t.Fatalf("tool results %v in %v", toolIDs, msgs)
	}
	if last := msgs[len(msgs)-1]; last["content"] != "Error: unknown tool 'no_such_tool'" {
		t.Fatalf("last message %v", last)
	}
}

func TestPlannerFallback(t *testing.T) {
	model, srv := env(t,
		route("researcher", "web lookup", ""),
		scriptedllm.Reply{Content: "I could not complete the search."},
		scriptedllm.Reply{Content: "Here is a plan instead."},
	)
	evs := turn(t, srv, map[string]any{"message": "find it", "history": history})
	want := "status,route,subagent_start,answer_start,token,token,token,token,token,token,subagent_end," +
		"status,route,subagent_start,answer_start,token,token,token,token,token,subagent_end,done,complete"
	if got := types(evs); got != want {
		t.Fatalf("types\n got %s\nwant %s", got, want)
	}
	if e := find(evs, "subagent_end")[0]; e["failed"] != true || e.Str("agent") != "researcher" {
		t.Fatalf("first block %v", e)
	}
	if s := find(evs, "status")[1]; s.Str("message") != engine.StatusFallback {
		t.Fatalf("fallback status %v", s)
	}
	if r := find(evs, "route")[1]; r.Str("next") != "planner" || r.Str("reason") != "Fallback after researcher could not complete the task" {
		t.Fatalf("fallback route %v", r)
	}
	if d := find(evs, "done")[0]; d.Str("answer") != "Here is a plan instead." {
		t.Fatalf("done %v", d)
	}
	msgs := messages(t, model.Requests()[2])
	if msgs[0]["content"] != engine.PlannerPrompt ||
		msgs[1]["content"] != "The researcher agent failed with:\nI could not complete the search.\n\nComplete the user's request with the tools you have." {
		t.Fatalf("planner messages %v", msgs[:2])
	}
}

func TestPlannerIsNotRetriedAndEmptyAnswerDoesNotFallBack(t *testing.T) {
	_, srv := env(t, route("planner", "", ""), scriptedllm.Reply{Content: "Error: nothing worked"})
	evs := turn(t, srv, map[string]any{"message": "plan", "history": history})
	if len(find(evs, "route")) != 1 || find(evs, "route")[0].Str("reason") != "Routed to planner" {
		t.Fatalf("types %s", types(evs))
	}
	if e := find(evs, "subagent_end")[0]; e["failed"] != true {
		t.Fatalf("subagent_end %v", e)
	}
	_, srv = env(t, route("platform", "x", ""), scriptedllm.Reply{Content: ""})
	evs = turn(t, srv, map[string]any{"message": "q", "history": history})
	if got := types(evs); got != "status,route,subagent_start,subagent_end,done,complete" {
		t.Fatalf("empty answer: %s", got)
	}
}

func TestStepLimitFallsBackToPlanner(t *testing.T) {
	model, srv := env(t, route("platform", "x", ""))
	t.Setenv("SUBAGENT_MAX_STEPS", "2")
	call := scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{{Name: "current_time"}}}
	model.Push(call, call, scriptedllm.Reply{Content: "Planned."})
	evs := turn(t, srv, map[string]any{"message": "loop", "history": history})
	end := find(evs, "subagent_end")[0]
	if !strings.HasPrefix(end.Str("summary"), "I could not complete the task within the step limit (2 model calls)") || end["failed"] != true {
		t.Fatalf("subagent_end %v", end)
	}
	if find(evs, "done")[0].Str("answer") != "Planned." {
		t.Fatalf("types %s", types(evs))
	}
}

func TestUnknownRoute(t *testing.T) {
	_, srv := env(t, route("wizard", "magic", ""))
	evs := turn(t, srv, map[string]any{"message": "q", "history": history})
	if got := types(evs); got != "status,route,error,complete" {
		t.Fatalf("types %s", got)
	}
	if e := find(evs, "error")[0]; e.Str("detail") != "Unknown route 'wizard'" || e.Str("code") != timeline.CodeUnknownRoute {
		t.Fatalf("error %v", e)
	}
}

// TestModelErrors: what a user sees of a failing model with retries off (LLM_MAX_RETRIES=0); with them on,
// llm_e2e_test.go.
func TestModelErrors(t *testing.T) {
	t.Setenv("LLM_MAX_RETRIES", "0")
	t.Run("router 429", func(t *testing.T) {
		_, srv := env(t, scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 429, Type: "rate_limit_exceeded", Message: "slow down"}})
		evs := turn(t, srv, map[string]any{"message": "q"})
		if got := types(evs); got != "status,error,complete" {
			t.Fatalf("types %s", got)
		}
		if e := find(evs, "error")[0]; e.Str("code") != timeline.CodeModel || !strings.Contains(e.Str("detail"), "429") || !strings.Contains(e.Str("detail"), "slow down") {
			t.Fatalf("error %v", e)
		}
	})
	t.Run("agent 500 after a tool", func(t *testing.T) {
		_, srv := env(t, route("platform", "x", ""),
			scriptedllm.Reply{Content: "Working on it.", ToolCalls: []scriptedllm.ToolCall{{Name: "current_time"}}},
			scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 500, Message: "boom"}})
		evs := turn(t, srv, map[string]any{"message": "q", "history": history})
		if got := types(evs); !strings.HasSuffix(got, "tool_start,tool_end,subagent_end,error,complete") {
			t.Fatalf("types %s", got)
		}
		e := find(evs, "error")[0]
		if e.Str("code") != timeline.CodeModel || !strings.Contains(e.Str("detail"), "boom") || e.Str("answer") != "Working on it." {
			t.Fatalf("error %v", e)
		}
		if end := find(evs, "subagent_end")[0]; end["failed"] != true || end["tool_calls"] != 1.0 {
			t.Fatalf("subagent_end %v", end)
		}
	})
	t.Run("router not JSON", func(t *testing.T) {
		_, srv := env(t, scriptedllm.Reply{Content: "I think platform"})
		evs := turn(t, srv, map[string]any{"message": "q"})
		if e := find(evs, "error"); len(e) != 1 || e[0].Str("code") != timeline.CodeRouter {
			t.Fatalf("events %v", evs)
		}
	})
	t.Run("malformed body", func(t *testing.T) {
		_, srv := env(t, scriptedllm.Reply{Status: 502, Body: "<html>bad gateway</html>"})
		evs := turn(t, srv, map[string]any{"message": "q"})
		if e := find(evs, "error"); len(e) != 1 || !strings.Contains(e[0].Str("detail"), "502") {
			t.Fatalf("events %v", evs)
		}
	})
}

func TestBudget(t *testing.T) {
	t.Run("slow router", func(t *testing.T) {
		// The router never answers in time: only the budget can end the turn (the ceiling is a safety net).
		_, srv := env(t, scriptedllm.Reply{Delay: time.Minute})
		t.Setenv("TURN_BUDGET", "300ms")
		start := time.Now()
		evs := turn(t, srv, map[string]any{"message": "q"})
		if el := time.Since(start); el > 20*time.Second {
			t.Fatalf("turn took %v", el)
		}
		if got := types(evs); got != "status,error,complete" {
			t.Fatalf("types %s", got)
		}
		e := find(evs, "error")[0]
		if e.Str("code") != timeline.CodeBudget || !strings.Contains(e.Str("detail"), "300ms time budget") {
			t.Fatalf("error %v", e)
		}
	})
	t.Run("slow agent stream keeps the partial answer", func(t *testing.T) {
		model, srv := env(t, route("researcher", "x", ""),
			scriptedllm.Reply{Content: "one two three four five six", StallAfter: 2})
		// The stream stalls after two words: only the budget can end it, with those words as the partial
		// answer (the ceiling is a safety net).
		t.Setenv("TURN_BUDGET", "3s") // room for the route and the first words on a loaded machine (1 s was not, at load 33)
		start := time.Now()
		evs := turn(t, srv, map[string]any{"message": "q"})
		if el := time.Since(start); el > 20*time.Second {
			t.Fatalf("turn took %v", el)
		}
		if got := types(evs); !strings.HasSuffix(got, "token,subagent_end,error,complete") {
			t.Fatalf("types %s", got)
		}
		e := find(evs, "error")[0]
		if e.Str("code") != timeline.CodeBudget || e.Str("answer") != "one two" {
			t.Fatalf("error %v", e)
		}
		if len(model.Requests()) != 2 {
			t.Fatalf("%d model calls (no title after a budget error)", len(model.Requests()))
		}
	})
}

func TestBudgetReasoningModelStream(t *testing.T) {
	_, srv := env(t, route("platform", "x", ""),
		scriptedllm.Reply{Content: "alpha beta gamma delta epsilon", StallAfter: 2})
	t.Setenv("LLM_MODEL", "o4-mini")
	t.Setenv("TURN_BUDGET", "3s") // room for the route and the first words on a loaded machine (1 s was not, at load 33)
	// Not a first turn: with this much budget a first turn would also ask for a title.
	evs := turn(t, srv, map[string]any{"message": "q", "history": history})
	e := find(evs, "error")
	if len(e) != 1 || e[0].Str("code") != timeline.CodeBudget || e[0].Str("answer") != "alpha beta" {
		t.Fatalf("types %s, error %v", types(evs), e)
	}
}

func TestAttachments(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	t.Run("limits", func(t *testing.T) {
		model, srv := env(t)
		t.Setenv("ATTACHMENTS_MAX_BYTES", "10")
		var many []map[string]any
		for i := 0; i < 9; i++ {
			many = append(many, map[string]any{"name": fmt.Sprintf("f%d.txt", i), "content_base64": b64("x")})
		}
		cases := []struct {
			atts   []map[string]any
			status int
			msg    string
		}{
			{many, 422, "Too many attachments (max 8)"},
			{[]map[string]any{{"name": "big.txt", "content_base64": b64("01234567890")}}, 413, "Attachment 'big.txt' exceeds max size (10 bytes)"},
			{[]map[string]any{{"name": "../x y.txt", "content_base64": "@@@"}}, 422, "Attachment 'x_y.txt' has invalid base64"},
			{[]map[string]any{{"name": "a.txt"}}, 422, "Attachment 'a.txt' missing content_base64"},
			{[]map[string]any{{"name": "a.txt", "content_base64": "===="}}, 422, "Attachment 'a.txt' is empty"},
		}
		for _, c := range cases {
			r := do(t, srv, "POST", "/", map[string]any{"message": "m", "attachments": c.atts}, auth)
			var body map[string]string
			_ = json.Unmarshal(r.body, &body)
			if r.status != c.status || body["detail"] != c.msg || body["message"] != c.msg {
				t.Errorf("got %d %s, want %d %q", r.status, r.body, c.status, c.msg)
			}
		}
		if n := len(model.Requests()); n != 0 {
			t.Fatalf("%d model calls for refused requests", n)
		}
	})
	t.Run("model input", func(t *testing.T) {
		model, srv := env(t, route("FINISH", "", "ok"))
		png := []byte("\x89PNG fake")
		atts := []map[string]any{
			{"id": "att1", "name": "notes.md", "content_base64": b64("# Notes\nhello")},
			{"name": "pic.png", "mime": "image/png", "content_base64": base64.StdEncoding.EncodeToString(png)},
			{"name": "blob.bin", "content_base64": b64("\x00\x01")},
		}
		turn(t, srv, map[string]any{"attachments": atts, "history": history})
		msgs := messages(t, model.Requests()[0])
		parts, ok := msgs[len(msgs)-1]["content"].([]any)
		if !ok || len(parts) != 2 {
			t.Fatalf("user content %v", msgs[len(msgs)-1])
		}
		text := parts[0].(map[string]any)["text"].(string)
		for _, want := range []string{"Please review the attached file(s).\n\n### Attachments\n",
			"- text file `notes.md` (id=`att1`, ", "```\n# Notes\nhello\n```",
			"- image `pic.png` (id=`pic.png`, image/png, 9 bytes)",
			"- file `blob.bin` (id=`blob.bin`, application/octet-stream, 2 bytes) was attached. Binary contents are available only for the current request."} {
			if !strings.Contains(text, want) {
				t.Errorf("missing %q in\n%s", want, text)
			}
		}
		img := parts[1].(map[string]any)
		if img["type"] != "image_url" || img["image_url"].(map[string]any)["url"] != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(png) {
			t.Fatalf("image part %v", img)
		}
	})
}

func TestBadRequests(t *testing.T) {
	model, srv := env(t)
	cases := []struct {
		body   any
		status int
		msg    string
	}{
		{"{not json", 400, "request body must be a JSON object"},
		{"", 400, "request body must be a JSON object"},
		{map[string]any{"message": "   "}, 422, "message or attachments required"},
		{map[string]any{"message": "m", "history": []map[string]string{{"role": "system", "content": "x"}}}, 422, "history[0].role must be 'user' or 'assistant'"},
		{map[string]any{"message": "m", "memories": []map[string]any{{"key": "X", "content": "c"}}}, 422, "memories[0].key must match"},
		{map[string]any{"message": "m", "memories": []map[string]any{{"key": "tone", "content": "c", "category": "mood"}}}, 422, "memories[0].category must be one of"},
		{map[string]any{"message": "m", "mcp_connections": []map[string]any{{"id": " "}}}, 422, "mcp_connections[0].id is required"},
		{map[string]any{"message": "m", "llm": map[string]any{"base_url": "ftp://x"}}, 422, "llm.base_url must be an http(s) URL"},
		{map[string]any{"message": "m", "llm": map[string]any{"api_key": "k", "base_url": "http://example.com/v1"}}, 422, handler.MsgUserURLScheme},
		{map[string]any{"message": "m", "llm": map[string]any{"base_url": "https://example.com/v1"}}, 422, "llm.api_key is required when llm.base_url is given"},
	}
	for _, c := range cases {
		r := do(t, srv, "POST", "/api/turn", c.body, auth)
		var body map[string]string
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Errorf("%v: body %q is not JSON", c.body, r.body)
			continue
		}
		if r.status != c.status || !strings.HasPrefix(body["detail"], c.msg) || body["error"] == "" {
			t.Errorf("%v: got %d %s, want %d %q", c.body, r.status, r.body, c.status, c.msg)
		}
	}
	if r := do(t, srv, "GET", "/nope", nil, nil); r.status != 404 || !json.Valid(r.body) {
		t.Errorf("unknown path: %d %s", r.status, r.body)
	}
	t.Setenv("LLM_API_KEY", "")
	r := do(t, srv, "POST", "/", map[string]any{"message": "m"}, auth)
	if r.status != 503 || !strings.Contains(string(r.body), `"detail":"LLM_API_KEY is not configured"`) {
		t.Errorf("no key: %d %s", r.status, r.body)
	}
	if n := len(model.Requests()); n != 0 {
		t.Fatalf("%d model calls for refused requests", n)
	}
}

func TestAuth(t *testing.T) {
	_, srv := env(t)
	msg := map[string]any{"message": "m", "history": history}
	for _, h := range []map[string]string{nil, {"X-Session-API-Key": "wrong"}, {"X-Session-API-Key": testKey + "x"}} {
		for _, path := range []string{"/", "/api/turn", "/meta", "/api/meta"} {
			method, body := "POST", any(msg)
			if strings.HasSuffix(path, "meta") {
				method, body = "GET", nil
			}
			r := do(t, srv, method, path, body, h)
			if r.status != 401 || !strings.Contains(string(r.body), sessionauth.MsgBadKey) {
				t.Errorf("%s %s with %v: %d %s", method, path, h, r.status, r.body)
			}
		}
	}
	for _, path := range []string{"/health", "/ready", "/"} {
		if r := do(t, srv, "GET", path, nil, nil); r.status != 200 {
			t.Errorf("GET %s without key: %d", path, r.status)
		}
	}

	t.Run("key set: meta masks secrets", func(t *testing.T) {
		r := do(t, srv, "GET", "/meta", nil, auth)
		if r.status != 200 || strings.Contains(string(r.body), testKey) || strings.Contains(string(r.body), "env-llm-key") {
			t.Fatalf("meta %d %s", r.status, r.body)
		}
		var m map[string]any
		_ = json.Unmarshal(r.body, &m)
		envm := m["env"].(map[string]any)
		if envm["LLM_API_KEY"] != "••••••" || envm["AGENT_API_KEY"] != "••••••" || m["llm"].(map[string]any)["chat_model"] != "gpt-4o-mini" {
			t.Fatalf("meta %s", r.body)
		}
	})
	t.Run("no key configured: refused", func(t *testing.T) {
		t.Setenv("AGENT_API_KEY", "")
		r := do(t, srv, "POST", "/", msg, nil)
		if r.status != 401 || !strings.Contains(string(r.body), "auth_not_configured") {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("unauthenticated mode switched on", func(t *testing.T) {
		model, srv := env(t, route("FINISH", "", "hi"))
		t.Setenv("AGENT_API_KEY", "")
		t.Setenv("AGENT_ALLOW_UNAUTHENTICATED", "true")
		r := do(t, srv, "POST", "/", msg, nil)
		if r.status != 200 || len(model.Requests()) != 1 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func TestPerTurnLLMOverride(t *testing.T) {
	envModel, srv := env(t)
	t.Setenv("LLM_API_KEY", "")
	user := scriptedllm.New(route("FINISH", "", "from your model"))
	defer user.Close()
	body := map[string]any{"message": "m", "history": history, "llm": map[string]any{
		"api_key": "user-key", "model": "acme/my-model", "base_url": user.BaseURL(), "temperature": 0.7}}

	// A user base URL on loopback is refused by the SSRF guard unless private addresses are allowed.
	tls := scriptedllm.New()
	defer tls.Close()
	tlsURL := strings.Replace(tls.BaseURL(), "http://", "https://", 1)
	evs := turn(t, srv, map[string]any{"message": "m", "llm": map[string]any{"api_key": "k", "base_url": tlsURL}})
	if e := find(evs, "error"); len(e) != 1 || !strings.Contains(e[0].Str("detail"), "127.0.0.1") {
		t.Fatalf("guard: %v", evs)
	}
	if len(tls.Requests()) != 0 {
		t.Fatal("the guarded client reached a loopback server")
	}

	t.Setenv("SAFEHTTP_ALLOW", "127.0.0.0/8")
	t.Setenv("SAFEHTTP_ALLOW_HTTP", "true")
	evs = turn(t, srv, body)
	if find(evs, "done")[0].Str("answer") != "from your model" {
		t.Fatalf("events %v", evs)
	}
	reqs := user.Requests()
	if len(reqs) != 1 || len(envModel.Requests()) != 0 {
		t.Fatalf("user model %d calls, env model %d calls", len(reqs), len(envModel.Requests()))
	}
	if reqs[0].Header.Get("Authorization") != "Bearer user-key" || reqs[0].Model != "acme/my-model" || reqs[0].JSON()["temperature"] != 0.7 {
		t.Fatalf("request %s %s", reqs[0].Header.Get("Authorization"), reqs[0].Body)
	}
}

func TestReasoningModelUsesResponsesAPI(t *testing.T) {
	model, srv := env(t,
		route("platform", "x", ""),
		scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{{ID: "fc1", Name: "current_time"}},
			Reasoning: &scriptedllm.Reasoning{ID: "rs_round1", Summary: "Need the time first.", EncryptedContent: "gAAAAB-enc-round1"}},
		scriptedllm.Reply{Content: "Done with reasoning."},
	)
	t.Setenv("LLM_MODEL", "openai/gpt-5.6")
	evs := turn(t, srv, map[string]any{"message": "q", "history": history})
	if got := types(evs); got != "status,route,subagent_start,tool_start,tool_end,answer_start,token,token,token,subagent_end,done,complete" {
		t.Fatalf("types %s", got)
	}
	reqs := model.Requests()
	if reqs[0].Stream || !reqs[1].Stream || !reqs[2].Stream {
		t.Fatalf("router must not stream, agent calls must: %v %v %v", reqs[0].Stream, reqs[1].Stream, reqs[2].Stream)
	}
	for _, r := range reqs {
		if r.Path != "/v1/responses" || r.Model != "gpt-5.6" {
			t.Fatalf("call %s %s", r.Path, r.Model)
		}
		if _, ok := r.JSON()["temperature"]; ok {
			t.Fatalf("temperature sent to a reasoning model: %s", r.Body)
		}
	}
	if !strings.Contains(string(reqs[2].Body), `"type":"function_call_output"`) || !strings.Contains(string(reqs[2].Body), `"call_id":"fc1"`) {
		t.Fatalf("tool result not sent back: %s", reqs[2].Body)
	}
	if !strings.Contains(string(reqs[0].Body), `"json_schema"`) {
		t.Fatalf("router without structured output: %s", reqs[0].Body)
	}
	// Stateless reasoning across tool rounds: every call asks for the encrypted reasoning with store false,
	// and the second round of the agent sends the first round's reasoning item back, before its call.
	for i, r := range reqs {
		inc, _ := r.JSON()["include"].([]any)
		if r.JSON()["store"] != false || len(inc) != 1 || inc[0] != "reasoning.encrypted_content" {
			t.Fatalf("call %d: store %v include %v", i, r.JSON()["store"], r.JSON()["include"])
		}
	}
	input, _ := reqs[2].JSON()["input"].([]any)
	reasoningAt, callAt := -1, -1
	for i, it := range input {
		m, _ := it.(map[string]any)
		switch m["type"] {
		case "reasoning":
			if m["id"] != "rs_round1" || m["encrypted_content"] != "gAAAAB-enc-round1" || reasoningAt >= 0 {
				t.Fatalf("reasoning item %v", m)
			}
			reasoningAt = i
		case "function_call":
			callAt = i
		}
	}
	if reasoningAt < 0 || callAt != reasoningAt+1 {
		t.Fatalf("the first answer's reasoning item is not sent back before its call (at %d, call at %d): %s", reasoningAt, callAt, reqs[2].Body)
	}
	if strings.Contains(string(reqs[1].Body), "rs_round1") {
		t.Fatalf("reasoning sent before it existed: %s", reqs[1].Body)
	}
}

func TestFirstTurnTitle(t *testing.T) {
	model, srv := env(t, route("FINISH", "", "Use appwrite init."))
	model.PushDiverted(scriptedllm.Reply{Content: "Title: \"Create An Appwrite Project.\"\nextra"})
	evs := turn(t, srv, map[string]any{"message": "how do I start a project", "history": []map[string]string{{"role": "user", "content": "  "}}})
	if got := types(evs); got != "status,route,answer_start,token,done,conversation_title,complete" {
		t.Fatalf("types %s", got)
	}
	if ti := find(evs, "conversation_title")[0].Str("title"); ti != "Create An Appwrite Project" {
		t.Fatalf("title %q", ti)
	}
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("%d conversation calls, want the router's only", n)
	}
	req := model.Diverted()[0]
	if req.JSON()["max_tokens"] != 24.0 {
		t.Fatalf("title request %s", req.Body)
	}
	// The title is asked for from the user's message while the router decides: the answer is not known yet.
	msgs := messages(t, req)
	if msgs[1]["content"] != "User message:\nhow do I start a project\n\nConversation title:" {
		t.Fatalf("title prompt %q", msgs[1]["content"])
	}
	// A failed title is only logged.
	model.Push(route("FINISH", "", "again"))
	model.PushDiverted(scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 500, Message: "x"}})
	if got := types(turn(t, srv, map[string]any{"message": "m"})); got != "status,route,answer_start,token,done,complete" {
		t.Fatalf("types %s", got)
	}
	// A title that is not ready when its time runs out emits nothing, and the turn does not wait past it
	// (the scripted title would take an hour; the title's limit is the turn's budget less half a second).
	t.Setenv("TURN_BUDGET", "2s")
	model.Push(route("FINISH", "", "quick"))
	model.PushDiverted(scriptedllm.Reply{Content: "Late Title", Delay: time.Hour})
	if got := types(turn(t, srv, map[string]any{"message": "m"})); got != "status,route,answer_start,token,done,complete" {
		t.Fatalf("types %s", got)
	}
}

func TestJSONVariant(t *testing.T) {
	_, srv := env(t, route("planner", "x", ""), scriptedllm.Reply{Content: "Plan ready."})
	r := do(t, srv, "POST", "/", map[string]any{"message": "m", "history": history},
		map[string]string{"X-Session-API-Key": testKey, "Accept": "application/json"})
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("%d %s", r.status, r.header.Get("Content-Type"))
	}
	evs, err := timelinetest.ParseJSON(r.body)
	if err != nil {
		t.Fatal(err)
	}
	if err := timelinetest.CheckOrder(evs); err != nil {
		t.Fatal(err)
	}
	if got := types(evs); got != "status,route,subagent_start,answer_start,token,token,subagent_end,done,complete" {
		t.Fatalf("types %s", got)
	}
}

func TestMemoriesAndHistoryWindow(t *testing.T) {
	model, srv := env(t, route("platform", "x", ""), scriptedllm.Reply{Content: "ok"})
	t.Setenv("MEMORIES_MAX_CHARS", "400")
	var hist []map[string]string
	for i := 0; i < 20; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		hist = append(hist, map[string]string{"role": role, "content": fmt.Sprintf("h%d", i)})
	}
	f := false
	turn(t, srv, map[string]any{"message": "m", "history": hist, "memories": []map[string]any{
		{"key": "lang", "content": "Answer in French.", "category": "instruction", "priority": 5},
		{"key": "tz", "content": "The user is in UTC+2.", "category": "fact", "priority": 50},
		{"key": "old", "content": "Never shown.", "active": f, "priority": 100},
		{"key": "huge", "content": strings.Repeat("x", 500), "priority": 1000},
	}})
	for i, r := range model.Requests() {
		msgs := messages(t, r)
		sys := msgs[0]["content"].(string)
		tz, lang := strings.Index(sys, "- (fact) tz: The user is in UTC+2."), strings.Index(sys, "- (instruction) lang: Answer in French.")
		if tz < 0 || lang < tz || strings.Contains(sys, "Never shown") || strings.Contains(sys, "xxxx") {
			t.Fatalf("call %d system prompt:\n%s", i, sys)
		}
		var kept []string
		for _, m := range msgs {
			if c, _ := m["content"].(string); strings.HasPrefix(c, "h") && len(c) <= 3 {
				kept = append(kept, c)
			}
		}
		if strings.Join(kept, ",") != "h8,h9,h10,h11,h12,h13,h14,h15,h16,h17,h18,h19" {
			t.Fatalf("call %d history %v", i, kept)
		}
	}
}

func TestHealthReadyAndRoot(t *testing.T) {
	_, srv := env(t)
	r := do(t, srv, "GET", "/health", nil, nil)
	var h map[string]any
	_ = json.Unmarshal(r.body, &h)
	if r.status != 200 || h["status"] != "ok" || h["build_id"] == nil {
		t.Fatalf("health %d %s", r.status, r.body)
	}
	r = do(t, srv, "GET", "/ready", nil, nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"ready":true`) || !strings.Contains(string(r.body), `"llm_configured":true`) {
		t.Fatalf("ready %d %s", r.status, r.body)
	}
	t.Setenv("LLM_API_KEY", "")
	r = do(t, srv, "GET", "/ready", nil, nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"ready":false`) {
		t.Fatalf("ready without key %d %s", r.status, r.body)
	}
}

// TestUsagePerModelCall pins the usage events (the reference's f9ca6fc): one per model call that reported
// tokens, named by its agent, with the model's name and the provider's counts; the router's before its
// route, a streamed step's after its tokens (a stream reports usage only when asked, with
// stream_options.include_usage), the title's before the title; a call that reported nothing has none.
func TestUsagePerModelCall(t *testing.T) {
	router := route("platform", "needs an answer", "")
	step := scriptedllm.Reply{Content: "Here it is."}
	model, srv := env(t, router, step)
	title := scriptedllm.Reply{Content: "Usage", Usage: &scriptedllm.Usage{Prompt: 7, Completion: 1, Total: 8}}
	model.PushDiverted(title)
	evs := turn(t, srv, map[string]any{"message": "count my tokens", "history": []map[string]string{}})
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	if opts, _ := reqs[1].JSON()["stream_options"].(map[string]any); opts["include_usage"] != true {
		t.Fatalf("the streamed step did not ask for its usage: %s", reqs[1].Body)
	}
	want := []string{}
	for _, c := range []struct {
		agent string
		req   scriptedllm.Request
		reply scriptedllm.Reply
	}{{"supervisor", reqs[0], router}, {"platform", reqs[1], step}, {"title", model.Diverted()[0], title}} {
		u := scriptedllm.Tokens(c.req, c.reply)
		// Decoded maps marshal with sorted keys; the field order is timeline's ExampleUsage.
		want = append(want, fmt.Sprintf(`{"agent":"%s","completion_tokens":%d,"model":"gpt-4o-mini","prompt_tokens":%d,"total_tokens":%d,"type":"usage"}`,
			c.agent, u.Completion, u.Prompt, u.Total))
	}
	var got, order []string
	for _, e := range evs {
		if e.Type() == timeline.TypeUsage {
			b, _ := json.Marshal(e)
			got = append(got, string(b))
		}
		order = append(order, e.Type())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("usage events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if o := strings.Join(order, ","); o != "status,usage,route,subagent_start,answer_start,token,token,token,usage,subagent_end,done,usage,conversation_title,complete" {
		t.Fatalf("order %s", o)
	}

	// A provider that reports no usage: no usage event.
	silent := route("FINISH", "", "Hi.")
	silent.NoUsage = true
	model.Push(silent)
	if got := find(turn(t, srv, map[string]any{"message": "m"}), timeline.TypeUsage); len(got) != 0 {
		t.Fatalf("usage without tokens: %v", got)
	}
}
