package handler_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/scriptedllm"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/id"
)

// TestConversationRowGetsItsTitleFromTheEventTrigger runs the whole path on the local Appwrite stand-in: a
// conversation row is created through the Appwrite SDK, Appwrite's event trigger executes the title
// function through the local runtime with a dynamic key, the function asks the model and writes the title
// back to the row, once.
func TestConversationRowGetsItsTitleFromTheEventTrigger(t *testing.T) {
	model := scriptedllm.New()
	defer model.Close()
	model.SetFallback(scriptedllm.Reply{Content: "Google OAuth Setup"})

	aw := localappwrite.New(localappwrite.Options{Logf: t.Logf})
	api := httptest.NewServer(aw)
	aw.SetBaseURL(api.URL)
	defer func() { api.Close(); _ = aw.Close() }()

	var mu sync.Mutex
	var logs []string
	var executions atomic.Int32 // requests the stand-in made to the function's runtime
	rt := localruntime.New(envMain, localruntime.Options{Secret: "rt-secret", LogDir: t.TempDir(), OnLog: func(_, l, e string) {
		mu.Lock()
		logs = append(logs, l+e)
		mu.Unlock()
	}})
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		executions.Add(1)
		rt.ServeHTTP(w, r)
	}))
	defer fn.Close()

	t.Setenv("LLM_API_KEY", "env-key")
	t.Setenv("LLM_MODEL", "gpt-4.1-mini")
	t.Setenv("LLM_BASE_URL", model.BaseURL())
	t.Setenv("APPWRITE_FUNCTION_API_ENDPOINT", api.URL+"/v1")
	t.Setenv("APPWRITE_FUNCTION_PROJECT_ID", "agentapp")
	t.Setenv("TITLE_DATABASE_ID", "agent")
	t.Setenv("TITLE_TABLE_ID", "conversations")

	must(t, aw.SeedProject(localappwrite.ProjectSpec{ID: "agentapp"}))
	must(t, aw.SeedDatabase("agentapp", localappwrite.DatabaseSpec{ID: "agent", Tables: []localappwrite.TableSpec{
		{ID: "conversations", Columns: []localappwrite.Column{{Key: "message", Type: "string", Size: 10000}, {Key: "title", Type: "string", Size: 120}}},
		{ID: "messages", Columns: []localappwrite.Column{{Key: "message", Type: "string", Size: 10000}, {Key: "title", Type: "string", Size: 120}}},
	}}))
	// The function as appwrite.json declares it: row-create events, rows.read and rows.write.
	must(t, aw.RegisterFunction("agentapp", localappwrite.FunctionSpec{ID: "title", URL: fn.URL, Secret: "rt-secret",
		Events: []string{"databases.*.tables.*.rows.*.create"}, Scopes: []string{"rows.read", "rows.write"}, Timeout: 30}))
	key, err := aw.CreateKey("agentapp", []string{"rows.read", "rows.write", "tables.read"})
	must(t, err)

	db := appwrite.NewTablesDB(appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(api.URL+"/v1"), appwrite.WithProject("agentapp"), appwrite.WithKey(key)))
	row, err := db.CreateRow("agent", "conversations", id.Unique(), map[string]any{"message": "how do I add Google OAuth to my app?"})
	must(t, err)
	other, err := db.CreateRow("agent", "messages", id.Unique(), map[string]any{"message": "not a conversation"})
	must(t, err)

	// Flush returns once every queued job is done, the jobs they queued included: the stand-in queues a
	// request's events before it answers, so the function's own row update (made inside its execution)
	// had its event matched against the triggers, and any execution it caused had run, by then.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	must(t, aw.Flush(ctx))
	got, err := db.GetRow("agent", "conversations", row.Id)
	must(t, err)
	var conv struct {
		Title string `json:"title"`
	}
	must(t, got.Decode(&conv))
	if conv.Title != "Google OAuth Setup" {
		t.Fatalf("title %q", conv.Title)
	}
	// One execution per created row (the other table's is skipped by the function); the function's own
	// update started none, and the model was asked once.
	if n := executions.Load(); n != 2 {
		t.Fatalf("the function ran %d times, want 2 (one per created row)", n)
	}
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("the model was asked %d times, want once", n)
	}
	got, err = db.GetRow("agent", "messages", other.Id)
	must(t, err)
	var cols map[string]any
	must(t, got.Decode(&cols))
	if cols["title"] != nil && cols["title"] != "" {
		t.Fatalf("the other table's row got a title: %v", cols["title"])
	}
	mu.Lock()
	defer mu.Unlock()
	joined := strings.Join(logs, "\n")
	if !strings.Contains(joined, "titled row "+row.Id) || !strings.Contains(joined, "skipped: not the conversations table") {
		t.Fatalf("execution logs: %s", joined)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// sdkTimeout bounds the tests' Appwrite SDK calls: the SDK's 10 s default was exceeded on a loaded machine (load
// average 33) by calls that carry megabytes or run a function. A safety net, not a measure.
const sdkTimeout = 2 * time.Minute

// fakeAppwrite records row updates like TablesDB's PATCH /v1/tablesdb/{db}/tables/{table}/rows/{row}.
type fakeAppwrite struct {
	mu      sync.Mutex
	updates []map[string]any
	keys    []string
	paths   []string
}

func (f *fakeAppwrite) start(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		f.updates = append(f.updates, body)
		f.keys = append(f.keys, r.Header.Get("X-Appwrite-Key"))
		f.paths = append(f.paths, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Appwrite-Project"))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"$id":"r1","$tableId":"conversations","$databaseId":"agent"}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestTitleFromRowEvent(t *testing.T) {
	model := scriptedllm.New()
	defer model.Close()
	var api fakeAppwrite
	apiSrv := api.start(t)
	t.Setenv("APPWRITE_FUNCTION_API_ENDPOINT", apiSrv.URL+"/v1")
	t.Setenv("APPWRITE_FUNCTION_PROJECT_ID", "p1")
	t.Setenv("TITLE_DATABASE_ID", "agent")
	t.Setenv("TITLE_TABLE_ID", "conversations")
	t.Setenv("TITLE_MESSAGE_COLUMN", "first_message")
	srv := titleServer(t, model, localruntime.Options{Headers: map[string]string{"x-appwrite-trigger": "event", "x-appwrite-key": "dynamic_abc"}})

	send := func(event, row string) reply {
		req, _ := http.NewRequest("POST", srv.URL+"/", strings.NewReader(row))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-appwrite-event", event)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(res.Body).Decode(&m)
		return reply{res.StatusCode, m}
	}
	row := `{"$id":"r1","$tableId":"conversations","$databaseId":"agent","first_message":"how do I add Google OAuth to my app","title":null}`

	model.Push(scriptedllm.Reply{Content: "Google OAuth Setup"})
	r := send("databases.agent.tables.conversations.rows.r1.create", row)
	if r.status != 200 || r.body["status"] != "titled" || r.body["title"] != "Google OAuth Setup" {
		t.Fatalf("%+v", r)
	}
	if len(api.updates) != 1 || api.paths[0] != "PATCH /v1/tablesdb/agent/tables/conversations/rows/r1 p1" || api.keys[0] != "dynamic_abc" {
		t.Fatalf("updates %v %v %v", api.updates, api.paths, api.keys)
	}
	if data := api.updates[0]["data"].(map[string]any); data["title"] != "Google OAuth Setup" || len(data) != 1 {
		t.Fatalf("data %v", data)
	}

	skips := map[string][2]string{
		"own update":      {"databases.agent.tables.conversations.rows.r1.update", row},
		"other table":     {"databases.agent.tables.messages.rows.m1.create", strings.ReplaceAll(row, "r1", "m1")},
		"other database":  {"databases.other.tables.conversations.rows.r1.create", row},
		"already titled":  {"databases.agent.tables.conversations.rows.r1.create", strings.Replace(row, `"title":null`, `"title":"Kept"`, 1)},
		"no message":      {"databases.agent.tables.conversations.rows.r1.create", strings.Replace(row, "how do I add Google OAuth to my app", " ", 1)},
		"not a row event": {"users.u1.create", `{"$id":"u1"}`},
		"wildcard event":  {"databases.*.tables.*.rows.*.create", row},
	}
	for name, s := range skips {
		if r := send(s[0], s[1]); r.status != 200 || r.body["status"] != "skipped" {
			t.Fatalf("%s: %+v", name, r)
		}
	}
	if len(api.updates) != 1 || len(model.Requests()) != 1 {
		t.Fatalf("skipped events did work: %d updates, %d model calls", len(api.updates), len(model.Requests()))
	}

	// A model failure fails the execution once and writes nothing.
	model.Push(scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 500, Message: "down"}})
	r = send("databases.agent.tables.conversations.rows.r2.create", strings.ReplaceAll(row, "r1", "r2"))
	if r.status != 500 || r.body["status"] != "failed" || len(api.updates) != 1 {
		t.Fatalf("%+v", r)
	}
	// A payload that is not the row named by the event.
	if r := send("databases.agent.tables.conversations.rows.r3.create", row); r.body["status"] != "failed" {
		t.Fatalf("%+v", r)
	}
}
