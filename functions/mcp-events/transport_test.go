package handler_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
)

// TestJSONRPCEdges: batches and ids of the wrong type are invalid requests (-32600), not parse errors;
// bodies that are not JSON are parse errors; every answer on the MCP path is JSON, whatever the HTTP method.
func TestJSONRPCEdges(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	for _, c := range []struct {
		name, body string
		code       int
	}{
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"events/list"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, -32600},
		{"empty batch", `[]`, -32600},
		{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"events/list"}`, -32600},
		{"id array", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600},
		{"id boolean", `{"jsonrpc":"2.0","id":true,"method":"events/list"}`, -32600},
		{"method number", `{"jsonrpc":"2.0","id":1,"method":7}`, -32600},
		{"scalar", `"events/list"`, -32600},
		{"not json", `{"jsonrpc":"2.0",`, -32700},
		{"empty", ``, -32700},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, hdr, m, raw := eventstest.Post(t, "POST", url, tok, c.body, nil)
			if status != http.StatusBadRequest || eventstest.RPCCode(m) != c.code || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
				t.Fatalf("%d %s %s", status, hdr.Get("Content-Type"), raw)
			}
		})
	}
	for _, method := range []string{"GET", "PUT", "DELETE", "PATCH"} {
		status, hdr, m, raw := eventstest.Post(t, method, url, tok, "", nil)
		if status != http.StatusMethodNotAllowed || hdr.Get("Allow") != "POST" || m == nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("%s: %d %v %s", method, status, hdr, raw)
		}
	}
	// The SDK's own plain-text refusals become JSON too, answering the request's id: a body that is not
	// application/json is 415 Unsupported Media Type.
	status, hdr, m, raw := eventstest.Post(t, "POST", url, tok, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Content-Type": "text/plain"})
	if status != http.StatusUnsupportedMediaType || eventstest.RPCCode(m) != -32600 || m["id"] != float64(1) || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Fatalf("text/plain request: %d %s", status, raw)
	}
	// A valid id of each kind is accepted.
	for _, id := range []string{`"abc"`, `7`, `-1.5`} {
		if status, _, m, raw := eventstest.Post(t, "POST", url, tok, `{"jsonrpc":"2.0","id":`+id+`,"method":"events/list"}`, nil); status != 200 || m["result"] == nil {
			t.Fatalf("id %s: %d %s", id, status, raw)
		}
	}
}

// modernBody is an events/* request of protocol 2026-07-28: the version in _meta.
func modernBody(method, version string, params string) string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `"}`
	if params != "" {
		meta += "," + params
	}
	return `{"jsonrpc":"2.0","id":5,"method":"` + method + `","params":{` + meta + `}}`
}

// TestEventsTransport2026: events/* follows the 2026-07-28 transport like every other method: header and
// _meta must agree (400), an unknown method is HTTP 404 with -32601, malformed params are 400; legacy
// requests keep JSON-RPC errors in a 200.
func TestEventsTransport2026(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	const v = "2026-07-28"
	hdr := func(version, method string) map[string]string {
		return map[string]string{"MCP-Protocol-Version": version, "Mcp-Method": method}
	}
	for _, c := range []struct {
		name   string
		body   string
		hdr    map[string]string
		status int
		code   int
	}{
		{"modern list", modernBody("events/list", v, ""), hdr(v, "events/list"), 200, 0},
		{"header disagrees with body", modernBody("events/list", v, ""), hdr("2025-11-25", "events/list"), 400, -32020},
		{"body disagrees with header", modernBody("events/list", "2025-11-25", ""), hdr(v, "events/list"), 400, -32020},
		{"header without _meta", `{"jsonrpc":"2.0","id":5,"method":"events/list","params":{}}`, hdr(v, "events/list"), 400, -32602},
		{"_meta without header", modernBody("events/list", v, ""), nil, 400, -32020},
		{"Mcp-Method disagrees", modernBody("events/list", v, ""), hdr(v, "events/subscribe"), 400, -32020},
		{"unknown method", modernBody("events/poll", v, ""), hdr(v, "events/poll"), 404, -32601},
		{"invalid params", modernBody("events/subscribe", v, `"name":"tablesdb.row.created"`), hdr(v, "events/subscribe"), 400, -32602},
		{"unknown event", modernBody("events/subscribe", v, `"name":"nope","delivery":{"url":"https://x.example/h"}`), hdr(v, "events/subscribe"), 200, -32011},
		{"legacy unknown method", `{"jsonrpc":"2.0","id":5,"method":"events/poll","params":{}}`, nil, 200, -32601},
		// A method neither events/* nor the SDK's answers the same way (the SDK's plain-text 400 rewrapped).
		{"legacy unknown SDK method", `{"jsonrpc":"2.0","id":5,"method":"foo/bar","params":{}}`, nil, 200, -32601},
		{"modern unknown SDK method", modernBody("foo/bar", v, ""), hdr(v, "foo/bar"), 404, -32601},
		{"legacy bad header", `{"jsonrpc":"2.0","id":5,"method":"events/list","params":{}}`, map[string]string{"MCP-Protocol-Version": "1999-01-01"}, 400, -32600},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, _, m, raw := eventstest.Post(t, "POST", url, tok, c.body, c.hdr)
			if status != c.status || eventstest.RPCCode(m) != c.code {
				t.Fatalf("%d %s, want %d with %d", status, raw, c.status, c.code)
			}
		})
	}
}

