package eventcatalog_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"appwrite-agent/shared/devkit/snapshot"
	"appwrite-agent/shared/eventcatalog"
)

// TestCatalogSnapshot pins the public surface: names, descriptions, schemas, scopes and Appwrite patterns.
func TestCatalogSnapshot(t *testing.T) {
	type entry struct {
		Name           string         `json:"name"`
		Description    string         `json:"description"`
		Scopes         [][]string     `json:"scopes"`
		Target         string         `json:"target"`
		AppwriteEvents []string       `json:"appwriteEvents"`
		InputSchema    map[string]any `json:"inputSchema"`
		PayloadSchema  map[string]any `json:"payloadSchema"`
	}
	var got []entry
	args := map[string]string{"project_id": "P", "database_id": "DB", "table_id": "T", "bucket_id": "B", "function_id": "F"}
	for _, e := range eventcatalog.All() {
		got = append(got, entry{e.Name, e.Description, e.Scopes, string(e.Target), e.AppwriteEvents(args), e.InputSchema(), e.PayloadSchema()})
	}
	out, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	snapshot.Check(t, "testdata/catalog.golden.json", append(out, '\n'))
}

func TestMatchesEvents(t *testing.T) {
	row, _ := eventcatalog.Lookup("row.created")
	args := map[string]string{"project_id": "p", "database_id": "db", "table_id": "t1"}
	// What Appwrite generates for a row create in db/t1 (concrete, wildcards, legacy mirror), comma-joined.
	delivered := strings.Split("databases.db.tables.t1.rows.r1.create,databases.db.tables.t1.rows.*.create,databases.*.tables.*.rows.*.create,databases.db.collections.t1.documents.r1.create", ",")
	if !row.MatchesEvents(args, delivered) {
		t.Fatal("row create in the table did not match")
	}
	for _, other := range [][]string{
		{"databases.db.tables.t2.rows.r1.create"},
		{"databases.db.tables.t1.rows.r1.update"},
		{"databases.db.tables.t1.rows.create"},
		{"buckets.db.files.r1.create"},
		{},
	} {
		if row.MatchesEvents(args, other) {
			t.Errorf("matched %v", other)
		}
	}
}

