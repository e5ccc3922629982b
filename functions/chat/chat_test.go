package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/testclock"
	"appwrite-agent/shared/seal"
	"appwrite-agent/shared/turnrequest"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// fakeTurn plays the turn function for chat's tests: it records each execution's request and, as the test
// says, publishes progress rows the way turn's Realtime sink does (with the execution's key, readable by the
// calling user only) or fails without any.
type fakeTurn struct {
	t        *testing.T
	endpoint string
	mu       sync.Mutex
	requests []map[string]any
	headers  []http.Header
	// events are the timeline the next executions publish; nil fails the execution with no row.
	events []map[string]any
	// hold, when set, keeps each execution running (after its rows) until it is closed.
	hold chan struct{}
	// then are published once hold is closed (what turn publishes after a stop, for one).
	then []map[string]any
}

func (f *fakeTurn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.headers = append(f.headers, r.Header.Clone())
	events, hold, then := f.events, f.hold, f.then
	f.mu.Unlock()
	if events == nil {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":"internal"}`)
		return
	}
	progress, _ := req["progress"].(map[string]any)
	turnID, _ := progress["turn_id"].(string)
	f.publish(r, turnID, events, 1)
	if hold != nil {
		<-hold
		f.publish(r, turnID, then, len(events)+1)
	}
	_, _ = io.WriteString(w, "ok")
}

// publish writes events as progress rows numbered from seq, as turn's Realtime sink does.
func (f *fakeTurn) publish(r *http.Request, turnID string, events []map[string]any, seq int) {
	for i, ev := range events {
		payload, _ := json.Marshal(ev)
		row, _ := json.Marshal(map[string]any{"rowId": "unique()", "permissions": []string{`read("user:` + r.Header.Get("X-Appwrite-User-Id") + `")`},
			"data": map[string]any{"turn_id": turnID, "seq": seq + i, "type": ev["type"], "payload": string(payload), "time": "2026-12-02T03:00:00.000Z"}})
		preq, _ := http.NewRequest("POST", f.endpoint+"/tablesdb/main/tables/turn_progress/rows", bytes.NewReader(row))
		preq.Header.Set("Content-Type", "application/json")
		preq.Header.Set("X-Appwrite-Project", "p")
		preq.Header.Set("X-Appwrite-Key", r.Header.Get("X-Appwrite-Key"))
		res, err := http.DefaultClient.Do(preq)
		if err != nil {
			f.t.Errorf("progress row: %v", err)
			return
		}
		res.Body.Close()
		if res.StatusCode != 201 {
			f.t.Errorf("progress row: %d", res.StatusCode)
		}
	}
}

func (f *fakeTurn) last() (map[string]any, http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[len(f.requests)-1], f.headers[len(f.headers)-1]
}

type chatFixture struct {
	t    *testing.T
	aw   *localappwrite.Server
	turn *fakeTurn
	base string
	jwt  string
	// clock is the one clock of chat and the stand-in, stopped at the fixture's start: a test moves both.
	clock *testclock.Clock
}

