package localappwrite

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/file"
	"github.com/appwrite/sdk-for-go/functions"
	"github.com/appwrite/sdk-for-go/storage"
	"github.com/appwrite/sdk-for-go/tablesdb"
	"github.com/appwrite/sdk-for-go/users"
)

func TestTablesDBThroughSDK(t *testing.T) {
	f := newFixture(t, Options{})
	seedRowsTable(t, f)
	rec := newRecorder(t)
	createHook(t, f, "all-rows", rec.ts.URL, []string{"databases.db1.tables.t1.rows.*"}, nil)
	db := tablesdb.New(f.sdk(f.key))

	dbm, err := db.Get("db1")
	if err != nil || dbm.Id != "db1" || dbm.Name != "DB" || !dbm.Enabled {
		t.Fatalf("get database: %+v %v", dbm, err)
	}
	tbl, err := db.GetTable("db1", "t1")
	if err != nil || tbl.Id != "t1" || tbl.DatabaseId != "db1" || len(tbl.Columns) != 2 {
		t.Fatalf("get table: %+v %v", tbl, err)
	}

	row, err := db.CreateRow("db1", "t1", "unique()", map[string]any{"title": "a", "count": 1},
		db.WithCreateRowPermissions([]string{`read("any")`}))
	if err != nil {
		t.Fatal(err)
	}
	if len(row.Id) != 20 || row.TableId != "t1" || row.DatabaseId != "db1" || row.Sequence != 1 || row.Permissions[0] != `read("any")` {
		t.Fatalf("row: %+v", row)
	}
	var cols struct {
		Title string `json:"title"`
		Count int    `json:"count"`
	}
	if err := row.Decode(&cols); err != nil || cols.Title != "a" || cols.Count != 1 {
		t.Fatalf("decode: %+v %v", cols, err)
	}
	_, err = db.CreateRow("db1", "t1", row.Id, map[string]any{"title": "dup"})
	wantErr(t, err, 409, ErrRowAlreadyExists)

	upd, err := db.UpdateRow("db1", "t1", row.Id, db.WithUpdateRowData(map[string]any{"title": "b"}))
	if err != nil {
		t.Fatal(err)
	}
	_ = upd.Decode(&cols)
	if cols.Title != "b" || cols.Count != 1 {
		t.Fatalf("update merges: %+v", cols)
	}
	_, err = db.UpdateRow("db1", "t1", row.Id)
	wantErr(t, err, 400, ErrRowMissingPayload)

	up, err := db.UpsertRow("db1", "t1", "fixed", db.WithUpsertRowData(map[string]any{"title": "u"}))
	if err != nil || up.Id != "fixed" || up.Sequence != 2 {
		t.Fatalf("upsert create: %+v %v", up, err)
	}
	if _, err := db.UpsertRow("db1", "t1", "fixed", db.WithUpsertRowData(map[string]any{"count": 7})); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetRow("db1", "t1", "fixed")
	if err != nil {
		t.Fatal(err)
	}
	_ = got.Decode(&cols)
	if cols.Title != "u" || cols.Count != 7 {
		t.Fatalf("upsert update: %+v", cols)
	}
	list, err := db.ListRows("db1", "t1")
	if err != nil || list.Total != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if _, err := db.DeleteRow("db1", "t1", "fixed"); err != nil {
		t.Fatal(err)
	}
	_, err = db.GetRow("db1", "t1", "fixed")
	wantErr(t, err, 404, ErrRowNotFound)
	_, err = db.DeleteRow("db1", "t1", "fixed")
	wantErr(t, err, 404, ErrRowNotFound)
	_, err = db.GetTable("db1", "nope")
	wantErr(t, err, 404, ErrTableNotFound)
	_, err = db.GetRow("nope", "t1", "x")
	wantErr(t, err, 404, ErrDatabaseNotFound)
	_, err = db.CreateRow("db1", "t1", "bad", map[string]any{"unknown": 1})
	wantErr(t, err, 400, ErrRowInvalidStructure)
	_, err = db.CreateRow("db1", "t1", "bad", map[string]any{"count": "three"})
	wantErr(t, err, 400, ErrRowInvalidStructure)
	_, err = db.CreateRow("db1", "t1", "-bad", map[string]any{})
	wantErr(t, err, 400, ErrGeneralArgumentInvalid)

	f.flush(t)
	// The events were queued in the order of the calls; two workers deliver them, so they may arrive in
	// any order (as from Appwrite's webhook workers): the order is checked where it is kept, the arrivals
	// as a set.
	action := func(events string) string {
		first := strings.Split(events, ",")[0]
		return first[strings.LastIndex(first, ".")+1:]
	}
	var queued, arrived []string
	for _, d := range f.s.Deliveries() {
		queued = append(queued, action(strings.Join(d.Events, ",")))
	}
	for _, r := range rec.all() {
		arrived = append(arrived, action(r.Header.Get("X-Appwrite-Webhook-Events")))
	}
	if strings.Join(queued, " ") != "create update upsert upsert delete" {
		t.Fatalf("row events queued: %v", queued)
	}
	slices.Sort(queued)
	slices.Sort(arrived)
	if !slices.Equal(arrived, queued) {
		t.Fatalf("row events delivered: %v, queued %v", arrived, queued)
	}
}

