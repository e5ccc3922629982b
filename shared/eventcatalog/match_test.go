package eventcatalog_test

import (
	"strings"
	"testing"

	"appwrite-agent/shared/eventcatalog"
)

// refMatch is the matching MatchesEvents did before it stopped building patterns: AppwriteEvents, then
// segment by segment after splitting both on dots.
func refMatch(e eventcatalog.Event, args map[string]string, delivered []string) bool {
	for _, pattern := range e.AppwriteEvents(args) {
		for _, ev := range delivered {
			ps, es := strings.Split(pattern, "."), strings.Split(strings.TrimSpace(ev), ".")
			if len(ps) != len(es) {
				continue
			}
			ok := true
			for i := range ps {
				if ps[i] != "*" && ps[i] != es[i] {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
	}
	return false
}

func FuzzMatchesEventsAsBefore(f *testing.F) {
	f.Add("db1", "t1", "databases.db1.tables.t1.rows.r1.create", "databases.*.tables.*.rows.*.create")
	f.Add("d.b", "t", "databases.d.b.tables.t.rows.x.create", " databases.db.tables.t.rows.x.update")
	f.Add("*", "{x}", "databases.q.tables.{x}.rows.r.create", "users.u.create")
	f.Fuzz(func(t *testing.T, a1, a2, ev1, ev2 string) {
		delivered := []string{ev1, ev2}
		for _, e := range eventcatalog.All() {
			args := map[string]string{}
			for i, name := range e.Args {
				args[name] = []string{a1, a2}[i%2]
			}
			if got, want := e.MatchesEvents(args, delivered), refMatch(e, args, delivered); got != want {
				t.Fatalf("%s %v %q: %v, before %v", e.Name, args, delivered, got, want)
			}
		}
		if got, want := eventcatalog.MatchPattern(ev2, ev1), refMatch(eventcatalog.Event{Patterns: []string{ev2}}, nil, []string{ev1}); got != want && !strings.ContainsAny(ev2, "{}") && strings.TrimSpace(ev1) == ev1 {
			t.Fatalf("MatchPattern(%q, %q) = %v, before %v", ev2, ev1, got, want)
		}
	})
}
