package handler_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"appwrite-agent/functions/turn/builtins"
	"appwrite-agent/functions/turn/timeline/timelinetest"
	"appwrite-agent/shared/devkit/consoleparse"
	"appwrite-agent/shared/devkit/scriptedllm"
	"appwrite-agent/shared/protocol/clarify"
	"appwrite-agent/shared/protocol/console"
	"appwrite-agent/shared/protocol/memory"
)

// toolTurn runs a turn in which the routed agent makes one tool call and then answers; it returns the
// timeline, the tool_end event and the model's requests.
func toolTurn(t *testing.T, agent, tool, args string) ([]timelinetest.Decoded, timelinetest.Decoded, []scriptedllm.Request) {
	t.Helper()
	model, srv := env(t,
		route(agent, "needs a tool", ""),
		scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{{ID: "call_1", Name: tool, Arguments: args}}},
		scriptedllm.Reply{Content: "Done."},
	)
	for _, k := range []string{"BRAVE_SEARCH_API_KEY", "BRAVE_SEARCH_URL", "SEARXNG_URL", "WEB_SEARCH_ENABLED", "DUCKDUCKGO_URL", "DUCKDUCKGO_ENABLED", "SAFEHTTP_CA_FILE"} {
		t.Setenv(k, "")
	}
	evs := turn(t, srv, map[string]any{"message": "please", "history": history})
	if got := types(evs); got != "status,route,subagent_start,tool_start,tool_end,answer_start,token,subagent_end,done,complete" {
		t.Fatalf("types %s", got)
	}
	end := find(evs, "tool_end")[0]
	if end.Str("tool") != tool || end.Str("agent") != agent || end["failed"] != nil {
		t.Fatalf("tool_end %v", end)
	}
	reqs := model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls", len(reqs))
	}
	// The model gets exactly the tool_end output back.
	msgs := messages(t, reqs[2])
	last := msgs[len(msgs)-1]
	if last["role"] != "tool" || last["tool_call_id"] != "call_1" || last["content"] != end.Str("output") {
		t.Fatalf("tool result message %v", last)
	}
	return evs, end, reqs
}

func TestConsoleToolEndParsesOnTheConsoleSide(t *testing.T) {
	actions := `[{"type":"resource_list","resourceType":"Database","title":"Databases","items":[` +
		`{"resourceId":"main","title":"Main","href":"/project/p1/databases/main","metadata":[{"label":"Tables","value":3}]},` +
		`{"resourceId":"logs","title":"Logs"}]}]`
	args, _ := json.Marshal(map[string]string{"actions": actions})
	_, end, _ := toolTurn(t, "platform", "console", string(args))
	out := end.Str("output")
	if !strings.HasPrefix(out, `{"protocol":"appwrite.console/v1","actions":[{"type":"resource_list","resourceType":"database"`) {
		t.Fatalf("output %s", out)
	}
	env := consoleparse.ParseConsoleEnvelope(out)
	if env == nil || len(env.Skipped) != 0 || len(env.Actions) != 1 {
		t.Fatalf("parsed %+v", env)
	}
	list, ok := env.Actions[0].(console.ResourceList)
	if !ok || list.ResourceType != "database" || list.Title != "Databases" || len(list.Items) != 2 || list.Total == nil || *list.Total != 2 {
		t.Fatalf("resource_list %+v", env.Actions[0])
	}
	if it := list.Items[0]; it.ResourceID != "main" || it.Href != "/project/p1/databases/main" || len(it.Metadata) != 1 || it.Metadata[0].Value != "3" {
		t.Fatalf("item %+v", it)
	}

	// A refused call is the exact error text, which the Console parser ignores.
	_, end, _ = toolTurn(t, "planner", "console", `{"actions":"[{\"type\":\"resource_list\",\"resourceType\":\"db\",\"items\":{}}]"}`)
	if out := end.Str("output"); out != console.ErrorPrefix+"resource_list.items must be an array" || consoleparse.ParseConsoleEnvelope(out) != nil {
		t.Fatalf("refused: %q", out)
	}
}