func TestProjectionNeverLeaksAndFilters(t *testing.T) {
	rowBody := `{"$id":"r1","$sequence":4,"$tableId":"t1","$databaseId":"db","$createdAt":"2026-12-01T10:00:00.000+00:00","$updatedAt":"2026-12-01T10:00:00.000+00:00","$permissions":[],"email":"a@b.c","secret_note":"do not send"}`
	userBody := `{"$id":"u1","$createdAt":"2026-12-01T10:00:00.000+00:00","$updatedAt":"2026-12-01T10:00:00.000+00:00","name":"Ada","email":"ada@example.com","phone":"+15555550100","status":true,"labels":["vip"],"prefs":{"theme":"dark"},"passwordUpdate":""}`
	fileBody := `{"$id":"f1","bucketId":"b1","$createdAt":"2026-12-01T10:00:00.000+00:00","$updatedAt":"2026-12-01T10:00:01.000+00:00","name":"payroll.pdf","mimeType":"application/pdf","sizeOriginal":1234,"signature":"abc"}`
	execFailed := `{"$id":"e1","functionId":"fn1","deploymentId":"d1","trigger":"http","status":"failed","responseStatusCode":500,"responseBody":"stack trace","logs":"secret log","errors":"boom","duration":0.25,"$createdAt":"2026-12-01T10:00:00.000+00:00","$updatedAt":"2026-12-01T10:00:02.000+00:00"}`
	execNewModel := `{"$id":"e2","resourceId":"fn1","resourceType":"functions","status":"failed","$updatedAt":"2026-12-01T10:00:02.000+00:00"}`
	execOK := `{"$id":"e3","functionId":"fn1","status":"completed"}`
	dep := func(id, typ, res, status string) string {
		return `{"$id":"` + id + `","resourceId":"` + res + `","resourceType":"` + typ + `","status":"` + status + `","buildLogs":"secret log","$createdAt":"2026-12-01T10:00:00.000+00:00","$updatedAt":"2026-12-01T10:01:00.000+00:00"}`
	}
	depReady, depFailed, depBuilding := dep("d1", "functions", "fn1", "ready"), dep("d1", "functions", "fn1", "failed"), dep("d1", "functions", "fn1", "building")
	siteReady := dep("d2", "sites", "s1", "ready")
	fnModel := `{"$id":"fn1","name":"Worker","deploymentId":"d1","$updatedAt":"2026-12-01T10:01:00.000+00:00"}`

	cases := []struct {
		event, body string
		args        map[string]string
		want        string
		err         error
	}{
		{"row.created", rowBody, map[string]string{"database_id": "db", "table_id": "t1"}, `{"created_at":"2026-12-01T10:00:00.000+00:00","database_id":"db","project_id":"P","row_id":"r1","table_id":"t1","updated_at":"2026-12-01T10:00:00.000+00:00"}`, nil},
		{"row.created", rowBody, map[string]string{"database_id": "db", "table_id": "t2"}, "", eventcatalog.ErrNotThisSubscription},
		{"user.created", userBody, map[string]string{}, `{"created_at":"2026-12-01T10:00:00.000+00:00","project_id":"P","status":true,"user_id":"u1"}`, nil},
		{"file.created", fileBody, map[string]string{"bucket_id": "b1"}, `{"bucket_id":"b1","created_at":"2026-12-01T10:00:00.000+00:00","file_id":"f1","mime_type":"application/pdf","project_id":"P","size_bytes":1234}`, nil},
		{"execution.failed", execFailed, map[string]string{"function_id": "fn1"}, `{"created_at":"2026-12-01T10:00:00.000+00:00","deployment_id":"d1","duration":0.25,"execution_id":"e1","function_id":"fn1","project_id":"P","response_status_code":500,"status":"failed","trigger":"http","updated_at":"2026-12-01T10:00:02.000+00:00"}`, nil},
		{"execution.failed", execNewModel, map[string]string{"function_id": "fn1"}, `{"execution_id":"e2","function_id":"fn1","project_id":"P","status":"failed","updated_at":"2026-12-01T10:00:02.000+00:00"}`, nil},
		{"execution.failed", execOK, map[string]string{"function_id": "fn1"}, "", eventcatalog.ErrNotThisSubscription},
		{"execution.failed", execFailed, map[string]string{"function_id": "fn2"}, "", eventcatalog.ErrNotThisSubscription},
		// The renamed catalog: the same projections, and the file's size in "size" (appwrite/mcp's name); the
		// legacy name above keeps size_bytes for the subscriptions made under it.
		{"storage.file.created", fileBody, map[string]string{"bucket_id": "b1"}, `{"bucket_id":"b1","created_at":"2026-12-01T10:00:00.000+00:00","file_id":"f1","mime_type":"application/pdf","project_id":"P","size":1234}`, nil},
		{"tablesdb.row.created", rowBody, map[string]string{"database_id": "db", "table_id": "t1"}, `{"created_at":"2026-12-01T10:00:00.000+00:00","database_id":"db","project_id":"P","row_id":"r1","table_id":"t1","updated_at":"2026-12-01T10:00:00.000+00:00"}`, nil},
		// Deployments: the Deployment model (resourceType, resourceId) ending ready or failed; the status
		// filter narrows to one; builds in progress, activations (a function model) and other resources drop.
		{"functions.deployment.completed", depReady, map[string]string{"function_id": "fn1"}, `{"deployment_id":"d1","function_id":"fn1","project_id":"P","status":"ready","updated_at":"2026-12-01T10:01:00.000+00:00"}`, nil},
		{"functions.deployment.completed", depReady, map[string]string{"function_id": "fn1", "status": "failed"}, "", eventcatalog.ErrNotThisSubscription},
		{"functions.deployment.completed", depFailed, map[string]string{"function_id": "fn1", "status": "failed"}, `{"deployment_id":"d1","function_id":"fn1","project_id":"P","status":"failed","updated_at":"2026-12-01T10:01:00.000+00:00"}`, nil},
		{"functions.deployment.completed", depBuilding, map[string]string{"function_id": "fn1"}, "", eventcatalog.ErrNotThisSubscription},
		{"functions.deployment.completed", fnModel, map[string]string{"function_id": "fn1"}, "", eventcatalog.ErrNotThisSubscription},
		{"functions.deployment.completed", depReady, map[string]string{"function_id": "fn2"}, "", eventcatalog.ErrNotThisSubscription},
		{"functions.deployment.completed", siteReady, map[string]string{"function_id": "s1"}, "", eventcatalog.ErrNotThisSubscription},
		{"sites.deployment.completed", siteReady, map[string]string{"site_id": "s1"}, `{"deployment_id":"d2","project_id":"P","site_id":"s1","status":"ready","updated_at":"2026-12-01T10:01:00.000+00:00"}`, nil},
		{"sites.deployment.completed", depReady, map[string]string{"site_id": "fn1"}, "", eventcatalog.ErrNotThisSubscription},
	}
	for i, tc := range cases {
		e, _ := eventcatalog.Lookup(tc.event)
		occ, err := e.Project("P", tc.args, []byte(tc.body))
		if !errors.Is(err, tc.err) {
			t.Fatalf("case %d: err %v, want %v", i, err, tc.err)
		}
		if err != nil {
			continue
		}
		schema := e.PayloadSchema()
		props := schema["properties"].(map[string]any)
		for k := range occ.Data() {
			if _, ok := props[k]; !ok {
				t.Errorf("case %d %s: data.%s is not in payloadSchema", i, tc.event, k)
			}
		}
		for _, k := range schema["required"].([]string) {
			if _, ok := occ.Data()[k]; !ok {
				t.Errorf("case %d %s: required data.%s missing", i, tc.event, k)
			}
		}
		got, _ := json.Marshal(occ.Data())
		if string(got) != tc.want {
			t.Errorf("case %d %s:\n got %s\nwant %s", i, tc.event, got, tc.want)
		}
		for _, leak := range []string{"a@b.c", "ada@example.com", "+1555", "Ada", "payroll", "dark", "vip", "stack trace", "secret log", "boom", "do not send"} {
			if strings.Contains(string(got), leak) {
				t.Errorf("case %d leaks %q: %s", i, leak, got)
			}
		}
	}
	if _, err := eventcatalog.All()[0].Project("P", nil, []byte("not json")); err == nil {
		t.Fatal("bad payload accepted")
	}
}

