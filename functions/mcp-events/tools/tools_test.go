package tools_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
)

// TestMain runs every test once per stand-in profile (eventstest.Main).
func TestMain(m *testing.M) { eventstest.Main(m) }

// TestReadOnlyTools: the official MCP Go SDK lists the tools (beside the events capability) and calls each
// with the caller's own token: the row, the file's metadata, the user without password material, the failed
// execution with its logs and errors, and the caller's own subscriptions (never someone else's, never a
// secret).
func TestReadOnlyTools(t *testing.T) {
	st := eventstest.NewStack(t)
	eventstest.Must(t, st.LA.AddMember(eventstest.ProjectID, "user-2"))
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	w := eventstest.SeedToolWorld(t, st)

	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		cs := eventstest.Connect(t, url, tok, version)
		if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || caps.Extensions[handler.ExtensionID] == nil {
			t.Fatalf("%s: capabilities %+v", version, caps)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		list, err := cs.ListTools(ctx, nil)
		cancel()
		eventstest.Must(t, err)
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
	cs := eventstest.Connect(t, url, tok, "2026-07-28")

	row := eventstest.Structured(t, eventstest.CallTool(t, cs, "get_row", map[string]any{"project_id": eventstest.ProjectID, "database_id": eventstest.DatabaseID, "table_id": eventstest.TableID, "row_id": w.RowID}))
	if row["$id"] != w.RowID || row["title"] != "printer on fire" {
		t.Fatalf("row: %v", row)
	}
	file := eventstest.Structured(t, eventstest.CallTool(t, cs, "get_file", map[string]any{"project_id": eventstest.ProjectID, "bucket_id": eventstest.BucketID, "file_id": w.FileID}))
	if file["$id"] != w.FileID || file["name"] != "report.txt" || file["sizeOriginal"] != float64(len("quarterly numbers")) {
		t.Fatalf("file: %v", file)
	}
	user := eventstest.Structured(t, eventstest.CallTool(t, cs, "get_user", map[string]any{"project_id": eventstest.ProjectID, "user_id": w.UserID}))
	if user["$id"] != w.UserID || user["email"] != "c1@example.com" {
		t.Fatalf("user: %v", user)
	}
	for _, secret := range []string{"password", "hash", "hashOptions"} {
		if _, ok := user[secret]; ok {
			t.Fatalf("get_user passed %s on: %v", secret, user)
		}
	}
	ex := eventstest.Structured(t, eventstest.CallTool(t, cs, "get_execution", map[string]any{"project_id": eventstest.ProjectID, "function_id": eventstest.FunctionID, "execution_id": w.ExecutionID}))
	if ex["$id"] != w.ExecutionID || ex["status"] != "failed" || ex["logs"] == nil || ex["errors"] == nil {
		t.Fatalf("execution: %v", ex)
	}
	if _, ok := ex["requestHeaders"]; ok {
		t.Fatalf("get_execution passed request headers on: %v", ex)
	}

	// Subscriptions: two of the caller's, one of another user's to the same URL.
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	cb := st.Recv.URL("/tools")
	for _, p := range []map[string]any{
		eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil),
		eventstest.SubParams("functions.execution.failed", map[string]any{"project_id": eventstest.ProjectID, "function_id": eventstest.FunctionID}, cb, secret, nil),
	} {
		if r := eventstest.RPC(t, url, tok, "events/subscribe", p); r.Error != nil {
			t.Fatalf("subscribe: %s", r.Raw)
		}
	}
	if r := eventstest.RPC(t, url, st.Token("user-2", eventstest.AllScopes), "events/subscribe", eventstest.SubParams("users.user.created", map[string]any{"project_id": eventstest.ProjectID}, cb, secret, nil)); r.Error != nil {
		t.Fatalf("subscribe user-2: %s", r.Raw)
	}
	res := eventstest.CallTool(t, cs, "list_subscriptions", map[string]any{"project_id": eventstest.ProjectID})
	if strings.Contains(eventstest.ToolText(res), "whsec_") || strings.Contains(eventstest.ToolText(res), secret[6:]) {
		t.Fatalf("list_subscriptions shows a secret: %s", eventstest.ToolText(res))
	}
	subs := eventstest.Structured(t, res)["subscriptions"].([]any)
	if len(subs) != 2 {
		t.Fatalf("subscriptions: %v", subs)
	}
	first := subs[0].(map[string]any)
	// The callback URL is sealed in authPassword: listed where Appwrite returns it, absent on Cloud.
	wantCB := any(cb)
	if eventstest.Cloud() {
		wantCB = nil
	}
	if first["event"] != "functions.execution.failed" || first["callback_url"] != wantCB || first["enabled"] != true ||
		first["arguments"].(map[string]any)["function_id"] != eventstest.FunctionID || first["verified_at"] == nil {
		t.Fatalf("subscription: %v", first)
	}
	if until := eventstest.MustTime(t, first["expires_at"]); until.Before(time.Now().Add(50 * time.Minute)) {
		t.Fatalf("expires_at %v", until)
	}
}

