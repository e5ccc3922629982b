// Package timelinetest is test support for timelines: it parses the SSE and JSON bodies a client receives
// and checks the order rules (CheckOrder). Only tests import it; staging refuses any deployment whose
// code reaches it (scripts/internal/staging, NeverShips).
package timelinetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"appwrite-agent/functions/turn/timeline"
)

// Decoded is one event as a client sees it after parsing.
type Decoded map[string]any

// Type is the event's "type" field ("" when missing).
func (d Decoded) Type() string { s, _ := d["type"].(string); return s }

// Str is a string field ("" when missing or not a string).
func (d Decoded) Str(key string) string { s, _ := d[key].(string); return s }

// ParseSSE parses a text/event-stream body in which every frame is exactly "data: <json object>\n\n".
func ParseSSE(body []byte) ([]Decoded, error) {
	var out []Decoded
	for len(body) > 0 {
		end := bytes.Index(body, []byte("\n\n"))
		if end < 0 {
			return out, fmt.Errorf("timeline: frame %d is not terminated by a blank line", len(out))
		}
		frame := body[:end]
		body = body[end+2:]
		if !bytes.HasPrefix(frame, []byte("data: ")) || bytes.Contains(frame, []byte("\n")) {
			return out, fmt.Errorf("timeline: frame %d is not a single data: line: %q", len(out), frame)
		}
		var d Decoded
		if err := json.Unmarshal(frame[len("data: "):], &d); err != nil {
			return out, fmt.Errorf("timeline: frame %d: %w", len(out), err)
		}
		out = append(out, d)
	}
	return out, nil
}

// ParseJSON parses the JSON array variant of a timeline.
func ParseJSON(body []byte) ([]Decoded, error) {
	var out []Decoded
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("timeline: %w", err)
	}
	return out, nil
}

var known = map[string]bool{
	timeline.TypeMCPCredentials: true, timeline.TypeStatus: true, timeline.TypeRoute: true, timeline.TypeSubagentStart: true, timeline.TypeSubagentEnd: true,
	timeline.TypeAnswerStart: true, timeline.TypeToken: true, timeline.TypeToolStart: true, timeline.TypeToolEnd: true, timeline.TypeDone: true,
	timeline.TypeConversationTitle: true, timeline.TypeError: true, timeline.TypeComplete: true, timeline.TypeUsage: true,
}

// CheckOrder reports the first violation of the timeline rules:
//
//   - every event has a known type; the last event is the only complete;
//   - a status with a "sink" field (a dropped progress sink) may come anywhere before complete, and is
//     otherwise ignored;
//   - a usage event may come anywhere before complete, outside a tool call, and is otherwise ignored; it
//     names a model and an agent, and its counts are whole numbers, not all zero, the total at least the
//     sum of the parts it gives;
//   - status comes first, or mcp_credentials then status; before the first route there may be several
//     status events (the routing status and the skipped MCP connections' notices) and, after a status, one
//     mcp_credentials (the MCP connections load while the router decides); a status, or an mcp_credentials
//     after one, is followed by status, route or error (mcp_credentials, route or error for a status);
//   - mcp_credentials comes at most once: first, after a status before the first route, or after done (a
//     FINISH answer does not wait for the MCP connections);
//   - at most two routes: the first one, and a fallback to planner after a failed platform or researcher;
//   - subagent_start names the agent just routed to; blocks do not nest and end with subagent_end of the same
//     agent, whose tool_calls counts the block's tool_start events;
//   - answer_start, token, tool_start, tool_end belong to the open block's agent (or to "supervisor" after a
//     FINISH route); a token follows an answer_start of the same text run (a tool call ends the run);
//   - the tool calls of one model answer run at once: between a tool_start and the tool_end with its run_id
//     only other tool_start and tool_end events may come; a tool_end closes the open tool_start with its
//     run_id (the same tool and agent), in any order; run ids are unique. A consumer pairs tool events by
//     run_id, never by tool name or position;
//   - exactly one of done or error comes before complete, never inside an open block; after done only
//     one conversation_title may come before complete.

