package eventcatalog

// This file is the ingress side of the catalog: which Appwrite deliveries belong to a subscription, and the
// projection of Appwrite's resource model (whole rows, user emails, phones, prefs) to the event's
// PayloadSchema.

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"
)

// payload is the part of Appwrite's resource models the catalog reads (decoded by UnmarshalJSON, which names
// the model's fields).
type payload struct {
	ID                 string
	CreatedAt          string
	UpdatedAt          string
	DatabaseID         string
	TableID            string
	CollectionID       string
	BucketID           string
	MimeType           string
	SizeOriginal       *int64
	FunctionID         string
	ResourceID         string
	ResourceType       string
	DeploymentID       string
	Trigger            string
	Status             any
	ResponseStatusCode *int
	Duration           *float64
}

// UnmarshalJSON decodes an Appwrite resource model field by field: a field whose value is not of the type
// the catalog reads (a number where a string is expected, say) is left unset, so that it is absent from the
// event rather than losing the whole event; a body that is not a JSON object is an error.
func (p *payload) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if m == nil {
		return errors.New("null is not a resource model")
	}
	*p = payload{}
	for key, set := range map[string]func(json.RawMessage){
		"$id": into(&p.ID), "$createdAt": into(&p.CreatedAt), "$updatedAt": into(&p.UpdatedAt), "$databaseId": into(&p.DatabaseID),
		"$tableId": into(&p.TableID), "$collectionId": into(&p.CollectionID), "bucketId": into(&p.BucketID), "mimeType": into(&p.MimeType),
		"sizeOriginal": into(&p.SizeOriginal), "functionId": into(&p.FunctionID), "resourceId": into(&p.ResourceID),
		"resourceType": into(&p.ResourceType), "deploymentId": into(&p.DeploymentID), "trigger": into(&p.Trigger), "status": into(&p.Status),
		"responseStatusCode": into(&p.ResponseStatusCode), "duration": into(&p.Duration),
	} {
		if raw, ok := m[key]; ok {
			set(raw)
		}
	}
	p.CreatedAt, p.UpdatedAt = normalTime(p.CreatedAt), normalTime(p.UpdatedAt)
	return nil
}

// into returns a setter of *dst from a JSON value, which leaves *dst as it is when the value is not a T.
func into[T any](dst *T) func(json.RawMessage) {
	return func(raw json.RawMessage) {
		var v T
		if json.Unmarshal(raw, &v) == nil {
			*dst = v
		}
	}
}

// TimeLayout is the layout of the times of Appwrite's API models (Appwrite's DateTime::formatTz, 'Y-m-d\TH:i:s.vP'),
// the layout every time of a delivered event has.
const TimeLayout = "2006-01-02T15:04:05.000-07:00"

// dbTimeLayout is Appwrite's database datetime format, which its workers put in the payloads they build from
// documents (a finished asynchronous execution, a built deployment: Platform/Workers/Functions.php 0cefd06:
// 761-771 filters the execution document, not an API response; appwrite/mcp's recorded
// execution_async_failed.json carries "$updatedAt": "2026-10-09 09:38:31.950"). It is UTC.
const dbTimeLayout = "2006-01-02 15:04:05.000"

// normalTime is an Appwrite time as a delivered event carries it: an RFC 3339 time as it is (Appwrite's API
// form), a database-format time in TimeLayout (UTC), and "" for anything that does not parse (the field is then
// absent, and the event is stamped on receipt).
func normalTime(s string) string {
	if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return s
	}
	for _, layout := range []string{dbTimeLayout, "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Format(TimeLayout)
		}
	}
	return ""
}

func (p payload) tableID() string {
	if p.TableID != "" {
		return p.TableID
	}
	return p.CollectionID
}

func (p payload) functionID() string {
	if p.FunctionID != "" {
		return p.FunctionID
	}
	if p.ResourceType == "" || p.ResourceType == "functions" {
		return p.ResourceID
	}
	return ""
}

func (p payload) statusString() string {
	s, _ := p.Status.(string)
	return s
}

func rowFilter(a map[string]string, p payload) bool {
	return p.ID != "" && p.DatabaseID == a[ArgDatabase] && p.tableID() == a[ArgTable]
}

func rowProjection(p payload, f *fields) {
	f.str(ArgDatabase, p.DatabaseID)
	f.str(ArgTable, p.tableID())
	f.str("row_id", p.ID)
	f.str("created_at", p.CreatedAt)
	f.str("updated_at", p.UpdatedAt)
}

func fileFilter(a map[string]string, p payload) bool { return p.ID != "" && p.BucketID == a[ArgBucket] }

// fileProjection leaves out the file's name: names are user content. size names the size field ("size";
// the first catalog's "size_bytes").
func fileProjection(size string) func(p payload, f *fields) {
	return func(p payload, f *fields) {
		f.str(ArgBucket, p.BucketID)
		f.str("file_id", p.ID)
		f.str("mime_type", p.MimeType)
		f.str("created_at", p.CreatedAt)
		if p.SizeOriginal != nil {
			f.add(Field{Name: size, Kind: Integer, Int: *p.SizeOriginal})
		}
	}
}