func TestBindingsFromDeliveredAndStoredEvents(t *testing.T) {
	// What Appwrite sends for a TablesDB row create (a sample of the 42 generated strings).
	delivered := []string{
		"databases.db1.collections.t1.documents.r1.create", "databases.db1.collections.t1.documents.r1",
		"databases.db1.tables.t1.rows.r1.create", "databases.db1.tables.t1.rows.*.create", "databases.*.tables.*.rows.*.create",
		"databases.db1.tables.*.rows.r1.create", "databases.db1.tables.t1.rows.r1", "databases.db1.tables.t1", "databases.db1",
	}
	// The catalog event first, then its legacy name (subscriptions sealed before the renaming).
	rowCreated := func(got []eventcatalog.Binding) bool {
		return len(got) == 2 && got[0].Event == eventcatalog.RowCreated && got[1].Event == eventcatalog.LegacyRowCreated &&
			got[0].Args[eventcatalog.ArgDatabase] == "db1" && got[0].Args[eventcatalog.ArgTable] == "t1" && len(got[0].Args) == 2
	}
	if got := eventcatalog.Bindings(delivered); !rowCreated(got) {
		t.Fatalf("row create: %+v", got)
	}
	// Appwrite 2.1's tablesdb. form, and the collections/documents form alone, bind the same.
	for _, only := range [][]string{
		{"tablesdb.db1.tables.t1.rows.r1.create", "tablesdb.db1.tables.t1.rows.*.create", "tablesdb.*.tables.*.rows.*.create"},
		{"databases.db1.collections.t1.documents.r1.create", "databases.db1.collections.*.documents.*.create"},
	} {
		if got := eventcatalog.Bindings(only); !rowCreated(got) {
			t.Fatalf("%v: %+v", only, got)
		}
		e, _ := eventcatalog.Lookup(eventcatalog.RowCreated)
		if !e.MatchesEvents(map[string]string{"database_id": "db1", "table_id": "t1"}, only) || e.MatchesEvents(map[string]string{"database_id": "db1", "table_id": "t2"}, only) {
			t.Fatalf("%v: match", only)
		}
	}
	// A webhook's stored events give the same binding.
	e, _ := eventcatalog.Lookup(eventcatalog.ExecutionFailed)
	stored := e.AppwriteEvents(map[string]string{eventcatalog.ArgFunction: "worker"})
	if got := eventcatalog.Bindings(stored); len(got) != 2 || got[0].Event != eventcatalog.ExecutionFailed || got[0].Args[eventcatalog.ArgFunction] != "worker" || got[1].Event != eventcatalog.LegacyExecutionFailed {
		t.Fatalf("stored execution.failed: %+v", got)
	}
	if got := eventcatalog.Bindings([]string{"users.u1.create", "users.*.create"}); len(got) != 2 || got[0].Event != eventcatalog.UserCreated || len(got[0].Args) != 0 {
		t.Fatalf("user: %+v", got)
	}
	// A deployment event binds every status filter a subscription may have: none, ready, failed.
	got := eventcatalog.Bindings([]string{"functions.fn1.deployments.d1.update", "functions.fn1.deployments.*.update"})
	if len(got) != 3 || got[0].Event != eventcatalog.DeploymentCompleted || len(got[0].Args) != 1 || got[1].Args["status"] != "ready" || got[2].Args["status"] != "failed" || got[2].Args["function_id"] != "fn1" {
		t.Fatalf("deployment: %+v", got)
	}
	for name, evs := range map[string][]string{
		"two tables":       {"databases.db1.tables.t1.rows.r1.create", "databases.db1.tables.t2.rows.r2.create"},
		"wildcards only":   {"databases.*.tables.*.rows.*.create"},
		"not an id":        {"databases.db1.tables.-x.rows.r1.create"},
		"nothing":          nil,
		"unrelated":        {"teams.t1.create"},
		"segment too many": {"databases.db1.tables.t1.rows.r1.create.x"},
	} {
		if got := eventcatalog.Bindings(evs); len(got) != 0 {
			t.Errorf("%s: %+v", name, got)
		}
	}
}

