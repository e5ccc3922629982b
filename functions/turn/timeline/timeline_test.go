package timeline

import (
	"strings"
	"testing"
)

func TestSSEAndJSONRoundTrip(t *testing.T) {
	evs := []Event{Status("Routing…"), Route("FINISH", "r"), AnswerStart("supervisor"), Token("supervisor", "héllo \"x\""),
		Done("héllo \"x\""), ConversationTitle("T"), Complete()}
	sse, err := SSE(evs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(sse), "data: {\"type\":\"status\",\"message\":\"Routing…\"}\n\n") {
		t.Fatalf("sse %q", sse)
	}
	got, err := ParseSSE(sse)
	if err != nil || len(got) != len(evs) || got[3].Str("content") != "héllo \"x\"" {
		t.Fatalf("%v %v", got, err)
	}
	if err := CheckOrder(got); err != nil {
		t.Fatal(err)
	}
	js, _ := JSONArray(evs)
	got2, err := ParseJSON(js)
	if err != nil || len(got2) != len(evs) {
		t.Fatal(err)
	}
	if _, err := ParseSSE([]byte("data: {}\n")); err == nil {
		t.Fatal("unterminated frame accepted")
	}
	if _, err := ParseSSE([]byte("event: x\ndata: {}\n\n")); err == nil {
		t.Fatal("event: line accepted")
	}
}

func TestCheckOrderRejects(t *testing.T) {
	st, rt, ss, se := Status("s"), Route("platform", "r"), SubagentStart("platform"), SubagentEnd("platform", "", 0, false)
	cases := map[string][]Event{
		"no complete":          {st, rt, ss, se, Done("")},
		"complete not last":    {st, rt, ss, se, Done(""), Complete(), Status("s")},
		"route before status":  {rt, st, Complete()},
		"token without start":  {st, rt, ss, Token("platform", "x"), se, Done(""), Complete()},
		"token wrong agent":    {st, rt, ss, AnswerStart("planner"), se, Done(""), Complete()},
		"unclosed block":       {st, rt, ss, Done(""), Complete()},
		"open tool":            {st, rt, ss, ToolStart("platform", "t", "1", "{}"), se, Done(""), Complete()},
		"tool_calls mismatch":  {st, rt, ss, ToolStart("platform", "t", "1", "{}"), ToolEnd("platform", "t", "1", "", false), se, Done(""), Complete()},
		"token after tool":     {st, rt, ss, AnswerStart("platform"), ToolStart("platform", "t", "1", "{}"), ToolEnd("platform", "t", "1", "", false), Token("platform", "x"), SubagentEnd("platform", "", 1, false), Done(""), Complete()},
		"fallback not failed":  {st, rt, ss, se, Status("f"), Route("planner", "f"), SubagentStart("planner"), SubagentEnd("planner", "", 0, false), Done(""), Complete()},
		"title before done":    {st, rt, ss, se, ConversationTitle("t"), Done(""), Complete()},
		"event after error":    {st, Error("x", "d", ""), Done(""), Complete()},
		"done and error":       {st, rt, ss, se, Done(""), Error("x", "d", ""), Complete()},
		"subagent wrong route": {st, Route("planner", "r"), ss, se, Done(""), Complete()},
		"unknown type":         {st, New("model_start"), Complete()},
		"late credentials":     {st, MCPCredentials(nil), Complete()},
	}
	for name, evs := range cases {
		body, _ := JSONArray(evs)
		dec, _ := ParseJSON(body)
		if err := CheckOrder(dec); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
