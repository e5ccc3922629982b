package handler_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/turn"
	"appwrite-agent/shared/devkit/scriptedllm"

	"appwrite-agent/shared/devkit/webhookreceiver"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// TestNoGoroutineOutlivesTheTurn calls Main directly (no runtime server) and checks that every goroutine
// the turn started (HTTP connections to the model included) is gone shortly after it returns.
func TestNoGoroutineOutlivesTheTurn(t *testing.T) {
	for _, user := range []bool{false, true} {
		model, _ := env(t)
		model.SetHandler(func(r scriptedllm.Request, i int) scriptedllm.Reply {
			switch i {
			case 0:
				return route("platform", "x", "")
			case 1:
				return scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{{Name: "current_time"}}}
			default:
				return scriptedllm.Reply{Content: "ok"}
			}
		})
		body := `{"message":"m","history":[{"role":"user","content":"h"}]}`
		if user {
			t.Setenv("SAFEHTTP_ALLOW", "127.0.0.0/8")
			t.Setenv("SAFEHTTP_ALLOW_HTTP", "true")
			body = `{"message":"m","history":[{"role":"user","content":"h"}],"llm":{"api_key":"u","base_url":"` + model.BaseURL() + `"}}`
		}
		before := runtime.NumGoroutine()
		rt := openruntimes.NewContext(openruntimes.Logger{})
		rt.Req = openruntimes.ContextRequest{Method: "POST", Path: "/", Headers: map[string]string{"x-session-api-key": testKey}}
		rt.Req.SetBodyBinary([]byte(body))
		res := handler.Main(rt)
		if res.StatusCode != 200 || !strings.Contains(string(res.Body), `"type":"done"`) {
			t.Fatalf("%d %s", res.StatusCode, res.Body)
		}
		// Polls for the outcome (connections wind down asynchronously); the deadline is a safety net only.
		deadline := time.Now().Add(30 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Fatalf("user=%v: %d goroutines after the turn, %d before\n%s", user, n, before, buf[:runtime.Stack(buf, true)])
		}
	}
}

// TestNoGoroutineOutlivesATurnWithSinks: the same with both progress sinks (the publisher's workers, the
// webhook's SSRF-safe client, the Realtime transport) and a webhook that fails, so the drop path runs too.
func TestNoGoroutineOutlivesATurnWithSinks(t *testing.T) {
	for _, failing := range []bool{false, true} {
		st := newStack(t)
		slowModel(st, 0, 1)
		recv := webhookreceiver.New(whSecret)
		t.Cleanup(recv.Close)
		if failing {
			recv.SetBehaviour(func(int, webhookreceiver.Delivery) (int, time.Duration) { return 500, 0 })
		}
		t.Setenv("SAFEHTTP_ALLOW", "127.0.0.0/8")
		t.Setenv("SAFEHTTP_CA_FILE", writeCA(t, recv))
		key, err := st.aw.DynamicKey(progProject, []string{"tables.read", "rows.write"}, time.Minute)
		must(t, err)
		body := `{"message":"m","progress":{"realtime":true,"webhook":{"url":"` + recv.URL() + `","secret":"` + whSecret + `"}}}`
		call := func() openruntimes.Response {
			ctx := openruntimes.NewContext(openruntimes.Logger{})
			ctx.Req = openruntimes.ContextRequest{Method: "POST", Path: "/", Headers: map[string]string{"x-session-api-key": testKey,
				"x-appwrite-user-id": "alice", "x-appwrite-key": key, "accept": "application/json"}}
			ctx.Req.SetBodyBinary([]byte(body))
			return handler.Main(ctx)
		}
		call() // warms the process state and the servers' listeners
		before := runtime.NumGoroutine()
		res := call()
		if res.StatusCode != 200 || !strings.Contains(string(res.Body), `"type":"done"`) ||
			failing != strings.Contains(string(res.Body), `"sink":"webhook"`) {
			t.Fatalf("%d %s", res.StatusCode, res.Body)
		}
		// Polls for the outcome (connections wind down asynchronously); the deadline is a safety net only.
		deadline := time.Now().Add(30 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Fatalf("failing=%v: %d goroutines after the turn, %d before\n%s", failing, n, before, buf[:runtime.Stack(buf, true)])
		}
	}
}
