package handler_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"appwrite-agent/functions/turn/engine"
	"appwrite-agent/functions/turn/timeline"
	"appwrite-agent/functions/turn/timeline/timelinetest"
	"appwrite-agent/shared/devkit/scriptedllm"
)

// The turn against a model that behaves like a provider on a busy day (scriptedllm's faults), through the
// function as the runtime calls it. Each test says what the user sees. Waits the provider asks for are
// kept short with retry-after-ms (a 1 s Retry-After is honoured to the millisecond in shared/llm's tests,
// with the sleeper injected); a backoff without a hint would sleep on the real clock, so every retried
// fault here carries one.

// hostileEnv is env with the logs collected.
func hostileEnv(t *testing.T, replies ...scriptedllm.Reply) (*scriptedllm.Server, *httptest.Server, *logSink) {
	t.Helper()
	book := &logSink{}
	model, srv := startEnv(t, book.add, replies...)
	return model, srv, book
}

// soon is the provider's hint to retry after a millisecond.
var soon = map[string]string{"retry-after-ms": "1"}

// TestHostileModelRetried: a 429, a 500, a 502 from a proxy, a 503 in the middle of a subagent, a
// connection reset before the first byte and a stream that dies before its first token are each retried,
// and the user sees the answer as if nothing had happened. Every retry is in the error log with its status
// and wait, and counted.
func TestHostileModelRetried(t *testing.T) {
	cases := map[string]struct {
		faults []scriptedllm.Reply
		reason string
	}{
		"429 with Retry-After": {[]scriptedllm.Reply{{Error: &scriptedllm.APIError{Status: 429, Type: "rate_limit_exceeded",
			Message: "Rate limit reached for gpt-4o-mini"}, Header: map[string]string{"retry-after-ms": "3"}}}, "http_429"},
		"500":                     {[]scriptedllm.Reply{{Error: &scriptedllm.APIError{Status: 500, Message: "boom"}, Header: soon}}, "http_500"},
		"502 from a proxy":        {[]scriptedllm.Reply{{Status: 502, Body: "<html>Bad Gateway</html>", Header: soon}}, "http_502"},
		"reset before a byte":     {[]scriptedllm.Reply{{Reset: true}}, "connection_reset"},
		"two faults in a row":     {[]scriptedllm.Reply{{Reset: true}, {Error: &scriptedllm.APIError{Status: 503, Message: "busy"}, Header: soon}}, "connection_reset"},
		"stream dies before text": {nil, "stream_cut"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// The router's call meets the faults (except for the stream, which only a subagent reads); the
			// platform agent's second call meets a 503 after its tool ran.
			var script []scriptedllm.Reply
			script = append(script, tc.faults...)
			script = append(script, route("platform", "x", ""),
				scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{{ID: "t1", Name: "current_time"}}},
				scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 503, Message: "The server is overloaded"}, Header: soon})
			if tc.faults == nil {
				script = append(script, scriptedllm.Reply{CutAfter: 1})
			}
			script = append(script, scriptedllm.Reply{Content: "It is noon."})
			model, srv, book := hostileEnv(t, script...)
			evs := turn(t, srv, map[string]any{"message": "what time is it?", "history": history})
			if got := types(evs); !strings.HasSuffix(got, "tool_start,tool_end,answer_start,token,token,token,subagent_end,done,complete") {
				t.Fatalf("types %s", got)
			}
			if d := find(evs, "done")[0]; d.Str("answer") != "It is noon." {
				t.Fatalf("done %v", d)
			}
			if n := len(model.Requests()); n != len(script) {
				t.Fatalf("%d model requests for a script of %d", n, len(script))
			}
			logs, errs := book.text()
			for _, reason := range []string{tc.reason, "http_503"} {
				if !strings.Contains(logs, `{"metric":"llm_retries_total","reason":"`+reason+`","inc":1}`) {
					t.Fatalf("no %s retry counted in %q", reason, logs)
				}
			}
			if !strings.Contains(errs, "model call retry 1 of 2 after http_503 (status 503): waiting 1ms (Retry-After)") {
				t.Fatalf("errors %q", errs)
			}
		})
	}
}

