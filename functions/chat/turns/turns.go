// Package turns is what chat knows of the turn function's contract (docs/turn.md) beyond the request's types
// (shared/turnrequest): the history it sends, and how a finished turn's timeline is read back (the answer,
// the error, refreshed MCP credentials, memory actions, the conversation title).
package turns

import (
	"encoding/json"
	"sort"
	"strings"

	"appwrite-agent/shared/protocol/memory"
	"appwrite-agent/shared/turnrequest"
)

// History keeps the last turnrequest.HistoryWindow of msgs that have text (role user or assistant).
func History(msgs []turnrequest.HistoryMessage) []turnrequest.HistoryMessage {
	var out []turnrequest.HistoryMessage
	for _, m := range msgs {
		if (m.Role == "user" || m.Role == "assistant") && strings.TrimSpace(m.Content) != "" {
			out = append(out, m)
		}
	}
	if len(out) > turnrequest.HistoryWindow {
		out = out[len(out)-turnrequest.HistoryWindow:]
	}
	if out == nil {
		out = []turnrequest.HistoryMessage{}
	}
	return out
}

// Event is one progress row: its sequence number and the event's JSON.
type Event struct {
	Seq   int64           `json:"seq"`
	Time  string          `json:"time"`
	Event json.RawMessage `json:"event"`
}

// Ordered sorts events by seq and drops repeated seqs (a row may be written twice after a retry).
func Ordered(evs []Event) []Event {
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Seq < evs[j].Seq })
	out := evs[:0]
	for i, e := range evs {
		if i > 0 && e.Seq == evs[i-1].Seq {
			continue
		}
		out = append(out, e)
	}
	return out
}

// MemoryAction is a validated set or forget from the agent's memory tool.
type MemoryAction struct {
	Type     string
	Key      string
	Content  string
	Category string
	Priority int64
}

// CodeCancelled is the error code of a turn that was stopped (decision 1 of turn's contract, docs/turn.md).
const CodeCancelled = "cancelled"

// StopType is the type of the progress row that stops a turn (seq 0, payload {"type":"stop"}).
const StopType = "stop"

// Result is what a timeline says.
type Result struct {
	// Complete: the timeline has its final complete event.
	Complete bool
	// Answer is done's answer, or the partial answer of an error.
	Answer string
	// Failed, ErrorCode and ErrorDetail describe an error event.
	Failed      bool
	ErrorCode   string
	ErrorDetail string
	// Credentials are the MCP connections whose tokens the turn refreshed (the last mcp_credentials wins).
	Credentials []turnrequest.MCPConnection
	// Memories are the memory tool's successful actions, in order.
	Memories []MemoryAction
	// Title is the first turn's conversation_title.
	Title string
	// Usage adds up the turn's usage events (nil when it sent none).
	Usage *Usage
}

// UsageCall is one model call's tokens, from a usage event (docs/turn.md: one per model call).
type UsageCall struct {
	Model            string `json:"model"`
	Agent            string `json:"agent"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
	TotalTokens      int64  `json:"total_tokens"`
}

// Usage is a turn's tokens: in all, and per model call in order.
type Usage struct {
	PromptTokens     int64       `json:"prompt_tokens"`
	CompletionTokens int64       `json:"completion_tokens"`
	TotalTokens      int64       `json:"total_tokens"`
	Calls            []UsageCall `json:"calls"`
}

// Summarize reads a timeline (events in order).
func Summarize(evs []Event) Result {
	var r Result
	for _, e := range evs {
		var ev struct {
			Type        string                      `json:"type"`
			Answer      *string                     `json:"answer"`
			Content     string                      `json:"content"`
			Code        string                      `json:"code"`
			Detail      string                      `json:"detail"`
			Title       string                      `json:"title"`
			Tool        string                      `json:"tool"`
			Output      string                      `json:"output"`
			Failed      bool                        `json:"failed"`
			Credentials []turnrequest.MCPConnection `json:"credentials"`
			UsageCall
		}
		if json.Unmarshal(e.Event, &ev) != nil {
			continue
		}
		switch ev.Type {
		case "done":
			if ev.Answer != nil {
				r.Answer = *ev.Answer
			} else {
				r.Answer = ev.Content
			}
		case "error":
			r.Failed, r.ErrorCode, r.ErrorDetail = true, ev.Code, ev.Detail
			if ev.Answer != nil {
				r.Answer = *ev.Answer
			}
		case "mcp_credentials":
			r.Credentials = ev.Credentials
		case "conversation_title":
			r.Title = ev.Title
		case "tool_end":
			if ev.Tool == "memory" && !ev.Failed {
				r.Memories = append(r.Memories, memoryActions(ev.Output)...)
			}
		case "usage":
			u := ev.UsageCall
			if u.PromptTokens < 0 || u.CompletionTokens < 0 || u.TotalTokens < 0 {
				continue
			}
			if u.TotalTokens == 0 {
				u.TotalTokens = u.PromptTokens + u.CompletionTokens
			}
			if r.Usage == nil {
				r.Usage = &Usage{Calls: []UsageCall{}}
			}
			r.Usage.Calls = append(r.Usage.Calls, u)
			r.Usage.PromptTokens += u.PromptTokens
			r.Usage.CompletionTokens += u.CompletionTokens
			r.Usage.TotalTokens += u.TotalTokens
		case "complete":
			r.Complete = true
		}
	}
	return r
}

// memoryActions reads a memory tool result: the appwrite.memory/v1 envelope (docs/memory-protocol.md), or
// nothing when it is an error text or anything else.
func memoryActions(output string) []MemoryAction {
	var env struct {
		Protocol string `json:"protocol"`
		Actions  []struct {
			Type     string `json:"type"`
			Key      string `json:"key"`
			Scope    string `json:"scope"`
			Content  string `json:"content"`
			Category string `json:"category"`
			Priority int64  `json:"priority"`
		} `json:"actions"`
	}
	if json.Unmarshal([]byte(output), &env) != nil || env.Protocol != "appwrite.memory/v1" {
		return nil
	}
	var out []MemoryAction
	for _, a := range env.Actions {
		if !memory.ValidKey(a.Key) || (a.Scope != "" && a.Scope != memory.ScopeUser) {
			continue
		}
		switch a.Type {
		case "set":
			if strings.TrimSpace(a.Content) == "" {
				continue
			}
			out = append(out, MemoryAction{Type: "set", Key: a.Key, Content: a.Content, Category: a.Category, Priority: a.Priority})
		case "forget":
			out = append(out, MemoryAction{Type: "forget", Key: a.Key})
		}
	}
	return out
}
