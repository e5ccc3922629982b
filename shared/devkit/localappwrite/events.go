package localappwrite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// param is one event param, in the order the route sets them (the order matters to generateEvents).
type param struct{ key, value string }

// pendingEvent is an event a handler produced; it is dispatched after the response is written.
type pendingEvent struct {
	project string
	pattern string // e.g. "databases.[databaseId].tables.[tableId].rows.[rowId].create"
	params  []param
	payload any // the response model
	userID  string
}

// emit records an event of the current request.
func (c *call) emit(pattern string, payload any, params ...param) {
	c.pending = append(c.pending, pendingEvent{project: c.pr.id, pattern: pattern, params: params, payload: payload, userID: c.who.userID})
}

// generateEvents ports Appwrite's Event::generateEvents (src/Appwrite/Event/Event.php): the concrete event, the
// wildcard variants (every id, then each id alone, replaced by "*") and the parent prefixes, in PHP's order,
// duplicates removed.
func generateEvents(pattern string, params []param) ([]string, error) {
	ts, err := eventTemplates(pattern, paramKeys(params))
	if err != nil {
		return nil, err
	}
	return ts.fill(params), nil
}

// paramKeys lists the keys of params, in order.
func paramKeys(params []param) []string {
	keys := make([]string, len(params))
	for i, p := range params {
		keys[i] = p.key
	}
	return keys
}

// template is one event string of generateEvents before the param values go in: fill says whether PHP's
// str_replace of every key by its value runs over it (the variants with every id replaced by "*" skip it).
type template struct {
	text string
	fill bool
}

// templates are the value-independent part of generateEvents for one pattern and its param keys, in order.
type templates []template

// fill puts the param values into ts (each key in turn over the whole string, as PHP's str_replace with
// arrays), drops the placeholder brackets and removes duplicates: generateEvents' result.
func (ts templates) fill(params []param) []string {
	events := make([]string, len(ts))
	for i, t := range ts {
		e := t.text
		if t.fill {
			for _, p := range params {
				e = strings.ReplaceAll(e, p.key, p.value)
			}
		}
		events[i] = strings.Map(dropBrackets, e)
	}
	return uniqueStrings(events)
}