func TestStorageThroughSDK(t *testing.T) {
	f := newFixture(t, Options{})
	if err := f.s.SeedBucket(testProject, BucketSpec{ID: "b1", Name: "Bucket", MaximumFileSize: 1000, AllowedFileExtensions: []string{"txt"}}); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(t)
	createHook(t, f, "files", rec.ts.URL, []string{"buckets.b1.files.*.create"}, nil)
	st := storage.New(f.sdk(f.key))
	b, err := st.GetBucket("b1")
	if err != nil || b.Id != "b1" || b.MaximumFileSize != 1000 {
		t.Fatalf("bucket: %+v %v", b, err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "hello.txt")
	if err := os.WriteFile(p, []byte("hello world"), 0o600); err != nil {
		t.Fatal(err)
	}
	fl, err := st.CreateFile("b1", "unique()", file.NewInputFile(p, "hello.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if fl.BucketId != "b1" || fl.Name != "hello.txt" || fl.SizeOriginal != 11 || !strings.HasPrefix(fl.MimeType, "text/plain") || fl.ChunksUploaded != 1 {
		t.Fatalf("file: %+v", fl)
	}
	big := filepath.Join(dir, "big.txt")
	_ = os.WriteFile(big, make([]byte, 2000), 0o600)
	_, err = st.CreateFile("b1", "unique()", file.NewInputFile(big, "big.txt"))
	wantErr(t, err, 400, ErrFileInvalidSize)
	exe := filepath.Join(dir, "x.exe")
	_ = os.WriteFile(exe, []byte("MZ"), 0o600)
	_, err = st.CreateFile("b1", "unique()", file.NewInputFile(exe, "x.exe"))
	wantErr(t, err, 400, ErrFileTypeUnsupported)
	if _, err := st.DeleteFile("b1", fl.Id); err != nil {
		t.Fatal(err)
	}
	_, err = st.DeleteFile("b1", fl.Id)
	wantErr(t, err, 404, ErrFileNotFound)
	_, err = st.GetBucket("nope")
	wantErr(t, err, 404, ErrBucketNotFound)
	f.flush(t)
	got := rec.all()
	if len(got) != 1 || !strings.HasPrefix(got[0].Header.Get("X-Appwrite-Webhook-Events"), "buckets.b1.files."+fl.Id+".create,") {
		t.Fatalf("file delivery: %+v", got)
	}
}

func TestUsersThroughSDK(t *testing.T) {
	f := newFixture(t, Options{})
	rec := newRecorder(t)
	createHook(t, f, "users", rec.ts.URL, []string{"users.*.create"}, nil)
	us := users.New(f.sdk(f.key))
	u, err := us.Create("alice", us.WithCreateEmail("alice@example.test"), us.WithCreatePassword("password123"), us.WithCreateName("Alice"))
	if err != nil {
		t.Fatal(err)
	}
	if u.Id != "alice" || u.Email != "alice@example.test" || u.Name != "Alice" || !u.Status || u.Hash != "argon2" {
		t.Fatalf("user: %+v", u)
	}
	_, err = us.Create("alice2", us.WithCreateEmail("alice@example.test"))
	wantErr(t, err, 409, ErrUserAlreadyExists)
	_, err = us.Create("bob", us.WithCreateEmail("not-an-email"))
	wantErr(t, err, 400, ErrGeneralArgumentInvalid)
	_, err = us.Create("bob", us.WithCreatePassword("short"))
	wantErr(t, err, 400, ErrGeneralArgumentInvalid)
	if _, err := us.Create("unique()", us.WithCreatePhone("+14155550100")); err != nil {
		t.Fatal(err)
	}
	list, err := us.List()
	if err != nil || list.Total != 2 || len(list.Users) != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	list, err = us.List(us.WithListSearch("alice"))
	if err != nil || list.Total != 1 {
		t.Fatalf("search: %+v %v", list, err)
	}
	got, err := us.Get("alice")
	if err != nil || got.Email != "alice@example.test" {
		t.Fatalf("get: %+v %v", got, err)
	}
	_, err = us.Get("nobody")
	wantErr(t, err, 404, ErrUserNotFound)
	f.flush(t)
	if n := len(rec.all()); n != 2 {
		t.Fatalf("want 2 user deliveries, got %d", n)
	}
}

// runtimeStub is a function runtime speaking the open-runtimes contract, recording what it got. It answers
// with the given status and echoes the body.
func runtimeStub(t *testing.T, status int) *recorder {
	rec := newRecorder(t)
	rec.reply = func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("content-type", "text/plain")
		w.Header().Set("x-open-runtimes-log-id", r.Header.Get("x-open-runtimes-log-id"))
		w.Header().Set("x-custom", "yes")
		w.WriteHeader(status)
		_, _ = w.Write(append([]byte("echo:"), body...))
	}
	return rec
}

func TestFunctionExecutionsThroughSDK(t *testing.T) {
	f := newFixture(t, Options{})
	rt := runtimeStub(t, 200)
	err := f.s.RegisterFunction(testProject, FunctionSpec{ID: "fn1", Name: "Fn", URL: rt.ts.URL, Secret: "rt-secret",
		Scopes: []string{"rows.read"}, Timeout: 20})
	if err != nil {
		t.Fatal(err)
	}
	fns := functions.New(f.sdk(f.key))
	fn, err := fns.Get("fn1")
	if err != nil || fn.Id != "fn1" || fn.Timeout != 20 || fn.Scopes[0] != "rows.read" {
		t.Fatalf("get: %+v %v", fn, err)
	}
	_, err = fns.Get("nope")
	wantErr(t, err, 404, ErrFunctionNotFound)

	ex, err := fns.CreateExecution("fn1", fns.WithCreateExecutionBody("hi"), fns.WithCreateExecutionPath("/p?q=1"),
		fns.WithCreateExecutionMethod("PUT"), fns.WithCreateExecutionHeaders(map[string]any{"x-mine": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	if ex.Status != "completed" || ex.ResponseStatusCode != 200 || ex.ResponseBody != "echo:hi" || ex.Trigger != "http" ||
		ex.FunctionId != "fn1" || ex.RequestMethod != "PUT" || ex.RequestPath != "/p?q=1" {
		t.Fatalf("execution: %+v", ex)
	}
	for _, h := range ex.ResponseHeaders {
		if strings.HasPrefix(h.Name, "x-open-runtimes-") {
			t.Errorf("runtime header leaked: %s", h.Name)
		}
	}
	reqs := rt.all()
	if len(reqs) != 1 {
		t.Fatalf("runtime calls: %d", len(reqs))
	}
	r := reqs[0]
	want := map[string]string{
		"x-open-runtimes-secret": "rt-secret", "x-open-runtimes-timeout": "20", "x-open-runtimes-logging": "enabled",
		"x-open-runtimes-log-id": ex.Id, "x-appwrite-trigger": "http", "x-appwrite-execution-id": ex.Id,
		"x-appwrite-user-id": "", "x-mine": "1", "x-appwrite-continent-eu": "false",
	}
	for k, v := range want {
		if r.Header.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, r.Header.Get(k), v)
		}
	}
	if r.Method != "PUT" || r.Path != "/p?q=1" || string(r.Body) != "hi" {
		t.Errorf("runtime request: %s %s %q", r.Method, r.Path, r.Body)
	}
	// The dynamic key carries the function's scopes.
	key := r.Header.Get("x-appwrite-key")
	if !strings.HasPrefix(key, "dynamic_") {
		t.Fatalf("key %q", key)
	}
	seedRowsTable(t, f)
	if _, err := tablesdb.New(f.sdk(key)).ListRows("db1", "t1"); err != nil {
		t.Fatalf("dynamic key with rows.read: %v", err)
	}
	_, err = tablesdb.New(f.sdk(key)).CreateRow("db1", "t1", "unique()", map[string]any{})
	wantErr(t, err, 401, ErrGeneralUnauthorizedScope)

	// A failing execution: forced, or a 5xx from the runtime.
	if err := f.s.SetFunctionFailing(testProject, "fn1", true); err != nil {
		t.Fatal(err)
	}
	ex, err = fns.CreateExecution("fn1")
	if err != nil || ex.Status != "failed" || ex.ResponseStatusCode != 500 || ex.Errors == "" {
		t.Fatalf("forced failure: %+v %v", ex, err)
	}
	_ = f.s.SetFunctionFailing(testProject, "fn1", false)
	bad := runtimeStub(t, 503)
	_ = f.s.SetFunctionURL(testProject, "fn1", bad.ts.URL)
	ex, err = fns.CreateExecution("fn1")
	if err != nil || ex.Status != "failed" || ex.ResponseStatusCode != 503 {
		t.Fatalf("5xx failure: %+v %v", ex, err)
	}
	// Functions/Validator/Headers.php: Appwrite throws the description as the error type, status 400, message
	// null (Executions/Create.php:156-158).
	for _, h := range []map[string]any{
		{"x-appwrite-key": "x"}, {"-lead": "x"}, {"trail-": "x"}, {"bad_char": "x"}, {"big": strings.Repeat("v", 16384)},
	} {
		_, err = fns.CreateExecution("fn1", fns.WithCreateExecutionHeaders(h))
		var ae *client.AppwriteError
		if !errors.As(err, &ae) || ae.GetStatusCode() != 400 || appwriteType(err) != headersDescription || !strings.Contains(ae.GetResponse(), `"message":null`) {
			t.Fatalf("headers %v: %v", h, err)
		}
	}
	many := map[string]any{}
	for i := range 101 {
		many[fmt.Sprintf("h%d", i)] = "v"
	}
	_, err = fns.CreateExecution("fn1", fns.WithCreateExecutionHeaders(many))
	if appwriteType(err) != headersDescription {
		t.Fatalf("101 headers: %v", err)
	}
	_, err = fns.CreateExecution("fn1", fns.WithCreateExecutionPath("/"+strings.Repeat("p", 2048)))
	wantAPIError(t, err, 400, ErrGeneralArgumentInvalid, "Invalid `path` param: Value must be a valid string and no longer than 2048 chars")
	_, err = fns.CreateExecution("fn1", fns.WithCreateExecutionBody(strings.Repeat("b", 10485761)))
	wantAPIError(t, err, 400, ErrGeneralArgumentInvalid, "Invalid `body` param: Value must be a valid string and no longer than 10485760 chars")
	if _, err = fns.CreateExecution("fn1", fns.WithCreateExecutionHeaders(map[string]any{"X-Appwrite-Case": "kept", "a": "1"})); err != nil {
		t.Fatalf("the x-appwrite- check is case-sensitive in Appwrite: %v", err)
	}
	_, err = fns.CreateExecution("fn1", fns.WithCreateExecutionMethod("BREW"))
	wantErr(t, err, 400, ErrGeneralArgumentInvalid)

	// Async: 202 waiting, then an update event with status failed (execution.failed is built on it).
	hooks := newRecorder(t)
	createHook(t, f, "exec", hooks.ts.URL, []string{"functions.fn1.executions.*.update"}, nil)
	ex, err = fns.CreateExecution("fn1", fns.WithCreateExecutionAsync(true))
	if err != nil || ex.Status != "waiting" {
		t.Fatalf("async: %+v %v", ex, err)
	}
	f.flush(t)
	got := hooks.all()
	if len(got) != 1 {
		t.Fatalf("update deliveries: %d", len(got))
	}
	var body map[string]any
	_ = json.Unmarshal(got[0].Body, &body)
	if body["status"] != "failed" || body["$id"] != ex.Id || body["responseStatusCode"] != float64(503) {
		t.Fatalf("update payload: %v", body)
	}
	c := f.sdk(f.key)
	stored, err := callJSON(t, c, "GET", "/functions/fn1/executions/"+ex.Id, nil)
	if err != nil || stored["status"] != "failed" || stored["responseBody"] != "" {
		t.Fatalf("stored async execution: %v %v", stored, err)
	}
}

// A function registered with events runs on matching events like Appwrite's functions worker does.
func TestFunctionEventTrigger(t *testing.T) {
	f := newFixture(t, Options{EphemeralKeys: true})
	seedRowsTable(t, f)
	rt := runtimeStub(t, 200)
	err := f.s.RegisterFunction(testProject, FunctionSpec{ID: "title", URL: rt.ts.URL, Secret: "s",
		Events: []string{"databases.db1.tables.t1.rows.*.create"}, Scopes: []string{"rows.write"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.RegisterFunction(testProject, FunctionSpec{ID: "off", URL: rt.ts.URL, Disabled: true,
		Events: []string{"databases.*"}}); err != nil {
		t.Fatal(err)
	}
	oauth, _ := f.s.MintToken("user-1", "", CloudScopes("rows.write"), time.Hour)
	c := f.sdk("")
	_, err = c.Call("POST", "/tablesdb/db1/tables/t1/rows", map[string]any{"content-type": "application/json",
		"Authorization": "Bearer " + oauth, "X-Appwrite-Mode": "admin"},
		map[string]any{"rowId": "r1", "data": map[string]any{"title": "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	// An update does not match the function's events.
	if _, err := tablesdb.New(f.sdk(f.key)).UpdateRow("db1", "t1", "r1", tablesdb.New(f.sdk(f.key)).WithUpdateRowData(map[string]any{"title": "x"})); err != nil {
		t.Fatal(err)
	}
	f.flush(t)
	reqs := rt.all()
	if len(reqs) != 1 {
		t.Fatalf("want one event execution, got %d", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/" {
		t.Errorf("request line %s %s", r.Method, r.Path)
	}
	want := map[string]string{
		"x-appwrite-trigger": "event", "x-appwrite-event": "databases.db1.collections.t1.documents.r1.create", // the documents form comes first
		"x-appwrite-user-id": "user-1", "content-type": "application/json", "user-agent": "Appwrite/1.9.6",
		"x-open-runtimes-secret": "s", "x-open-runtimes-timeout": "15",
	}
	for k, v := range want {
		if r.Header.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, r.Header.Get(k), v)
		}
	}
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil || body["$id"] != "r1" || body["title"] != "hello" {
		t.Fatalf("event body: %s", r.Body)
	}
	key := r.Header.Get("x-appwrite-key")
	if !strings.HasPrefix(key, "ephemeral_") {
		t.Fatalf("key prefix: %q", key)
	}
	if _, err := tablesdb.New(f.sdk(key)).CreateRow("db1", "t1", "from-fn", map[string]any{"title": "by function"}); err != nil {
		t.Fatalf("the function's key writes rows: %v", err)
	}
	f.flush(t)
	if n := len(rt.all()); n != 2 {
		t.Fatalf("the function's own row triggers it again like Appwrite (got %d calls)", n)
	}
}
