package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/shared/pyjson"
)

type meta struct{}

func (meta) Name() string                { return GuardedTool }
func (meta) Description() string         { return "call" }
func (meta) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object","properties":{}}`) }

// fakeServer records the payloads the guard sends and answers with reply.
type fakeServer struct {
	mu    sync.Mutex
	sent  []string
	reply func(payload map[string]any, n int) (string, error)
}

func (f *fakeServer) call(_ context.Context, args json.RawMessage) (string, error) {
	f.mu.Lock()
	f.sent = append(f.sent, string(args))
	n := len(f.sent)
	f.mu.Unlock()
	var p map[string]any
	_ = json.Unmarshal(args, &p)
	if f.reply == nil {
		return "ok", nil
	}
	return f.reply(p, n)
}

func (f *fakeServer) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sent...)
}

func seqIDs() func() string {
	var n atomic.Int64
	return func() string { return fmt.Sprintf("id%018d", n.Add(1)) }
}

func newGuard(f *fakeServer, atts ...request.Attachment) *writeGuard {
	return newWriteGuard(meta{}, f.call, atts, seqIDs())
}

func run(t *testing.T, g *writeGuard, args string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return g.Run(ctx, json.RawMessage(args))
}

func TestIsCreateAndDerivedNames(t *testing.T) {
	for tool, want := range map[string]bool{"databases_create": true, "tablesdb_create_table": true, "create": true,
		"create_thing": true, "users_list": false, "recreate_x": false, "x_created": false, "": false, "x_create": true} {
		if isCreate(tool) != want {
			t.Errorf("isCreate(%q) = %v", tool, !want)
		}
	}
	for tool, want := range map[string]string{"users_create": "user_id", "databases_create": "database_id",
		"policies_create": "policy_id", "address_create": "address_id", "tablesdb_create_table": "tablesdb_id", "create_x": ""} {
		got := ""
		for k := range ownIDKeys(tool) {
			got = k
		}
		if got != want {
			t.Errorf("ownIDKeys(%q) = %q, want %q", tool, got, want)
		}
	}
	for tool, want := range map[string]string{"databases_create": "databases_get", "tablesdb_create_table": "tablesdb_get_table",
		"storage_create_bucket": "storage_get_bucket", "create": ""} {
		if got := getToolFor(tool); got != want {
			t.Errorf("getToolFor(%q) = %q, want %q", tool, got, want)
		}
	}
}

func TestDedupeKey(t *testing.T) {
	for args, want := range map[string]string{
		`{"name":"x","table_id":"t","database_id":"d"}`:   "c:database_id=d,table_id=t",
		`{"database_id":"unique()","table_id":"t"}`:       "c:table_id=t",
		`{"zeta_id":"z","alpha_id":"a"}`:                  "c:zeta_id=z,alpha_id=a",
		`{"database_id":"","custom_id":"unique()"}`:       "",
		`{"name":"no id"}`:                                "",
		`{"row_id":5,"document_id":"doc"}`:                "c:document_id=doc",
		`{"database_id":"unique()","bucket_id":"photos"}`: "c:bucket_id=photos",
		`{"x_id":"1","file_id":"f","bucket_id":"b"}`:      "c:bucket_id=b,file_id=f,x_id=1",
	} {
		v, _ := parseJSON([]byte(args))
		if got := dedupeKey("c", v); got != want {
			t.Errorf("dedupeKey(%s) = %q, want %q", args, got, want)
		}
	}
}

