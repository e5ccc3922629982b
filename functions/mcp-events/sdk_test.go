package handler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/shared/devkit/snapshot"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds the access token to every request of the official SDK's transport.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func connect(t *testing.T, url, token, version string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "sdk-test", Version: "1.0.0"}, nil)
	tr := &sdk.StreamableClientTransport{
		Endpoint:             url + "/mcp",
		HTTPClient:           &http.Client{Transport: bearer{token, http.DefaultTransport}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	cs, err := client.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s: %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestOfficialSDKDiscoverAndInitialize: the official MCP Go SDK reaches the server with server/discover
// (2026-07-28) and with legacy initialize, and sees the events extension both times; then the events flow
// runs as raw JSON-RPC (as ChatGPT sends it) against the same endpoint.
func TestOfficialSDKDiscoverAndInitialize(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)

	modern := connect(t, url, tok, "2026-07-28")
	res := modern.InitializeResult()
	if res == nil || res.Capabilities == nil || res.Capabilities.Extensions[handler.ExtensionID] == nil {
		t.Fatalf("discover: %+v", res)
	}
	legacy := connect(t, url, tok, "2025-11-25")
	res = legacy.InitializeResult()
	if res == nil || res.ProtocolVersion != "2025-11-25" || res.Capabilities.Extensions[handler.ExtensionID] == nil {
		t.Fatalf("initialize: %+v", res)
	}

	secret := newSecret()
	st.recv.accept(secret)
	r := rpc(t, url, tok, "events/subscribe", subParams("users.user.created", map[string]any{"project_id": projectID}, st.recv.url("/sdk"), secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe after SDK handshake: %s", r.Raw)
	}
}

// TestSnapshotDiscoverAndCatalog pins the server/discover result (capabilities in both shapes) and the
// events/list catalog (UPDATE_SNAPSHOTS=1 rewrites testdata/, shared/devkit/snapshot).
func TestSnapshotDiscoverAndCatalog(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)

	discover := rawPost(t, url, tok, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientInfo":{"name":"snapshot","version":"1"},`+
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`, "2026-07-28")
	golden(t, "discover.golden.json", discover)

	list := rpc(t, url, tok, "events/list", map[string]any{})
	golden(t, "events_list.golden.json", list.Raw)

	initialize := rawPost(t, url, tok, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"snapshot","version":"1"},"capabilities":{}}}`, "")
	golden(t, "initialize.golden.json", initialize)
}

func rawPost(t *testing.T, url, tok, body, version string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/mcp", bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
		var head struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal([]byte(body), &head)
		req.Header.Set("Mcp-Method", head.Method)
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, buf.Bytes())
	}
	return buf.Bytes()
}

// golden compares the JSON-RPC answer in got (re-indented, keys sorted, request id dropped) with
// testdata/name.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var v map[string]any
	must(t, json.Unmarshal(got, &v))
	delete(v, "id")
	pretty, err := json.MarshalIndent(v, "", "  ")
	must(t, err)
	pretty = append(pretty, '\n')
	snapshot.Check(t, filepath.Join("testdata", name), pretty)
}

// TestLoggingSetLevelRefused: the server declares no logging capability (it is stateless, answers JSON and
// never sends notifications/message), so logging/setLevel is refused with JSON-RPC Method not found: a legacy
// request in a 200 (as every legacy JSON-RPC error), answering its id, byte for byte; a 2026-07-28 request
// (where the method is gone) with the SDK's 404. The official SDK client sees -32601 too.
func TestLoggingSetLevelRefused(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)

	var initialize struct {
		Result struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		} `json:"result"`
	}
	must(t, json.Unmarshal(rawPost(t, url, tok, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, ""), &initialize))
	if _, has := initialize.Result.Capabilities["logging"]; has || initialize.Result.Capabilities["tools"] == nil {
		t.Fatalf("initialize capabilities: %s", initialize.Result.Capabilities)
	}
	cs := connect(t, url, tok, "2025-11-25")
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
		status, _, _, raw := post(t, "POST", url, tok, `{"jsonrpc":"2.0","id":"lv-1","method":"logging/setLevel","params":{"level":"debug"}}`, hdr)
		want := `{"jsonrpc":"2.0","id":"lv-1","error":{"code":-32601,"message":"Method not found: logging/setLevel (this server does not declare the logging capability and sends no log notifications)"}}`
		if status != http.StatusOK || string(raw) != want {
			t.Fatalf("legacy %q setLevel: %d %s\nwant %s", version, status, raw, want)
		}
	}
	const v = "2026-07-28"
	status, _, m, raw := post(t, "POST", url, tok, `{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"debug","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		map[string]string{"MCP-Protocol-Version": v, "Mcp-Method": "logging/setLevel"})
	if status != http.StatusNotFound || rpcCode(m) != -32601 {
		t.Fatalf("2026-07-28 setLevel: %d %s", status, raw)
	}
	// Other methods are unaffected: ping still answers {}.
	if err := cs.Ping(ctx, &sdk.PingParams{}); err != nil {
		t.Fatalf("ping after setLevel: %v", err)
	}
}
