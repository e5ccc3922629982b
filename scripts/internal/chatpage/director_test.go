package chatpage

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"appwrite-agent/shared/convtitle"
	"appwrite-agent/shared/devkit/scriptedllm"
)

// The models turn and title are configured with, so a request tells which function sent it.
const (
	turnModel  = "gpt-4o-mini"
	titleModel = "gpt-4o-mini-title"
)

// The scripted Console actions of the first turn (docs/console-protocol.md): a list with its columns, a
// chart of events by the hour, a toast and a theme change. (An unknown action type cannot be scripted here:
// the engine refuses the whole call; the page's skipping of one is a vitest test.)
const consoleActions = `[
 {"type":"resource_list","resourceType":"database","title":"Databases","total":2,
  "columns":[{"key":"title","label":"Name"},{"key":"resourceId","label":"ID"},{"key":"type","label":"Type"}],
  "items":[{"resourceId":"main","title":"Main","fields":{"type":"tablesdb"}},{"resourceId":"analytics","title":"Analytics","fields":{"type":"legacy"}}]},
 {"type":"resource_list","resourceType":"bucket","items":[],"emptyMessage":"This project has no buckets yet."},
 {"type":"chart","title":"Requests (last 3 hours)","kind":"events","interval":"1h","unitLabel":"requests","axisFormat":"count",
  "metrics":[{"metric":"network.requests","points":[{"time":"2026-08-04T08:00:00+00:00","value":49},{"time":"2026-08-04T09:00:00+00:00","value":12},{"time":"2026-08-04T10:00:00+00:00","value":30}]}]},
 {"type":"toast","level":"success","message":"Listed 2 databases"},
 {"type":"set_theme","theme":"dark"}
]`

const clarifyPrompts = `[
 {"id":"bucket","kind":"choice","question":"Which bucket should I delete?","options":[{"id":"avatars","label":"avatars","description":"64 files"},{"id":"uploads","label":"uploads","description":"12 files"}]},
 {"id":"note","kind":"text","question":"Anything I should keep?","placeholder":"optional","required":false}
]`

// hostileAnswer is a model answer full of HTML that would run script if the page inserted it as it is.
const hostileAnswer = "Here is **bold** text.\n\n<img src=x onerror=\"window.__pwned='img'\">\n\n<script>window.__pwned='script'</script>\n\n" +
	"<a href=\"javascript:window.__pwned='link'\" id=\"evil\">click me</a> and [also me](javascript:window.__pwned='md')\n\n" +
	"<svg onload=\"window.__pwned='svg'\"></svg><iframe src=\"javascript:parent.__pwned='iframe'\"></iframe>"

// director answers the scripted model's requests by what they are (a title, a routing decision, a subagent
// step) and by the user's last message, so each browser step gets its own script whatever the order of the
// requests. One subagent step can be held until the test lets it go, so the page is seen mid-turn without
// racing a timer; the title function's answer is held the same way, so the title can only reach the page
// through Realtime.
type director struct {
	holdTurn, holdName, holdMemory gate
	// mcpProject is the project mcp-events' get_user is asked about (set before the MCP turn).
	mcpProject atomic.Value
}

// gate holds the replies waiting on it until it is opened (once; opening again does nothing).
type gate struct {
	ch   chan struct{}
	once sync.Once
}

func newGate() gate { return gate{ch: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

func newDirector() *director {
	return &director{holdTurn: newGate(), holdName: newGate(), holdMemory: newGate()}
}

func (d *director) releaseTurn()   { d.holdTurn.open() }
func (d *director) releaseTitle()  { d.holdName.open() }
func (d *director) releaseMemory() { d.holdMemory.open() }

// releaseAll opens every gate, so a failing test leaves no reply blocked.
func (d *director) releaseAll() {
	d.releaseTurn()
	d.releaseTitle()
	d.releaseMemory()
}

type chatRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools          []struct{ Function struct{ Name string } } `json:"tools"`
	ResponseFormat json.RawMessage                            `json:"response_format"`
}

func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// lastUser is the last user message of a request and how many tool results follow it (the subagent's step).
func lastUser(req chatRequest) (msg string, step int) {
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			msg, step = text(m.Content), 0
		case "tool":
			step++
		}
	}
	return msg, step
}

