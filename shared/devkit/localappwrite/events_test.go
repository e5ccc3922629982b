package localappwrite

import (
	"slices"
	"testing"
)

// The expected lists were produced by a literal Python transcription of Appwrite's PHP
// Event::generateEvents (PHP str_replace semantics), independent of the Go port.
func TestGenerateEventsMatchesAppwrite(t *testing.T) {
	cases := []struct {
		pattern string
		params  []param
		want    []string
	}{
		{
			"databases.[databaseId].tables.[tableId].rows.[rowId].create",
			[]param{{"databaseId", "db1"}, {"tableId", "t1"}, {"rowId", "r1"}},
			[]string{"databases.db1.tables.t1.rows.r1.create", "databases.*.tables.*.rows.*.create", "databases.db1.tables.*.rows.r1.create", "databases.*.tables.*.rows.r1.create", "databases.*.tables.t1.rows.r1.create", "databases.db1.tables.t1.rows.*.create", "databases.*.tables.t1.rows.*.create", "databases.db1.tables.*.rows.*.create", "databases.db1.tables.t1.rows.r1", "databases.*.tables.*.rows.*", "databases.db1.tables.*.rows.r1", "databases.*.tables.*.rows.r1", "databases.*.tables.t1.rows.r1", "databases.db1.tables.t1.rows.*", "databases.*.tables.t1.rows.*", "databases.db1.tables.*.rows.*", "databases.db1.tables.t1", "databases.*.tables.*", "databases.db1.tables.*", "databases.*.tables.t1", "databases.db1", "databases.*"},
		},
		{
			"buckets.[bucketId].files.[fileId].create",
			[]param{{"bucketId", "b1"}, {"fileId", "f1"}},
			[]string{"buckets.b1.files.f1.create", "buckets.*.files.*.create", "buckets.b1.files.*.create", "buckets.*.files.f1.create", "buckets.b1.files.f1", "buckets.*.files.*", "buckets.b1.files.*", "buckets.*.files.f1", "buckets.b1", "buckets.*"},
		},
		{
			"users.[userId].create",
			[]param{{"userId", "u1"}},
			[]string{"users.u1.create", "users.*.create", "users.u1", "users.*"},
		},
	}
	for _, tc := range cases {
		got, err := generateEvents(tc.pattern, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got  %q\n want %q", tc.pattern, got, tc.want)
		}
	}
	if _, err := generateEvents("users.[userId].create", nil); err == nil {
		t.Error("a missing param must fail like Appwrite's InvalidArgumentException")
	}
}

func TestMirrorAddsCollectionsForms(t *testing.T) {
	ev := allEvents("databases.[databaseId].tables.[tableId].rows.[rowId].update",
		[]param{{"databaseId", "d"}, {"tableId", "t"}, {"rowId", "r"}})
	for _, want := range []string{
		"databases.d.tables.t.rows.r.update", "databases.d.collections.t.documents.r.update",
		"databases.*.tables.*.rows.*.update", "databases.*.collections.*.documents.*.update",
		"databases.d.collections.t", "databases.*",
	} {
		if !slices.Contains(ev, want) {
			t.Errorf("missing %s in %q", want, ev)
		}
	}
	if ev[0] != "databases.d.tables.t.rows.r.update" {
		t.Errorf("first event must be the concrete tables form, got %s", ev[0])
	}
	users := allEvents("users.[userId].create", []param{{"userId", "u"}})
	if len(users) != 4 {
		t.Errorf("non-database events are not mirrored: %q", users)
	}
}

func TestValidEvent(t *testing.T) {
	valid := []string{
		"databases.*", "databases.*.tables.*.rows.*.create", "databases.db.tables.t.rows.*.update",
		"databases.*.collections.*.documents.*.delete", "databases.*.tables.*.rows.*.upsert",
		"buckets.*.files.*.create", "users.*.create", "users.*.update.email", "functions.*.executions.*.update",
		"users.*", "teams.*.memberships.*.update.status",
	}
	invalid := []string{
		"databases", "nope.*.create", "users.*.explode", "users.*.update.shoe", "buckets.*.files.*.explode",
		"databases.*.tables.*.rows.*.create.x.y", "", ".*",
	}
	for _, e := range valid {
		if !validEvent(e) {
			t.Errorf("%q should be valid", e)
		}
	}
	for _, e := range invalid {
		if validEvent(e) {
			t.Errorf("%q should be invalid", e)
		}
	}
}

func TestPHPJSON(t *testing.T) {
	got, err := phpJSON(obj{{"url", "https://x.test/a"}, {"name", "é😀<&>"}, {"n", 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"url":"https:\/\/x.test\/a","name":"\u00e9\ud83d\ude00<&>","n":1}`
	if string(got) != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

// A TablesDB row create generates from the documents label (Documents/Create.php:529-532): the first event is
// the collections/documents form, and the mirror yields the same 42 strings as the tables form would.
func TestRowCreateEventsStartWithTheDocumentsForm(t *testing.T) {
	docs := allEvents("databases.[databaseId].collections.[collectionId].documents.[documentId].create",
		[]param{{"databaseId", "d"}, {"collectionId", "t"}, {"tableId", "t"}, {"documentId", "r"}, {"rowId", "r"}})
	tables := allEvents("databases.[databaseId].tables.[tableId].rows.[rowId].create",
		[]param{{"databaseId", "d"}, {"tableId", "t"}, {"rowId", "r"}})
	if len(docs) != 42 || len(tables) != 42 {
		t.Fatalf("want 42 events each, got %d and %d", len(docs), len(tables))
	}
	if docs[0] != "databases.d.collections.t.documents.r.create" || docs[1] != "databases.d.tables.t.rows.r.create" {
		t.Fatalf("first events %q", docs[:2])
	}
	a, b := slices.Clone(docs), slices.Clone(tables)
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Fatalf("the two forms generate different sets:\n%q\n%q", a, b)
	}
}

// TestEventsOfReusesTemplates: the Server's cached templates give what allEvents gives, for every call,
// when the same pattern comes back with other values (the cache holds no value) and for another pattern.
func TestEventsOfReusesTemplates(t *testing.T) {
	s := New(Options{Logf: func(string, ...any) {}})
	t.Cleanup(func() { _ = s.Close() })
	rows := "databases.[databaseId].tables.[tableId].rows.[rowId].create"
	calls := []struct {
		pattern string
		params  []param
	}{
		{rows, []param{{"databaseId", "db"}, {"tableId", "t1"}, {"rowId", "r1"}}},
		{rows, []param{{"databaseId", "db"}, {"tableId", "t2"}, {"rowId", "r2"}}},
		{rows, []param{{"databaseId", "other"}, {"tableId", "t1"}, {"rowId", "[x]"}}},
		{"users.[userId].create", []param{{"userId", "u"}}},
		{"users.[userId].create", []param{{"userId", "v"}}},
	}
	for i, c := range calls {
		got, want := s.eventsOf(c.pattern, c.params), allEvents(c.pattern, c.params)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Fatalf("call %d: eventsOf %q\nallEvents %q", i, got, want)
		}
		if i == 1 && !slices.Contains(got, "databases.db.tables.t2.rows.r2.create") {
			t.Fatalf("call %d: the second row's values are missing: %q", i, got)
		}
	}
	if n := len(s.templates); n != 2 {
		t.Fatalf("%d cached template lists, want 2 (one per pattern and key list)", n)
	}
}