// TestHostileModelGivesUp: what the user sees when retrying cannot help.
func TestHostileModelGivesUp(t *testing.T) {
	t.Run("Retry-After beyond the budget", func(t *testing.T) {
		// The turn's budget is 10 s; the provider asks for a minute. The turn ends at once (the ceiling is a
		// safety net far above it) with an error naming the rate limit and the wait, then complete.
		model, srv, _ := hostileEnv(t, scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 429, Type: "rate_limit_exceeded",
			Message: "Rate limit reached for requests"}, Header: map[string]string{"Retry-After": "60"}})
		start := time.Now()
		evs := turn(t, srv, map[string]any{"message": "q", "history": history})
		if el := time.Since(start); el > 5*time.Second {
			t.Fatalf("the turn took %v", el)
		}
		if got := types(evs); got != "status,error,complete" {
			t.Fatalf("types %s", got)
		}
		e := find(evs, "error")[0]
		if e.Str("code") != timeline.CodeRateLimited || !strings.Contains(e.Str("detail"), "rate limit") ||
			!strings.Contains(e.Str("detail"), "wait 1m0s") || !strings.Contains(e.Str("detail"), "Rate limit reached for requests") {
			t.Fatalf("error %v", e)
		}
		if len(model.Requests()) != 1 {
			t.Fatalf("%d requests", len(model.Requests()))
		}
	})
	t.Run("429 three times", func(t *testing.T) {
		limit := scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 429, Type: "rate_limit_exceeded", Message: "slow down"}, Header: soon}
		model, srv, _ := hostileEnv(t, limit, limit, limit, route("FINISH", "", "never"))
		evs := turn(t, srv, map[string]any{"message": "q", "history": history})
		if e := find(evs, "error"); len(e) != 1 || e[0].Str("code") != timeline.CodeModel || e[0].Str("detail") != "model error (HTTP 429 rate_limit_exceeded): slow down" {
			t.Fatalf("events %v", evs)
		}
		if model.Pending() != 1 {
			t.Fatalf("tried %d times", 4-model.Pending())
		}
	})
	t.Run("stream cut mid-answer", func(t *testing.T) {
		// Tokens reached the user: a retry would repeat them. The user keeps what arrived, marked partial.
		model, srv, _ := hostileEnv(t, route("researcher", "x", ""), scriptedllm.Reply{Content: "The answer is forty two", CutAfter: 3},
			scriptedllm.Reply{Content: "never"})
		evs := turn(t, srv, map[string]any{"message": "q", "history": history})
		if got := types(evs); got != "status,route,subagent_start,answer_start,token,token,token,subagent_end,error,complete" {
			t.Fatalf("types %s", got)
		}
		e := find(evs, "error")[0]
		if e.Str("code") != timeline.CodeModel || e.Str("answer") != "The answer is" ||
			e.Str("detail") != "model error: the stream ended before the answer was finished" || model.Pending() != 1 {
			t.Fatalf("error %v, %d pending", e, model.Pending())
		}
	})
}