// deploymentFilter passes deployments of the subscribed function or site (resourceType, resourceId: the
// Deployment model) whose build ended with the status asked for, or ready or failed when none was. Appwrite
// fires the same update event when a deployment is activated, with the function or site model (no
// resourceType: dropped), and while it builds (processing, building: dropped).
func deploymentFilter(resourceType, arg string) func(a map[string]string, p payload) bool {
	return func(a map[string]string, p payload) bool {
		if p.ID == "" || p.ResourceType != resourceType || p.ResourceID != a[arg] {
			return false
		}
		st := p.statusString()
		if want, ok := a[ArgStatus]; ok {
			return st == want
		}
		return st == "ready" || st == "failed"
	}
}

func deploymentProjection(arg string) func(p payload, f *fields) {
	return func(p payload, f *fields) {
		f.str(arg, p.ResourceID)
		f.str("deployment_id", p.ID)
		f.str("status", p.statusString())
		f.str("updated_at", p.UpdatedAt)
	}
}

func userFilter(_ map[string]string, p payload) bool { return p.ID != "" }

// userProjection leaves out everything personal: name, email, phone, prefs, labels, targets.
func userProjection(p payload, f *fields) {
	f.str("user_id", p.ID)
	f.str("created_at", p.CreatedAt)
	if b, ok := p.Status.(bool); ok {
		f.add(Field{Name: "status", Kind: Bool, Bool: b})
	}
}

// executionFailedFilter passes only failed executions of the subscribed function: a synchronous execution
// is created with its final status, an asynchronous one is created waiting and updated when it ends.
func executionFailedFilter(a map[string]string, p payload) bool {
	return p.ID != "" && p.statusString() == "failed" && p.functionID() == a[ArgFunction]
}

// executionProjection leaves out logs, errors, request and response bodies and headers.
func executionProjection(p payload, f *fields) {
	f.str(ArgFunction, p.functionID())
	f.str("execution_id", p.ID)
	f.str("deployment_id", p.DeploymentID)
	f.str("trigger", p.Trigger)
	f.str("status", p.statusString())
	f.str("created_at", p.CreatedAt)
	f.str("updated_at", p.UpdatedAt)
	if p.ResponseStatusCode != nil {
		f.add(Field{Name: "response_status_code", Kind: Integer, Int: int64(*p.ResponseStatusCode)})
	}
	if p.Duration != nil {
		f.add(Field{Name: "duration", Kind: Number, Num: *p.Duration})
	}
}

// MatchesEvents reports whether any of the Appwrite events of a delivery (X-Appwrite-Webhook-Events, split
// on commas) matches the subscription's patterns (and aliases) filled with args: segment by segment, "*"
// matching any one segment (Appwrite's own matching is exact string membership over the generated wildcard
// forms; this is the same relation).
func (e Event) MatchesEvents(args map[string]string, delivered []string) bool {
	evs := splitEvents(delivered)
	for _, pattern := range fill(append(slices.Clip(e.Patterns), e.Aliases...), args) {
		segs := strings.Split(pattern, ".")
		for _, es := range evs {
			if segmentsEqual(segs, es) {
				return true
			}
		}
	}
	return false
}

// splitEvents returns Appwrite events trimmed of spaces and split on dots.
func splitEvents(events []string) [][]string {
	out := make([][]string, len(events))
	for i, ev := range events {
		out[i] = strings.Split(strings.TrimSpace(ev), ".")
	}
	return out
}

// segmentsEqual reports whether the split event es matches the split pattern segs, "*" matching any one
// segment.
func segmentsEqual(segs, es []string) bool {
	if len(segs) != len(es) {
		return false
	}
	for i, seg := range segs {
		if seg != "*" && seg != es[i] {
			return false
		}
	}
	return true
}

// Occurrence is what the ingress learns from one Appwrite payload.
type Occurrence struct {
	// Fields is the projected payload, conforming to PayloadSchema (project_id included), sorted by name.
	Fields []Field
	// Timestamp is when the change happened ($updatedAt, else $createdAt, as normalTime writes them; empty
	// when the payload has neither, or neither parses).
	Timestamp string
}

// Data returns Fields as the JSON object they stand for: name -> string, bool, int64 or float64.
func (o Occurrence) Data() map[string]any {
	m := make(map[string]any, len(o.Fields))
	for _, f := range o.Fields {
		m[f.Name] = f.Value()
	}
	return m
}

// Kind is the JSON type of a Field.
type Kind uint8

// Kinds.
const (
	String  Kind = iota + 1 // Field.Str
	Bool                    // Field.Bool
	Integer                 // Field.Int
	Number                  // Field.Num
)

