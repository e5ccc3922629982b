package localappwrite

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/coder/websocket"
)

type rtClient struct {
	t  *testing.T
	ws *websocket.Conn
}

type rtMsg struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

func dialRealtime(t *testing.T, f *fixture, query string, cookie string) *rtClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := http.Header{}
	if cookie != "" {
		h.Set("Cookie", "a_session_"+testProject+"="+cookie)
	}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.ts.URL, "http")+"/v1/realtime?"+query, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	return &rtClient{t: t, ws: ws}
}

func (c *rtClient) read() rtMsg {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m rtMsg
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("%v: %s", err, b)
	}
	return m
}

func (c *rtClient) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	if err := c.ws.Write(context.Background(), websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
}

func seedProgressTable(t *testing.T, f *fixture) {
	t.Helper()
	err := f.s.SeedDatabase(testProject, DatabaseSpec{ID: "agent", Tables: []TableSpec{{ID: "progress", RowSecurity: true,
		Columns: []Column{{Key: "turn_id", Type: "string", Size: 64}, {Key: "seq", Type: "integer"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"alice", "bob"} {
		if err := f.s.SeedUser(testProject, UserSpec{ID: u, Email: u + "@example.com"}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRealtimeDeliversRowsOnlyToUsersWhoMayReadThem(t *testing.T) {
	f := newFixture(t, Options{})
	seedProgressTable(t, f)
	alice, _ := f.s.CreateSession(testProject, "alice")
	bob, _ := f.s.CreateSession(testProject, "bob")
	ch := "databases.agent.tables.progress.rows"
	q := url.Values{"project": {testProject}, "channels[]": {ch}}
	// Alice authenticates with the cookie at connect; bob with an authentication message, as the Web SDK does
	// with its cookie fallback.
	a := dialRealtime(t, f, q.Encode(), alice)
	m := a.read()
	var conn struct {
		Channels      []string       `json:"channels"`
		Subscriptions []string       `json:"subscriptions"`
		User          map[string]any `json:"user"`
	}
	if err := json.Unmarshal(m.Data, &conn); err != nil || m.Type != "connected" || conn.User["$id"] != "alice" ||
		len(conn.Subscriptions) != 1 || conn.Channels[0] != ch {
		t.Fatalf("connected %s %s", m.Type, m.Data)
	}
	if _, leaked := conn.User["password"]; leaked {
		t.Fatal("account model carries the password hash")
	}
	b := dialRealtime(t, f, q.Encode(), "")
	if m := b.read(); m.Type != "connected" || !strings.Contains(string(m.Data), `"user":null`) {
		t.Fatalf("guest connected %s", m.Data)
	}
	b.send(map[string]any{"type": "authentication", "data": map[string]string{"session": bob}})
	if m := b.read(); m.Type != "response" || !strings.Contains(string(m.Data), `"to":"authentication"`) {
		t.Fatalf("auth %s %s", m.Type, m.Data)
	}
	b.send(map[string]any{"type": "authentication", "data": map[string]string{"session": "bm9wZQ=="}})
	if m := b.read(); m.Type != "error" || string(m.Data) != `{"code":1003,"message":"Session is not valid."}` {
		t.Fatalf("bad session %s", m.Data)
	}

	db := appwrite.NewTablesDB(f.sdk(f.key))
	if _, err := db.CreateRow("agent", "progress", "r1", map[string]any{"turn_id": "t1", "seq": 1},
		db.WithCreateRowPermissions([]string{`read("user:alice")`})); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRow("agent", "progress", "r2", map[string]any{"turn_id": "t2", "seq": 1},
		db.WithCreateRowPermissions([]string{`read("user:bob")`})); err != nil {
		t.Fatal(err)
	}
	ev := a.read()
	var data struct {
		Events        []string       `json:"events"`
		Channels      []string       `json:"channels"`
		Payload       map[string]any `json:"payload"`
		Subscriptions []string       `json:"subscriptions"`
		Timestamp     string         `json:"timestamp"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil || ev.Type != "event" {
		t.Fatalf("%v %s", err, ev.Data)
	}
	if data.Payload["$id"] != "r1" || data.Subscriptions[0] != conn.Subscriptions[0] || data.Timestamp == "" {
		t.Fatalf("alice got %s", ev.Data)
	}
	for _, want := range []string{"rows", ch, ch + ".r1", "tablesdb.agent.tables.progress.rows.create", "documents"} {
		found := false
		for _, c := range data.Channels {
			found = found || c == want
		}
		if !found {
			t.Fatalf("channel %s missing in %v", want, data.Channels)
		}
	}
	if !strings.Contains(strings.Join(data.Events, " "), "databases.agent.tables.progress.rows.r1.create ") {
		t.Fatalf("events %v", data.Events)
	}
	// Bob gets his row, never alice's: the first event he sees is r2.
	if ev := b.read(); !strings.Contains(string(ev.Data), `"$id":"r2"`) {
		t.Fatalf("bob got %s", ev.Data)
	}
	// Alice never receives r2: her next message after a ping is the pong.
	a.send(map[string]string{"type": "ping"})
	if m := a.read(); m.Type != "pong" {
		t.Fatalf("alice after r2: %s %s", m.Type, m.Data)
	}
}

func TestRealtimeQueriesAndMessageSubscribe(t *testing.T) {
	f := newFixture(t, Options{})
	seedProgressTable(t, f)
	alice, _ := f.s.CreateSession(testProject, "alice")
	ch := "databases.agent.tables.progress.rows"
	eq := `{"method":"equal","attribute":"turn_id","values":["t2"]}`
	q := url.Values{"project": {testProject}, "channels[]": {ch}, strings.ReplaceAll(ch, ".", "_") + "[]": {eq}}
	a := dialRealtime(t, f, q.Encode(), alice)
	a.read()
	// A second subscription by message, on the rows channel, with seq > 1.
	a.send(map[string]any{"type": "subscribe", "data": []map[string]any{{"channels": []string{"rows"},
		"queries": []string{`{"method":"greaterThan","attribute":"seq","values":[1]}`}, "subscriptionId": "bySeq"}}})
	if m := a.read(); m.Type != "response" || !strings.Contains(string(m.Data), `"subscriptionId":"bySeq"`) {
		t.Fatalf("subscribe %s", m.Data)
	}
	db := appwrite.NewTablesDB(f.sdk(f.key))
	perm := db.WithCreateRowPermissions([]string{`read("user:alice")`})
	for i, row := range []map[string]any{{"turn_id": "t1", "seq": 1}, {"turn_id": "t2", "seq": 1}, {"turn_id": "t1", "seq": 2}} {
		if _, err := db.CreateRow("agent", "progress", "r"+string(rune('0'+i)), row, perm); err != nil {
			t.Fatal(err)
		}
	}
	m := a.read()
	if !strings.Contains(string(m.Data), `"$id":"r1"`) || strings.Contains(string(m.Data), "bySeq") {
		t.Fatalf("first match %s", m.Data)
	}
	m = a.read()
	if !strings.Contains(string(m.Data), `"$id":"r2"`) || !strings.Contains(string(m.Data), `"subscriptions":["bySeq"]`) {
		t.Fatalf("second match %s", m.Data)
	}
	a.send(map[string]any{"type": "unsubscribe", "data": []map[string]string{{"subscriptionId": "bySeq"}, {"subscriptionId": "nope"}}})
	if m := a.read(); m.Type != "response" || string(m.Data) != `{"subscriptions":[{"subscriptionId":"bySeq","removed":true},{"subscriptionId":"nope","removed":false}],"success":true,"to":"unsubscribe"}` {
		t.Fatalf("unsubscribe %s", m.Data)
	}
	a.send(map[string]any{"type": "subscribe", "data": []map[string]any{{"channels": []string{"rows"},
		"queries": []string{`{"method":"search","attribute":"x","values":["y"]}`}}}})
	if m := a.read(); m.Type != "error" || !strings.Contains(string(m.Data), "is not supported in Realtime queries") {
		t.Fatalf("bad query %s", m.Data)
	}
}

func TestRealtimeRefusesAnUnknownProject(t *testing.T) {
	f := newFixture(t, Options{})
	c := dialRealtime(t, f, "project=nope&channels[]=rows", "")
	if m := c.read(); m.Type != "error" || string(m.Data) != `{"code":1008,"message":"Missing or unknown project ID"}` {
		t.Fatalf("%s", m.Data)
	}
	_, _, err := c.ws.Read(context.Background())
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("close %v", err)
	}
}

func TestSessionExecutesAsTheUser(t *testing.T) {
	f := newFixture(t, Options{})
	seedProgressTable(t, f)
	alice, _ := f.s.CreateSession(testProject, "alice")
	req, _ := http.NewRequest("GET", f.ts.URL+"/v1/tablesdb/agent/tables/progress/rows", nil)
	req.Header.Set("X-Appwrite-Project", testProject)
	req.Header.Set("X-Appwrite-Session", alice)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("session read: %d", res.StatusCode)
	}
	req.Header.Set("X-Appwrite-Session", "forged")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("forged session: %d", res.StatusCode)
	}
}

func postJSON(t *testing.T, f *fixture, path string, hdr map[string]string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", f.ts.URL+path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Appwrite-Project", testProject)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

func TestBulkRowCreate(t *testing.T) {
	f := newFixture(t, Options{})
	seedProgressTable(t, f)
	alice, _ := f.s.CreateSession(testProject, "alice")
	ch := "databases.agent.tables.progress.rows"
	a := dialRealtime(t, f, url.Values{"project": {testProject}, "channels[]": {ch}}.Encode(), alice)
	a.read()
	path := "/v1/tablesdb/agent/tables/progress/rows"
	key := map[string]string{"X-Appwrite-Key": f.key}
	perm := []string{`read("user:alice")`}
	rows := []map[string]any{}
	for i := 1; i <= 3; i++ {
		rows = append(rows, map[string]any{"turn_id": "t", "seq": i, "$permissions": perm})
	}
	rows[1]["$id"] = "second"
	status, out := postJSON(t, f, path, key, map[string]any{"rows": rows})
	if status != http.StatusCreated || out["total"] != float64(3) {
		t.Fatalf("%d %v", status, out)
	}
	got := out["rows"].([]any)
	if got[1].(map[string]any)["$id"] != "second" || got[0].(map[string]any)["$permissions"].([]any)[0] != perm[0] {
		t.Fatalf("%v", got)
	}
	// One Realtime event per row, in order.
	for i := 1; i <= 3; i++ {
		m := a.read()
		if !strings.Contains(string(m.Data), `"seq":`+string(rune('0'+i))) {
			t.Fatalf("event %d: %s", i, m.Data)
		}
	}
	many := make([]map[string]any, 101)
	for i := range many {
		many[i] = map[string]any{"turn_id": "t", "seq": i}
	}
	refused := []struct {
		hdr    map[string]string
		body   map[string]any
		status int
		typ    string
	}{
		{map[string]string{"X-Appwrite-Session": alice}, map[string]any{"rows": rows[:1]}, 401, ErrGeneralUnauthorizedScope},
		{key, map[string]any{"rows": rows[:1], "rowId": "x"}, 400, "general_bad_request"},
		{key, map[string]any{"rows": rows[:1], "permissions": perm}, 400, "general_bad_request"},
		{key, map[string]any{"rows": rows[:1], "data": map[string]any{"turn_id": "x"}}, 400, "general_bad_request"},
		{key, map[string]any{"rows": many}, 400, ErrGeneralArgumentInvalid},
		{key, map[string]any{"rows": []map[string]any{{"$id": "-bad", "turn_id": "t", "seq": 1}}}, 400, "general_bad_request"},
		{key, map[string]any{"rows": []map[string]any{{"$id": "second", "turn_id": "t", "seq": 1}}}, 409, ErrRowAlreadyExists},
		{key, map[string]any{"rows": []map[string]any{{"turn_id": "t", "seq": 1}, {"turn_id": "t", "nope": 1}}}, 400, ErrRowInvalidStructure},
	}
	for i, c := range refused {
		status, out := postJSON(t, f, path, c.hdr, c.body)
		if status != c.status || out["type"] != c.typ {
			t.Errorf("case %d: %d %v", i, status, out)
		}
	}
	// Nothing of a refused batch was stored (all or nothing).
	db := appwrite.NewTablesDB(f.sdk(f.key))
	list, err := db.ListRows("agent", "progress")
	if err != nil || list.Total != 3 {
		t.Fatalf("%v %v", list, err)
	}
}
