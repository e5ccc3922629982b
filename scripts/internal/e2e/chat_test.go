package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/stack"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/scriptedllm"
)

// chatModel answers the three kinds of model calls a chat turn makes: the router (structured output:
// FINISH with an answer, or platform when the user asks to remember something), the subagent (a memory
// tool call, then a short answer) and titles (no tools, no structured output).
func chatModel(t *testing.T) *scriptedllm.Server {
	model := scriptedllm.New()
	t.Cleanup(model.Close)
	model.SetHandler(chatReply)
	return model
}

// chatReply is chatModel's answer to one request.
func chatReply(req scriptedllm.Request, _ int) scriptedllm.Reply {
	{
		body := req.JSON()
		raw := string(req.Body)
		switch {
		case body["response_format"] != nil:
			if strings.Contains(lastUserMessage(body), "remember") {
				return scriptedllm.Reply{JSON: `{"next":"platform","reason":"a lasting preference","final_answer":""}`}
			}
			return scriptedllm.Reply{JSON: `{"next":"FINISH","reason":"small talk","final_answer":"Hello from the scripted model."}`}
		case body["tools"] == nil:
			return scriptedllm.Reply{Content: "Scripted Chat Title"}
		case strings.Contains(raw, `"role":"tool"`):
			return scriptedllm.Reply{Content: "Noted: answers in French from now on."}
		default:
			args, _ := json.Marshal(map[string]string{"actions": `[{"type":"set","key":"lang","content":"Answer in French","category":"instruction","priority":5}]`})
			return scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{{Name: "memory", Arguments: string(args)}}}
		}
	}
}

// lastUserMessage is the text of the last user message of a chat completions request.
func lastUserMessage(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m, _ := msgs[i].(map[string]any); m["role"] == "user" {
			b, _ := json.Marshal(m["content"])
			return string(b)
		}
	}
	return ""
}

// chatUser is a signed-in user of the chat page: an Appwrite session and its JWT, made as the Web SDK
// makes them, and calls to chat's function domain.
type chatUser struct {
	t       *testing.T
	st      *stack.Stack
	session string // the a_session_<project> value (X-Fallback-Cookies)
	jwt     string
}

func signIn(t *testing.T, st *stack.Stack, email, password string) *chatUser {
	t.Helper()
	d := st.Demo
	u := &chatUser{t: t, st: st}
	status, body, hdr := u.appwrite("POST", "/account/sessions/email", map[string]string{"email": email, "password": password}, nil)
	if status != 201 {
		t.Fatalf("sign-in %s: %d %s", email, status, body)
	}
	var fallback map[string]string
	if err := json.Unmarshal([]byte(hdr.Get("X-Fallback-Cookies")), &fallback); err != nil || fallback["a_session_"+d.ProjectID] == "" {
		t.Fatalf("no session in X-Fallback-Cookies: %q", hdr.Get("X-Fallback-Cookies"))
	}
	u.session = fallback["a_session_"+d.ProjectID]
	status, body, _ = u.appwrite("POST", "/account/jwts", map[string]any{}, map[string]string{"X-Fallback-Cookies": hdr.Get("X-Fallback-Cookies")})
	var jwt struct {
		JWT string `json:"jwt"`
	}
	if status != 201 || json.Unmarshal(body, &jwt) != nil || jwt.JWT == "" {
		t.Fatalf("createJWT: %d %s", status, body)
	}
	u.jwt = jwt.JWT
	return u
}

func (u *chatUser) appwrite(method, path string, in any, hdr map[string]string) (int, []byte, http.Header) {
	u.t.Helper()
	b, _ := json.Marshal(in)
	req, err := http.NewRequest(method, u.st.Demo.Endpoint+path, bytes.NewReader(b))
	if err != nil {
		u.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Appwrite-Project", u.st.Demo.ProjectID)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return send(u.t, req)
}

func send(t *testing.T, req *http.Request) (int, []byte, http.Header) {
	t.Helper()
	res, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, body, res.Header
}

// chat calls chat's function domain with the user's JWT (jwt "" sends none); out, when not nil, receives
// the JSON answer.
func (u *chatUser) chat(method, path, jwt string, in any, out any) (int, string) {
	u.t.Helper()
	var rd io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u.st.Demo.Domains["chat"]+path, rd)
	if err != nil {
		u.t.Fatal(err)
	}
	if jwt != "" {
		req.Header.Set("Authorization", "Bearer "+jwt)
	}
	status, body, _ := send(u.t, req)
	if out != nil && status < 300 {
		if err := json.Unmarshal(body, out); err != nil {
			u.t.Fatalf("%s %s: %d %s", method, path, status, body)
		}
	}
	return status, string(body)
}