// eventTemplates is generateEvents without the values: the patterns and their wildcard variants, with the
// keys still in them. It depends on the pattern and the keys only, so a Server computes it once per pair
// (Server.eventsOf).
func eventTemplates(pattern string, keys []string) (templates, error) {
	parts := strings.Split(pattern, ".")
	count := len(parts)
	// Event::parseEventPattern: a sub-resource is a "[placeholder]" in the fourth place, a sub-sub-resource one
	// in the sixth.
	hasSub := count > 3 && strings.HasPrefix(parts[3], "[")
	ev := parseEvent(parts, hasSub, hasSub && count > 5 && strings.HasPrefix(parts[5], "["))
	typ, resource, subType, subResource := ev.typ, ev.resource, ev.subType, ev.subResource
	subSubType, subSubResource, attribute, action := ev.subSubType, ev.subSubResource, ev.attribute, ev.action
	for _, r := range []string{resource, subResource, subSubResource} {
		if r != "" && !slices.Contains(keys, strings.Trim(r, "[]")) {
			return nil, fmt.Errorf("%s is missing from the params", r)
		}
	}
	join := func(xs ...string) string { return strings.Join(xs, ".") }
	var patterns []string
	if action != "" {
		switch {
		case subSubResource != "":
			if attribute != "" {
				patterns = append(patterns, join(typ, resource, subType, subResource, subSubType, subSubResource, action, attribute))
			}
			patterns = append(patterns, join(typ, resource, subType, subResource, subSubType, subSubResource, action),
				join(typ, resource, subType, subResource, subSubType, subSubResource))
		case subResource != "":
			if attribute != "" {
				patterns = append(patterns, join(typ, resource, subType, subResource, action, attribute))
			}
			patterns = append(patterns, join(typ, resource, subType, subResource, action), join(typ, resource, subType, subResource))
		default:
			patterns = append(patterns, join(typ, resource, action))
		}
		if attribute != "" {
			patterns = append(patterns, join(typ, resource, action, attribute))
		}
	}
	if subSubResource != "" {
		patterns = append(patterns, join(typ, resource, subType, subResource, subSubType, subSubResource))
	}
	if subResource != "" {
		patterns = append(patterns, join(typ, resource, subType, subResource))
	}
	patterns = append(patterns, join(typ, resource))
	patterns = uniqueStrings(patterns)

	// PHP str_replace with arrays: each search key in turn over the whole subject.
	replaceWith := func(subject string, search []string, repl string) string {
		for _, k := range search {
			subject = strings.ReplaceAll(subject, k, repl)
		}
		return subject
	}
	var ts templates
	filled := func(text string) { ts = append(ts, template{text: text, fill: true}) }
	for _, ev := range patterns {
		filled(ev)
		ts = append(ts, template{text: replaceWith(ev, keys, "*")})
		for _, key := range keys {
			for _, current := range keys {
				if subSubResource != "" {
					for _, subCurrent := range keys {
						if subCurrent == current || subCurrent == key {
							continue
						}
						s1 := replaceWith(ev, []string{subCurrent}, "*")
						filled(s1)
						filled(replaceWith(s1, []string{current}, "*"))
						filled(replaceWith(ev, []string{current}, "*"))
					}
				} else {
					if current == key {
						continue
					}
					filled(replaceWith(ev, []string{current}, "*"))
				}
			}
		}
	}
	// Equal templates fill to equal strings, which fill's uniqueStrings would drop after the first: dropping
	// them here keeps the result and its order (a row create's 300-odd templates are 50-odd distinct ones).
	seen := make(map[template]bool, len(ts))
	out := ts[:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// dropBrackets removes the brackets of the [placeholders], as Appwrite's str_replace of "[" and "]" with "" does.
// A strings.Replacer built per event string cost the stand-in half of its CPU under load.
func dropBrackets(r rune) rune {
	if r == '[' || r == ']' {
		return -1
	}
	return r
}

// mirrorEvents copies Appwrite's Event::mirrorCollectionEvents (src/Appwrite/Event/Event.php:677-734, 1.9.6):
// for a databases pattern whose first event mentions collections or tables (substring checks, as PHP's
// str_contains), each event is followed by its counterpart: an event containing "collections" by its tables
// form (documents→rows, collections→tables, attributes→columns), else one containing "tables" by its
// collections form; whole segments are replaced; duplicates are removed.
func mirrorEvents(pattern string, events []string) []string {
	if len(events) == 0 || !strings.Contains(pattern, "databases.") ||
		!(strings.Contains(events[0], "collections") || strings.Contains(events[0], "tables")) {
		return events
	}
	toTables := map[string]string{"documents": "rows", "collections": "tables", "attributes": "columns"}
	toCollections := map[string]string{"rows": "documents", "tables": "collections", "columns": "attributes"}
	replace := func(e string, m map[string]string) string {
		parts := strings.Split(e, ".")
		for i, p := range parts {
			if r, ok := m[p]; ok {
				parts[i] = r
			}
		}
		return strings.Join(parts, ".")
	}
	out := make([]string, 0, 2*len(events))
	for _, e := range events {
		out = append(out, e)
		switch {
		case strings.Contains(e, "collections"):
			out = append(out, replace(e, toTables))
		case strings.Contains(e, "tables"):
			out = append(out, replace(e, toCollections))
		}
	}
	return uniqueStrings(out)
}

// allEvents is generateEvents followed by the Collections mirror, as Event::generateEvents returns them.
func allEvents(pattern string, params []param) []string {
	ev, err := generateEvents(pattern, params)
	if err != nil {
		return nil
	}
	return mirrorEvents(pattern, ev)
}

// eventsOf is allEvents with the templates of each pattern and key list computed once per Server: a row
// create generates 42 strings out of about a hundred templates, which cost the load harness more CPU than
// anything it measured when they were rebuilt for every event.
func (s *Server) eventsOf(pattern string, params []param) []string {
	var k strings.Builder
	k.WriteString(pattern)
	for _, p := range params {
		k.WriteByte(0)
		k.WriteString(p.key)
	}
	key := k.String()
	s.templatesMu.Lock()
	ts, ok := s.templates[key]
	s.templatesMu.Unlock()
	if !ok {
		var err error
		if ts, err = eventTemplates(pattern, paramKeys(params)); err != nil {
			return nil
		}
		s.templatesMu.Lock()
		s.templates[key] = ts
		s.templatesMu.Unlock()
	}
	return mirrorEvents(pattern, ts.fill(params))
}

func uniqueStrings(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := in[:0:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// eventParts are the parts of an event string or pattern: type.resource[.subType.subResource
// [.subSubType.subSubResource]][.action[.attribute]].
type eventParts struct {
	typ, resource, subType, subResource, subSubType, subSubResource, action, attribute string
}

// parseEvent splits the dot-separated parts of an event into its parts, given whether it has a sub-resource
// and a sub-sub-resource: generateEvents (Event::parseEventPattern) decides that from placeholders, the Event
// validator from the events config.
func parseEvent(parts []string, hasSub, hasSubSub bool) eventParts {
	count := len(parts)
	get := func(i int) string {
		if i < count {
			return parts[i]
		}
		return ""
	}
	ev := eventParts{typ: get(0), resource: get(1)}
	if hasSub {
		ev.subType, ev.subResource = parts[2], parts[3]
	}
	if hasSubSub {
		ev.subSubType, ev.subSubResource = parts[4], parts[5]
		if count == 8 {
			ev.attribute = parts[7]
		}
	}
	if hasSub && !hasSubSub && count == 6 {
		ev.attribute = parts[5]
	}
	if !hasSub && count == 4 {
		ev.attribute = parts[3]
	}
	switch {
	case !hasSub && count > 2:
		ev.action = parts[2]
	case hasSubSub:
		ev.action = get(6)
	case hasSub && count > 4:
		ev.action = parts[4]
	}
	return ev
}

// ---- the Event validator (src/Appwrite/Event/Validator/Event.php over app/config/events.php) ----

// evNode is a node of the events config: children are sub-types or actions; resource marks "$resource".
type evNode struct {
	resource bool
	children map[string]*evNode
}

func res(children map[string]*evNode) *evNode { return &evNode{resource: true, children: children} }
func leaf(names ...string) map[string]*evNode {
	m := map[string]*evNode{}
	for _, n := range names {
		m[n] = &evNode{}
	}
	return m
}
func with(m map[string]*evNode, k string, n *evNode) map[string]*evNode { m[k] = n; return m }

// eventsConfig is the subset of app/config/events.php the stand-in validates against.
var eventsConfig = func() map[string]*evNode {
	crud := func() map[string]*evNode { return leaf("create", "update", "delete") }
	userUpdate := &evNode{children: leaf("email", "name", "password", "status", "prefs", "phone", "mfa", "labels", "verification", "impersonator")}
	users := with(with(crud(), "update", userUpdate), "sessions", res(leaf("create", "delete")))
	users["recovery"] = res(leaf("create", "update"))
	users["verification"] = res(leaf("create", "update"))
	users["targets"] = res(crud())
	users["tokens"] = res(leaf("create"))
	users["challenges"] = res(leaf("create", "update"))
	users["identities"] = res(leaf("delete"))
	tables := crud()
	tables["upsert"] = &evNode{}
	tables["rows"] = res(leaf("create", "update", "delete", "upsert"))
	tables["columns"] = res(crud())
	tables["indexes"] = res(crud())
	collections := crud()
	collections["upsert"] = &evNode{}
	collections["documents"] = res(leaf("create", "update", "delete", "upsert"))
	collections["attributes"] = res(crud())
	collections["indexes"] = res(crud())
	databases := crud()
	databases["tables"] = res(tables)
	databases["collections"] = res(collections)
	functions := crud()
	functions["deployments"] = res(crud())
	functions["executions"] = res(crud())
	sites := crud()
	sites["deployments"] = res(crud())
	buckets := crud()
	buckets["files"] = res(crud())
	teams := with(crud(), "update", &evNode{children: leaf("prefs")})
	teams["memberships"] = res(with(crud(), "update", &evNode{children: leaf("status")}))
	topics := crud()
	topics["subscribers"] = res(leaf("create", "delete"))
	return map[string]*evNode{
		"users":      res(users),
		"databases":  res(databases),
		"functions":  res(functions),
		"sites":      res(sites),
		"buckets":    res(buckets),
		"teams":      res(teams),
		"messages":   res(crud()),
		"topics":     res(topics),
		"providers":  res(crud()),
		"rules":      res(crud()),
		"migrations": res(crud()),
	}
}()

// validEvent ports the Event validator: 2-7 parts; a known type; a known action for the (sub)type; a known
// attribute for the action. Like the original it checks a 7-part action against the middle type.
func validEvent(value string) bool {
	parts := strings.Split(value, ".")
	count := len(parts)
	if count < 2 || count > 7 {
		return false
	}
	typ, resource := parts[0], parts[1]
	if typ == "" || resource == "" {
		return false
	}
	t := eventsConfig[typ]
	if t == nil {
		return false
	}
	child := func(n *evNode, k string) *evNode {
		if n == nil || n.children == nil {
			return nil
		}
		return n.children[k]
	}
	hasSub := count > 3 && t.resource && child(t, parts[2]) != nil && child(t, parts[2]).resource
	hasSubSub := count > 5 && hasSub && child(child(t, parts[2]), parts[4]) != nil && child(child(t, parts[2]), parts[4]).resource
	ev := parseEvent(parts, hasSub, hasSubSub)
	subType, subResource, attribute, action := ev.subType, ev.subResource, ev.attribute, ev.action
	if subType != "" {
		st := child(t, subType)
		if action != "" && child(st, action) == nil {
			return false
		}
		if subResource == "" || st == nil {
			return false
		}
	} else if action != "" && child(t, action) == nil {
		return false
	}
	if attribute != "" {
		var a *evNode
		if subType != "" {
			a = child(child(child(t, subType), action), attribute)
		} else {
			a = child(child(t, action), attribute)
		}
		if a == nil {
			return false
		}
	}
	return true
}

// ---- PHP json_encode ----

// phpJSON encodes v the way PHP's json_encode does with default flags, which is how Appwrite's worker writes
// webhook bodies: "/" escaped as "\/", non-ASCII as \uXXXX (surrogate pairs above U+FFFF), no HTML escaping.
func phpJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	in := bytes.TrimRight(buf.Bytes(), "\n")
	out := make([]byte, 0, len(in)+16)
	for i := 0; i < len(in); {
		b := in[i]
		if b == '/' {
			out = append(out, '\\', '/')
			i++
			continue
		}
		if b < utf8.RuneSelf {
			out = append(out, b)
			i++
			continue
		}
		r, size := utf8.DecodeRune(in[i:])
		i += size
		if r >= 0x10000 {
			r -= 0x10000
			out = fmt.Appendf(out, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
	}
	return out, nil
}
