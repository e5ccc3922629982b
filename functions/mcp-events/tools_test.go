package handler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/shared/devkit/localruntime"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// apiCall sends one request to the stand-in with an API key and decodes the JSON answer.
func (st *stack) apiCall(key, method, path, contentType string, body io.Reader) map[string]any {
	st.t.Helper()
	status, raw := st.call(projectID, key, method, path, contentType, body)
	if status >= 300 {
		st.t.Fatalf("%s %s: %d %s", method, path, status, raw)
	}
	var m map[string]any
	must(st.t, json.Unmarshal(raw, &m))
	return m
}

// toolWorld seeds what the tools read: a row, a file, a user and a failed execution.
type toolWorld struct {
	rowID, fileID, userID, executionID string
}

func seedToolWorld(t *testing.T, st *stack) toolWorld {
	key, err := st.la.CreateKey(projectID, []string{"rows.write", "files.write", "users.write", "executions.write"})
	must(t, err)
	var w toolWorld
	row := st.apiCall(key, "POST", "/tablesdb/"+dbID+"/tables/"+tableID+"/rows", "application/json",
		strings.NewReader(`{"rowId":"ticket-1","data":{"title":"printer on fire"}}`))
	w.rowID, _ = row["$id"].(string)

	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("fileId", "report-1")
	fw, _ := mw.CreateFormFile("file", "report.txt")
	_, _ = fw.Write([]byte("quarterly numbers"))
	_ = mw.Close()
	file := st.apiCall(key, "POST", "/storage/buckets/"+bucketID+"/files", mw.FormDataContentType(), &buf)
	w.fileID, _ = file["$id"].(string)

	user := st.apiCall(key, "POST", "/users", "application/json",
		strings.NewReader(`{"userId":"customer-1","email":"c1@example.com","password":"correct-horse-battery","name":"Customer One"}`))
	w.userID, _ = user["$id"].(string)

	ex := st.apiCall(key, "POST", "/functions/"+fnID+"/executions", "application/json", strings.NewReader(`{"body":"x"}`))
	w.executionID, _ = ex["$id"].(string)
	if w.rowID == "" || w.fileID == "" || w.userID == "" || w.executionID == "" {
		t.Fatalf("seed: %+v", w)
	}
	return w
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", toolText(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	must(t, json.Unmarshal(b, &m))
	return m
}

func toolText(res *sdk.CallToolResult) string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

// TestReadOnlyTools: the official MCP Go SDK lists the tools (beside the events capability) and calls each
// with the caller's own token: the row, the file's metadata, the user without password material, the failed
// execution with its logs and errors, and the caller's own subscriptions (never someone else's, never a
// secret).
func TestReadOnlyTools(t *testing.T) {
	st := newStack(t)
	must(t, st.la.AddMember(projectID, "user-2"))
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	w := seedToolWorld(t, st)

	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		cs := connect(t, url, tok, version)
		if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || caps.Extensions[handler.ExtensionID] == nil {
			t.Fatalf("%s: capabilities %+v", version, caps)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		list, err := cs.ListTools(ctx, nil)
		cancel()
		must(t, err)
		var names []string
		for _, tl := range list.Tools {
			names = append(names, tl.Name)
			if tl.Annotations == nil || !tl.Annotations.ReadOnlyHint {
				t.Fatalf("%s is not marked read-only", tl.Name)
			}
		}
		if got := strings.Join(names, ","); got != "get_execution,get_file,get_row,get_user,list_subscriptions" {
			t.Fatalf("%s: tools %s", version, got)
		}
	}
	cs := connect(t, url, tok, "2026-07-28")

	row := structured(t, callTool(t, cs, "get_row", map[string]any{"project_id": projectID, "database_id": dbID, "table_id": tableID, "row_id": w.rowID}))
	if row["$id"] != w.rowID || row["title"] != "printer on fire" {
		t.Fatalf("row: %v", row)
	}
	file := structured(t, callTool(t, cs, "get_file", map[string]any{"project_id": projectID, "bucket_id": bucketID, "file_id": w.fileID}))
	if file["$id"] != w.fileID || file["name"] != "report.txt" || file["sizeOriginal"] != float64(len("quarterly numbers")) {
		t.Fatalf("file: %v", file)
	}
	user := structured(t, callTool(t, cs, "get_user", map[string]any{"project_id": projectID, "user_id": w.userID}))
	if user["$id"] != w.userID || user["email"] != "c1@example.com" {
		t.Fatalf("user: %v", user)
	}
	for _, secret := range []string{"password", "hash", "hashOptions"} {
		if _, ok := user[secret]; ok {
			t.Fatalf("get_user passed %s on: %v", secret, user)
		}
	}
	ex := structured(t, callTool(t, cs, "get_execution", map[string]any{"project_id": projectID, "function_id": fnID, "execution_id": w.executionID}))
	if ex["$id"] != w.executionID || ex["status"] != "failed" || ex["logs"] == nil || ex["errors"] == nil {
		t.Fatalf("execution: %v", ex)
	}
	if _, ok := ex["requestHeaders"]; ok {
		t.Fatalf("get_execution passed request headers on: %v", ex)
	}

	// Subscriptions: two of the caller's, one of another user's to the same URL.
	secret := newSecret()
	st.recv.accept(secret)
	cb := st.recv.url("/tools")
	for _, p := range []map[string]any{
		subParams("tablesdb.row.created", rowArgs(), cb, secret, nil),
		subParams("functions.execution.failed", map[string]any{"project_id": projectID, "function_id": fnID}, cb, secret, nil),
	} {
		if r := rpc(t, url, tok, "events/subscribe", p); r.Error != nil {
			t.Fatalf("subscribe: %s", r.Raw)
		}
	}
	if r := rpc(t, url, st.token("user-2", allScopes), "events/subscribe", subParams("users.user.created", map[string]any{"project_id": projectID}, cb, secret, nil)); r.Error != nil {
		t.Fatalf("subscribe user-2: %s", r.Raw)
	}
	res := callTool(t, cs, "list_subscriptions", map[string]any{"project_id": projectID})
	if strings.Contains(toolText(res), "whsec_") || strings.Contains(toolText(res), secret[6:]) {
		t.Fatalf("list_subscriptions shows a secret: %s", toolText(res))
	}
	subs := structured(t, res)["subscriptions"].([]any)
	if len(subs) != 2 {
		t.Fatalf("subscriptions: %v", subs)
	}
	first := subs[0].(map[string]any)
	// The callback URL is sealed in authPassword: listed where Appwrite returns it, absent on Cloud.
	wantCB := any(cb)
	if cloud() {
		wantCB = nil
	}
	if first["event"] != "functions.execution.failed" || first["callback_url"] != wantCB || first["enabled"] != true ||
		first["arguments"].(map[string]any)["function_id"] != fnID || first["verified_at"] == nil {
		t.Fatalf("subscription: %v", first)
	}
	if until := mustTime(t, first["expires_at"]); until.Before(time.Now().Add(50 * time.Minute)) {
		t.Fatalf("expires_at %v", until)
	}
}