func route(next, answer string) scriptedllm.Reply {
	b, _ := json.Marshal(map[string]string{"next": next, "reason": "scripted", "final_answer": answer})
	return scriptedllm.Reply{JSON: string(b)}
}

func call(name string, args map[string]any) scriptedllm.ToolCall {
	b, _ := json.Marshal(args)
	return scriptedllm.ToolCall{Name: name, Arguments: string(b)}
}

func (d *director) reply(r scriptedllm.Request, _ int) scriptedllm.Reply {
	var req chatRequest
	_ = json.Unmarshal(r.Body, &req)
	if len(req.Messages) > 0 && text(req.Messages[0].Content) == convtitle.SystemPrompt {
		if r.Model != titleModel {
			// turn's own first-turn title fails (only logged), so the title can come only from the title function
			return scriptedllm.Reply{Error: &scriptedllm.APIError{Status: http.StatusServiceUnavailable, Message: "no titles from turn in this test"}}
		}
		<-d.holdName.ch
		return scriptedllm.Reply{Content: "Databases and usage"}
	}
	msg, step := lastUser(req)
	if len(req.ResponseFormat) > 0 { // the router
		switch {
		case strings.Contains(msg, `"protocol":"appwrite.clarify/v1"`):
			return route("FINISH", "Deleting the uploads bucket, as you chose.")
		case strings.Contains(msg, "databases"), strings.Contains(msg, "bucket"), strings.Contains(msg, "user ada"), strings.Contains(msg, "Remember"):
			return route("platform", "")
		case strings.Contains(msg, "HTML"):
			return route("FINISH", hostileAnswer)
		default:
			return route("FINISH", "Hello! Ask me about your Appwrite project.")
		}
	}
	switch {
	case strings.Contains(msg, "databases") && step == 0:
		return scriptedllm.Reply{Content: "Let me check your project.", Chunks: 3, ToolCalls: []scriptedllm.ToolCall{call("console", map[string]any{"actions": consoleActions})}}
	case strings.Contains(msg, "databases"):
		<-d.holdTurn.ch
		return scriptedllm.Reply{Content: "Here are your **databases** and the requests of the last hours.\n\n| database | type |\n|---|---|\n| Main | tablesdb |\n| Analytics | legacy |"}
	case strings.Contains(msg, "bucket") && step == 0:
		return scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{call("clarify", map[string]any{"prompts": clarifyPrompts, "title": "Delete a bucket"})}}
	case strings.Contains(msg, "bucket"):
		return scriptedllm.Reply{Content: "Need one detail before I continue."}
	case strings.Contains(msg, "Remember") && step == 0:
		return scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{call("memory", map[string]any{"actions": `[{"type":"set","key":"style.concise","content":"Prefer concise answers","category":"preference","priority":10}]`})}}
	case strings.Contains(msg, "Remember"):
		<-d.holdMemory.ch
		return scriptedllm.Reply{Content: "Noted: concise answers from now on."}
	case strings.Contains(msg, "user ada") && step == 0:
		// One call to each connected server's tool, in one step.
		var calls []scriptedllm.ToolCall
		for _, t := range req.Tools {
			switch t.Function.Name {
			case "get_user":
				calls = append(calls, call("get_user", map[string]any{"project_id": d.mcpProject.Load(), "user_id": "ada"}))
			case "list_widgets":
				calls = append(calls, call("list_widgets", map[string]any{}))
			}
		}
		if len(calls) != 2 {
			return scriptedllm.Reply{Content: "I lack get_user or list_widgets: an MCP connection did not reach me."}
		}
		return scriptedllm.Reply{ToolCalls: calls}
	case strings.Contains(msg, "user ada"):
		return scriptedllm.Reply{Content: "Ada signs in as ada@example.com; you have two widgets: a sprocket and a flange."}
	}
	return scriptedllm.Reply{Content: "Done."}
}
