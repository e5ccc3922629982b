package localappwrite

import (
	"appwrite-agent/shared/devkit/testclock"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/functions"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

// Creating or updating a function with a functions.* event is refused by the FunctionEvent validator
// (Event/Validator/FunctionEvent.php; Functions/Create.php:86, Update.php:78), through ArrayList's description.
func TestFunctionEventsRefused(t *testing.T) {
	f := newFixture(t, Options{})
	fns := functions.New(f.sdk(f.key))
	const msg = "Invalid `events` param: Value must a valid array no longer than 100 items and Triggering a function on a function event is not allowed."
	_, err := fns.Create("fnx", "fnx", "go-1.26", fns.WithCreateEvents([]string{"functions.*"}))
	wantAPIError(t, err, 400, ErrGeneralArgumentInvalid, msg)
	created, err := fns.Create("fnx", "fnx", "go-1.26", fns.WithCreateEvents([]string{"users.*.create"}), fns.WithCreateExecute([]string{"any"}))
	if err != nil || created.Id != "fnx" || created.Runtime != "go-1.26" || len(created.Events) != 1 || created.Timeout != 15 {
		t.Fatalf("create: %+v %v", created, err)
	}
	_, err = fns.Create("fnx", "again", "go-1.26")
	wantAPIError(t, err, 409, ErrFunctionAlreadyExists, "Function with the requested ID already exists. Try again with a different ID or use ID.unique() to generate a unique ID.")
	_, err = fns.Update("fnx", "fnx", fns.WithUpdateEvents([]string{"users.*.create", "functions.other.executions.*.create"}))
	wantAPIError(t, err, 400, ErrGeneralArgumentInvalid, msg)
	if got, err := fns.Get("fnx"); err != nil || len(got.Events) != 1 || got.Events[0] != "users.*.create" {
		t.Fatalf("a refused update changed the function: %+v %v", got, err)
	}
	if _, err := fns.Update("fnx", "fnx", fns.WithUpdateEvents([]string{"users.*.create"})); err != nil {
		t.Fatal(err)
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

func TestScheduledExecutions(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 10, 0, 30, 0, time.UTC))
	f := newFixture(t, Options{Clock: clock.Now})
	rt := runtimeStub(t, 200)
	if err := f.s.RegisterFunction(testProject, FunctionSpec{ID: "fn1", URL: rt.ts.URL, Secret: "rt-secret", Scopes: []string{"executions.write"}, Timeout: 30}); err != nil {
		t.Fatal(err)
	}
	fns := functions.New(f.sdk(f.key))
	at := "2026-12-01T10:03:00.000+00:00"

	// Executions/Create.php:139-148 (1.9.6): scheduledAt needs async, then a minute-precise date strictly more
	// than 60 s ahead with a year of at most 9999.
	_, err := fns.CreateExecution("fn1", fns.WithCreateExecutionScheduledAt(at))
	wantAPIError(t, err, 400, ErrGeneralBadRequest, "Scheduled executions must run asynchronously. Set scheduledAt to a future date, or set async to true.")
	const schedMsg = "Execution schedule must be a valid date, and at least 1 minute from now"
	for _, bad := range []string{
		"2026-12-01T10:01:00.000+00:00", // 30 s ahead
		"2026-12-01T10:01:30.000+00:00", // exactly 60 s ahead, and not minute-precise
		"2026-12-01T10:05:30.000+00:00", // seconds
		"2026-12-01T10:05:00.250+00:00", // milliseconds
		"10000-01-01T00:00:00.000+00:00",
		"tomorrow",
	} {
		_, err = fns.CreateExecution("fn1", fns.WithCreateExecutionAsync(true), fns.WithCreateExecutionScheduledAt(bad))
		wantAPIError(t, err, 400, ErrGeneralBadRequest, schedMsg)
	}
	// The checks come before the function lookup, as in Appwrite.
	_, err = fns.CreateExecution("nope", fns.WithCreateExecutionAsync(true), fns.WithCreateExecutionScheduledAt("tomorrow"))
	wantAPIError(t, err, 400, ErrGeneralBadRequest, schedMsg)

	ex, err := fns.CreateExecution("fn1", fns.WithCreateExecutionAsync(true), fns.WithCreateExecutionScheduledAt(at),
		fns.WithCreateExecutionPath("/jobs/retry"), fns.WithCreateExecutionBody("sealed-job"))
	if err != nil || ex.Status != "scheduled" || ex.ScheduledAt == "" {
		t.Fatalf("%+v %v", ex, err)
	}
	if n := f.s.RunScheduled(clock.Now()); n != 0 || len(rt.all()) != 0 {
		t.Fatalf("ran %d before its time", n)
	}
	clock.Advance(3 * time.Minute)
	if n := f.s.RunScheduled(clock.Now()); n != 1 {
		t.Fatalf("started %d, want 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := rt.all()
	if len(got) != 1 || got[0].Path != "/jobs/retry" || string(got[0].Body) != "sealed-job" || got[0].Header.Get("x-appwrite-trigger") != "schedule" || got[0].Header.Get("x-appwrite-key") == "" {
		t.Fatalf("runtime got %+v", got)
	}
	done, err := fns.GetExecution("fn1", ex.Id)
	if err != nil || done.Status != "completed" {
		t.Fatalf("%+v %v", done, err)
	}
	if n := f.s.RunScheduled(clock.Now().Add(time.Hour)); n != 0 {
		t.Fatalf("ran again: %d", n)
	}
}

// TestFunctionSchedules: a function's cron schedule runs as Appwrite's schedule-functions task and functions
// worker run it (Tasks/ScheduleFunctions.php, Workers/Functions.php, 1.9.6): at each occurrence on the
// server's clock, once (occurrences missed meanwhile are not caught up), POST "/" without a body, trigger
// "schedule", no user and no client IP, with the function's dynamic key. A delayed execution made through the
// Executions API is trigger "schedule" too, but carries its creator's x-appwrite-client-ip: what tells the two
// apart. A schedule is set by the Functions API as by RegisterFunction, and an invalid one is refused with
// Appwrite's Cron validator text.
func TestFunctionSchedules(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 10, 1, 30, 0, time.UTC))
	f := newFixture(t, Options{Clock: clock.Now})
	rt := runtimeStub(t, 200)
	if err := f.s.RegisterFunction(testProject, FunctionSpec{ID: "cron", URL: rt.ts.URL, Secret: "rt-secret", Scopes: []string{"rows.read"},
		Timeout: 30, Schedule: "*/5 * * * *"}); err != nil {
		t.Fatal(err)
	}
	settle := func() []recorded {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := f.s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		return rt.all()
	}
	f.s.RunScheduled(clock.Now())
	if got := settle(); len(got) != 0 {
		t.Fatalf("ran before 10:05: %+v", got)
	}
	clock.Set(time.Date(2026, 12, 1, 10, 5, 0, 0, time.UTC))
	f.s.RunScheduled(clock.Now())
	got := settle()
	if len(got) != 1 {
		t.Fatalf("%d executions at 10:05, want 1", len(got))
	}
	r := got[0]
	if r.Method != http.MethodPost || r.Path != "/" || len(r.Body) != 0 || r.Header.Get("x-appwrite-trigger") != "schedule" ||
		r.Header.Get("x-appwrite-key") == "" || r.Header.Get("x-appwrite-user-id") != "" || r.Header.Get("x-appwrite-user-jwt") != "" {
		t.Fatalf("scheduled request %s %s %q %v", r.Method, r.Path, r.Body, r.Header)
	}
	if _, ok := r.Header["X-Appwrite-Client-Ip"]; ok {
		t.Fatalf("a scheduled execution carries x-appwrite-client-ip %q", r.Header.Get("x-appwrite-client-ip"))
	}
	// The same minute again starts nothing; 25 minutes later one execution, not five.
	f.s.RunScheduled(clock.Now())
	if got := settle(); len(got) != 1 {
		t.Fatalf("%d executions after a second look at 10:05", len(got))
	}
	clock.Advance(25 * time.Minute)
	f.s.RunScheduled(clock.Now())
	if got := settle(); len(got) != 2 {
		t.Fatalf("%d executions after 25 minutes, want 2 (missed occurrences are not caught up)", len(got))
	}

	// A delayed execution through the API: trigger schedule, and the creator's client IP.
	fns := functions.New(f.sdk(f.key))
	at := clock.Now().Truncate(time.Minute).Add(2 * time.Minute).Format("2006-01-02T15:04:05.000-07:00")
	if _, err := fns.CreateExecution("cron", fns.WithCreateExecutionAsync(true), fns.WithCreateExecutionScheduledAt(at)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	f.s.RunScheduled(clock.Now())
	got = settle()
	if len(got) != 3 || got[2].Header.Get("x-appwrite-trigger") != "schedule" || got[2].Header.Get("x-appwrite-client-ip") != "127.0.0.1" {
		t.Fatalf("the delayed execution: %d requests, last %v", len(got), got[len(got)-1].Header)
	}

	// The Functions API: a schedule is validated (Task/Validator/Cron.php) and, once set, runs; "" stops it.
	for _, bad := range []string{"* * *", "61 * * * *", "*/0 * * * *", "5-1 * * * *", "0 0 L * *", "@every 5m"} {
		_, err := fns.Update("cron", "cron", fns.WithUpdateSchedule(bad))
		wantAPIError(t, err, 400, ErrGeneralArgumentInvalid, "Invalid `schedule` param: String must be a valid cron expression")
	}
	if _, err := fns.Update("cron", "cron", fns.WithUpdateSchedule("@hourly")); err != nil {
		t.Fatal(err)
	}
	clock.Set(time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	f.s.RunScheduled(clock.Now())
	if got := settle(); len(got) != 4 {
		t.Fatalf("%d requests after the hourly schedule's 11:00", len(got))
	}
	if _, err := fns.Update("cron", "cron", fns.WithUpdateSchedule("")); err != nil {
		t.Fatal(err)
	}
	clock.Advance(24 * time.Hour)
	f.s.RunScheduled(clock.Now())
	if got := settle(); len(got) != 4 {
		t.Fatalf("%d requests after the schedule was removed", len(got))
	}
}

// TestSchedulesRunByTheClock: RunScheduled with a time far ahead (what the admin endpoint and the load harness
// use to start every delayed execution at once) runs no schedule whose time has not come by the server's clock.
func TestSchedulesRunByTheClock(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 10, 1, 30, 0, time.UTC))
	f := newFixture(t, Options{Clock: clock.Now})
	rt := runtimeStub(t, 200)
	if err := f.s.RegisterFunction(testProject, FunctionSpec{ID: "cron", URL: rt.ts.URL, Timeout: 30, Schedule: "*/5 * * * *"}); err != nil {
		t.Fatal(err)
	}
	far := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 3 {
		f.s.RunScheduled(far)
	}
	f.flush(t)
	if n := len(rt.all()); n != 0 {
		t.Fatalf("%d executions before the schedule's time", n)
	}
	clock.Set(time.Date(2026, 12, 1, 10, 5, 0, 0, time.UTC))
	f.s.RunScheduled(far)
	f.s.RunScheduled(far)
	f.flush(t)
	if n := len(rt.all()); n != 1 {
		t.Fatalf("%d executions at 10:05, want 1", n)
	}
}
