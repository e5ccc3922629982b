package handler_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	handler "appwrite-agent/functions/turn"
	"appwrite-agent/functions/turn/progress"
	"appwrite-agent/functions/turn/request"
	"appwrite-agent/functions/turn/timeline"
	"appwrite-agent/functions/turn/timeline/timelinetest"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/scriptedllm"
	"appwrite-agent/shared/devkit/webhookreceiver"
)

const (
	progProject = "agentapp"
	progDB      = "agent"
	progTable   = "turn_progress"
)

// stack is the turn function behind the local runtime, registered in the local Appwrite stand-in, which
// serves the progress table and Realtime.
type stack struct {
	model *scriptedllm.Server
	aw    *localappwrite.Server
	api   *httptest.Server
	fn    *httptest.Server
	logs  *logSink
}

// logSink collects the execution logs the runtime hands over (localruntime.Options.OnLog).
type logSink struct {
	mu         sync.Mutex
	logs, errs strings.Builder
}

func (l *logSink) add(_, logs, errs string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.logs.WriteString(logs)
	l.errs.WriteString(errs)
}

// text returns the log lines and the error lines collected so far.
func (l *logSink) text() (logs, errs string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.logs.String(), l.errs.String()
}

// all returns every line collected so far, logs then errors.
func (l *logSink) all() string {
	logs, errs := l.text()
	return logs + "\n" + errs
}

// progressColumns are the progress table's columns, as scripts/dev creates them.
var progressColumns = []localappwrite.Column{
	{Key: progress.ColTurnID, Type: "string", Size: 64, Required: true},
	{Key: progress.ColSeq, Type: "integer", Required: true},
	{Key: progress.ColType, Type: "string", Size: 32, Required: true},
	{Key: progress.ColPayload, Type: "string", Size: progress.PayloadChars, Required: true},
	{Key: progress.ColTime, Type: "datetime", Required: true},
}