// Field is one field of a projected payload: a property of PayloadSchema and its value, in the member
// its Kind names.
type Field struct {
	Name string
	Kind Kind
	Str  string
	Bool bool
	Int  int64
	Num  float64
}

// Value returns the field's value as a string, bool, int64 or float64.
func (f Field) Value() any {
	switch f.Kind {
	case String:
		return f.Str
	case Bool:
		return f.Bool
	case Integer:
		return f.Int
	case Number:
		return f.Num
	}
	return nil
}

// fields is a projection being made: at most one field per property of the event's PayloadSchema.
type fields []Field

// add adds a field.
func (f *fields) add(field Field) { *f = append(*f, field) }

// str adds a string field; an empty string is left out (the field is absent from the payload).
func (f *fields) str(name, v string) {
	if v != "" {
		f.add(Field{Name: name, Kind: String, Str: v})
	}
}

// ErrNotThisSubscription means the payload does not belong to the subscription (another table, a status
// that is not failed, ...): nothing is delivered.
var ErrNotThisSubscription = errors.New("eventcatalog: payload does not match the subscription")

// Project decodes an Appwrite payload, applies the event's filter for args and projects it.
func (e Event) Project(projectID string, args map[string]string, body []byte) (Occurrence, error) {
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return Occurrence{}, fmt.Errorf("eventcatalog: payload is not a JSON resource model: %w", err)
	}
	if !e.filter(args, p) {
		return Occurrence{}, ErrNotThisSubscription
	}
	var f fields
	e.project(p, &f)
	f.str(ArgProject, projectID)
	slices.SortFunc(f, func(a, b Field) int { return strings.Compare(a.Name, b.Name) })
	ts := p.UpdatedAt
	if ts == "" {
		ts = p.CreatedAt
	}
	return Occurrence{Fields: f, Timestamp: ts}, nil
}

// Binding is one catalog event that a set of Appwrite events names, with the arguments read from them.
type Binding struct {
	Event string
	Args  map[string]string
}

// Bindings returns the catalog events whose Appwrite patterns the given Appwrite events fill (a delivery's
// X-Appwrite-Webhook-Events split on commas, or a webhook's stored events), each with the arguments the
// events name in the patterns' {arg} places: what a sealed subscription is bound to without storing it.
// Wildcard segments ("*") name nothing; an event is left out when its events name an argument with two
// different values, or do not name every argument, or name one that is not an Appwrite id.
func Bindings(appwriteEvents []string) []Binding {
	evs := splitEvents(appwriteEvents)
	var out []Binding
	for e := range allEvents() {
		args, ok := e.argsFrom(evs)
		if !ok {
			continue
		}
		out = append(out, Binding{Event: e.Name, Args: args})
		// Filters are not named by Appwrite's events: every value they may hold is a candidate.
		for _, f := range e.Filters {
			for _, v := range f.Values {
				withFilter := maps.Clone(args)
				withFilter[f.Name] = v
				out = append(out, Binding{Event: e.Name, Args: withFilter})
			}
		}
	}
	return out
}

// allEvents yields the catalog's events, then the legacy events.
func allEvents() iter.Seq[*Event] {
	return func(yield func(*Event) bool) {
		for _, list := range [...][]Event{events, legacy} {
			for i := range list {
				if !yield(&list[i]) {
					return
				}
			}
		}
	}
}

// patterns yields e's patterns, then its aliases.
func (e *Event) patterns() iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, list := range [...][]string{e.Patterns, e.Aliases} {
			for _, p := range list {
				if !yield(p) {
					return
				}
			}
		}
	}
}

// argsFrom reads e's arguments from Appwrite events (splitEvents): every event is compared with every
// pattern and alias split on dots (once per pattern: a delivery names dozens of events), segment by segment.
func (e *Event) argsFrom(evs [][]string) (map[string]string, bool) {
	var args map[string]string // nil until an event matches
	for p := range e.patterns() {
		segs := strings.Split(p, ".")
		for _, es := range evs {
			if !segmentsMatch(segs, es) {
				continue
			}
			if args == nil {
				args = make(map[string]string, len(e.Args))
			}
			for i, seg := range segs {
				if isPlaceholder(seg) && es[i] != "*" {
					name := seg[1 : len(seg)-1]
					if v, seen := args[name]; seen && v != es[i] {
						return nil, false
					}
					args[name] = es[i]
				}
			}
		}
	}
	if args == nil || len(args) != len(e.Args) {
		return nil, false
	}
	for _, a := range e.Args {
		if !ValidID(args[a]) {
			return nil, false
		}
	}
	return args, true
}

// segmentsMatch reports whether the split event es equals the split pattern segs in length and in every
// segment that is neither "*" nor a placeholder.
func segmentsMatch(segs, es []string) bool {
	if len(segs) != len(es) {
		return false
	}
	for i, seg := range segs {
		if seg != "*" && !isPlaceholder(seg) && seg != es[i] {
			return false
		}
	}
	return true
}

func isPlaceholder(seg string) bool { return len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}' }
