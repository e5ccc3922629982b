package handler_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/turn"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/scriptedllm"
)

// BenchmarkCriticalPath measures a turn's wall time against latency-injected servers: every model call is
// answered after D, an MCP server answers tools/list after M. It is what the turn waits for, not the
// engine's own cost (BenchmarkTurnRoundTrip in ./engine). Scenarios:
//
//   - platform+mcp: a later turn (no title) with one MCP connection; the router picks platform, which
//     calls one MCP tool and answers: the router, two subagent calls, and the MCP load (discovery and
//     tools/list) beside the router. Run one after another it would be M + 3D.
//   - first+finish: a first turn the router answers directly (FINISH), with its conversation title: the
//     router and the title call (from the user's message) side by side. One after another: 2D.
//
// Model calls are told apart by content (router schema, title prompt, tool results), not by order, so the
// script holds whatever order the calls arrive in.
func BenchmarkCriticalPath(b *testing.B) {
	for _, dm := range [][2]time.Duration{{300 * time.Millisecond, 300 * time.Millisecond}, {100 * time.Millisecond, 300 * time.Millisecond}, {300 * time.Millisecond, 100 * time.Millisecond}} {
		d, m := dm[0], dm[1]
		b.Run(fmt.Sprintf("platform+mcp/D=%v/M=%v", d, m), func(b *testing.B) {
			aw := newSDKServer(b)
			aw.listDelay = m
			srv := criticalEnv(b, d, "platform", searchCall)
			body, _ := json.Marshal(map[string]any{"message": "list my databases", "history": history,
				"mcp_connections": []any{conn("appwrite", aw.url(), "good-token", nil)}})
			runTurns(b, srv, body, `"tool":"appwrite_search_tools"`)
		})
	}
	for _, d := range []time.Duration{300 * time.Millisecond, 100 * time.Millisecond} {
		b.Run(fmt.Sprintf("first+finish/D=%v", d), func(b *testing.B) {
			srv := criticalEnv(b, d, "FINISH", nil)
			body, _ := json.Marshal(map[string]any{"message": "how do I start a project"})
			runTurns(b, srv, body, `"type":"conversation_title"`)
		})
	}
}

// searchCall is the platform agent's one MCP call.
var searchCall = []scriptedllm.ToolCall{{Name: "appwrite_search_tools", Arguments: `{"query":"databases"}`}}

// BenchmarkToolRound measures one round of three tool calls that each take D (http_get of a local server
// that answers after D), with the model answering at once: the turn is that round plus the engine's and
// the model calls' own few milliseconds. The calls of one answer run at once, so the turn should take
// about 1 x D (the goal: at most 1.2 x D); with TOOL_CONCURRENCY=1 (the calls one after another, as before)
// it takes 3 x D. The x_D metric is the turn's wall time over D.
func BenchmarkToolRound(b *testing.B) {
	for _, d := range []time.Duration{600 * time.Millisecond, 200 * time.Millisecond} {
		for _, limit := range []string{"8", "1"} {
			b.Run(fmt.Sprintf("D=%v/TOOL_CONCURRENCY=%s", d, limit), func(b *testing.B) {
				slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					t := time.NewTimer(d)
					defer t.Stop()
					select {
					case <-t.C:
						fmt.Fprint(w, "slow answer")
					case <-r.Context().Done():
					}
				}))
				b.Cleanup(slow.Close)
				var calls []scriptedllm.ToolCall
				for i := range 3 {
					calls = append(calls, scriptedllm.ToolCall{Name: "http_get", Arguments: fmt.Sprintf(`{"url":"%s/%d"}`, slow.URL, i)})
				}
				// Before criticalEnv: the function reads its configuration once, when it is built.
				b.Setenv("TOOL_CONCURRENCY", limit)
				srv := criticalEnv(b, 0, "platform", calls)
				body, _ := json.Marshal(map[string]any{"message": "fetch three pages", "history": history})
				runTurns(b, srv, body, `"output":"status=200`)
				b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(d), "x_D")
			})
		}
	}
}

// criticalEnv starts the function against a scripted model that answers every call after d: the router
// with next, a subagent first with calls and then with an answer, a title with a title.
func criticalEnv(b *testing.B, d time.Duration, next string, calls []scriptedllm.ToolCall) *httptest.Server {
	model := scriptedllm.New()
	b.Cleanup(model.Close)
	model.SetHandler(func(r scriptedllm.Request, _ int) scriptedllm.Reply {
		switch {
		case isTitle(r):
			return scriptedllm.Reply{Content: "Start An Appwrite Project", Delay: d}
		case bytes.Contains(r.Body, []byte(`"name":"Route"`)):
			reply := route(next, "bench", "")
			if next == "FINISH" {
				reply = route(next, "bench", "Run appwrite init in your project folder.")
			}
			reply.Delay = d
			return reply
		case !bytes.Contains(r.Body, []byte(`"role":"tool"`)):
			return scriptedllm.Reply{ToolCalls: calls, Delay: d}
		default:
			return scriptedllm.Reply{Content: "You have one database.", Delay: d}
		}
	})
	b.Setenv("AGENT_API_KEY", testKey)
	b.Setenv("AGENT_ALLOW_UNAUTHENTICATED", "")
	b.Setenv("LLM_API_KEY", "k")
	b.Setenv("LLM_MODEL", "gpt-4o-mini")
	b.Setenv("LLM_BASE_URL", model.BaseURL())
	b.Setenv("SAFEHTTP_ALLOW", "127.0.0.0/8,::1/128")
	b.Setenv("SAFEHTTP_ALLOW_HTTP", "true")
	b.Setenv("TURN_BUDGET", "20s")
	srv := httptest.NewServer(localruntime.New(handler.New(handler.LoadConfig()), localruntime.Options{LogDir: b.TempDir()}))
	b.Cleanup(srv.Close)
	return srv
}

// runTurns posts body b.N times and checks each timeline ends with complete and contains want.
func runTurns(b *testing.B, srv *httptest.Server, body []byte, want string) {
	for b.Loop() {
		req, _ := http.NewRequest("POST", srv.URL+"/", bytes.NewReader(body))
		req.Header.Set("X-Session-API-Key", testKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !bytes.Contains(data, []byte(want)) || !strings.HasSuffix(strings.TrimSpace(string(data)), `{"type":"complete"}`) {
			b.Fatalf("%d %s", res.StatusCode, data)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/turn")
}