// bindingHeaders are X-Appwrite-Webhook-Events values the Bindings fuzzers start from.
var bindingHeaders = []string{
	"databases.db1.tables.t1.rows.r1.create,databases.*.tables.*.rows.*.create",
	"functions.fn.executions.e1.update",
	"users.u1.create,users.*.create",
	"buckets.b.files.f.create,databases.db1.tables.t1.rows.r1.create",
	"databases.db1.tables.t1.rows.r1.create,databases.db1.tables.t2.rows.r1.create",
}

// FuzzBindings: whatever an events header holds, Bindings never panics, and every binding it returns is
// an event whose patterns, filled with the returned ids (all Appwrite ids), match one of the events.
func FuzzBindings(f *testing.F) {
	for _, h := range bindingHeaders {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, header string) {
		delivered := strings.Split(header, ",")
		for _, b := range eventcatalog.Bindings(delivered) {
			e, ok := eventcatalog.Lookup(b.Event)
			if !ok || len(b.Args) != len(e.Args) {
				t.Fatalf("binding %+v", b)
			}
			for _, a := range e.Args {
				if !eventcatalog.ValidID(b.Args[a]) {
					t.Fatalf("binding %+v: %s is not an id", b, a)
				}
			}
			if !e.MatchesEvents(b.Args, delivered) {
				t.Fatalf("binding %+v does not match %q", b, header)
			}
		}
	})
}