func newStack(t testing.TB, replies ...scriptedllm.Reply) *stack {
	t.Helper()
	model, _ := env(t, replies...)
	st := &stack{model: model, logs: &logSink{}}
	st.aw = localappwrite.New(localappwrite.Options{Logf: t.Logf, EphemeralKeys: true})
	st.api = httptest.NewServer(st.aw)
	st.aw.SetBaseURL(st.api.URL)
	t.Cleanup(func() { st.api.CloseClientConnections(); st.api.Close(); _ = st.aw.Close() })
	st.fn = httptest.NewServer(localruntime.New(envMain, localruntime.Options{Secret: "rt-secret", LogDir: t.TempDir(), OnLog: st.logs.add}))
	t.Cleanup(st.fn.Close)
	t.Setenv("APPWRITE_FUNCTION_API_ENDPOINT", st.api.URL+"/v1")
	t.Setenv("APPWRITE_FUNCTION_PROJECT_ID", progProject)
	t.Setenv("TURN_PROGRESS_DATABASE", progDB)
	t.Setenv("TURN_PROGRESS_TABLE", progTable)
	must(t, st.aw.SeedProject(localappwrite.ProjectSpec{ID: progProject}))
	// Row security on, no table-level read: a row is readable only through its own read("user:…").
	must(t, st.aw.SeedDatabase(progProject, localappwrite.DatabaseSpec{ID: progDB, Tables: []localappwrite.TableSpec{
		{ID: progTable, RowSecurity: true, Columns: progressColumns}}}))
	for _, u := range []string{"alice", "bob"} {
		must(t, st.aw.SeedUser(progProject, localappwrite.UserSpec{ID: u, Email: u + "@example.com"}))
	}
	// The function as appwrite.json declares it: 900 s timeout, tables.read, rows.read (the stop row) and
	// rows.write.
	must(t, st.aw.RegisterFunction(progProject, localappwrite.FunctionSpec{ID: "turn", URL: st.fn.URL, Secret: "rt-secret",
		Scopes: []string{"tables.read", "rows.read", "rows.write"}, Timeout: 900, Execute: []string{"users"}}))
	return st
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// execute creates an execution of turn as the user of session (Executions API, as the Web SDK does).
func (st *stack) execute(t testing.TB, session string, async bool, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	payload, _ := json.Marshal(map[string]any{"body": string(b), "async": async, "path": "/", "method": "POST",
		"headers": map[string]string{"x-session-api-key": testKey, "content-type": "application/json", "accept": "application/json"}})
	req, _ := http.NewRequest("POST", st.api.URL+"/v1/functions/turn/executions", bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Appwrite-Project", progProject)
	req.Header.Set("X-Appwrite-Session", session)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// browser is a Realtime client as the Appwrite Web SDK opens it: connect with the project and channels,
// then authenticate with the session from the SDK's cookie fallback.
type browser struct {
	t  testing.TB
	ws *websocket.Conn
}

func openBrowser(t testing.TB, st *stack, session, turnID string) *browser {
	t.Helper()
	ch := "databases." + progDB + ".tables." + progTable + ".rows"
	q := url.Values{"project": {progProject}, "channels[]": {ch}}
	if turnID != "" {
		q.Set(strings.ReplaceAll(ch, ".", "_")+"[]", `{"method":"equal","attribute":"turn_id","values":["`+turnID+`"]}`)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(st.api.URL, "http")+"/v1/realtime?"+q.Encode(), nil)
	must(t, err)
	ws.SetReadLimit(4 << 20)
	t.Cleanup(func() { _ = ws.CloseNow() })
	b := &browser{t: t, ws: ws}
	if m := b.read(); m.Type != "connected" {
		t.Fatalf("connected: %s", m.Data)
	}
	b.send(map[string]any{"type": "authentication", "data": map[string]string{"session": session}})
	if m := b.read(); m.Type != "response" {
		t.Fatalf("authentication: %s %s", m.Type, m.Data)
	}
	return b
}

type wsMsg struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

func (b *browser) read() wsMsg {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, raw, err := b.ws.Read(ctx)
	if err != nil {
		b.t.Fatalf("realtime read: %v", err)
	}
	var m wsMsg
	must(b.t, json.Unmarshal(raw, &m))
	return m
}

func (b *browser) send(v any) {
	j, _ := json.Marshal(v)
	must(b.t, b.ws.Write(context.Background(), websocket.MessageText, j))
}

// progressRow is a row of the progress table as a Realtime event carries it.
type progressRow struct {
	ID     string   `json:"$id"`
	Perms  []string `json:"$permissions"`
	TurnID string   `json:"turn_id"`
	Seq    int      `json:"seq"`
	Type   string   `json:"type"`
	Body   string   `json:"payload"`
	Time   string   `json:"time"`
}

// watch reads row events until the row of complete and returns the rows.
func (b *browser) watch() []progressRow {
	b.t.Helper()
	var rows []progressRow
	for {
		r := b.next()
		rows = append(rows, r)
		if r.Type == timeline.TypeComplete {
			return rows
		}
	}
}

func decodeRows(t testing.TB, rows []progressRow) []timelinetest.Decoded {
	t.Helper()
	var out []timelinetest.Decoded
	for i, r := range rows {
		if r.Seq != i+1 {
			t.Fatalf("row %d has seq %d: the rows arrived out of order or with a gap", i, r.Seq)
		}
		var d timelinetest.Decoded
		must(t, json.Unmarshal([]byte(r.Body), &d))
		if d.Type() != r.Type {
			t.Fatalf("row %d: type %q, payload type %q", i, r.Type, d.Type())
		}
		out = append(out, d)
	}
	if err := timelinetest.CheckOrder(out); err != nil {
		t.Fatal(err)
	}
	return out
}

func timeToolTurn() []scriptedllm.Reply {
	return []scriptedllm.Reply{
		route("platform", "needs the time", ""),
		{ToolCalls: []scriptedllm.ToolCall{{Name: "current_time", Arguments: "{}"}}},
		{Content: "It is late."},
	}
}

// aliceWatches is the browser's side of an async turn for alice: her browser and bob's subscribe to the
// progress rows, start creates the turn's execution (given alice's session), and alice renders the time
// tool's turn from rows readable by her alone while bob, on the same channel, receives none of them.
func aliceWatches(t *testing.T, turnID string, start func(st *stack, alice string)) {
	t.Helper()
	st := newStack(t, timeToolTurn()...)
	st.model.PushDiverted(scriptedllm.Reply{Content: "Late"}) // the conversation title
	alice, _ := st.aw.CreateSession(progProject, "alice")
	bob, _ := st.aw.CreateSession(progProject, "bob")
	a := openBrowser(t, st, alice, turnID)
	b := openBrowser(t, st, bob, "")
	start(st, alice)
	rows := a.watch()
	evs := withoutUsage(decodeRows(t, rows))
	if evs[len(evs)-3].Type() != timeline.TypeDone || evs[len(evs)-3].Str("answer") != "It is late." {
		t.Fatalf("timeline %v", evs)
	}
	for _, r := range rows {
		if r.TurnID != turnID || len(r.Perms) != 1 || r.Perms[0] != `read("user:alice")` || r.Time == "" {
			t.Fatalf("row %+v", r)
		}
	}
	seen := map[string]bool{}
	for _, e := range evs {
		seen[e.Type()] = true
	}
	for _, want := range []string{"status", "route", "subagent_start", "tool_start", "tool_end", "token", "subagent_end", "done", "conversation_title", "complete"} {
		if !seen[want] {
			t.Fatalf("no %s in %v", want, evs)
		}
	}
	// Bob's next message is the answer to his ping: no row of alice's reached him.
	b.send(map[string]string{"type": "ping"})
	if m := b.read(); m.Type != "pong" {
		t.Fatalf("bob received %s %s", m.Type, m.Data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must(t, st.aw.Flush(ctx))
}

// TestAsyncTurnWatchedThroughRealtime is the browser's path: alice subscribes to the progress rows, creates
// an async execution with her session, and renders the turn from the Realtime events; bob, subscribed to the
// same channel, receives none of it.
func TestAsyncTurnWatchedThroughRealtime(t *testing.T) {
	aliceWatches(t, "turn-alice-1", func(st *stack, alice string) {
		status, ex := st.execute(t, alice, true, map[string]any{"message": "what time is it?", "async": true,
			"progress": map[string]any{"realtime": true, "turn_id": "turn-alice-1"}})
		if status != http.StatusAccepted || ex["status"] != "waiting" {
			t.Fatalf("execution %d %v", status, ex)
		}
	})
}

// TestTurnForAUserWhoIsNotThere is chat's automations' path (docs/turn.md, "progress.user_id"): a server
// holding the session key creates the execution with an API key, so the execution has no calling user, and
// names the user in progress.user_id. alice's browser renders the turn from rows only she can read; bob,
// subscribed to the same channel, receives none of them. The same request without the session key (turn in
// unauthenticated mode) is refused before any model call (TestProgressRefusalsComeBeforeAnyModelCall).
func TestTurnForAUserWhoIsNotThere(t *testing.T) {
	aliceWatches(t, "turn-for-alice", func(st *stack, _ string) {
		key, err := st.aw.CreateKey(progProject, []string{"executions.write"})
		must(t, err)
		body, _ := json.Marshal(map[string]any{"message": "what time is it?", "async": true,
			"progress": map[string]any{"realtime": true, "turn_id": "turn-for-alice", "user_id": "alice"}})
		payload, _ := json.Marshal(map[string]any{"body": string(body), "async": true, "path": "/", "method": "POST",
			"headers": map[string]string{"x-session-api-key": testKey, "content-type": "application/json"}})
		req, _ := http.NewRequest("POST", st.api.URL+"/v1/functions/turn/executions", bytes.NewReader(payload))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Appwrite-Project", progProject)
		req.Header.Set("X-Appwrite-Key", key)
		res, err := http.DefaultClient.Do(req)
		must(t, err)
		res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			t.Fatalf("execution with an API key: %d", res.StatusCode)
		}
	})
}

func writeCA(t *testing.T, r *webhookreceiver.Receiver) string {
	p := filepath.Join(t.TempDir(), "ca.pem")
	must(t, os.WriteFile(p, r.CertPEM(), 0o600))
	return p
}

const whSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// TestSyncTurnWithBothSinks: a synchronous execution publishes to Realtime and to a signed webhook (checked
// with the standard-webhooks library), and its body still holds the whole timeline.
func TestSyncTurnWithBothSinks(t *testing.T) {
	st := newStack(t, timeToolTurn()...)
	st.model.PushDiverted(scriptedllm.Reply{Content: "Late"}) // the conversation title
	recv := webhookreceiver.New(whSecret)
	t.Cleanup(recv.Close)
	t.Setenv("SAFEHTTP_ALLOW", "127.0.0.0/8")
	t.Setenv("SAFEHTTP_CA_FILE", writeCA(t, recv))
	alice, _ := st.aw.CreateSession(progProject, "alice")
	a := openBrowser(t, st, alice, "")
	status, ex := st.execute(t, alice, false, map[string]any{"message": "time?",
		"progress": map[string]any{"realtime": true, "webhook": map[string]string{"url": recv.URL(), "secret": whSecret}}})
	if status != http.StatusCreated || ex["responseStatusCode"] != float64(200) {
		t.Fatalf("execution %d %v", status, ex)
	}
	body, err := timelinetest.ParseJSON([]byte(ex["responseBody"].(string)))
	must(t, err)
	must(t, timelinetest.CheckOrder(body))
	rows := decodeRows(t, a.watch())
	if len(rows) != len(body) {
		t.Fatalf("%d rows, %d events in the body", len(rows), len(body))
	}
	// The webhook got every event once, in order, in signed batches.
	var got []timelinetest.Decoded
	turnID := ""
	for _, d := range recv.Deliveries() {
		if !d.Verified {
			t.Fatalf("signature refused by the standard-webhooks library: %s", d.VerifyErr)
		}
		var wb struct {
			TurnID string `json:"turn_id"`
			Events []struct {
				Seq   int                  `json:"seq"`
				Time  string               `json:"time"`
				Event timelinetest.Decoded `json:"event"`
			} `json:"events"`
		}
		must(t, json.Unmarshal(d.Body, &wb))
		if turnID == "" {
			turnID = wb.TurnID
		}
		if wb.TurnID != turnID {
			t.Fatalf("turn id %q then %q", turnID, wb.TurnID)
		}
		first, last := wb.Events[0].Seq, wb.Events[len(wb.Events)-1].Seq
		if d.Header.Get("webhook-id") != wb.TurnID+"_"+itoa(first)+"-"+itoa(last) {
			t.Fatalf("webhook-id %q", d.Header.Get("webhook-id"))
		}
		for _, e := range wb.Events {
			if e.Seq != len(got)+1 {
				t.Fatalf("seq %d after %d events", e.Seq, len(got))
			}
			got = append(got, e.Event)
		}
	}
	if len(got) != len(body) || got[len(got)-1].Type() != timeline.TypeComplete {
		t.Fatalf("webhook got %d events, body has %d", len(got), len(body))
	}
	// Without a turn_id the execution id names the turn.
	if turnID != ex["$id"] {
		t.Fatalf("turn id %q, execution %v", turnID, ex["$id"])
	}
	// Several events per batch: the batching works.
	if n := len(recv.Deliveries()); n >= len(body) {
		t.Fatalf("%d deliveries for %d events", n, len(body))
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestFailingWebhookIsDroppedAndTheTurnGoesOn: the receiver answers 500 to everything; the turn still
// answers 200 with its whole timeline, which says the sink was dropped, and the log says why.
func TestFailingWebhookIsDroppedAndTheTurnGoesOn(t *testing.T) {
	st := newStack(t, timeToolTurn()...)
	st.model.PushDiverted(scriptedllm.Reply{Content: "Late"}) // the conversation title
	recv := webhookreceiver.New(whSecret)
	t.Cleanup(recv.Close)
	recv.SetBehaviour(func(int, webhookreceiver.Delivery) (int, time.Duration) { return http.StatusInternalServerError, 0 })
	t.Setenv("SAFEHTTP_ALLOW", "127.0.0.0/8")
	t.Setenv("SAFEHTTP_CA_FILE", writeCA(t, recv))
	res := do(t, &httptest.Server{URL: st.fn.URL}, "POST", "/", map[string]any{"message": "time?",
		"progress": map[string]any{"webhook": map[string]string{"url": recv.URL(), "secret": whSecret}}},
		map[string]string{"x-session-api-key": testKey, "accept": "application/json", "x-open-runtimes-secret": "rt-secret"})
	if res.status != 200 {
		t.Fatalf("%d %s", res.status, res.body)
	}
	evs, err := timelinetest.ParseJSON(res.body)
	must(t, err)
	must(t, timelinetest.CheckOrder(evs))
	dropped := false
	for _, e := range evs {
		dropped = dropped || e.Type() == timeline.TypeStatus && e.Str("sink") == "webhook" &&
			e.Str("message") == progress.DroppedMessage("webhook", progress.DefaultMaxFailures)
	}
	done := false
	for _, e := range evs {
		done = done || e.Type() == timeline.TypeDone && e.Str("answer") == "It is late."
	}
	if !dropped || !done {
		t.Fatalf("timeline %s", res.body)
	}
	if n := len(recv.Deliveries()); n != progress.DefaultMaxFailures {
		t.Fatalf("%d delivery attempts, want %d", n, progress.DefaultMaxFailures)
	}
	if !strings.Contains(st.logs.all(), "progress: sink webhook dropped after 3 failed deliveries: POST "+recv.URL()+" answered HTTP 500") {
		t.Fatalf("log: %s", st.logs.all())
	}
}

// TestProgressRefusalsComeBeforeAnyModelCall covers every refused sink, through the runtime.
func TestProgressRefusalsComeBeforeAnyModelCall(t *testing.T) {
	st := newStack(t)
	key, err := st.aw.DynamicKey(progProject, []string{"tables.read", "rows.write"}, time.Minute)
	must(t, err)
	recv := webhookreceiver.New(whSecret)
	t.Cleanup(recv.Close)
	srv := &httptest.Server{URL: st.fn.URL}
	hdr := func(extra ...string) map[string]string {
		h := map[string]string{"x-session-api-key": testKey, "x-open-runtimes-secret": "rt-secret"}
		for i := 0; i+1 < len(extra); i += 2 {
			h[extra[i]] = extra[i+1]
		}
		return h
	}
	user := hdr("x-appwrite-user-id", "alice", "x-appwrite-key", key)
	hook := func(u, s string) map[string]any {
		return map[string]any{"message": "m", "progress": map[string]any{"webhook": map[string]string{"url": u, "secret": s}}}
	}
	cases := []struct {
		name    string
		body    any
		headers map[string]string
		env     map[string]string
		status  int
		detail  string
	}{
		{"async without sink", map[string]any{"message": "m", "async": true}, hdr(), nil, 422, request.MsgAsyncNeedsSink},
		{"empty progress", map[string]any{"message": "m", "progress": map[string]any{}}, hdr(), nil, 422, request.MsgProgressEmpty},
		{"async with empty progress", map[string]any{"message": "m", "async": true, "progress": map[string]any{}}, hdr(), nil, 422, request.MsgAsyncNeedsSink},
		{"bad turn id", map[string]any{"message": "m", "progress": map[string]any{"realtime": true, "turn_id": "a b"}}, user, nil, 422, request.MsgTurnID},
		{"realtime without user", map[string]any{"message": "m", "progress": map[string]any{"realtime": true}}, hdr("x-appwrite-key", key), nil, 422, handler.MsgRealtimeNoUser},
		{"realtime with empty user", map[string]any{"message": "m", "progress": map[string]any{"realtime": true}}, hdr("x-appwrite-key", key, "x-appwrite-user-id", ""), nil, 422, handler.MsgRealtimeNoUser},
		{"user id not an id", map[string]any{"message": "m", "progress": map[string]any{"realtime": true, "user_id": "a b"}}, hdr("x-appwrite-key", key), nil, 422, request.MsgUserID},
		{"user id without realtime", map[string]any{"message": "m", "progress": map[string]any{"webhook": map[string]string{"url": "https://example.com/h", "secret": whSecret}, "user_id": "alice"}}, hdr(), nil, 422, request.MsgUserIDNoRealtime},
		{"user id of another user", map[string]any{"message": "m", "progress": map[string]any{"realtime": true, "user_id": "bob"}}, user, nil, 422, handler.MsgUserIDOtherUser},
		{"user id without the session key", map[string]any{"message": "m", "progress": map[string]any{"realtime": true, "user_id": "alice"}}, hdr("x-appwrite-key", key),
			map[string]string{"AGENT_API_KEY": "", "AGENT_ALLOW_UNAUTHENTICATED": "true"}, 422, handler.MsgUserIDUnauthenticated},
		{"realtime without key", map[string]any{"message": "m", "progress": map[string]any{"realtime": true}}, hdr("x-appwrite-user-id", "alice"), nil, 422, handler.MsgRealtimeNoKey},
		{"realtime not configured", map[string]any{"message": "m", "progress": map[string]any{"realtime": true}}, user, map[string]string{"TURN_PROGRESS_TABLE": ""}, 422, handler.MsgRealtimeNoTable},
		{"table does not exist", map[string]any{"message": "m", "progress": map[string]any{"realtime": true}}, user, map[string]string{"TURN_PROGRESS_TABLE": "nope"}, 422,
			"progress.realtime: progress table not found: table 'nope' of database 'agent' does not exist in project 'agentapp' (table_not_found: Table with the requested ID"},
		{"key of no use", map[string]any{"message": "m", "progress": map[string]any{"realtime": true}}, hdr("x-appwrite-user-id", "alice", "x-appwrite-key", "dynamic_forged"), nil, 502, "progress.realtime: reading table 'agent/turn_progress' answered HTTP 401"},
		{"webhook http", hook("http://example.com/h", whSecret), hdr(), nil, 422, "progress.webhook.url is not allowed: "},
		{"webhook not a URL", hook("example.com/h", whSecret), hdr(), nil, 422, request.MsgWebhookURL},
		{"webhook private", hook(recv.URL(), whSecret), hdr(), nil, 422, "progress.webhook.url is not allowed: "},
		{"webhook private literal", hook("https://10.1.2.3/h", whSecret), hdr(), nil, 422, "progress.webhook.url is not allowed: "},
		{"webhook no secret", hook("https://example.com/h", ""), hdr(), nil, 422, request.MsgWebhookNoSecret},
		{"webhook bad secret", hook("https://example.com/h", "whsec_c2hvcnQ="), hdr(), nil, 422, request.MsgWebhookSecret},
		{"webhook secret without prefix", hook("https://example.com/h", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), hdr(), nil, 422, request.MsgWebhookSecret},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			res := do(t, srv, "POST", "/", c.body, c.headers)
			var e struct {
				Detail string `json:"detail"`
			}
			_ = json.Unmarshal(res.body, &e)
			if res.status != c.status || !strings.HasPrefix(e.Detail, c.detail) {
				t.Fatalf("%d %s", res.status, res.body)
			}
		})
	}
	if n := len(st.model.Requests()); n != 0 {
		t.Fatalf("the model was called %d times", n)
	}
}

// TestAsyncBudgetIsTheLongOne: the model never answers; the turn ends on its budget, which is
// TURN_ASYNC_BUDGET for an async call and TURN_BUDGET for a synchronous one (the error detail names it).
func TestAsyncBudgetIsTheLongOne(t *testing.T) {
	st := newStack(t)
	st.model.SetFallback(scriptedllm.Reply{Delay: time.Hour}) // answers only when the client gives up
	t.Setenv("TURN_BUDGET", "300ms")
	t.Setenv("TURN_ASYNC_BUDGET", "700ms")
	recv := webhookreceiver.New(whSecret)
	t.Cleanup(recv.Close)
	t.Setenv("SAFEHTTP_ALLOW", "127.0.0.0/8")
	t.Setenv("SAFEHTTP_CA_FILE", writeCA(t, recv))
	srv := &httptest.Server{URL: st.fn.URL}
	for _, async := range []bool{false, true} {
		res := do(t, srv, "POST", "/", map[string]any{"message": "m", "async": async,
			"progress": map[string]any{"webhook": map[string]string{"url": recv.URL(), "secret": whSecret}}},
			map[string]string{"x-session-api-key": testKey, "accept": "application/json", "x-open-runtimes-secret": "rt-secret"})
		evs, err := timelinetest.ParseJSON(res.body)
		must(t, err)
		must(t, timelinetest.CheckOrder(evs))
		want := "The turn ran out of its 300ms time budget"
		if async {
			want = "The turn ran out of its 700ms time budget"
		}
		if e := evs[len(evs)-2]; e.Type() != timeline.TypeError || e.Str("code") != timeline.CodeBudget || !strings.HasPrefix(e.Str("detail"), want) {
			t.Fatalf("async=%v: %s", async, res.body)
		}
	}
}

// TestAsyncTurnStoppedByItsStopRow is a user pressing Stop while an async turn streams: chat writes the stop
// row into the progress table with its key (docs/turn.md "Stopping a turn"); turn sees it, closes the model's
// stream (the model, stalled mid-answer, would otherwise never end), and its timeline ends with error
// cancelled, the partial answer, then complete; no token comes after the stop.
func TestAsyncTurnStoppedByItsStopRow(t *testing.T) {
	st := newStack(t, route("platform", "long answer", ""),
		scriptedllm.Reply{Content: "one two three four five six", StallAfter: 2})
	alice, _ := st.aw.CreateSession(progProject, "alice")
	a := openBrowser(t, st, alice, "turn-stop-1")
	if status, ex := st.execute(t, alice, true, map[string]any{"message": "write a lot", "async": true,
		"progress": map[string]any{"realtime": true, "turn_id": "turn-stop-1"}}); status != http.StatusAccepted {
		t.Fatalf("execution %d %v", status, ex)
	}
	var rows []progressRow
	for !strings.Contains(tokensOf(rows), "one two ") { // the stream is stalled after two tokens
		rows = append(rows, a.next())
	}
	key, err := st.aw.CreateKey(progProject, []string{"rows.write"})
	must(t, err)
	writeStopRow(t, st, key, "turn-stop-1", "alice")
	var stopSeen bool
	for rows[len(rows)-1].Type != timeline.TypeComplete {
		r := a.next()
		if r.Type == progress.StopType {
			stopSeen = true // alice may read her stop row too; the page skips it
			continue
		}
		if r.Type == timeline.TypeToken && stopSeen {
			t.Errorf("a token after the stop: %+v", r)
		}
		rows = append(rows, r)
	}
	evs := withoutUsage(decodeRows(t, rows))
	e := evs[len(evs)-2]
	if e.Type() != timeline.TypeError || e.Str("code") != timeline.CodeCancelled || e.Str("answer") != "one two" {
		t.Fatalf("the stopped turn ends with %v", e)
	}
}

// next reads the next row event.
func (b *browser) next() progressRow {
	b.t.Helper()
	m := b.read()
	if m.Type != "event" {
		b.t.Fatalf("unexpected %s %s", m.Type, m.Data)
	}
	var ev struct {
		Payload progressRow `json:"payload"`
	}
	must(b.t, json.Unmarshal(m.Data, &ev))
	return ev.Payload
}

func tokensOf(rows []progressRow) string {
	var b strings.Builder
	for _, r := range rows {
		if r.Type == timeline.TypeToken {
			var d timelinetest.Decoded
			_ = json.Unmarshal([]byte(r.Body), &d)
			b.WriteString(d.Str("content"))
		}
	}
	return b.String()
}

// writeStopRow writes the stop row of turnID as chat does: with a server key, readable by the user only.
func writeStopRow(t *testing.T, st *stack, key, turnID, user string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"rowId": "unique()", "permissions": []string{`read("user:` + user + `")`},
		"data": map[string]any{"turn_id": turnID, "seq": 0, "type": progress.StopType, "payload": `{"type":"stop"}`,
			"time": time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00")}})
	req, _ := http.NewRequest(http.MethodPost, st.api.URL+"/v1/tablesdb/"+progDB+"/tables/"+progTable+"/rows", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Appwrite-Project", progProject)
	req.Header.Set("X-Appwrite-Key", key)
	res, err := http.DefaultClient.Do(req)
	must(t, err)
	defer res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("writing the stop row: HTTP %d", res.StatusCode)
	}
}

// TestWebSDKWatchesAnAsyncTurn runs testdata/websdk/watch.cjs: the real Appwrite Web SDK subscribes to the
// progress rows through the stand-in's Realtime and creates the async execution with the user's session; the
// rows it prints must be the whole timeline, in order. It needs Node and the SDK installed in a folder named by
// APPWRITE_WEB_SDK (npm install appwrite@27 ws@8 there), so it is skipped otherwise:
//
//	mkdir -p /tmp/websdk && (cd /tmp/websdk && npm install appwrite@27.0.0 ws@8)
//	APPWRITE_WEB_SDK=/tmp/websdk go test -run WebSDK .
func TestWebSDKWatchesAnAsyncTurn(t *testing.T) {
	dir := os.Getenv("APPWRITE_WEB_SDK")
	if dir == "" {
		t.Skip("set APPWRITE_WEB_SDK to a folder with node_modules/appwrite and node_modules/ws")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	st := newStack(t, timeToolTurn()...)
	session, _ := st.aw.CreateSession(progProject, "alice")
	script, _ := filepath.Abs("testdata/websdk/watch.cjs")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"), "ENDPOINT="+st.api.URL+"/v1",
		"PROJECT="+progProject, "SESSION="+session, "TURN_ID=websdk-1", "DATABASE="+progDB, "TABLE="+progTable,
		"SESSION_KEY="+testKey)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr.String())
	}
	var evs []timelinetest.Decoded
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var line struct {
			Seq    int                  `json:"seq"`
			TurnID string               `json:"turn_id"`
			Event  timelinetest.Decoded `json:"event"`
		}
		must(t, json.Unmarshal(sc.Bytes(), &line))
		if line.TurnID != "websdk-1" || line.Seq != len(evs)+1 {
			t.Fatalf("row %d: %s", len(evs)+1, sc.Bytes())
		}
		evs = append(evs, line.Event)
	}
	must(t, timelinetest.CheckOrder(evs))
	if evs[len(evs)-3].Str("answer") != "It is late." {
		t.Fatalf("%v", evs)
	}
	t.Logf("the Web SDK received %d rows in order; %s", len(evs), stderr.String())
}
