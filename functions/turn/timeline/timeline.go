// Package timeline holds the events of one turn (the reference engine's SSE catalogue), how they are
// written (SSE frames or a JSON array), and CheckOrder, the order rules every timeline obeys.
package timeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// Event types, in the reference's names.
const (
	TypeMCPCredentials    = "mcp_credentials"
	TypeStatus            = "status"
	TypeRoute             = "route"
	TypeSubagentStart     = "subagent_start"
	TypeSubagentEnd       = "subagent_end"
	TypeAnswerStart       = "answer_start"
	TypeToken             = "token"
	TypeToolStart         = "tool_start"
	TypeToolEnd           = "tool_end"
	TypeDone              = "done"
	TypeConversationTitle = "conversation_title"
	TypeError             = "error"
	TypeComplete          = "complete"
	// TypeUsage is the tokens of one model call (the reference's f9ca6fc): after the router's call, each
	// subagent model call and the title call.
	TypeUsage = "usage"
)

// Error codes carried in the "code" field of error events (our addition; "detail" is the reference's).
const (
	CodeBudget       = "budget_exceeded"
	CodeModel        = "model_error"
	CodeUnknownRoute = "unknown_route"
	CodeRouter       = "router_error"
	CodeInternal     = "internal_error"
	// CodeRateLimited: the provider asked to wait (Retry-After) longer than the turn had left.
	CodeRateLimited = "rate_limited"
	// CodeContentFilter: the provider's content filter stopped the answer.
	CodeContentFilter = "content_filter"
	// CodeCancelled: the caller stopped the turn (docs/turn.md "Stopping a turn").
	CodeCancelled = "cancelled"
)

type field struct {
	key string
	val any
}

// Event is one timeline event: its type and its fields, written in the order given with "type" first.
type Event struct {
	Type   string
	fields []field
}

// New returns an event of type typ with fields given as key, value pairs.
func New(typ string, kv ...any) Event {
	e := Event{Type: typ}
	for i := 0; i+1 < len(kv); i += 2 {
		e.fields = append(e.fields, field{kv[i].(string), kv[i+1]})
	}
	return e
}

// Get returns the value of field key and whether it is present.
func (e Event) Get(key string) (any, bool) {
	for _, f := range e.fields {
		if f.key == key {
			return f.val, true
		}
	}
	return nil, false
}

// MarshalJSON writes {"type":…, fields in order}.
func (e Event) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	t, _ := json.Marshal(e.Type)
	b.Write(t)
	for _, f := range e.fields {
		b.WriteByte(',')
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(f.val)
		if err != nil {
			return nil, fmt.Errorf("timeline: field %s of %s: %w", f.key, e.Type, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Status is {"type":"status","message"}.
func Status(message string) Event { return New(TypeStatus, "message", message) }

// SinkStatus is {"type":"status","message","sink"}: a progress sink was dropped. It may come anywhere before
// complete (CheckOrder skips it).
func SinkStatus(message, sink string) Event { return New(TypeStatus, "message", message, "sink", sink) }

// Route is {"type":"route","agent","next","reason"} with agent == next.
func Route(next, reason string) Event {
	return New(TypeRoute, "agent", next, "next", next, "reason", reason)
}

// SubagentStart is {"type":"subagent_start","agent"}.
func SubagentStart(agent string) Event { return New(TypeSubagentStart, "agent", agent) }

// SubagentEnd is {"type":"subagent_end","agent","summary","tool_calls","failed"}.
func SubagentEnd(agent, summary string, toolCalls int, failed bool) Event {
	return New(TypeSubagentEnd, "agent", agent, "summary", summary, "tool_calls", toolCalls, "failed", failed)
}

// AnswerStart is {"type":"answer_start","agent"}.
func AnswerStart(agent string) Event { return New(TypeAnswerStart, "agent", agent) }

// Token is {"type":"token","agent","content"}.
func Token(agent, content string) Event { return New(TypeToken, "agent", agent, "content", content) }

// ToolStart is {"type":"tool_start","agent","tool","run_id","input"}.
func ToolStart(agent, tool, runID, input string) Event {
	return New(TypeToolStart, "agent", agent, "tool", tool, "run_id", runID, "input", input)
}

// ToolEnd is {"type":"tool_end","agent","tool","run_id","output"}, plus "failed":true for a failed call.
func ToolEnd(agent, tool, runID, output string, failed bool) Event {
	e := New(TypeToolEnd, "agent", agent, "tool", tool, "run_id", runID, "output", output)
	if failed {
		e.fields = append(e.fields, field{"failed", true})
	}
	return e
}

// Credential is one entry of mcp_credentials: the connection's stored tokens echoed back unchanged.
type Credential struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	URL         string          `json:"url"`
	Description string          `json:"description"`
	Tokens      json.RawMessage `json:"tokens"`
	ClientInfo  json.RawMessage `json:"client_info"`
}

// MCPCredentials is {"type":"mcp_credentials","credentials":[…]}.
func MCPCredentials(creds []Credential) Event { return New(TypeMCPCredentials, "credentials", creds) }

// Done is {"type":"done","content","answer"}, both the final text.
func Done(answer string) Event { return New(TypeDone, "content", answer, "answer", answer) }

// ConversationTitle is {"type":"conversation_title","title"}.
func ConversationTitle(title string) Event { return New(TypeConversationTitle, "title", title) }

// Error is {"type":"error","detail","code"}; a non-empty partial answer is added as "answer".
func Error(code, detail, partial string) Event {
	e := New(TypeError, "detail", detail, "code", code)
	if partial != "" {
		e.fields = append(e.fields, field{"answer", partial})
	}
	return e
}

// Usage is {"type":"usage","model","prompt_tokens","completion_tokens","total_tokens","agent"}: the tokens of
// one model call of agent ("supervisor" for the router, "title" for the title call), in the reference's
// field order.
func Usage(model, agent string, prompt, completion, total int) Event {
	return New(TypeUsage, "model", model, "prompt_tokens", prompt, "completion_tokens", completion,
		"total_tokens", total, "agent", agent)
}

// Complete is {"type":"complete"}.
func Complete() Event { return New(TypeComplete) }

// Recorder collects the events of one turn; it is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

// Emit appends e.
func (r *Recorder) Emit(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the events so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// SSE writes events as Server-Sent Events frames: "data: <json>\n\n" each, no event: or id: lines.
func SSE(events []Event) ([]byte, error) {
	var b bytes.Buffer
	for _, e := range events {
		j, err := e.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b.WriteString("data: ")
		b.Write(j)
		b.WriteString("\n\n")
	}
	return b.Bytes(), nil
}

// JSONArray writes events as one JSON array.
func JSONArray(events []Event) ([]byte, error) {
	if events == nil {
		events = []Event{}
	}
	return json.Marshal(events)
}
