package localappwrite

import (
	"testing"
	"time"

	"appwrite-agent/shared/devkit/testclock"

	"github.com/appwrite/sdk-for-go/tablesdb"
)

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
