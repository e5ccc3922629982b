package handler_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/turn"
	"appwrite-agent/shared/devkit/scriptedllm"
	"appwrite-agent/shared/devkit/webhookreceiver"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
	"go.uber.org/goleak"
)

// sdkServerSession is where a session of the official MCP SDK's server (a test peer in this process, not
// the turn) waits for its next message. The SDK closes it on its own schedule after a DELETE or at the end
// of a sessionless request; under load one was seen still waiting 30 s later, which said nothing about
// the turn.
const sdkServerSession = "github.com/modelcontextprotocol/go-sdk/mcp.(*streamableServerConn).Read"

// noGoroutineOutlives runs turn and fails the test when a goroutine started meanwhile (the turn's, its
// HTTP connections', and the test servers' connection goroutines, which end only when the turn closes its
// connections) is still running after it returned. Connections wind down asynchronously, so the check is
// repeated until it passes; the 30 s deadline is a safety net only.
func noGoroutineOutlives(t *testing.T, what string, turn func()) {
	t.Helper()
	opts := []goleak.Option{goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction(sdkServerSession)}
	turn()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := goleak.Find(opts...)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

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
		noGoroutineOutlives(t, fmt.Sprintf("user=%v", user), func() {
			rt := openruntimes.NewContext(openruntimes.Logger{})
			rt.Req = openruntimes.ContextRequest{Method: "POST", Path: "/", Headers: map[string]string{"x-session-api-key": testKey}}
			rt.Req.SetBodyBinary([]byte(body))
			res := envMain(rt)
			if res.StatusCode != 200 || !strings.Contains(string(res.Body), `"type":"done"`) {
				t.Fatalf("%d %s", res.StatusCode, res.Body)
			}
		})
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
		h := handler.New(handler.LoadConfig())
		call := func() openruntimes.Response {
			ctx := openruntimes.NewContext(openruntimes.Logger{})
			ctx.Req = openruntimes.ContextRequest{Method: "POST", Path: "/", Headers: map[string]string{"x-session-api-key": testKey,
				"x-appwrite-user-id": "alice", "x-appwrite-key": key, "accept": "application/json"}}
			ctx.Req.SetBodyBinary([]byte(body))
			return h(ctx)
		}
		call() // warms the process state and the servers' listeners
		noGoroutineOutlives(t, fmt.Sprintf("failing=%v", failing), func() {
			res := call()
			if res.StatusCode != 200 || !strings.Contains(string(res.Body), `"type":"done"`) ||
				failing != strings.Contains(string(res.Body), `"sink":"webhook"`) {
				t.Fatalf("%d %s", res.StatusCode, res.Body)
			}
		})
	}
}