// TestToolErrors: failures are MCP tool errors (isError, a clear text) rather than protocol errors: not
// found, forbidden, Appwrite unavailable, bad arguments; a token lacking the tool's scope gets the 403
// step-up.
func TestToolErrors(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	cs := connect(t, url, tok, "2026-07-28")
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"row not found", "get_row", map[string]any{"project_id": projectID, "database_id": dbID, "table_id": tableID, "row_id": "nope"}, "Not found: row nope in table support_tickets of database main (project proj1)"},
		{"user not found", "get_user", map[string]any{"project_id": projectID, "user_id": "ghost"}, "Not found: user ghost"},
		{"not a member", "get_execution", map[string]any{"project_id": otherProj, "function_id": fnID, "execution_id": "e1"}, "Forbidden: Appwrite refused your access to execution e1 of function worker (project proj2)"},
		{"bad id", "get_file", map[string]any{"project_id": projectID, "bucket_id": "../etc", "file_id": "f"}, "bucket_id"},
		{"unknown argument", "get_user", map[string]any{"project_id": projectID, "user_id": "u", "extra": "x"}, "extra"},
		{"missing argument", "get_row", map[string]any{"project_id": projectID}, "database_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := callTool(t, cs, c.tool, c.args)
			if !res.IsError || !strings.Contains(toolText(res), c.want) {
				t.Fatalf("got isError=%v %q, want %q", res.IsError, toolText(res), c.want)
			}
		})
	}

	// Appwrite unavailable: the project API answers 503 (the issuer still works).
	st.appwriteDown()
	dcs := connect(t, st.instance(st.server(handler.Options{})), tok, "2025-11-25")
	res := callTool(t, dcs, "get_user", map[string]any{"project_id": projectID, "user_id": "u"})
	if !res.IsError || !strings.HasPrefix(toolText(res), "Appwrite unavailable: reading user u (project proj1) failed with HTTP 503") {
		t.Fatalf("unavailable: %q", toolText(res))
	}
	res = callTool(t, dcs, "list_subscriptions", map[string]any{"project_id": projectID})
	if !res.IsError || !strings.HasPrefix(toolText(res), "Appwrite unavailable:") {
		t.Fatalf("unavailable list: %q", toolText(res))
	}

	// Step-up: a token without users.read.
	narrow := st.token(userID, []string{"project:rows.read", "project:webhooks.read"})
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_user","arguments":{"project_id":"` + projectID + `","user_id":"u"}}}`
	status, hdr, m, raw := post(t, "POST", url, narrow, body, nil)
	if status != http.StatusForbidden || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="project:users.read", resource_metadata="`) || rpcCode(m) != -32012 {
		t.Fatalf("step-up: %d %q %s", status, hdr.Get("WWW-Authenticate"), raw)
	}
	// The official SDK sees the refusal as a failed call, not a result.
	ncs := connect(t, url, narrow, "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := ncs.CallTool(ctx, &sdk.CallToolParams{Name: "get_user", Arguments: map[string]any{"project_id": projectID, "user_id": "u"}}); err == nil {
		t.Fatal("the SDK got a result for a call the token lacks scopes for")
	}
}

// TestSnapshotTools pins the tools' names, descriptions, annotations and input schemas.
func TestSnapshotTools(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	tok := st.token(userID, allScopes)
	list := rawPost(t, url, tok, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`, "")
	golden(t, "tools_list.golden.json", list)
}

// TestToolCallsAreCounted: every tools/call writes one mcp_events_tool_calls_total line with its outcome.
func TestToolCallsAreCounted(t *testing.T) {
	st := newStack(t)
	logs := make(chan string, 16)
	ts := httptest.NewServer(localruntime.New(handlerNew(st.server(handler.Options{})), localruntime.Options{
		LogDir: t.TempDir(), OnLog: func(_, l, _ string) { logs <- l },
	}))
	defer ts.Close()
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_user","arguments":{"project_id":"` + projectID + `","user_id":"ghost"}}}`
	if status, _, m, raw := post(t, "POST", ts.URL, st.token(userID, allScopes), body, nil); status != 200 || m["result"] == nil {
		t.Fatalf("%d %s", status, raw)
	}
	select {
	case l := <-logs:
		if !strings.Contains(l, `{"metric":"mcp_events_tool_calls_total","outcome":"not_found","tool":"get_user","inc":1}`) {
			t.Fatalf("logs: %s", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no counter line")
	}
}