func CheckOrder(events []Decoded) error {
	if len(events) == 0 {
		return errors.New("empty timeline")
	}
	var (
		routes      int
		lastRoute   string
		open        string // agent of the open subagent block
		blockTools  int
		inRun       bool                   // an answer_start opened the current text run
		openTools   = map[string]Decoded{} // open tool_start events by run_id
		runIDs      = map[string]bool{}
		ended       string // "done" or "error"
		titled      bool
		prev        string
		lastFailed  bool
		lastEnded   string
		blocks      int
		finishRoute bool
		credentials bool
	)
	for i, e := range events {
		t := e.Type()
		fail := func(format string, args ...any) error {
			return fmt.Errorf("event %d (%s): %s", i, t, fmt.Sprintf(format, args...))
		}
		if !known[t] {
			return fail("unknown type")
		}
		if t == timeline.TypeComplete {
			if i != len(events)-1 {
				return fail("complete is not the last event")
			}
			if ended == "" {
				return fail("complete without done or error before it")
			}
			return nil
		}
		if t == timeline.TypeStatus && e.Str("sink") != "" {
			// A dropped progress sink's notice: it may come anywhere before complete.
			continue
		}
		if len(openTools) > 0 && t != timeline.TypeToolEnd && t != timeline.TypeToolStart {
			ids := make([]string, 0, len(openTools))
			for id := range openTools {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			return fail("tool %q (run %q) is still open", openTools[ids[0]].Str("tool"), ids[0])
		}
		if t == timeline.TypeUsage {
			if err := checkUsage(e); err != nil {
				return fail("%v", err)
			}
			continue
		}
		if ended == timeline.TypeError {
			return fail("only complete may follow error")
		}
		if ended == timeline.TypeDone && t != timeline.TypeConversationTitle && t != timeline.TypeMCPCredentials {
			return fail("only mcp_credentials, conversation_title or complete may follow done")
		}
		if i == 0 && t != timeline.TypeStatus && t != timeline.TypeMCPCredentials {
			return fail("a timeline starts with mcp_credentials or status")
		}
		if prev == timeline.TypeStatus && t != timeline.TypeRoute && t != timeline.TypeError &&
			!(routes == 0 && (t == timeline.TypeStatus || t == timeline.TypeMCPCredentials)) {
			return fail("status must be followed by route or error")
		}
		if prev == timeline.TypeMCPCredentials && i > 1 && ended == "" && t != timeline.TypeStatus && t != timeline.TypeRoute && t != timeline.TypeError {
			return fail("mcp_credentials before the route must be followed by status, route or error")
		}
		agentOK := func() error {
			a := e.Str("agent")
			if open != "" && a == open {
				return nil
			}
			if open == "" && finishRoute && blocks == 0 && a == "supervisor" && (t == timeline.TypeAnswerStart || t == timeline.TypeToken) {
				return nil
			}
			return fail("agent %q outside its block (open block %q)", a, open)
		}
		switch t {
		case timeline.TypeMCPCredentials:
			switch {
			case credentials:
				return fail("a second mcp_credentials")
			case i == 0, ended == timeline.TypeDone:
			case routes == 0 && prev == timeline.TypeStatus:
			default:
				return fail("mcp_credentials must come first, after a status before the route, or after done")
			}
			credentials = true
		case timeline.TypeStatus:
			if open != "" {
				return fail("status inside the %s block", open)
			}
			if routes == 1 && !(blocks == 1 && lastFailed && (lastEnded == "platform" || lastEnded == "researcher")) {
				return fail("a second status without a failed platform or researcher block")
			}
			if routes >= 2 {
				return fail("more than two routing steps")
			}
		case timeline.TypeRoute:
			if prev != timeline.TypeStatus && !(prev == timeline.TypeMCPCredentials && i > 1) {
				return fail("route must follow status (or mcp_credentials after one)")
			}
			if e.Str("agent") != e.Str("next") {
				return fail("agent %q != next %q", e.Str("agent"), e.Str("next"))
			}
			routes++
			lastRoute = e.Str("next")
			if routes == 2 && lastRoute != "planner" {
				return fail("the fallback route must be planner, got %q", lastRoute)
			}
			finishRoute = lastRoute == "FINISH"
		case timeline.TypeSubagentStart:
			if prev != timeline.TypeRoute || e.Str("agent") != lastRoute {
				return fail("subagent_start must follow the route to it (route %q)", lastRoute)
			}
			open, blockTools, inRun = e.Str("agent"), 0, false
			blocks++
		case timeline.TypeSubagentEnd:
			if open == "" || e.Str("agent") != open {
				return fail("subagent_end for %q with open block %q", e.Str("agent"), open)
			}
			if n, _ := e["tool_calls"].(float64); int(n) != blockTools {
				return fail("tool_calls %v but the block had %d tool_start events", e["tool_calls"], blockTools)
			}
			if _, ok := e["failed"].(bool); !ok {
				return fail("failed is not a boolean")
			}
			lastFailed, _ = e["failed"].(bool)
			lastEnded, open, inRun = open, "", false
		case timeline.TypeAnswerStart:
			if err := agentOK(); err != nil {
				return err
			}
			inRun = true
		case timeline.TypeToken:
			if err := agentOK(); err != nil {
				return err
			}
			if !inRun {
				return fail("token without answer_start in this text run")
			}
		case timeline.TypeToolStart:
			if err := agentOK(); err != nil {
				return err
			}
			if open == "" {
				return fail("tool_start outside a subagent block")
			}
			id := e.Str("run_id")
			if id == "" || runIDs[id] {
				return fail("run_id %q is empty or reused", id)
			}
			runIDs[id] = true
			openTools[id], inRun = e, false
			blockTools++
		case timeline.TypeToolEnd:
			o, ok := openTools[e.Str("run_id")]
			if !ok || o.Str("tool") != e.Str("tool") || o.Str("agent") != e.Str("agent") {
				return fail("tool_end (run %q) does not close an open tool_start", e.Str("run_id"))
			}
			delete(openTools, e.Str("run_id"))
		case timeline.TypeDone, timeline.TypeError:
			if open != "" {
				return fail("%s inside the open %s block", t, open)
			}
			if ended != "" {
				return fail("%s after %s", t, ended)
			}
			if t == timeline.TypeDone && routes == 0 {
				return fail("done without a route")
			}
			ended = t
		case timeline.TypeConversationTitle:
			if ended != timeline.TypeDone || titled {
				return fail("conversation_title must come once, after done")
			}
			titled = true
		}
		prev = t
	}
	return errors.New("the timeline does not end with complete")
}

// checkUsage checks the fields of a usage event.
func checkUsage(e Decoded) error {
	if e.Str("model") == "" || e.Str("agent") == "" {
		return errors.New("usage without model or agent")
	}
	var n [3]float64
	for i, k := range []string{"prompt_tokens", "completion_tokens", "total_tokens"} {
		v, ok := e[k].(float64)
		if !ok || v < 0 || v != float64(int64(v)) {
			return fmt.Errorf("usage %s is %v, not a whole number", k, e[k])
		}
		n[i] = v
	}
	if n[2] == 0 || n[2] < n[0]+n[1] {
		return fmt.Errorf("usage total_tokens %v with prompt %v and completion %v", n[2], n[0], n[1])
	}
	return nil
}
