package scriptedllm

import (
	"encoding/json"
	"strings"
	"testing"

	"appwrite-agent/shared/protocol/clarify"
	"appwrite-agent/shared/protocol/console"
	"appwrite-agent/shared/protocol/memory"
)

func demoRequest(t *testing.T, body string) Request {
	t.Helper()
	return Request{Body: []byte(body)}
}

// TestDemoCallsValidTools: every tool call of the demo model passes the engine's own protocol validators,
// so the page has real console, clarify and memory envelopes to render.
func TestDemoCallsValidTools(t *testing.T) {
	h := Demo()
	user := func(text string) string {
		return `{"model":"m","tools":[{}],"messages":[{"role":"system","content":"x"},{"role":"user","content":` + quote(text) + `}]}`
	}
	for text, tool := range map[string]string{"show me my databases": "console", "please ask me first": "clarify", "remember that I like tea": "memory"} {
		r := h(demoRequest(t, user(text)), 0)
		if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != tool {
			t.Fatalf("%q: %+v", text, r)
		}
		var args map[string]string
		if err := json.Unmarshal([]byte(r.ToolCalls[0].Arguments), &args); err != nil {
			t.Fatal(err)
		}
		var out string
		switch tool {
		case "console":
			out = console.Result(args["actions"])
		case "clarify":
			out = clarify.Result(args["prompts"], args["title"])
		case "memory":
			out = memory.Result(args["actions"])
		}
		if strings.HasPrefix(out, "Error:") {
			t.Fatalf("%s: %s", tool, out)
		}
	}
	if r := h(demoRequest(t, `{"tools":[{}],"messages":[{"role":"user","content":"x"},{"role":"tool","content":"ok"}]}`), 0); !strings.Contains(r.Content, "scripted demo model") {
		t.Fatalf("answer %+v", r)
	}
	if r := h(demoRequest(t, `{"response_format":{},"messages":[{"role":"user","content":"x"}]}`), 0); !strings.Contains(r.JSON, `"next":"platform"`) {
		t.Fatalf("route %+v", r)
	}
	if r := h(demoRequest(t, `{"messages":[{"role":"user","content":"User message: how do I deploy a site today"}]}`), 0); r.Content != "how do I deploy a" {
		t.Fatalf("title %+v", r)
	}
}