// TestProjectionTakesAppwriteAsItIs: what Appwrite's workers send differs from its API models (appwrite/mcp's
// recorded fixtures, tests/e2e/fixtures/appwrite): an asynchronous execution's update (built from the
// execution document by Platform/Workers/Functions.php) carries database-format times and no $createdAt;
// such a time is written in the API's layout (UTC), an absent or unparseable time is left out (the event's
// timestamp then falls back to the other, or to the time of receipt), and a field of another type than the
// model's is left out without losing the event. A body that is not a JSON object is an error.
func TestProjectionTakesAppwriteAsItIs(t *testing.T) {
	for _, c := range []struct {
		event, body     string
		args            map[string]string
		want, timestamp string
	}{
		{"functions.execution.failed", `{"$id":"68e7a1b2c3d4e5f6a7b8","$updatedAt":"2026-10-09 09:38:31.950","resourceId":"fn_billing","resourceType":"functions","deploymentId":"d1","trigger":"schedule","status":"failed","responseStatusCode":500,"logs":"charging jane@example.com","duration":0.412}`,
			map[string]string{"function_id": "fn_billing"},
			`{"deployment_id":"d1","duration":0.412,"execution_id":"68e7a1b2c3d4e5f6a7b8","function_id":"fn_billing","project_id":"P","response_status_code":500,"status":"failed","trigger":"schedule","updated_at":"2026-10-09T09:38:31.950+00:00"}`,
			"2026-10-09T09:38:31.950+00:00"},
		{"functions.deployment.completed", `{"$id":"d1","resourceId":"fn1","resourceType":"functions","status":"failed","$updatedAt":"2026-10-09 09:31:12.5"}`,
			map[string]string{"function_id": "fn1"}, `{"deployment_id":"d1","function_id":"fn1","project_id":"P","status":"failed","updated_at":"2026-10-09T09:31:12.500+00:00"}`, "2026-10-09T09:31:12.500+00:00"},
		{"storage.file.created", `{"$id":"f1","bucketId":"b1","mimeType":7,"sizeOriginal":true,"$createdAt":"2026-10-09T14:10:00.5+02:00"}`,
			map[string]string{"bucket_id": "b1"}, `{"bucket_id":"b1","created_at":"2026-10-09T14:10:00.5+02:00","file_id":"f1","project_id":"P"}`, "2026-10-09T14:10:00.5+02:00"},
		{"users.user.created", `{"$id":"user_jane","$createdAt":"yesterday","name":"Jane Doe","status":"yes"}`,
			nil, `{"project_id":"P","user_id":"user_jane"}`, ""},
	} {
		e, _ := eventcatalog.Lookup(c.event)
		occ, err := e.Project("P", c.args, []byte(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.event, err)
		}
		got, _ := json.Marshal(occ.Data())
		if string(got) != c.want || occ.Timestamp != c.timestamp {
			t.Errorf("%s:\n got %s, timestamp %q\nwant %s, timestamp %q", c.event, got, occ.Timestamp, c.want, c.timestamp)
		}
		for _, k := range e.PayloadSchema()["required"].([]string) {
			if _, ok := occ.Data()[k]; !ok {
				t.Errorf("%s: required data.%s missing", c.event, k)
			}
		}
	}
	row, _ := eventcatalog.Lookup("tablesdb.row.created")
	for _, body := range []string{"not json", "[1, 2]", "null", `"row"`} {
		if _, err := row.Project("P", map[string]string{"database_id": "db", "table_id": "t"}, []byte(body)); err == nil || errors.Is(err, eventcatalog.ErrNotThisSubscription) {
			t.Errorf("body %s: %v, want a payload error", body, err)
		}
	}
}

// TestInputSchemaIDPatterns: the input schemas say what subscribe accepts. An argument that goes into the
// webhook's Appwrite event strings has no '.' (their separator); project_id, which does not, may. Every
// argument refuses a wildcard, a leading symbol and more than 36 characters.
func TestInputSchemaIDPatterns(t *testing.T) {
	for _, e := range eventcatalog.All() {
		props := e.InputSchema()["properties"].(map[string]any)
		for _, a := range e.RequiredArgs() {
			re := regexp.MustCompile(props[a].(map[string]any)["pattern"].(string))
			for v, ok := range map[string]bool{"main": true, "fn_1-a": true, "a.b": a == "project_id", "*": false, "a*": false,
				"fn1.executions": a == "project_id", "-lead": false, "_lead": false, "a b": false, strings.Repeat("a", 36): true, strings.Repeat("a", 37): false, "": false} {
				if re.MatchString(v) != ok {
					t.Errorf("%s %s: pattern %s on %q: %v, want %v", e.Name, a, re, v, !ok, ok)
				}
			}
		}
	}
}