// TestLoggingSetLevelRefused: the server declares no logging capability (it is stateless, answers JSON and
// never sends notifications/message), so logging/setLevel is refused with JSON-RPC Method not found: a legacy
// request in a 200 (as every legacy JSON-RPC error), answering its id, byte for byte; a 2026-07-28 request
// (where the method is gone) with the SDK's 404. The official SDK client sees -32601 too.
func TestLoggingSetLevelRefused(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)

	var initialize struct {
		Result struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		} `json:"result"`
	}
	eventstest.Must(t, json.Unmarshal(eventstest.RawPost(t, url, tok, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, ""), &initialize))
	if _, has := initialize.Result.Capabilities["logging"]; has || initialize.Result.Capabilities["tools"] == nil {
		t.Fatalf("initialize capabilities: %s", initialize.Result.Capabilities)
	}
	cs := eventstest.Connect(t, url, tok, "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	//lint:ignore SA1019 the deprecated logging API is what a 2025-11-25 client calls, and what this test refuses
	err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != -32601 || werr.Message != handler.SetLevelRefusal {
		t.Fatalf("SDK SetLoggingLevel: %v", err)
	}

	for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
		hdr := map[string]string{}
		if version != "" {
			hdr["MCP-Protocol-Version"] = version
		}
		status, _, _, raw := eventstest.Post(t, "POST", url, tok, `{"jsonrpc":"2.0","id":"lv-1","method":"logging/setLevel","params":{"level":"debug"}}`, hdr)
		want := `{"jsonrpc":"2.0","id":"lv-1","error":{"code":-32601,"message":"Method not found: logging/setLevel (this server does not declare the logging capability and sends no log notifications)"}}`
		if status != http.StatusOK || string(raw) != want {
			t.Fatalf("legacy %q setLevel: %d %s\nwant %s", version, status, raw, want)
		}
	}
	const v = "2026-07-28"
	status, _, m, raw := eventstest.Post(t, "POST", url, tok, `{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"debug","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		map[string]string{"MCP-Protocol-Version": v, "Mcp-Method": "logging/setLevel"})
	if status != http.StatusNotFound || eventstest.RPCCode(m) != -32601 {
		t.Fatalf("2026-07-28 setLevel: %d %s", status, raw)
	}
	// Other methods are unaffected: ping still answers {}.
	if err := cs.Ping(ctx, &sdk.PingParams{}); err != nil {
		t.Fatalf("ping after setLevel: %v", err)
	}
}