type chatMessage struct {
	ID          string            `json:"id"`
	Role        string            `json:"role"`
	Content     string            `json:"content"`
	Status      string            `json:"status"`
	TurnID      string            `json:"turn_id"`
	Timeline    []json.RawMessage `json:"timeline"`
	Attachments []map[string]any  `json:"attachments"`
	Error       *struct{ Code, Detail string }
}

type chatConversation struct {
	Conversation struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	} `json:"conversation"`
	Messages []chatMessage `json:"messages"`
}

// TestChatThroughTheStack: a user signs in as the page does, chats through the staged chat function on its
// function domain, and chat starts turn asynchronously as that user with a Realtime progress sink; the
// finished turn, its title, a memory and the next turn's history and memories all come from TablesDB. The
// turn's progress rows start no title execution. Another user, an expired JWT and bad input are refused.
func TestChatThroughTheStack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	model := chatModel(t)
	llm := []string{"LLM_API_KEY=scripted", "LLM_MODEL=gpt-4o-mini", "LLM_BASE_URL=" + model.BaseURL()}
	w := start(t, map[string][]string{"turn": llm, "title": llm, "chat": {"ATTACHMENTS_MAX_BYTES=64"}})
	st := w.st
	d := st.Demo
	aw := st.Appwrite.Server
	if err := aw.SeedUser(d.ProjectID, localappwrite.UserSpec{ID: "bob", Email: "bob@example.com", Password: "bob-password"}); err != nil {
		t.Fatal(err)
	}
	alice := signIn(t, st, d.UserEmail, "demo-password")
	bob := signIn(t, st, "bob@example.com", "bob-password")

	var cfg struct {
		Endpoint string `json:"endpoint"`
		Project  string `json:"project"`
		Progress struct{ Database, Table string }
		Limits   struct {
			AttachmentsMaxBytes int `json:"attachments_max_bytes"`
		} `json:"limits"`
	}
	if s, b := alice.chat("GET", "/api/config", "", nil, &cfg); s != 200 || cfg.Endpoint != d.Endpoint || cfg.Project != d.ProjectID ||
		cfg.Progress.Database != d.DatabaseID || cfg.Progress.Table != d.ProgressTableID || cfg.Limits.AttachmentsMaxBytes != 64 {
		t.Fatalf("config: %d %s", s, b)
	}
	var me struct{ User struct{ ID, Email string } }
	if s, b := alice.chat("GET", "/api/me", alice.jwt, nil, &me); s != 200 || me.User.ID != d.UserID {
		t.Fatalf("me: %d %s", s, b)
	}

	// A first turn: 202 at once, the turn runs as an async execution of alice.
	var started struct {
		Conversation struct{ ID string }
		Turn         struct{ ID, Status string }
		Messages     []chatMessage
	}
	if s, b := alice.chat("POST", "/api/turns", alice.jwt, map[string]any{"message": "hello there", "turn_id": "turn-one"}, &started); s != 202 ||
		started.Turn.ID != "turn-one" || started.Turn.Status != "running" || len(started.Messages) != 2 || started.Messages[1].Status != "running" {
		t.Fatalf("first turn: %d %s", s, b)
	}
	convID := started.Conversation.ID
	w.settle() // the async turn, the title event and everything they caused
	turnExecs := aw.Executions(d.ProjectID, "turn")
	if len(turnExecs) != 1 || turnExecs[0].Status != "completed" {
		t.Fatalf("turn executions %+v", turnExecs)
	}

	// The progress events are alice's, and reading them back through chat gives the whole timeline.
	var evs struct {
		Events   []struct{ Seq int64 }
		Complete bool
	}
	if s, b := alice.chat("GET", "/api/turns/turn-one/events?after=2", alice.jwt, nil, &evs); s != 200 || !evs.Complete || len(evs.Events) < 3 || evs.Events[0].Seq != 3 {
		t.Fatalf("events: %d %s", s, b)
	}
	progressRows := int(evs.Events[len(evs.Events)-1].Seq)

	var conv chatConversation
	if s, b := alice.chat("GET", "/api/conversations/"+convID, alice.jwt, nil, &conv); s != 200 {
		t.Fatalf("conversation: %d %s", s, b)
	}
	if len(conv.Messages) != 2 || conv.Messages[0].Role != "user" || conv.Messages[0].Content != "hello there" ||
		conv.Messages[1].Status != "done" || conv.Messages[1].Content != "Hello from the scripted model." || len(conv.Messages[1].Timeline) != progressRows {
		t.Fatalf("stored turn: %+v", conv.Messages)
	}
	if conv.Conversation.Title != "Scripted Chat Title" {
		t.Fatalf("title %q", conv.Conversation.Title)
	}
	// title ran once, for the conversation row; none of the turn's progress rows started it.
	titleExecs := aw.Executions(d.ProjectID, "title")
	if len(titleExecs) != 1 || titleExecs[0].Trigger != "event" || progressRows < 5 {
		t.Fatalf("title executions %+v for one conversation row and %d progress rows", titleExecs, progressRows)
	}

	// A second turn in the conversation: the history is the first turn; the agent saves a memory.
	if s, b := alice.chat("POST", "/api/turns", alice.jwt, map[string]any{"conversation_id": convID, "message": "please remember: French"}, nil); s != 202 {
		t.Fatalf("second turn: %d %s", s, b)
	}
	w.settle()
	if s, b := alice.chat("GET", "/api/conversations/"+convID, alice.jwt, nil, &conv); s != 200 || len(conv.Messages) != 4 || conv.Messages[3].Content != "Noted: answers in French from now on." {
		t.Fatalf("second turn stored: %d %s", s, b)
	}
	var mems struct {
		Memories []struct{ Key, Content, Category string }
	}
	if s, b := alice.chat("GET", "/api/memories", alice.jwt, nil, &mems); s != 200 || len(mems.Memories) != 1 || mems.Memories[0].Key != "lang" || mems.Memories[0].Category != "instruction" {
		t.Fatalf("memories: %d %s", s, b)
	}
	// A third turn carries the history of both turns and the saved memory to the model.
	model.Reset()
	if s, b := alice.chat("POST", "/api/turns", alice.jwt, map[string]any{"conversation_id": convID, "message": "and now?"}, nil); s != 202 {
		t.Fatalf("third turn: %d %s", s, b)
	}
	w.settle()
	routed := false
	for _, r := range model.Requests() {
		if raw := string(r.Body); strings.Contains(raw, "and now?") && r.JSON()["response_format"] != nil {
			routed = true
			for _, want := range []string{"hello there", "Hello from the scripted model.", "please remember: French", "Answer in French"} {
				if !strings.Contains(raw, want) {
					t.Errorf("the third turn's router call lacks %q", want)
				}
			}
		}
	}
	if !routed {
		t.Fatal("the third turn never reached the model")
	}
	if n := len(aw.Executions(d.ProjectID, "title")); n != 1 {
		t.Fatalf("three turns in one conversation ran title %d times", n)
	}

	// A turn longer than the synchronous limit. The model holds every answer until released. While alice's
	// async turn waits on it, a synchronous execution of turn, waiting on the same model, is cut at the
	// synchronous limit (shortened to one second, Server.SetSyncTimeout; the runtime ends it as it ends any
	// execution past its timeout: a failed execution with a 500); only then does the model answer, and the
	// async turn completes and is stored. The order is set by signals, not by the clock.
	release, arrived := make(chan struct{}), make(chan struct{}, 16)
	model.SetHandler(func(req scriptedllm.Request, i int) scriptedllm.Reply {
		if strings.Contains(string(req.Body), "a slow one") {
			arrived <- struct{}{}
		}
		<-release
		return chatReply(req, i)
	})
	if s, b := alice.chat("POST", "/api/turns", alice.jwt, map[string]any{"conversation_id": convID, "message": "a slow one", "turn_id": "turn-slow"}, nil); s != 202 {
		close(release)
		t.Fatalf("slow turn: %d %s", s, b)
	}
	select { // the async turn is running, waiting on the model (the ceiling is a safety net far above it)
	case <-arrived:
	case <-time.After(time.Minute):
		close(release)
		t.Fatal("the slow turn never reached the model")
	}
	aw.SetSyncTimeout(time.Second)
	status, body, _ := alice.appwrite("POST", "/functions/turn/executions", map[string]any{"body": `{"message":"sync"}`, "async": false,
		"headers": map[string]string{"X-Session-API-Key": st.Secrets.SessionKey}}, map[string]string{"X-Appwrite-JWT": alice.jwt})
	aw.SetSyncTimeout(0)
	close(release)
	var syncExec struct {
		Status             string  `json:"status"`
		ResponseStatusCode int     `json:"responseStatusCode"`
		Duration           float64 `json:"duration"`
	}
	if status != 201 || json.Unmarshal(body, &syncExec) != nil || syncExec.Status != "failed" || syncExec.ResponseStatusCode != 500 || syncExec.Duration < 1 {
		t.Fatalf("a synchronous execution waiting on the model: %d %s", status, body)
	}
	w.settle()
	if s, b := alice.chat("GET", "/api/conversations/"+convID, alice.jwt, nil, &conv); s != 200 || len(conv.Messages) != 8 ||
		conv.Messages[6].Content != "a slow one" || conv.Messages[7].Status != "done" || conv.Messages[7].Content != "Hello from the scripted model." {
		t.Fatalf("the turn that outlived the synchronous limit: %d %s", s, b)
	}
	model.SetHandler(chatReply)

	// Another user: alice's conversation and turn do not exist for bob.
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/conversations/" + convID}, {"DELETE", "/api/conversations/" + convID}, {"GET", "/api/turns/turn-one/events"},
	} {
		if s, b := bob.chat(c.method, c.path, bob.jwt, nil, nil); s != 404 || !strings.Contains(b, `"error":"not_found"`) {
			t.Errorf("bob %s %s: %d %s", c.method, c.path, s, b)
		}
	}
	if s, b := bob.chat("POST", "/api/turns", bob.jwt, map[string]any{"conversation_id": convID, "message": "mine now"}, nil); s != 404 {
		t.Errorf("bob's turn in alice's conversation: %d %s", s, b)
	}
	var list struct{ Conversations []struct{ ID string } }
	if s, b := bob.chat("GET", "/api/conversations", bob.jwt, nil, &list); s != 200 || len(list.Conversations) != 0 {
		t.Errorf("bob's list: %d %s", s, b)
	}
	if s, b := bob.chat("POST", "/api/turns", bob.jwt, map[string]any{"message": "hi", "turn_id": "turn-one"}, nil); s != 409 {
		t.Errorf("a used turn id: %d %s", s, b)
	}

	// An expired JWT, a tampered one, none.
	expired, err := aw.UserJWT(d.ProjectID, alice.session, -time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, jwt := range []string{expired, alice.jwt[:len(alice.jwt)-3] + "abc", ""} {
		if s, b := alice.chat("GET", "/api/conversations", jwt, nil, nil); s != 401 || !strings.Contains(b, `"error":"unauthorized"`) {
			t.Errorf("JWT %q: %d %s", jwt, s, b)
		}
	}

	// Bad input.
	big := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), 65))
	for _, c := range []struct {
		in     any
		status int
		want   string
	}{
		{map[string]any{"message": "x", "attachments": []map[string]string{{"name": "big.txt", "content_base64": big}}}, 413, "Attachment 'big.txt' exceeds max size (64 bytes)"},
		{map[string]any{"message": "  "}, 422, "message or attachments required"},
		{map[string]any{"message": "x", "turn_id": "-bad"}, 422, "turn_id must be"},
		{map[string]any{"message": "x", "conversation_id": "nope"}, 404, "not found"},
		{[]string{"not", "an", "object"}, 400, "invalid_request"},
	} {
		if s, b := alice.chat("POST", "/api/turns", alice.jwt, c.in, nil); s != c.status || !strings.Contains(b, c.want) {
			t.Errorf("%v: %d %s, want %d %q", c.in, s, b, c.status, c.want)
		}
	}

	// Agent settings: the key is kept, never shown.
	var set map[string]any
	if s, b := alice.chat("PUT", "/api/settings", alice.jwt, map[string]string{"model": "gpt-4.1", "api_key": "sk-secret"}, &set); s != 200 || set["api_key_set"] != true || strings.Contains(b, "sk-secret") {
		t.Fatalf("settings: %d %s", s, b)
	}
	if s, b := alice.chat("PUT", "/api/settings", alice.jwt, map[string]string{"base_url": "http://169.254.169.254/v1"}, nil); s != 422 {
		t.Fatalf("http base_url: %d %s", s, b)
	}
	// MCP connections: tokens kept, never shown.
	if s, b := alice.chat("PUT", "/api/mcp/connections/appwrite", alice.jwt, map[string]any{"name": "Appwrite", "url": "https://mcp.example.com/mcp",
		"tokens": map[string]any{"access_token": "at-secret", "refresh_token": "rt-secret"}}, nil); s != 200 || strings.Contains(b, "secret") || !strings.Contains(b, `"connected":true`) {
		t.Fatalf("mcp put: %d %s", s, b)
	}
	if s, b := alice.chat("GET", "/api/mcp/connections", alice.jwt, nil, nil); s != 200 || strings.Contains(b, "secret") || !strings.Contains(b, `"id":"appwrite"`) {
		t.Fatalf("mcp list: %d %s", s, b)
	}
	if s, b := alice.chat("DELETE", "/api/conversations/"+convID, alice.jwt, nil, nil); s != 200 {
		t.Fatalf("delete: %d %s", s, b)
	}
	if s, _ := alice.chat("GET", "/api/conversations/"+convID, alice.jwt, nil, nil); s != 404 {
		t.Fatalf("deleted conversation: %d", s)
	}
}