// FuzzProject: whatever body Appwrite sends, Project never panics, and what it delivers conforms to the
// event's payloadSchema (known fields, required ones present, times in RFC 3339) with a timestamp that is
// empty or RFC 3339.
func FuzzProject(f *testing.F) {
	f.Add(`{"$id":"r1","$databaseId":"db","$tableId":"t","$createdAt":"2026-12-01 10:00:00.000","email":"a@b.c"}`)
	f.Add(`{"$id":"e1","resourceId":"fn","resourceType":"functions","status":"failed","$updatedAt":"2026-10-09 09:38:31.950","duration":"x"}`)
	f.Add(`{"$id":"f1","bucketId":"b","mimeType":7,"sizeOriginal":true,"$createdAt":"yesterday"}`)
	f.Add(`[1,2]`)
	args := map[string]string{"database_id": "db", "table_id": "t", "bucket_id": "b", "function_id": "fn", "site_id": "fn"}
	f.Fuzz(func(t *testing.T, body string) {
		for _, e := range eventcatalog.All() {
			occ, err := e.Project("P", args, []byte(body))
			if err != nil {
				continue
			}
			props := e.PayloadSchema()["properties"].(map[string]any)
			data := occ.Data()
			for k, v := range data {
				p, ok := props[k].(map[string]any)
				if !ok {
					t.Fatalf("%s: data.%s is not in payloadSchema", e.Name, k)
				}
				if p["format"] == "date-time" {
					if _, err := time.Parse(time.RFC3339Nano, v.(string)); err != nil {
						t.Fatalf("%s: data.%s = %q is not RFC 3339", e.Name, k, v)
					}
				}
			}
			for _, k := range e.PayloadSchema()["required"].([]string) {
				if _, ok := data[k]; !ok {
					t.Fatalf("%s: required data.%s missing from %s", e.Name, k, body)
				}
			}
			if occ.Timestamp != "" {
				if _, err := time.Parse(time.RFC3339Nano, occ.Timestamp); err != nil {
					t.Fatalf("%s: timestamp %q", e.Name, occ.Timestamp)
				}
			}
		}
	})
}

// TestValidID: Appwrite's custom-id shape, 1 to 36 characters, a letter or digit first.
func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"a": true, "Z9": true, "db.main_1-x": true, strings.Repeat("a", 36): true,
		"": false, strings.Repeat("a", 37): false, ".x": false, "_a": false, "-": false, "a b": false,
		"a\n": false, "a/b": false, "é": false, "a\x00": false,
	} {
		if got := eventcatalog.ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestCatalogShape(t *testing.T) {
	want := []string{"tablesdb.row.created", "tablesdb.row.updated", "tablesdb.row.deleted", "storage.file.created", "users.user.created",
		"functions.execution.failed", "functions.deployment.completed", "sites.deployment.completed"}
	all := eventcatalog.All()
	if len(all) != len(want) {
		t.Fatalf("%d events", len(all))
	}
	for i, e := range all {
		if e.Name != want[i] {
			t.Fatalf("event %d is %s", i, e.Name)
		}
		s := e.InputSchema()
		req := s["required"].([]string)
		if req[0] != "project_id" || s["additionalProperties"] != false {
			t.Fatalf("%s input schema %v", e.Name, s)
		}
		if _, ok := e.PayloadSchema()["properties"].(map[string]any)["project_id"]; !ok {
			t.Fatalf("%s payload lacks project_id", e.Name)
		}
		for _, banned := range []string{"email", "phone", "prefs", "name", "logs", "responseBody"} {
			if _, ok := e.Payload[banned]; ok {
				t.Fatalf("%s payload carries %s", e.Name, banned)
			}
		}
	}
}

// TestStatusFilter: the deployment events take an optional status (ready or failed), listed in the input
// schema as an enum and not required.
func TestStatusFilter(t *testing.T) {
	ev, _ := eventcatalog.Lookup(eventcatalog.DeploymentCompleted)
	for _, c := range []struct{ in, want, err string }{
		{`{"project_id":"p","function_id":"f"}`, `{"function_id":"f","project_id":"p"}`, ""},
		{`{"project_id":"p","function_id":"f","status":"failed"}`, `{"function_id":"f","project_id":"p","status":"failed"}`, ""},
		{`{"project_id":"p","function_id":"f","status":null}`, `{"function_id":"f","project_id":"p"}`, ""},
		{`{"project_id":"p","function_id":"f","status":"building"}`, "", "arguments.status: must be one of ready, failed"},
		{`{"project_id":"p","function_id":"f","status":1}`, "", "arguments.status"},
		{`{"project_id":"p","function_id":"f","state":"ready"}`, "", "unknown argument \"state\""},
	} {
		got, err := ev.ValidateArgs(json.RawMessage(c.in))
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) || (err == nil && eventcatalog.Canonical(got) != c.want) {
			t.Errorf("%s: %v %v", c.in, got, err)
		}
	}
	props := ev.InputSchema()["properties"].(map[string]any)
	if st := props["status"].(map[string]any); fmt.Sprint(st["enum"]) != "[ready failed]" || strings.Contains(fmt.Sprint(ev.InputSchema()["required"]), "status") {
		t.Fatalf("schema: %v", ev.InputSchema())
	}
	// A status-filtered subscription's webhook events are the same as an unfiltered one's.
	if got := ev.AppwriteEvents(map[string]string{"project_id": "p", "function_id": "f", "status": "ready"}); fmt.Sprint(got) != "[functions.f.deployments.*.update]" {
		t.Fatalf("patterns: %v", got)
	}
}