func TestClarifyToolEndParsesOnTheConsoleSide(t *testing.T) {
	prompts := `[{"id":"bucket","kind":"choice","question":"Which bucket?","options":[{"id":"a","label":"avatars"},{"id":"u","label":"uploads"}]},` +
		`{"id":"confirm_delete","kind":"confirm","question":"Delete it?","danger":true}]`
	args, _ := json.Marshal(map[string]string{"prompts": prompts, "title": "Before I delete"})
	_, end, _ := toolTurn(t, "researcher", "clarify", string(args))
	env := consoleparse.ParseClarifyEnvelope(end.Str("output"))
	if env == nil || len(env.Skipped) != 0 || len(env.Prompts) != 2 || env.Title != "Before I delete" {
		t.Fatalf("parsed %+v from %s", env, end.Str("output"))
	}
	choice, ok := env.Prompts[0].(clarify.Choice)
	if !ok || choice.ID != "bucket" || len(choice.Options) != 2 || choice.Options[1].Label != "uploads" {
		t.Fatalf("choice %+v", env.Prompts[0])
	}
	if c, ok := env.Prompts[1].(clarify.Confirm); !ok || !c.Danger || c.ConfirmLabel != "Confirm" {
		t.Fatalf("confirm %+v", env.Prompts[1])
	}
}

func TestMemoryToolEndParsesOnTheConsoleSide(t *testing.T) {
	args, _ := json.Marshal(map[string]string{"actions": `[{"type":"set","key":"style.concise","content":"Prefer short answers","category":"preference","priority":10},{"type":"forget","key":"old.pref"}]`})
	_, end, _ := toolTurn(t, "planner", "memory", string(args))
	env := consoleparse.ParseMemoryEnvelope(end.Str("output"))
	if env == nil || len(env.Skipped) != 0 || len(env.Actions) != 2 {
		t.Fatalf("parsed %+v from %s", env, end.Str("output"))
	}
	set, ok := env.Actions[0].(memory.Set)
	if !ok || set.Key != "style.concise" || set.Content != "Prefer short answers" || set.Priority != 10 || set.Scope != "user" {
		t.Fatalf("set %+v", env.Actions[0])
	}
	if f, ok := env.Actions[1].(memory.Forget); !ok || f.Key != "old.pref" {
		t.Fatalf("forget %+v", env.Actions[1])
	}
}

func TestHttpGetToABlockedAddressIsAToolResult(t *testing.T) {
	var hits atomic.Int32
	target := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer target.Close()
	// env() leaves SAFEHTTP_ALLOW empty: the production policy, loopback refused.
	evs, end, _ := toolTurn(t, "researcher", "http_get", `{"url":"`+target.URL+`/secret"}`)
	if out := end.Str("output"); out != "Error: host '127.0.0.1' is not allowed (local/private)" {
		t.Fatalf("output %q", out)
	}
	if len(find(evs, "error")) != 0 || find(evs, "done")[0].Str("answer") != "Done." || find(evs, "subagent_end")[0]["failed"] != false {
		t.Fatalf("the turn itself succeeds: %s", types(evs))
	}
	if hits.Load() != 0 {
		t.Fatal("the blocked address was reached")
	}
	_, end, _ = toolTurn(t, "researcher", "http_get", `{"url":"https://169.254.169.254/latest/meta-data/"}`)
	if out := end.Str("output"); out != "Error: host '169.254.169.254' is not allowed (local/private)" {
		t.Fatalf("metadata address: %q", out)
	}
}