// A create retried with the same concrete id runs once; the retry gets the exact blocked text.
func TestDuplicateCreateIsBlocked(t *testing.T) {
	f := &fakeServer{reply: func(map[string]any, int) (string, error) { return `{"$id":"shop","name":"Shop"}`, nil }}
	g := newGuard(f)
	args := `{"tool_name":"databases_create","arguments":{"database_id":"shop","name":"Shop"},"project_id":"p1"}`
	out, err := run(t, g, args)
	if err != nil || out != `{"$id":"shop","name":"Shop"}` {
		t.Fatalf("first: %q %v", out, err)
	}
	out, err = run(t, g, args)
	want := "Blocked duplicate databases_create for the same id in this turn.\nPrevious result:\n{\"$id\":\"shop\",\"name\":\"Shop\"}\n\n" +
		"This create did NOT run again. Use the previous result. Do not claim a new resource was created."
	if err != nil || out != want {
		t.Fatalf("retry: %q %v", out, err)
	}
	if n := len(f.calls()); n != 1 {
		t.Fatalf("the create ran %d times", n)
	}
	// The payload is forwarded as given (key order kept).
	if f.calls()[0] != args {
		t.Fatalf("sent %s", f.calls()[0])
	}
	// Non-creates and creates without a concrete id are not deduplicated.
	for i := 0; i < 2; i++ {
		if _, err := run(t, g, `{"tool_name":"databases_list","arguments":{"database_id":"shop"}}`); err != nil {
			t.Fatal(err)
		}
		if _, err := run(t, g, `{"tool_name":"users_create","arguments":{"email":"a@b.c"}}`); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.calls()); n != 5 {
		t.Fatalf("%d calls, want 5", n)
	}
}

var idShape = regexp.MustCompile(`^[a-z][a-z0-9]{19}$`)

func TestUniqueExpansionAndSlotReuse(t *testing.T) {
	for i := 0; i < 50; i++ {
		if id := newID(); !idShape.MatchString(id) {
			t.Fatalf("generated id %q", id)
		}
	}
	f := &fakeServer{}
	g := newWriteGuard(meta{}, f.call, nil, nil)
	run(t, g, `{"tool_name":"databases_create","arguments":{"database_id":"unique()","name":"Shop"}}`)
	run(t, g, `{"tool_name":"tablesdb_create_table","arguments":{"database_id":"unique()","table_id":"unique()","columns":[{"key":"unique()"}],"meta":{"x":"unique()"}}}`)
	// Two users in a row: the create's own id gets a fresh slot per attempt.
	run(t, g, `{"tool_name":"users_create","arguments":{"user_id":"unique()","email":"a@x.io"}}`)
	run(t, g, `{"tool_name":"users_create","arguments":{"user_id":"unique()","email":"b@x.io"}}`)
	var sent []map[string]any
	for _, c := range f.calls() {
		var p map[string]any
		json.Unmarshal([]byte(c), &p)
		sent = append(sent, p["arguments"].(map[string]any))
	}
	db := sent[0]["database_id"].(string)
	if !idShape.MatchString(db) {
		t.Fatalf("database_id %q", db)
	}
	if sent[1]["database_id"] != db {
		t.Fatalf("the table create's database_id %v is not the database's %s", sent[1]["database_id"], db)
	}
	tbl := sent[1]["table_id"].(string)
	col := sent[1]["columns"].([]any)[0].(map[string]any)["key"].(string)
	x := sent[1]["meta"].(map[string]any)["x"].(string)
	if tbl == db || col == tbl || x == col || !idShape.MatchString(col) || !idShape.MatchString(x) {
		t.Fatalf("slots not distinct: %s %s %s %s", db, tbl, col, x)
	}
	u1, u2 := sent[2]["user_id"].(string), sent[3]["user_id"].(string)
	if u1 == u2 || !idShape.MatchString(u1) || !idShape.MatchString(u2) {
		t.Fatalf("users got %s and %s", u1, u2)
	}
	// Slot ids are per guard (per turn), and unique() inside a string is left alone.
	g.exp.ids = map[string]string{"k": "fixed"}
	v, _ := parseJSON([]byte(`{"k":"unique()","s":"not unique() here"}`))
	if got := string(toJSON(g.exp.expand(v, "", nil, 0))); got != `{"k":"fixed","s":"not unique() here"}` {
		t.Fatalf("expand %s", got)
	}
}

