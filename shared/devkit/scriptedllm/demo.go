package scriptedllm

import (
	"encoding/json"
	"strings"
	"time"
)

// Demo answers the model calls of agent turns so that a newcomer sees a complete conversation without any
// key (scripts/dev -model scripted): the router sends every message to the platform agent; the platform
// agent calls the console tool (a toast, a resource_list table, a chart), the clarify tool when the message
// asks to be asked ("ask me", "clarify"), or the memory tool when it says "remember", then answers in
// Markdown streamed word by word; titles are the first words of the message. It is a demonstration, not a
// test peer: it never fails.
func Demo() Handler {
	return func(req Request, _ int) Reply {
		body := req.JSON()
		user := strings.ToLower(lastUserText(body))
		switch {
		case body["response_format"] != nil || hasTextFormat(body):
			return Reply{JSON: `{"next":"platform","reason":"The scripted demo model sends everything to the platform agent.","final_answer":""}`}
		case body["tools"] == nil:
			return Reply{Content: demoTitle(lastUserText(body))}
		case sawToolResult(body):
			return Reply{Content: demoAnswer, ChunkDelay: 40 * time.Millisecond}
		case strings.Contains(user, "remember"):
			return toolCall("memory", map[string]string{"actions": `[{"type":"set","key":"demo.preference","content":` + quote(lastUserText(body)) + `,"category":"preference","priority":10}]`})
		case strings.Contains(user, "ask me") || strings.Contains(user, "clarify"):
			return toolCall("clarify", map[string]string{"title": "A few questions", "prompts": `[` +
				`{"id":"region","kind":"choice","question":"Which region should the database live in?","options":[{"id":"fra","label":"Frankfurt"},{"id":"nyc","label":"New York"}]},` +
				`{"id":"confirm","kind":"confirm","question":"Create it now?","confirmLabel":"Create","cancelLabel":"Not yet"},` +
				`{"id":"name","kind":"text","question":"What should it be called?","placeholder":"main"}]`})
		default:
			return toolCall("console", map[string]string{"actions": `[` +
				`{"type":"toast","level":"success","message":"Scripted demo: this toast came from the console tool"},` +
				`{"type":"resource_list","resourceType":"database","title":"Databases","items":[` +
				`{"resourceId":"main","title":"Main","fields":{"tables":3,"region":"fra"}},` +
				`{"resourceId":"analytics","title":"Analytics","fields":{"tables":12,"region":"nyc"}}],"total":2,"emptyMessage":"No databases yet"},` +
				`{"type":"chart","title":"Requests (last 24 hours)","chartType":"area","kind":"events","axisFormat":"count","interval":"1h","unitLabel":"requests",` +
				`"startAt":"2026-12-01T00:00:00.000Z","endAt":"2026-12-01T04:00:00.000Z","metrics":[{"metric":"network.requests","points":[` +
				`{"time":"2026-12-01T00:00:00.000Z","value":12},{"time":"2026-12-01T01:00:00.000Z","value":30},` +
				`{"time":"2026-12-01T02:00:00.000Z","value":18},{"time":"2026-12-01T03:00:00.000Z","value":44}]}]}]`})
		}
	}
}

const demoAnswer = "Here is what the **scripted demo model** did:\n\n" +
	"| step | tool |\n|---|---|\n| showed a toast, a table and a chart | `console` |\n\n" +
	"Try *ask me something* for a clarify form, or *remember that I like short answers* for a memory.\n\n" +
	"```sh\nLLM_API_KEY=sk-... scripts/dev   # the real model\n```\n"

func toolCall(name string, args map[string]string) Reply {
	b, _ := json.Marshal(args)
	return Reply{ToolCalls: []ToolCall{{Name: name, Arguments: string(b)}}}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// hasTextFormat reports a Responses API structured-output request.
func hasTextFormat(body map[string]any) bool {
	t, _ := body["text"].(map[string]any)
	return t != nil && t["format"] != nil
}

// lastUserText is the text of the last user message (chat completions "messages" or Responses "input").
func lastUserText(body map[string]any) string {
	for _, key := range []string{"messages", "input"} {
		items, _ := body[key].([]any)
		for i := len(items) - 1; i >= 0; i-- {
			m, _ := items[i].(map[string]any)
			if m["role"] != "user" {
				continue
			}
			switch c := m["content"].(type) {
			case string:
				return c
			case []any:
				for _, part := range c {
					if p, _ := part.(map[string]any); p != nil {
						if s, ok := p["text"].(string); ok {
							return s
						}
					}
				}
			}
		}
	}
	return ""
}

// sawToolResult reports whether the conversation already holds a tool result (the agent's second call).
func sawToolResult(body map[string]any) bool {
	for _, key := range []string{"messages", "input"} {
		items, _ := body[key].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			if m["role"] == "tool" || m["type"] == "function_call_output" {
				return true
			}
		}
	}
	return false
}

// demoTitle is the message's first five words (after the title prompt's "User message:" label).
func demoTitle(msg string) string {
	if i := strings.Index(msg, ":"); i >= 0 && strings.HasPrefix(strings.ToLower(msg), "user message") {
		msg = msg[i+1:]
	}
	words := strings.Fields(msg)
	if len(words) > 5 {
		words = words[:5]
	}
	if len(words) == 0 {
		return "Scripted demo"
	}
	return strings.Join(words, " ")
}