func TestValidateArgs(t *testing.T) {
	ev, _ := eventcatalog.Lookup(eventcatalog.RowCreated)
	for _, c := range []struct{ in, err string }{
		{`{"project_id":"p","database_id":"d","table_id":"t"}`, ""},
		{`null`, "arguments: required"},
		{`[]`, "must be an object"},
		{`{"project_id":"p","database_id":"d"}`, "arguments.table_id: required"},
		{`{"project_id":"p","database_id":"d","table_id":"t","x":1}`, `unknown argument "x"`},
		{`{"project_id":"p","database_id":"d","table_id":"-t"}`, "arguments.table_id: must be an Appwrite id"},
		{`{"project_id":"p","database_id":"d","table_id":"` + strings.Repeat("a", 37) + `"}`, "must be an Appwrite id"},
		{`{"project_id":1,"database_id":"d","table_id":"t"}`, "arguments.project_id: must be a string"},
	} {
		_, err := ev.ValidateArgs(json.RawMessage(c.in))
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: got %v, want %q", c.in, err, c.err)
		}
	}
}

func TestMissingScopes(t *testing.T) {
	ev, _ := eventcatalog.Lookup(eventcatalog.ExecutionFailed)
	got := ev.MissingScopes(map[string]bool{"project:webhooks.read": true, "project:webhooks.write": true, "project:functions.read": true, "project:execution.read": true})
	if len(got) != 0 {
		t.Fatalf("alternative scope not accepted: %v", got)
	}
	got = ev.MissingScopes(map[string]bool{"project:functions.read": true})
	if strings.Join(got, "|") != "project:webhooks.read|project:webhooks.write|project:executions.read or project:execution.read" {
		t.Fatalf("%v", got)
	}
	// project:all grants every project scope; bare names (API-key scopes) and organization:all grant none.
	if got := ev.MissingScopes(map[string]bool{eventcatalog.ScopeAll: true}); len(got) != 0 {
		t.Fatalf("project:all: %v", got)
	}
	if got := ev.MissingScopes(map[string]bool{"webhooks.read": true, "webhooks.write": true, "functions.read": true, "executions.read": true, "organization:all": true, "all": true}); len(got) != 4 {
		t.Fatalf("bare names: %v", got)
	}
}

func ExampleEvent_AppwriteEvents() {
	ev, _ := eventcatalog.Lookup(eventcatalog.RowUpdated)
	fmt.Println(ev.AppwriteEvents(map[string]string{"project_id": "p1", "database_id": "main", "table_id": "support_tickets"}))
	// Output: [databases.main.tables.support_tickets.rows.*.update databases.main.tables.support_tickets.rows.*.upsert]
}

func ExampleCanonical() {
	fmt.Println(eventcatalog.Canonical(map[string]string{"table_id": "t", "database_id": "d", "project_id": "p"}))
	// Output: {"database_id":"d","project_id":"p","table_id":"t"}
}