func newChatFixture(t *testing.T) *chatFixture {
	t.Helper()
	f := &chatFixture{t: t, clock: testclock.New(time.Now())}
	aw := localappwrite.New(localappwrite.Options{Logf: t.Logf, Clock: f.clock.Now})
	f.aw = aw
	api := httptest.NewServer(aw)
	aw.SetBaseURL(api.URL)
	t.Cleanup(func() { api.Close(); _ = aw.Close() })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(aw.SeedProject(localappwrite.ProjectSpec{ID: "p"}))
	must(aw.SeedUser("p", localappwrite.UserSpec{ID: "alice", Email: "alice@example.com", Password: "alice-password"}))
	must(aw.SeedDatabase("p", localappwrite.DatabaseSpec{ID: "main", Tables: []localappwrite.TableSpec{{ID: "turn_progress", RowSecurity: true,
		Columns: []localappwrite.Column{{Key: "turn_id", Type: "string", Size: 64, Required: true}, {Key: "seq", Type: "integer", Required: true},
			{Key: "type", Type: "string", Size: 32, Required: true}, {Key: "payload", Type: "string", Size: 1_000_000, Required: true},
			{Key: "time", Type: "datetime", Required: true}}}}}))
	f.turn = &fakeTurn{t: t, endpoint: api.URL + "/v1"}
	turnSrv := httptest.NewServer(f.turn)
	t.Cleanup(turnSrv.Close)
	must(aw.RegisterFunction("p", localappwrite.FunctionSpec{ID: "turn", URL: turnSrv.URL, Execute: []string{"any"}, Timeout: 900,
		Scopes: []string{"tables.read", "rows.read", "rows.write"}}))
	secrets, err := seal.ParseKeyring("chat1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
	must(err)
	cfg := Config{SessionKey: "session-key", TurnFunction: "turn", DatabaseID: "chat", ProgressDatabase: "main", ProgressTable: "turn_progress",
		Endpoint: api.URL + "/v1", ProjectID: "p", PublicEndpoint: api.URL + "/v1", MaxAttachments: 8, MaxAttachmentBytes: 1000, BuildID: "dev",
		Secrets: secrets}
	rt := localruntime.New(func(rt openruntimes.Context) openruntimes.Response {
		return serve(rt, cfg, fstest.MapFS{}, f.clock.Now)
	},
		localruntime.Options{LogDir: t.TempDir()})
	chatSrv := httptest.NewServer(rt)
	t.Cleanup(chatSrv.Close)
	// chat's scopes, as appwrite.json gives them.
	must(aw.RegisterFunction("p", localappwrite.FunctionSpec{ID: "chat", URL: chatSrv.URL, Execute: []string{"any"}, Timeout: 30,
		Scopes: []string{"databases.read", "databases.write", "tables.read", "tables.write", "rows.read", "rows.write", "executions.read", "executions.write"}}))
	f.base = aw.DomainURL("chat")
	session, err := aw.CreateSession("p", "alice")
	must(err)
	f.jwt, err = aw.UserJWT("p", session, 15*time.Minute)
	must(err)
	return f
}

func (f *chatFixture) call(method, path string, in any, out any) (int, string) {
	f.t.Helper()
	return f.callAs(f.jwt, method, path, in, out)
}

// callAs is call with another user's JWT.
func (f *chatFixture) callAs(jwt, method, path string, in any, out any) (int, string) {
	f.t.Helper()
	var rd io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, f.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+jwt)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			f.t.Fatalf("%s %s: %s", method, path, b)
		}
	}
	return res.StatusCode, string(b)
}