// After expansion a create can land on an id already created this turn: the second check blocks it.
func TestExpandedIDIsDeduplicatedToo(t *testing.T) {
	f := &fakeServer{reply: func(map[string]any, int) (string, error) { return "created", nil }}
	g := newGuard(f)
	args := `{"tool_name":"tablesdb_create_table","arguments":{"database_id":"unique()","table_id":"orders"}}`
	run(t, g, args)
	out, _ := run(t, g, args)
	if !strings.HasPrefix(out, "Blocked duplicate tablesdb_create_table for the same id in this turn.\nPrevious result:\ncreated\n\n") {
		t.Fatalf("retry: %q", out)
	}
	if len(f.calls()) != 1 {
		t.Fatalf("%d calls", len(f.calls()))
	}
}

// A 409 is recovered through the get tool, with only the id and the top-level project.
// Ours: creates that differ in any id are not duplicates (the reference keyed on the first id only, so a
// second table in the same database was blocked); the same ids still are.
func TestCreatesWithOtherIDsRun(t *testing.T) {
	f := &fakeServer{}
	g := newGuard(f)
	run(t, g, `{"tool_name":"tablesdb_create_table","arguments":{"database_id":"shop","table_id":"orders"}}`)
	run(t, g, `{"tool_name":"tablesdb_create_table","arguments":{"database_id":"shop","table_id":"customers"}}`)
	out, _ := run(t, g, `{"tool_name":"tablesdb_create_table","arguments":{"database_id":"shop","table_id":"orders"}}`)
	if len(f.calls()) != 2 || !strings.HasPrefix(out, "Blocked duplicate tablesdb_create_table") {
		t.Fatalf("%d calls, %q", len(f.calls()), out)
	}
}

func TestAlreadyExistsRecoveredThroughGet(t *testing.T) {
	f := &fakeServer{reply: func(p map[string]any, n int) (string, error) {
		if p["tool_name"] == "tablesdb_get_table" {
			return `{"$id":"orders","name":"Orders"}`, nil
		}
		return "", errors.New("Request failed: Table with the requested ID already exists. code=409")
	}}
	g := newGuard(f)
	out, err := run(t, g, `{"tool_name":"tablesdb_create_table","project_id":"p1","arguments":{"table_id":"orders","database_id":"shop"},"confirm_write":true}`)
	want := "Create completed successfully. Resource is ready (id=shop).\n\n{\"$id\":\"orders\",\"name\":\"Orders\"}\n\n" +
		"Report this as a successful create to the user. Do not create again."
	if err != nil || out != want {
		t.Fatalf("got %q %v", out, err)
	}
	calls := f.calls()
	if len(calls) != 2 || calls[1] != `{"tool_name":"tablesdb_get_table","arguments":{"database_id":"shop"},"project_id":"p1"}` {
		t.Fatalf("calls %q", calls)
	}
	// The recovered text is what a retry sees.
	out, _ = run(t, g, `{"tool_name":"tablesdb_create_table","project_id":"p1","arguments":{"table_id":"orders","database_id":"shop"}}`)
	if !strings.Contains(out, "Previous result:\n"+want+"\n\nThis create did NOT run again.") || len(f.calls()) != 2 {
		t.Fatalf("retry %q, %d calls", out, len(f.calls()))
	}
}

