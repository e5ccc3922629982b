package timelinetest_test

import (
	"strings"
	"testing"

	"appwrite-agent/functions/turn/timeline"
	"appwrite-agent/functions/turn/timeline/timelinetest"
)

func TestSSEAndJSONRoundTrip(t *testing.T) {
	evs := []timeline.Event{timeline.Status("Routing…"), timeline.Route("FINISH", "r"), timeline.AnswerStart("supervisor"), timeline.Token("supervisor", "héllo \"x\""),
		timeline.Done("héllo \"x\""), timeline.ConversationTitle("T"), timeline.Complete()}
	sse, err := timeline.SSE(evs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(sse), "data: {\"type\":\"status\",\"message\":\"Routing…\"}\n\n") {
		t.Fatalf("sse %q", sse)
	}
	got, err := timelinetest.ParseSSE(sse)
	if err != nil || len(got) != len(evs) || got[3].Str("content") != "héllo \"x\"" {
		t.Fatalf("%v %v", got, err)
	}
	if err := timelinetest.CheckOrder(got); err != nil {
		t.Fatal(err)
	}
	js, _ := timeline.JSONArray(evs)
	got2, err := timelinetest.ParseJSON(js)
	if err != nil || len(got2) != len(evs) {
		t.Fatal(err)
	}
	if _, err := timelinetest.ParseSSE([]byte("data: {}\n")); err == nil {
		t.Fatal("unterminated frame accepted")
	}
	if _, err := timelinetest.ParseSSE([]byte("event: x\ndata: {}\n\n")); err == nil {
		t.Fatal("event: line accepted")
	}
}