// TestToolErrors: failures are MCP tool errors (isError, a clear text) rather than protocol errors: not
// found, forbidden, Appwrite unavailable, bad arguments; a token lacking the tool's scope gets the 403
// step-up.
func TestToolErrors(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	cs := eventstest.Connect(t, url, tok, "2026-07-28")
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"row not found", "get_row", map[string]any{"project_id": eventstest.ProjectID, "database_id": eventstest.DatabaseID, "table_id": eventstest.TableID, "row_id": "nope"}, "Not found: row nope in table support_tickets of database main (project proj1)"},
		{"user not found", "get_user", map[string]any{"project_id": eventstest.ProjectID, "user_id": "ghost"}, "Not found: user ghost"},
		{"not a member", "get_execution", map[string]any{"project_id": eventstest.OtherProject, "function_id": eventstest.FunctionID, "execution_id": "e1"}, "Forbidden: Appwrite refused your access to execution e1 of function worker (project proj2)"},
		{"bad id", "get_file", map[string]any{"project_id": eventstest.ProjectID, "bucket_id": "../etc", "file_id": "f"}, "bucket_id"},
		{"unknown argument", "get_user", map[string]any{"project_id": eventstest.ProjectID, "user_id": "u", "extra": "x"}, "extra"},
		{"missing argument", "get_row", map[string]any{"project_id": eventstest.ProjectID}, "database_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := eventstest.CallTool(t, cs, c.tool, c.args)
			if !res.IsError || !strings.Contains(eventstest.ToolText(res), c.want) {
				t.Fatalf("got isError=%v %q, want %q", res.IsError, eventstest.ToolText(res), c.want)
			}
		})
	}

	// Appwrite unavailable: the project API answers 503 (the issuer still works).
	st.AppwriteDown()
	dcs := eventstest.Connect(t, st.Instance(st.Server(handler.Options{})), tok, "2025-11-25")
	res := eventstest.CallTool(t, dcs, "get_user", map[string]any{"project_id": eventstest.ProjectID, "user_id": "u"})
	if !res.IsError || !strings.HasPrefix(eventstest.ToolText(res), "Appwrite unavailable: reading user u (project proj1) failed with HTTP 503") {
		t.Fatalf("unavailable: %q", eventstest.ToolText(res))
	}
	res = eventstest.CallTool(t, dcs, "list_subscriptions", map[string]any{"project_id": eventstest.ProjectID})
	if !res.IsError || !strings.HasPrefix(eventstest.ToolText(res), "Appwrite unavailable:") {
		t.Fatalf("unavailable list: %q", eventstest.ToolText(res))
	}

	// Step-up: a token without users.read.
	narrow := st.Token(eventstest.UserID, []string{"project:rows.read", "project:webhooks.read"})
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_user","arguments":{"project_id":"` + eventstest.ProjectID + `","user_id":"u"}}}`
	status, hdr, m, raw := eventstest.Post(t, "POST", url, narrow, body, nil)
	if status != http.StatusForbidden || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="project:users.read", resource_metadata="`) || eventstest.RPCCode(m) != -32012 {
		t.Fatalf("step-up: %d %q %s", status, hdr.Get("WWW-Authenticate"), raw)
	}
	// The official SDK sees the refusal as a failed call, not a result.
	ncs := eventstest.Connect(t, url, narrow, "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := ncs.CallTool(ctx, &sdk.CallToolParams{Name: "get_user", Arguments: map[string]any{"project_id": eventstest.ProjectID, "user_id": "u"}}); err == nil {
		t.Fatal("the SDK got a result for a call the token lacks scopes for")
	}
}

// TestSnapshotTools pins the tools' names, descriptions, annotations and input schemas.
func TestSnapshotTools(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	list := eventstest.RawPost(t, url, tok, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`, "")
	eventstest.Golden(t, "tools_list.golden.json", list)
}