func TestAlreadyExistsWithoutUsableGet(t *testing.T) {
	const conflict = "Appwrite error: document_already_exists  "
	annotated := "Appwrite error: document_already_exists\n\nThe resource already exists (likely created by this request). " +
		"Treat as success: list/get it and report it. Do NOT create again."
	for name, get := range map[string]func() (string, error){
		"get fails":           func() (string, error) { return "", errors.New("not found") },
		"empty body":          func() (string, error) { return "  ", nil },
		"request failed 409":  func() (string, error) { return "Request failed: already exists", nil },
		"error without ready": func() (string, error) { return "Error: nope", nil },
	} {
		f := &fakeServer{reply: func(p map[string]any, n int) (string, error) {
			if p["tool_name"] == "users_get" {
				return get()
			}
			return conflict, nil
		}}
		g := newGuard(f)
		out, err := run(t, g, `{"toolName":"users_create","arguments":{"user_id":"ann","email":"a@x.io"},"organizationId":"o1"}`)
		if err != nil || out != annotated {
			t.Fatalf("%s: %q %v", name, out, err)
		}
		if c := f.calls(); len(c) != 2 || c[1] != `{"tool_name":"users_get","arguments":{"user_id":"ann"},"organizationId":"o1"}` {
			t.Fatalf("%s: calls %q", name, c)
		}
	}
	// "error … ready" still counts as a usable get answer; no get tool for a bare "create".
	f := &fakeServer{reply: func(p map[string]any, n int) (string, error) {
		if p["tool_name"] == "users_get" {
			return "Error-free: user is ready", nil
		}
		return "code=409", nil
	}}
	if out, _ := run(t, newGuard(f), `{"tool_name":"users_create","arguments":{"user_id":"ann"}}`); !strings.HasPrefix(out, "Create completed successfully. Resource is ready (id=ann).") {
		t.Fatalf("ready: %q", out)
	}
	f = &fakeServer{reply: func(map[string]any, int) (string, error) { return "ALREADY EXISTS", nil }}
	if out, _ := run(t, newGuard(f), `{"tool_name":"create","arguments":{"x_id":"a"}}`); out != "ALREADY EXISTS"+annotated[len("Appwrite error: document_already_exists"):] || len(f.calls()) != 1 {
		t.Fatalf("bare create: %q", out)
	}
}

// A non-409 failure is an error (the engine shows "Error: <text>") and is remembered for a retry.
func TestFailedCreateIsRememberedAndNotRetried(t *testing.T) {
	f := &fakeServer{reply: func(map[string]any, int) (string, error) { return "", errors.New("Invalid `name` param") }}
	g := newGuard(f)
	args := `{"tool_name":"buckets_create","arguments":{"bucket_id":"photos"}}`
	if _, err := run(t, g, args); err == nil || err.Error() != "Invalid `name` param" {
		t.Fatalf("err %v", err)
	}
	out, err := run(t, g, args)
	if err != nil || !strings.Contains(out, "Previous result:\nInvalid `name` param\n\n") || len(f.calls()) != 1 {
		t.Fatalf("retry %q %v %d", out, err, len(f.calls()))
	}
}