// TestHostileModelAnswers: answers that are not faults of the connection.
func TestHostileModelAnswers(t *testing.T) {
	t.Run("several tool calls at once", func(t *testing.T) {
		model, srv, _ := hostileEnv(t, route("platform", "x", ""),
			scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{
				{ID: "call_a", Name: "calculator", Arguments: `{"expression":"1+1"}`},
				{ID: "call_b", Name: "calculator", Arguments: `{"expression":"2*3"}`},
				{ID: "call_c", Name: "current_time"}}},
			scriptedllm.Reply{Content: "2, 6 and the time."})
		evs := turn(t, srv, map[string]any{"message": "q", "history": history})
		starts, ends := inCallOrder(t, evs)
		if len(starts) != 3 || len(ends) != 3 || find(evs, "subagent_end")[0]["tool_calls"] != 3.0 {
			t.Fatalf("types %s", types(evs))
		}
		byRun := map[string]timelinetest.Decoded{}
		for _, s := range starts {
			byRun[s.Str("run_id")] = s
		}
		outputs := map[string]string{}
		for _, e := range ends {
			s, ok := byRun[e.Str("run_id")]
			if !ok || s.Str("tool") != e.Str("tool") {
				t.Fatalf("tool_end %v pairs with no tool_start", e)
			}
			outputs[s.Str("input")] = e.Str("output")
		}
		// The model gets each result under its own tool_call_id, in call order.
		msgs := messages(t, model.Requests()[2])
		tail := msgs[len(msgs)-3:]
		for i, id := range []string{"call_a", "call_b", "call_c"} {
			if tail[i]["role"] != "tool" || tail[i]["tool_call_id"] != id {
				t.Fatalf("message %d %v", i, tail[i])
			}
		}
		if tail[0]["content"] != outputs[`{"expression":"1+1"}`] || tail[1]["content"] != outputs[`{"expression":"2*3"}`] ||
			!strings.Contains(tail[0]["content"].(string), "2") || !strings.Contains(tail[1]["content"].(string), "6") {
			t.Fatalf("results %v %v", tail, outputs)
		}
	})
	t.Run("malformed tool-call JSON", func(t *testing.T) {
		// The call fails on its own (failed: true); the model is told and answers.
		model, srv, _ := hostileEnv(t, route("platform", "x", ""),
			scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{{ID: "bad", Name: "calculator", Arguments: `{"expression": "1+`}}},
			scriptedllm.Reply{Content: "Sorry, let me retry that."})
		evs := turn(t, srv, map[string]any{"message": "q", "history": history})
		end := find(evs, "tool_end")[0]
		if end["failed"] != true || end.Str("output") != "Error: tool arguments are not valid JSON" {
			t.Fatalf("tool_end %v", end)
		}
		if msgs := messages(t, model.Requests()[2]); msgs[len(msgs)-1]["content"] != "Error: tool arguments are not valid JSON" {
			t.Fatalf("tool message %v", msgs[len(msgs)-1])
		}
		if find(evs, "done")[0].Str("answer") != "Sorry, let me retry that." {
			t.Fatalf("types %s", types(evs))
		}
	})
	t.Run("finish_reason length", func(t *testing.T) {
		// The user keeps the text and is told it was cut.
		_, srv, _ := hostileEnv(t, route("researcher", "x", ""), scriptedllm.Reply{Content: "Step one, step two", Finish: "length"})
		evs := turn(t, srv, map[string]any{"message": "q", "history": history})
		toks := find(evs, "token")
		if d := find(evs, "done")[0]; d.Str("answer") != "Step one, step two"+engine.NoticeCut || toks[len(toks)-1].Str("content") != engine.NoticeCut {
			t.Fatalf("done %v", d)
		}
	})
	t.Run("content filter", func(t *testing.T) {
		_, srv, _ := hostileEnv(t, route("researcher", "x", ""), scriptedllm.Reply{Content: "Here is how", Finish: "content_filter"})
		evs := turn(t, srv, map[string]any{"message": "q", "history": history})
		e := find(evs, "error")
		if len(e) != 1 || e[0].Str("code") != timeline.CodeContentFilter || e[0].Str("detail") != engine.MsgContentFilter || e[0].Str("answer") != "Here is how" {
			t.Fatalf("events %v", evs)
		}
	})
	t.Run("empty answer", func(t *testing.T) {
		// As in the reference engine: the block ends failed, no fallback, done with an empty answer.
		_, srv, _ := hostileEnv(t, route("researcher", "x", ""), scriptedllm.Reply{})
		evs := turn(t, srv, map[string]any{"message": "q", "history": history})
		if got := types(evs); got != "status,route,subagent_start,subagent_end,done,complete" {
			t.Fatalf("types %s", got)
		}
		if find(evs, "subagent_end")[0]["failed"] != true || find(evs, "done")[0].Str("answer") != "" {
			t.Fatalf("events %v", evs)
		}
	})
}

// TestExactParameters: what the model server receives. A per-turn temperature of 0 arrives as 0 (go-openai's
// omitempty would drop it), gpt-5-chat* gets the caller's temperature, a reasoning model gets none (on the
// Responses API).
func TestExactParameters(t *testing.T) {
	for _, tc := range []struct {
		model string
		temp  float64
		path  string
		want  any
	}{{"gpt-4o-mini", 0, "/v1/chat/completions", 0.0}, {"gpt-5-chat-latest", 0.7, "/v1/chat/completions", 0.7},
		{"o3-mini", 0.4, "/v1/responses", nil}} {
		model, srv, _ := hostileEnv(t, route("FINISH", "", "ok"))
		turn(t, srv, map[string]any{"message": "q", "history": history, "llm": map[string]any{"model": tc.model, "temperature": tc.temp}})
		req := model.Requests()[0]
		got, present := req.JSON()["temperature"]
		if req.Path != tc.path || req.Model != tc.model || (tc.want == nil) == present || (present && got != tc.want) {
			t.Fatalf("%s: %s model %s temperature %v (%v): %s", tc.model, req.Path, req.Model, got, present, req.Body)
		}
	}
	// Without a per-turn temperature the default goes, and the raw body says so.
	model, srv, _ := hostileEnv(t, route("FINISH", "", "ok"))
	turn(t, srv, map[string]any{"message": "q", "history": history})
	var body struct {
		Temperature *float64 `json:"temperature"`
	}
	if err := json.Unmarshal(model.Requests()[0].Body, &body); err != nil || body.Temperature == nil || *body.Temperature != 0.2 {
		t.Fatalf("%s", model.Requests()[0].Body)
	}
}
