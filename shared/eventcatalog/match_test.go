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

// refBindings is Bindings as it was before it stopped splitting the events: every event split on dots,
// then compared with the split patterns segment by segment.
func refBindings(appwriteEvents []string) []eventcatalog.Binding {
	var out []eventcatalog.Binding
	for _, e := range append(eventcatalog.All(), eventcatalog.Legacy()...) {
		var args map[string]string
		matched, ok := false, true
		for _, p := range append(append([]string(nil), e.Patterns...), e.Aliases...) {
			ps := strings.Split(p, ".")
			for _, ev := range appwriteEvents {
				es := strings.Split(strings.TrimSpace(ev), ".")
				if len(es) != len(ps) {
					continue
				}
				same := true
				for i, seg := range ps {
					if seg != "*" && !(strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}")) && seg != es[i] {
						same = false
						break
					}
				}
				if !same {
					continue
				}
				matched = true
				if args == nil {
					args = map[string]string{}
				}
				for i, seg := range ps {
					if !(strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}")) || es[i] == "*" {
						continue
					}
					name := seg[1 : len(seg)-1]
					if v, seen := args[name]; seen && v != es[i] {
						ok = false
					}
					args[name] = es[i]
				}
			}
		}
		if !ok || !matched || len(args) != len(e.Args) {
			continue
		}
		for _, a := range e.Args {
			if !eventcatalog.ValidID(args[a]) {
				ok = false
			}
		}
		if ok {
			out = append(out, eventcatalog.Binding{Event: e.Name, Args: args})
			for _, f := range e.Filters {
				for _, v := range f.Values {
					with := map[string]string{f.Name: v}
					for k, a := range args {
						with[k] = a
					}
					out = append(out, eventcatalog.Binding{Event: e.Name, Args: with})
				}
			}
		}
	}
	return out
}

// FuzzBindingsAsBefore: Bindings, which reads the events segment by segment, returns exactly what it
// returned when it split them.
func FuzzBindingsAsBefore(f *testing.F) {
	for _, h := range append(bindingHeaders,
		" databases.db1.tables.t1.rows.*.update ,databases.db1.tables.t1.rows.r1.upsert",
		"functions.fn.executions.e1.update,functions.fn.executions.*.create",
		"tablesdb.db1.tables.t1.rows.r1.create,tablesdb.db1.tables.t1.rows.*.create",
		"functions.fn.deployments.d1.update,sites.s1.deployments.d2.update",
		"databases..tables.t1.rows.r1.create,databases.db1.tables.t1.rows.r1.create.") {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, header string) {
		delivered := strings.Split(header, ",")
		got, want := eventcatalog.Bindings(delivered), refBindings(delivered)
		if len(got) != len(want) {
			t.Fatalf("%q: %+v, before %+v", header, got, want)
		}
		for i := range got {
			if got[i].Event != want[i].Event || len(got[i].Args) != len(want[i].Args) {
				t.Fatalf("%q: %+v, before %+v", header, got, want)
			}
			for k, v := range want[i].Args {
				if got[i].Args[k] != v {
					t.Fatalf("%q: %+v, before %+v", header, got, want)
				}
			}
		}
	})
}