func TestHttpGetThroughTheAllowlist(t *testing.T) {
	results, err := os.ReadFile("tools/testdata/duckduckgo/results.html")
	if err != nil {
		t.Fatal(err)
	}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/html/" { // a DuckDuckGo results page (saved), the keyless default provider
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(results)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "hello from a local server")
	}))
	defer target.Close()
	_, srv := env(t,
		route("researcher", "fetch", ""),
		scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{
			{Name: "http_get", Arguments: `{"url":"` + target.URL + `/x"}`},
			{Name: "browser_fetch", Arguments: `{"url":"` + target.URL + `/y"}`},
			{Name: "web_search", Arguments: `{"query":"appwrite"}`},
		}},
		scriptedllm.Reply{Content: "Fetched."},
	)
	t.Setenv("SAFEHTTP_ALLOW", "127.0.0.0/8")
	t.Setenv("SAFEHTTP_ALLOW_HTTP", "true")
	t.Setenv("BRAVE_SEARCH_API_KEY", "")
	t.Setenv("SEARXNG_URL", "")
	t.Setenv("WEB_SEARCH_ENABLED", "")
	t.Setenv("DUCKDUCKGO_ENABLED", "")
	t.Setenv("DUCKDUCKGO_URL", target.URL+"/html/")
	evs := turn(t, srv, map[string]any{"message": "fetch it", "history": history})
	_, ends := inCallOrder(t, evs)
	if len(ends) != 3 {
		t.Fatalf("types %s", types(evs))
	}
	want := fmt.Sprintf("status=200 final_url=%s/x host=127.0.0.1 content_type=text/plain; charset=utf-8\n\nhello from a local server", target.URL)
	if ends[0].Str("output") != want {
		t.Fatalf("http_get %q", ends[0].Str("output"))
	}
	if out := ends[1].Str("output"); !strings.HasPrefix(out, fmt.Sprintf("status=200 final_url=%s/y host=127.0.0.1\n\n", target.URL)) || !strings.HasSuffix(out, "hello from a local server") {
		t.Fatalf("browser_fetch %q", out)
	}
	if out := ends[2].Str("output"); !strings.HasPrefix(out, "query='appwrite' status=200 count=5 provider=duckduckgo\n\n"+
		"1. Realtime - Docs - Appwrite\n   https://appwrite.io/docs/apis/realtime\n") || ends[2]["failed"] != nil {
		t.Fatalf("web_search %v", ends[2])
	}
}

func TestAgentsGetTheirToolsInTheReferenceOrder(t *testing.T) {
	for agent, want := range map[string][]string{
		"platform": builtins.PlatformToolOrder, "researcher": builtins.GeneralToolOrder, "planner": builtins.GeneralToolOrder,
	} {
		model, srv := env(t, route(agent, "x", ""), scriptedllm.Reply{Content: "ok"})
		turn(t, srv, map[string]any{"message": "q", "history": history})
		reqs := model.Requests()
		var got []string
		raw, _ := reqs[1].JSON()["tools"].([]any)
		for _, x := range raw {
			fn, _ := x.(map[string]any)["function"].(map[string]any)
			name, _ := fn["name"].(string)
			got = append(got, name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s tools\n got %v\nwant %v", agent, got, want)
		}
	}
}

// TestCAFileIsReadOnFirstOutboundUse: SAFEHTTP_CA_FILE is not read while the process state is built, so
// a missing file does not stop /health or a turn that makes no outbound request; the first web tool call
// finds the problem and answers it, without fetching anything.
func TestCAFileIsReadOnFirstOutboundUse(t *testing.T) {
	fetched := atomic.Int32{}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fetched.Add(1) }))
	defer target.Close()
	model, srv := env(t,
		route("researcher", "needs a tool", ""),
		scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{{ID: "call_1", Name: "http_get", Arguments: `{"url":"` + target.URL + `"}`}}},
		scriptedllm.Reply{Content: "Done."},
	)
	missing := t.TempDir() + "/missing-ca.pem"
	t.Setenv("SAFEHTTP_CA_FILE", missing)
	t.Setenv("SAFEHTTP_ALLOW", "127.0.0.0/8")
	t.Setenv("SAFEHTTP_ALLOW_HTTP", "1")
	if res, err := http.Get(srv.URL + "/health"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("/health with an unreadable CA file: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	evs := turn(t, srv, map[string]any{"message": "please", "history": history})
	end := find(evs, "tool_end")
	if len(end) != 1 {
		t.Fatalf("types %s", types(evs))
	}
	want := "Error: outbound HTTP is misconfigured: SAFEHTTP_CA_FILE: open " + missing
	if out := end[0].Str("output"); !strings.HasPrefix(out, want) {
		t.Fatalf("http_get output %q, want the prefix %q", out, want)
	}
	if fetched.Load() != 0 || len(model.Requests()) != 3 {
		t.Fatalf("fetched %d times, %d model calls", fetched.Load(), len(model.Requests()))
	}
}
