package localappwrite

import (
	"appwrite-agent/shared/devkit/testclock"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/appwrite/sdk-for-go/tablesdb"
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

// TestUpdatedAtMovesOnlyOnChange: as in Appwrite's database (utopia-php/database updateDocument,
// $shouldUpdate), an update or upsert that writes what the row already holds leaves $updatedAt; a changed
// value or changed permissions move it.
func TestUpdatedAtMovesOnlyOnChange(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC))
	f := newFixture(t, Options{Clock: clock.Now})
	seedRowsTable(t, f)
	db := tablesdb.New(f.sdk(f.key))
	row, err := db.CreateRow("db1", "t1", "r1", map[string]any{"title": "a", "count": 1})
	if err != nil {
		t.Fatal(err)
	}
	created := row.UpdatedAt
	steps := []struct {
		name  string
		write func() (string, error)
		moves bool
	}{
		{"the same value", func() (string, error) {
			r, err := db.UpdateRow("db1", "t1", "r1", db.WithUpdateRowData(map[string]any{"title": "a"}))
			return r.UpdatedAt, err
		}, false},
		{"an upsert of the same values", func() (string, error) {
			r, err := db.UpsertRow("db1", "t1", "r1", db.WithUpsertRowData(map[string]any{"title": "a", "count": 1}))
			return r.UpdatedAt, err
		}, false},
		{"a new value", func() (string, error) {
			r, err := db.UpdateRow("db1", "t1", "r1", db.WithUpdateRowData(map[string]any{"count": 2}))
			return r.UpdatedAt, err
		}, true},
		{"new permissions", func() (string, error) {
			r, err := db.UpdateRow("db1", "t1", "r1", db.WithUpdateRowPermissions([]string{`read("any")`}))
			return r.UpdatedAt, err
		}, true},
	}
	last := created
	for _, s := range steps {
		clock.Advance(time.Minute)
		got, err := s.write()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if moved := got != last; moved != s.moves {
			t.Fatalf("%s: $updatedAt %s after %s (moved %v, want %v)", s.name, got, last, moved, s.moves)
		}
		last = got
	}
}