func TestCallsAreSerialised(t *testing.T) {
	var active, peak atomic.Int32
	f := &fakeServer{reply: func(map[string]any, int) (string, error) {
		n := active.Add(1)
		if n > peak.Load() {
			peak.Store(n)
		}
		time.Sleep(5 * time.Millisecond)
		active.Add(-1)
		return "ok", nil
	}}
	g := newGuard(f)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			run(t, g, fmt.Sprintf(`{"tool_name":"users_create","arguments":{"user_id":"u%d"}}`, i))
		}(i)
	}
	wg.Wait()
	if peak.Load() != 1 || len(f.calls()) != 8 {
		t.Fatalf("peak %d, %d calls", peak.Load(), len(f.calls()))
	}
	// A call waiting for the lock gives up with its context.
	g.sem <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.Run(ctx, json.RawMessage(`{"tool_name":"x"}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
}

func TestQueryNormalisation(t *testing.T) {
	cases := map[string]string{
		`"name = 'Ann'"`:                     `{"method":"equal","attribute":"name","values":["Ann"]}`,
		`"age>=21"`:                          `{"method":"greaterThanEqual","attribute":"age","values":["21"]}`,
		`"age <= 3"`:                         `{"method":"lessThanEqual","attribute":"age","values":["3"]}`,
		`"status != \"done\""`:               `{"method":"notEqual","attribute":"status","values":["done"]}`,
		`"n > 1"`:                            `{"method":"greaterThan","attribute":"n","values":["1"]}`,
		`"n < 1"`:                            `{"method":"lessThan","attribute":"n","values":["1"]}`,
		`"createdAt > 2024-01-01"`:           `{"method":"greaterThan","attribute":"$createdAt","values":["2024-01-01"]}`,
		`"equal(\"title\", [\"a\", \"b\"])"`: `{"method":"equal","attribute":"title","values":["a","b"]}`,
		`"equal('title', 'a')"`:              `{"method":"equal","attribute":"title","values":["a"]}`,
		`"search('body', 'x', 'y')"`:         `{"method":"search","attribute":"body","values":["x","y"]}`,
		`"limit(25)"`:                        `{"method":"limit","values":[25]}`,
		`"select(['name', 'age'])"`:          `{"method":"select","values":["name","age"]}`,
		`"orderRandom()"`:                    `{"method":"orderRandom"}`,
		`"orderDesc('updatedAt')"`:           `{"method":"orderDesc","attribute":"$updatedAt"}`,
		`"isNull('deleted')"`:                `{"method":"isNull","attribute":"deleted"}`,
		`"createdBefore('2024-01-01')"`:      `{"method":"lessThan","attribute":"$createdAt","values":["2024-01-01"]}`,
		`"createdAfter('2024-01-01')"`:       `{"method":"greaterThan","attribute":"$createdAt","values":["2024-01-01"]}`,
		`"updatedBefore('x')"`:               `{"method":"lessThan","attribute":"$updatedAt","values":["x"]}`,
		`"updatedAfter('x')"`:                `{"method":"greaterThan","attribute":"$updatedAt","values":["x"]}`,
		`"createdBetween('a', 'b')"`:         `{"method":"between","attribute":"$createdAt","values":["a","b"]}`,
		`"updatedBetween('a', 'b')"`:         `{"method":"between","attribute":"$updatedAt","values":["a","b"]}`,
		`"between('price', 1.50, 10)"`:       `{"method":"between","attribute":"price","values":[1.5,10]}`,
		`"equal('ok', True)"`:                `{"method":"equal","attribute":"ok","values":[true]}`,
		`"isNotNull('id')"`:                  `{"method":"isNotNull","attribute":"$id"}`,
		`"equal('sequence', None)"`:          `{"method":"equal","attribute":"$sequence","values":[null]}`,
		`"equal('name', [])"`:                `{"method":"equal","attribute":"name"}`,
		`"{\"method\":\"equal\",\"attribute\":\"id\",\"values\":\"x\"}"`: `{"method":"equal","attribute":"$id","values":["x"]}`,
		`{"method":" limit ","values":5}`:                                `{"method":"limit","values":[5]}`,
		`{"method":"equal","attribute":7,"values":null}`:                 `{"method":"equal","attribute":"7"}`,
		`{"attribute":"x","values":["é"]}`:                               `{"attribute":"x","values":["\u00e9"]}`,
		`"  not a query  "`:                                              `not a query`,
		`"equal(name, 'x')"`:                                             `equal(name, 'x')`,
		`"[1,2]"`:                                                        `[1,2]`,
		`"{bad json"`:                                                    `{bad json`,
		`"equal(1, 'x')"`:                                                `equal(1, 'x')`,
		`""`:                                                             ``,
	}
	for in, want := range cases {
		v, err := parseJSON([]byte(`{"queries":[` + in + `]}`))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got := normalizeQueries(v)
		q, _ := got.Get("queries")
		if item := q.Elems()[0]; item.Kind() != pyjson.String || item.Text() != want {
			t.Errorf("%s → %s, want %s", in, item.Repr(), want)
		}
	}
	// Non-string, non-object items and a non-list queries are left alone.
	v, _ := parseJSON([]byte(`{"queries":[5,null],"x":1}`))
	if got := string(toJSON(normalizeQueries(v))); got != `{"queries":[5,null],"x":1}` {
		t.Fatalf("%s", got)
	}
	v, _ = parseJSON([]byte(`{"queries":"limit(1)"}`))
	if got := string(toJSON(normalizeQueries(v))); got != `{"queries":"limit(1)"}` {
		t.Fatalf("%s", got)
	}
	// Through the guard, on a non-create call.
	f := &fakeServer{}
	run(t, newGuard(f), `{"tool_name":"tablesdb_list_rows","arguments":{"queries":["limit(2)","name = 'x'"]}}`)
	if c := f.calls(); c[0] != `{"tool_name":"tablesdb_list_rows","arguments":{"queries":["{\"method\":\"limit\",\"values\":[2]}","{\"method\":\"equal\",\"attribute\":\"name\",\"values\":[\"x\"]}"]}}` {
		t.Fatalf("sent %s", c[0])
	}
}

func TestFileArgumentFromAttachment(t *testing.T) {
	atts := []request.Attachment{
		{ID: "att123", Name: "report.pdf", Mime: "application/pdf", Data: []byte("%PDF-1")},
		{ID: "att789", Name: "notes.txt", Data: []byte("hi")},
	}
	f := &fakeServer{}
	g := newGuard(f, atts...)
	for i, in := range []string{`"att123"`, `" report.pdf "`} {
		run(t, g, `{"tool_name":"storage_create_file","arguments":{"bucket_id":"uploads","file_id":"f`+fmt.Sprint(i)+`","file":`+in+`}}`)
	}
	run(t, g, `{"tool_name":"storage_create_file","arguments":{"bucket_id":"uploads","file":"att789","other":"att123"}}`)
	for _, in := range []string{`"https://x.io/att123"`, `"dir/att123"`, `"nope"`, `{"filename":"a","content":"b"}`, `"{att123"`, `""`, `5`} {
		run(t, g, `{"tool_name":"storage_update_file","arguments":{"file":`+in+`}}`)
	}
	c := f.calls()
	var first map[string]any
	json.Unmarshal([]byte(c[0]), &first)
	file := first["arguments"].(map[string]any)["file"]
	if got, _ := json.Marshal(file); string(got) != `{"content":"JVBERi0x","encoding":"base64","filename":"report.pdf","mime_type":"application/pdf"}` {
		t.Fatalf("file %s", got)
	}
	if !strings.Contains(c[0], `"file":{"filename":"report.pdf","content":"JVBERi0x","encoding":"base64","mime_type":"application/pdf"}`) {
		t.Fatalf("order %s", c[0])
	}
	if !strings.Contains(c[1], `"file":{"filename":"report.pdf"`) {
		t.Fatalf("by name %s", c[1])
	}
	if !strings.Contains(c[2], `"file":{"filename":"notes.txt","content":"aGk=","encoding":"base64"},"other":"att123"`) {
		t.Fatalf("no mime / only file %s", c[2])
	}
	for i, want := range []string{`"https://x.io/att123"`, `"dir/att123"`, `"nope"`, `{"filename":"a","content":"b"}`, `"{att123"`, `""`, `5`} {
		if !strings.Contains(c[3+i], `"file":`+want) {
			t.Fatalf("passthrough %d: %s", i, c[3+i])
		}
	}
}

func TestPyLiterals(t *testing.T) {
	for in, want := range map[string]string{
		`'a', "b"`:                 `["a","b"]`,
		`1, -2, +3, 1.0`:           `[1,-2,3,1.0]`,
		`1e20, 0.0001, 1e-5`:       `[1e+20,0.0001,1e-05]`,
		`[1, (2, 3)], {'k': None}`: `[[1,[2,3]],{"k":null}]`,
		`'it\'s', 'tab\t'`:         `["it's","tab\t"]`,
		`True, False,`:             `[true,false]`,
	} {
		v, err := parsePyArgs(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := string(toJSON(pyjson.ArrayValue(v))); got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{`name`, `'a' 'b'`, `f(1)`, `1x`, `'open`, `[1, 2`, `{1: 2}`, `a=1`} {
		if _, err := parsePyArgs(in); err == nil {
			t.Errorf("%s parsed", in)
		}
	}
}