func TestCheckOrderRejects(t *testing.T) {
	st, rt, ss, se := timeline.Status("s"), timeline.Route("platform", "r"), timeline.SubagentStart("platform"), timeline.SubagentEnd("platform", "", 0, false)
	cases := map[string][]timeline.Event{
		"no complete":              {st, rt, ss, se, timeline.Done("")},
		"complete not last":        {st, rt, ss, se, timeline.Done(""), timeline.Complete(), timeline.Status("s")},
		"route before status":      {rt, st, timeline.Complete()},
		"token without start":      {st, rt, ss, timeline.Token("platform", "x"), se, timeline.Done(""), timeline.Complete()},
		"token wrong agent":        {st, rt, ss, timeline.AnswerStart("planner"), se, timeline.Done(""), timeline.Complete()},
		"unclosed block":           {st, rt, ss, timeline.Done(""), timeline.Complete()},
		"open tool":                {st, rt, ss, timeline.ToolStart("platform", "t", "1", "{}"), se, timeline.Done(""), timeline.Complete()},
		"one of two tools open":    {st, rt, ss, timeline.ToolStart("platform", "t", "1", "{}"), timeline.ToolStart("platform", "t", "2", "{}"), timeline.ToolEnd("platform", "t", "2", "", false), timeline.SubagentEnd("platform", "", 2, false), timeline.Done(""), timeline.Complete()},
		"tool_end of another tool": {st, rt, ss, timeline.ToolStart("platform", "a", "1", "{}"), timeline.ToolStart("platform", "b", "2", "{}"), timeline.ToolEnd("platform", "b", "1", "", false), timeline.ToolEnd("platform", "a", "2", "", false), timeline.SubagentEnd("platform", "", 2, false), timeline.Done(""), timeline.Complete()},
		"tool_end twice":           {st, rt, ss, timeline.ToolStart("platform", "t", "1", "{}"), timeline.ToolEnd("platform", "t", "1", "", false), timeline.ToolEnd("platform", "t", "1", "", false), timeline.SubagentEnd("platform", "", 1, false), timeline.Done(""), timeline.Complete()},
		"token between tools":      {st, rt, ss, timeline.ToolStart("platform", "t", "1", "{}"), timeline.AnswerStart("platform"), timeline.ToolEnd("platform", "t", "1", "", false), timeline.SubagentEnd("platform", "", 1, false), timeline.Done(""), timeline.Complete()},
		"tool_calls mismatch":      {st, rt, ss, timeline.ToolStart("platform", "t", "1", "{}"), timeline.ToolEnd("platform", "t", "1", "", false), se, timeline.Done(""), timeline.Complete()},
		"token after tool":         {st, rt, ss, timeline.AnswerStart("platform"), timeline.ToolStart("platform", "t", "1", "{}"), timeline.ToolEnd("platform", "t", "1", "", false), timeline.Token("platform", "x"), timeline.SubagentEnd("platform", "", 1, false), timeline.Done(""), timeline.Complete()},
		"fallback not failed":      {st, rt, ss, se, timeline.Status("f"), timeline.Route("planner", "f"), timeline.SubagentStart("planner"), timeline.SubagentEnd("planner", "", 0, false), timeline.Done(""), timeline.Complete()},
		"title before done":        {st, rt, ss, se, timeline.ConversationTitle("t"), timeline.Done(""), timeline.Complete()},
		"event after error":        {st, timeline.Error("x", "d", ""), timeline.Done(""), timeline.Complete()},
		"done and error":           {st, rt, ss, se, timeline.Done(""), timeline.Error("x", "d", ""), timeline.Complete()},
		"subagent wrong route":     {st, timeline.Route("planner", "r"), ss, se, timeline.Done(""), timeline.Complete()},
		"unknown type":             {st, timeline.New("model_start"), timeline.Complete()},
		"credentials after route":  {st, rt, timeline.MCPCredentials(nil), ss, se, timeline.Done(""), timeline.Complete()},
		"credentials in a block":   {st, rt, ss, timeline.MCPCredentials(nil), se, timeline.Done(""), timeline.Complete()},
		"credentials twice":        {timeline.MCPCredentials(nil), st, timeline.MCPCredentials(nil), rt, ss, se, timeline.Done(""), timeline.Complete()},
		"credentials twice, done":  {st, timeline.MCPCredentials(nil), rt, ss, se, timeline.Done(""), timeline.MCPCredentials(nil), timeline.Complete()},
		"credentials then route 1": {timeline.MCPCredentials(nil), rt, ss, se, timeline.Done(""), timeline.Complete()},
		"credentials then block":   {st, timeline.MCPCredentials(nil), ss, se, timeline.Done(""), timeline.Complete()},
	}
	for name, evs := range cases {
		body, _ := timeline.JSONArray(evs)
		dec, _ := timelinetest.ParseJSON(body)
		if err := timelinetest.CheckOrder(dec); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestCheckOrderAcceptsMCPNoticesAfterTheRoutingStatus checks the places the MCP connections' events may
// take now that they load while the router decides: first (as before), after the routing status (before
// or between the notices, before the route or an error), and after done for a FINISH answer.
func TestCheckOrderAcceptsMCPNoticesAfterTheRoutingStatus(t *testing.T) {
	creds, st, notice := timeline.MCPCredentials(nil), timeline.Status("Routing request…"), timeline.Status("skipped x")
	rt, ss, se := timeline.Route("platform", "r"), timeline.SubagentStart("platform"), timeline.SubagentEnd("platform", "", 0, false)
	fin, as, tok := timeline.Route("FINISH", "r"), timeline.AnswerStart("supervisor"), timeline.Token("supervisor", "hi")
	done, title, complete := timeline.Done("hi"), timeline.ConversationTitle("T"), timeline.Complete()
	for _, evs := range [][]timeline.Event{
		{creds, notice, st, rt, ss, se, done, complete},
		{st, creds, notice, rt, ss, se, done, complete},
		{st, creds, rt, ss, se, done, complete},
		{st, notice, notice, rt, ss, se, done, complete},
		{st, creds, notice, timeline.Error("model", "x", ""), complete},
		{st, fin, as, tok, done, creds, title, complete},
		{st, creds, notice, fin, as, tok, done, title, complete},
	} {
		body, _ := timeline.JSONArray(evs)
		dec, _ := timelinetest.ParseJSON(body)
		if err := timelinetest.CheckOrder(dec); err != nil {
			t.Errorf("%v: %s", err, body)
		}
	}
}

func TestCheckOrderAcceptsADroppedSinkNoticeAnywhereBeforeComplete(t *testing.T) {
	drop := timeline.SinkStatus("Progress sink 'webhook' dropped", "webhook")
	evs := []timeline.Event{timeline.Status("s"), timeline.Route("platform", "r"), timeline.SubagentStart("platform"),
		timeline.ToolStart("platform", "t", "1", "{}"), timeline.ToolEnd("platform", "t", "1", "", false), drop,
		timeline.SubagentEnd("platform", "", 1, false), timeline.Done(""), drop, timeline.Complete()}
	body, _ := timeline.JSONArray(evs)
	dec, _ := timelinetest.ParseJSON(body)
	if err := timelinetest.CheckOrder(dec); err != nil {
		t.Fatal(err)
	}
	// Only before complete, and a plain status (no sink) keeps its rules.
	for _, bad := range [][]timeline.Event{
		{timeline.Status("s"), timeline.Route("FINISH", "r"), timeline.Done(""), timeline.Complete(), drop},
		{timeline.Status("s"), timeline.Route("platform", "r"), timeline.SubagentStart("platform"), timeline.Status("x"),
			timeline.SubagentEnd("platform", "", 0, false), timeline.Done(""), timeline.Complete()},
	} {
		body, _ := timeline.JSONArray(bad)
		dec, _ := timelinetest.ParseJSON(body)
		if timelinetest.CheckOrder(dec) == nil {
			t.Fatalf("accepted %s", body)
		}
	}
}