// rows is the JSON of a table's rows as an API key with rows.read reads them (a database export).
func (f *chatFixture) rows(db, table string) string {
	f.t.Helper()
	key, err := f.aw.CreateKey("p", []string{"rows.read"})
	if err != nil {
		f.t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", f.turn.endpoint+"/tablesdb/"+db+"/tables/"+table+"/rows", nil)
	req.Header.Set("X-Appwrite-Project", "p")
	req.Header.Set("X-Appwrite-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		f.t.Fatalf("listing %s: %d %s", table, res.StatusCode, b)
	}
	return string(b)
}

func (f *chatFixture) settle() {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.aw.Flush(ctx); err != nil {
		f.t.Fatal(err)
	}
}

type conversationBody struct {
	Conversation struct{ ID, Title string }
	Messages     []struct {
		Role, Content, Status, TurnID string
		Error                         *struct{ Code, Detail string }
	}
}

// TestTurnCarriesTheUsersContextAndStoresWhatComesBack: chat sends turn the user's MCP connections with
// their tokens, agent settings and memories, as the user, with the session key in a header Appwrite does not
// store; it stores the refreshed MCP tokens, the answer and the title that come back in the progress rows.
func TestTurnCarriesTheUsersContextAndStoresWhatComesBack(t *testing.T) {
	f := newChatFixture(t)
	if s, b := f.call("PUT", "/api/mcp/connections/aw", map[string]any{"name": "Appwrite", "url": "https://mcp.example.com/mcp",
		"tokens": map[string]any{"access_token": "old-at", "refresh_token": "old-rt"}, "client_info": map[string]any{"client_id": "c1"}}, nil); s != 200 {
		t.Fatalf("mcp: %d %s", s, b)
	}
	if s, b := f.call("PUT", "/api/settings", map[string]any{"model": "gpt-4.1", "base_url": "https://llm.example.com/v1", "api_key": "sk-user"}, nil); s != 200 ||
		!strings.Contains(b, `"api_key_set":true`) || strings.Contains(b, "sk-user") {
		t.Fatalf("settings: %d %s", s, b)
	}
	f.turn.events = []map[string]any{
		{"type": "status", "message": "Routing request…"},
		{"type": "mcp_credentials", "credentials": []any{map[string]any{"id": "aw", "tokens": map[string]any{"access_token": "new-at", "refresh_token": "new-rt"}}}},
		{"type": "done", "content": "Done.", "answer": "Done."},
		{"type": "conversation_title", "title": "Turn Title"},
		{"type": "complete"},
	}
	var started struct{ Conversation struct{ ID string } }
	if s, b := f.call("POST", "/api/turns", map[string]any{"message": "list my users"}, &started); s != 202 {
		t.Fatalf("turn: %d %s", s, b)
	}
	f.settle()
	req, hdr := f.turn.last()
	if hdr.Get("X-Appwrite-User-Id") != "alice" || hdr.Get("X-Session-Api-Key") != "session-key" || req["async"] != true {
		t.Fatalf("turn ran with %v %v", hdr, req)
	}
	if p, _ := req["progress"].(map[string]any); p["realtime"] != true || p["turn_id"] == "" {
		t.Fatalf("progress %v", req["progress"])
	}
	llm, _ := req["llm"].(map[string]any)
	conns, _ := req["mcp_connections"].([]any)
	if llm["api_key"] != "sk-user" || llm["model"] != "gpt-4.1" || len(conns) != 1 || !strings.Contains(fmt.Sprint(conns[0]), "old-at") {
		t.Fatalf("llm %v, connections %v", llm, conns)
	}
	// At rest the key and the tokens are sealed: what any API key with rows.read sees holds none of them.
	for _, table := range []string{"settings", "mcp_connections"} {
		if rows := f.rows("chat", table); !strings.Contains(rows, `"sealed:`) || strings.Contains(rows, "sk-user") || strings.Contains(rows, "new-at") || strings.Contains(rows, "old-rt") {
			t.Errorf("the %s rows hold a secret in the clear:\n%s", table, rows)
		}
	}
	var conv conversationBody
	if s, b := f.call("GET", "/api/conversations/"+started.Conversation.ID, nil, &conv); s != 200 || len(conv.Messages) != 2 || conv.Messages[1].Content != "Done." ||
		conv.Messages[1].Status != "done" || conv.Conversation.Title != "Turn Title" {
		t.Fatalf("conversation: %d %s", s, b)
	}
	// The next turn gets the refreshed tokens, and the history of the first.
	f.turn.events = []map[string]any{{"type": "done", "answer": "Again."}, {"type": "complete"}}
	if s, b := f.call("POST", "/api/turns", map[string]any{"conversation_id": started.Conversation.ID, "message": "again"}, nil); s != 202 {
		t.Fatalf("second turn: %d %s", s, b)
	}
	f.settle()
	req, _ = f.turn.last()
	conns, _ = req["mcp_connections"].([]any)
	if len(conns) != 1 || !strings.Contains(fmt.Sprint(conns[0]), "new-at") || !strings.Contains(fmt.Sprint(conns[0]), "c1") {
		t.Fatalf("second turn's connections %v", conns)
	}
	if h, _ := req["history"].([]any); len(h) != 2 {
		t.Fatalf("second turn's history %v", req["history"])
	}
}

// TestATurnThatEndsWithoutCompleteIsStoredFailed: an execution that fails without publishing complete is a
// failed turn, and the conversation takes the next turn.
func TestATurnThatEndsWithoutCompleteIsStoredFailed(t *testing.T) {
	f := newChatFixture(t)
	f.turn.events = nil
	var started struct{ Conversation struct{ ID string } }
	if s, b := f.call("POST", "/api/turns", map[string]any{"message": "hello", "turn_id": "t1"}, &started); s != 202 {
		t.Fatalf("turn: %d %s", s, b)
	}
	f.settle()
	var conv conversationBody
	if s, b := f.call("GET", "/api/conversations/"+started.Conversation.ID, nil, &conv); s != 200 || len(conv.Messages) != 2 ||
		conv.Messages[1].Status != "failed" || conv.Messages[1].Error == nil || conv.Messages[1].Error.Code != "turn_failed" {
		t.Fatalf("failed turn: %d %s", s, b)
	}
	f.turn.events = []map[string]any{{"type": "done", "answer": "Hi."}, {"type": "complete"}}
	if s, b := f.call("POST", "/api/turns", map[string]any{"conversation_id": started.Conversation.ID, "message": "again"}, nil); s != 202 {
		t.Fatalf("next turn: %d %s", s, b)
	}
}

// TestASecondTurnWaitsForTheFirst: while a turn's execution runs, another turn in the same conversation is a
// 409; once the execution ended (here without complete: its sink was lost), the conversation goes on.
func TestASecondTurnWaitsForTheFirst(t *testing.T) {
	f := newChatFixture(t)
	hold := make(chan struct{})
	f.turn.events = []map[string]any{{"type": "status", "message": "Routing request…"}} // no complete
	f.turn.hold = hold
	var started struct{ Conversation struct{ ID string } }
	if s, b := f.call("POST", "/api/turns", map[string]any{"message": "hello"}, &started); s != 202 {
		close(hold)
		t.Fatalf("turn: %d %s", s, b)
	}
	s, b := f.call("POST", "/api/turns", map[string]any{"conversation_id": started.Conversation.ID, "message": "next"}, nil)
	close(hold)
	if s != 409 || !strings.Contains(b, "already running") {
		t.Fatalf("during a turn: %d %s", s, b)
	}
	f.settle()
	f.turn.hold = nil
	if s, b := f.call("POST", "/api/turns", map[string]any{"conversation_id": started.Conversation.ID, "message": "next"}, nil); s != 202 {
		t.Fatalf("after the turn's execution ended: %d %s", s, b)
	}
	f.settle()
	var conv conversationBody
	if s, b := f.call("GET", "/api/conversations/"+started.Conversation.ID, nil, &conv); s != 200 || len(conv.Messages) != 4 ||
		conv.Messages[1].Status != "failed" || conv.Messages[1].Error.Code != "turn_failed" {
		t.Fatalf("conversation: %d %s", s, b)
	}
}

// TestATurnTakesAtMostTheMemoriesTurnAccepts: a user whose agent saved more memories than turn accepts in
// one request (turnrequest.MaxMemories) gets the highest-priority ones, rather than a turn refused for its size.
func TestATurnTakesAtMostTheMemoriesTurnAccepts(t *testing.T) {
	f := newChatFixture(t)
	var actions []map[string]any
	for p := 0; p <= turnrequest.MaxMemories; p++ { // one more than turn takes, priorities 0..MaxMemories
		actions = append(actions, map[string]any{"type": "set", "key": fmt.Sprintf("fact.%03d", p), "scope": "user",
			"content": fmt.Sprintf("fact %d", p), "category": "fact", "priority": p})
	}
	output, _ := json.Marshal(map[string]any{"protocol": "appwrite.memory/v1", "actions": actions})
	f.turn.events = []map[string]any{
		{"type": "tool_end", "tool": "memory", "run_id": "run_1", "output": string(output)},
		{"type": "done", "answer": "Saved."}, {"type": "complete"},
	}
	var started struct{ Conversation struct{ ID string } }
	if s, b := f.call("POST", "/api/turns", map[string]any{"message": "remember all this"}, &started); s != 202 {
		t.Fatalf("turn: %d %s", s, b)
	}
	f.settle()
	// Reading the conversation stores the finished turn (its answer and memory actions).
	if s, b := f.call("GET", "/api/conversations/"+started.Conversation.ID, nil, nil); s != 200 {
		t.Fatalf("conversation: %d %s", s, b)
	}
	var listed struct{ Memories []struct{ Key string } }
	if s, b := f.call("GET", "/api/memories", nil, &listed); s != 200 || len(listed.Memories) != turnrequest.MaxMemories+1 {
		t.Fatalf("memories: %d, %d stored: %.300s", s, len(listed.Memories), b)
	}
	f.turn.events = []map[string]any{{"type": "done", "answer": "Again."}, {"type": "complete"}}
	if s, b := f.call("POST", "/api/turns", map[string]any{"conversation_id": started.Conversation.ID, "message": "again"}, nil); s != 202 {
		t.Fatalf("second turn: %d %s", s, b)
	}
	f.settle()
	req, _ := f.turn.last()
	mems, _ := req["memories"].([]any)
	if len(mems) != turnrequest.MaxMemories {
		t.Fatalf("the turn got %d memories, want %d", len(mems), turnrequest.MaxMemories)
	}
	for i, m := range mems {
		if want := fmt.Sprintf("fact.%03d", turnrequest.MaxMemories-i); m.(map[string]any)["key"] != want {
			t.Fatalf("memories[%d] = %v, want %s (highest priority first, the lowest left out)", i, m, want)
		}
	}
}

// TestConnectionIDsAreWhatTurnAccepts: chat stores only MCP connection ids turn accepts
// (^[a-z][a-z0-9_-]{1,63}$ after lower-casing) within its 36-character column, so that no saved connection
// is dropped from every turn or merged by turn with another that differs in case.
func TestConnectionIDsAreWhatTurnAccepts(t *testing.T) {
	f := newChatFixture(t)
	body := map[string]any{"name": "Server", "url": "https://mcp.example.com/mcp"}
	for _, id := range []string{"ab", "appwrite", "my_server-2", "a" + strings.Repeat("b", 35)} {
		if s, b := f.call("PUT", "/api/mcp/connections/"+id, body, nil); s != 200 {
			t.Errorf("id %q: %d %s", id, s, b)
		}
	}
	for _, id := range []string{"x", "1x", "_a", "-a", "Foo", "aB", "a.b", "a" + strings.Repeat("b", 36)} {
		s, b := f.call("PUT", "/api/mcp/connections/"+id, body, nil)
		if s != 422 || !strings.Contains(b, "starting with a letter") || !strings.Contains(b, id) {
			t.Errorf("id %q: %d %s, want 422 naming the rule and the id", id, s, b)
		}
	}
}

// TestATurnMovesItsConversationToTheTop: the list is the most recently used conversation first, and a turn
// in an older conversation moves it to the top. On Appwrite a row's $updatedAt moves only when a value
// changes (the stand-in plays that), so the turn has to write one.
func TestATurnMovesItsConversationToTheTop(t *testing.T) {
	f := newChatFixture(t)
	f.turn.events = []map[string]any{{"type": "done", "answer": "Yes."}, {"type": "complete"}}
	start := func(body map[string]any) string {
		t.Helper()
		var started struct{ Conversation struct{ ID string } }
		if s, b := f.call("POST", "/api/turns", body, &started); s != 202 {
			t.Fatalf("turn: %d %s", s, b)
		}
		f.settle()
		// Reading the conversation stores the finished turn, so that the next one may start.
		if s, b := f.call("GET", "/api/conversations/"+started.Conversation.ID, nil, nil); s != 200 {
			t.Fatalf("conversation: %d %s", s, b)
		}
		f.clock.Advance(time.Minute)
		return started.Conversation.ID
	}
	order := func() []string {
		t.Helper()
		var list struct{ Conversations []struct{ ID string } }
		if s, b := f.call("GET", "/api/conversations", nil, &list); s != 200 {
			t.Fatalf("list: %d %s", s, b)
		}
		var ids []string
		for _, c := range list.Conversations {
			ids = append(ids, c.ID)
		}
		return ids
	}
	older := start(map[string]any{"message": "first"})
	newer := start(map[string]any{"message": "second"})
	if got := order(); len(got) != 2 || got[0] != newer {
		t.Fatalf("before: %v, want %s first", got, newer)
	}
	start(map[string]any{"conversation_id": older, "message": "back to the first"})
	if got := order(); len(got) != 2 || got[0] != older {
		t.Fatalf("after a turn in %s: %v, want it first", older, got)
	}
}

// TestOnlyTheUserStopsTheirTurn: POST /api/turns/{id}/stop writes the stop row of turn's contract (docs/turn.md
// "Stopping a turn") for the user who started the turn, readable by them only; for anyone else the turn does
// not exist (404) and nothing is written. The turn then ends cancelled: stored stopped, with its partial
// answer; a finished turn answers stopping false.
func TestOnlyTheUserStopsTheirTurn(t *testing.T) {
	f := newChatFixture(t)
	if err := f.aw.SeedUser("p", localappwrite.UserSpec{ID: "bob", Email: "bob@example.com", Password: "bob-password"}); err != nil {
		t.Fatal(err)
	}
	session, err := f.aw.CreateSession("p", "bob")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := f.aw.UserJWT("p", session, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	f.turn.events = []map[string]any{{"type": "status", "message": "Routing request…"}, {"type": "route", "agent": "FINISH", "next": "FINISH", "reason": "r"},
		{"type": "answer_start", "agent": "supervisor"}, {"type": "token", "agent": "supervisor", "content": "Once upon"}}
	f.turn.hold = hold
	f.turn.then = []map[string]any{{"type": "error", "code": "cancelled", "detail": "The turn was stopped; the answer is partial.", "answer": "Once upon"},
		{"type": "complete"}}
	var started struct{ Conversation struct{ ID string } }
	if s, b := f.call("POST", "/api/turns", map[string]any{"message": "a long story", "turn_id": "story-1"}, &started); s != 202 {
		close(hold)
		t.Fatalf("turn: %d %s", s, b)
	}
	stopRows := func() []map[string]any {
		t.Helper()
		key, err := f.aw.CreateKey("p", []string{"rows.read"})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("GET", f.turn.endpoint+`/tablesdb/main/tables/turn_progress/rows?queries[]=`+
			`{"method":"equal","attribute":"type","values":["stop"]}`, nil)
		req.Header.Set("X-Appwrite-Project", "p")
		req.Header.Set("X-Appwrite-Key", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out struct{ Rows []map[string]any }
		_ = json.NewDecoder(res.Body).Decode(&out)
		return out.Rows
	}
	s, b := f.callAs(bob, "POST", "/api/turns/story-1/stop", map[string]any{}, nil)
	if s != 404 || len(stopRows()) != 0 {
		close(hold)
		t.Fatalf("another user stopping the turn: %d %s, stop rows %v", s, b, stopRows())
	}
	s, b = f.call("POST", "/api/turns/story-1/stop", map[string]any{}, nil)
	rows := stopRows()
	close(hold)
	if s != 202 || !strings.Contains(b, `"stopping":true`) {
		t.Fatalf("stopping: %d %s", s, b)
	}
	if len(rows) != 1 || rows[0]["turn_id"] != "story-1" || rows[0]["seq"] != float64(0) || rows[0]["payload"] != `{"type":"stop"}` ||
		fmt.Sprint(rows[0]["$permissions"]) != `[read("user:alice")]` {
		t.Fatalf("the stop row %v", rows)
	}
	f.settle()
	var conv conversationBody
	if s, b := f.call("GET", "/api/conversations/"+started.Conversation.ID, nil, &conv); s != 200 || len(conv.Messages) != 2 ||
		conv.Messages[1].Status != "stopped" || conv.Messages[1].Content != "Once upon" || conv.Messages[1].Error != nil {
		t.Fatalf("the stopped turn: %d %s", s, b)
	}
	if s, b := f.call("POST", "/api/turns/story-1/stop", map[string]any{}, nil); s != 200 || !strings.Contains(b, `"stopping":false`) || len(stopRows()) != 1 {
		t.Fatalf("stopping a finished turn: %d %s", s, b)
	}
}

// TestIDsThatAreNoAppwriteIDsAreNotFound: an id in the path that Appwrite could not have made (a space, too
// long, a leading '_') names nothing: 404 not_found before any Appwrite call (the SDK writes ids into its paths
// unescaped). A '/' in an id reaches chat decoded, as more segments: no route.
func TestIDsThatAreNoAppwriteIDsAreNotFound(t *testing.T) {
	f := newChatFixture(t)
	for _, c := range []struct{ method, path, want string }{
		{"GET", "/api/conversations/a%20b", "conversation 'a b' not found"},
		{"PATCH", "/api/conversations/a%20b", "conversation 'a b' not found"},
		{"DELETE", "/api/conversations/" + strings.Repeat("x", 37), "conversation '" + strings.Repeat("x", 37) + "' not found"},
		{"GET", "/api/turns/_t1/events", "turn '_t1' not found"},
		{"POST", "/api/turns/_t1/stop", "turn '_t1' not found"},
		{"DELETE", "/api/conversations/rows%2Fr1", "no route for DELETE /api/conversations/rows/r1"},
		{"GET", "/api/turns/t%2F..%2Fx/events", "no route for GET /api/turns/t/../x/events"},
	} {
		s, b := f.call(c.method, c.path, map[string]any{"title": "x"}, nil)
		if s != 404 || !strings.Contains(b, `"error":"not_found"`) || !strings.Contains(b, c.want) {
			t.Errorf("%s %s: %d %s", c.method, c.path, s, b)
		}
	}
}
