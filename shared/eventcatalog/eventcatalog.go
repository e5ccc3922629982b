// Package eventcatalog is the MCP events catalog (v1) and everything both halves of the events feature need
// to agree on: mcp-events lists and subscribes with it, webhook-ingress matches, filters and projects with it.
//
// Each event names the Appwrite events that carry it (narrowed to the subscription's target), the filter the
// ingress applies on top (Appwrite filters only by event name), and the projection of Appwrite's payload
// (the whole resource model) to the event's payloadSchema: IDs and metadata only, never row columns,
// emails, phones, names or prefs.
package eventcatalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Argument names used in inputSchema and in sealed subscriptions.
const (
	ArgProject  = "project_id"
	ArgDatabase = "database_id"
	ArgTable    = "table_id"
	ArgBucket   = "bucket_id"
	ArgFunction = "function_id"
)

// ScopeWebhooksWrite is needed for every subscription: it is a webhook in the caller's project.
const ScopeWebhooksWrite = "webhooks.write"

// Event is one entry of the catalog.
type Event struct {
	// Name is the MCP event name, such as "row.created".
	Name string
	// Description says when the event fires, for the model and the user.
	Description string
	// Targets are the required arguments besides project_id, in schema order.
	Targets []string
	// Scopes are the Appwrite scopes a caller's token needs, besides webhooks.write, to read the target
	// (the subscribe-time authorization) and to see what the event carries.
	Scopes []string

	// appwrite builds the Appwrite event patterns for a subscription's arguments.
	appwrite func(args map[string]string) []string
	// filter reports whether a decoded payload belongs to the subscription (status and target checks).
	filter func(args map[string]string, p payload) bool
	// project reduces a payload to the event's data.
	project func(p payload) map[string]any
	// payloadSchema is the JSON Schema of data.
	payloadSchema string
}

// payload is the part of Appwrite's resource models the catalog reads.
type payload struct {
	ID                 string   `json:"$id"`
	CreatedAt          string   `json:"$createdAt"`
	UpdatedAt          string   `json:"$updatedAt"`
	DatabaseID         string   `json:"$databaseId"`
	TableID            string   `json:"$tableId"`
	CollectionID       string   `json:"$collectionId"`
	BucketID           string   `json:"bucketId"`
	MimeType           string   `json:"mimeType"`
	SizeOriginal       *int64   `json:"sizeOriginal"`
	FunctionID         string   `json:"functionId"`
	ResourceID         string   `json:"resourceId"`
	ResourceType       string   `json:"resourceType"`
	DeploymentID       string   `json:"deploymentId"`
	Trigger            string   `json:"trigger"`
	Status             any      `json:"status"`
	ResponseStatusCode *int     `json:"responseStatusCode"`
	Duration           *float64 `json:"duration"`
	Labels             []string `json:"labels"`
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

const rowPayloadSchema = `{"type":"object","properties":{"project_id":{"type":"string"},"database_id":{"type":"string"},"table_id":{"type":"string"},"row_id":{"type":"string"},"created_at":{"type":"string","format":"date-time"},"updated_at":{"type":"string","format":"date-time"}},"required":["project_id","database_id","table_id","row_id"],"additionalProperties":false}`

func rowEvent(name, action, when string) Event {
	return Event{
		Name:        name,
		Description: when + " Delivers the row's IDs and timestamps, never its columns.",
		Targets:     []string{ArgDatabase, ArgTable},
		Scopes:      []string{"tables.read", "rows.read"},
		appwrite: func(a map[string]string) []string {
			return []string{"databases." + a[ArgDatabase] + ".tables." + a[ArgTable] + ".rows.*." + action}
		},
		filter: func(a map[string]string, p payload) bool {
			return p.ID != "" && p.DatabaseID == a[ArgDatabase] && p.tableID() == a[ArgTable]
		},
		project: func(p payload) map[string]any {
			return map[string]any{"database_id": p.DatabaseID, "table_id": p.tableID(), "row_id": p.ID, "created_at": p.CreatedAt, "updated_at": p.UpdatedAt}
		},
		payloadSchema: rowPayloadSchema,
	}
}

// catalog is the v1 catalog, in the order events/list shows it. It is never modified.
var catalog = []Event{
	rowEvent("row.created", "create", "Fires when a row is created in the given table."),
	rowEvent("row.updated", "update", "Fires when a row of the given table is updated."),
	rowEvent("row.deleted", "delete", "Fires when a row is deleted from the given table."),
	{
		Name:        "file.created",
		Description: "Fires when a file is uploaded to the given storage bucket. Delivers the file's IDs, MIME type, size and timestamps, never its name or content.",
		Targets:     []string{ArgBucket},
		Scopes:      []string{"buckets.read", "files.read"},
		appwrite: func(a map[string]string) []string {
			return []string{"buckets." + a[ArgBucket] + ".files.*.create"}
		},
		filter: func(a map[string]string, p payload) bool { return p.ID != "" && p.BucketID == a[ArgBucket] },
		project: func(p payload) map[string]any {
			m := map[string]any{"bucket_id": p.BucketID, "file_id": p.ID, "mime_type": p.MimeType, "created_at": p.CreatedAt}
			if p.SizeOriginal != nil {
				m["size_bytes"] = *p.SizeOriginal
			}
			return m
		},
		payloadSchema: `{"type":"object","properties":{"project_id":{"type":"string"},"bucket_id":{"type":"string"},"file_id":{"type":"string"},"mime_type":{"type":"string"},"size_bytes":{"type":"integer"},"created_at":{"type":"string","format":"date-time"}},"required":["project_id","bucket_id","file_id"],"additionalProperties":false}`,
	},
	{
		Name:        "user.created",
		Description: "Fires when a user account is created in the project. Delivers the user's ID, status, labels and creation time, never their email, phone, name or preferences.",
		Targets:     nil,
		Scopes:      []string{"users.read"},
		appwrite:    func(map[string]string) []string { return []string{"users.*.create"} },
		filter:      func(_ map[string]string, p payload) bool { return p.ID != "" },
		project: func(p payload) map[string]any {
			m := map[string]any{"user_id": p.ID, "created_at": p.CreatedAt, "labels": nonNil(p.Labels)}
			if b, ok := p.Status.(bool); ok {
				m["enabled"] = b
			}
			return m
		},
		payloadSchema: `{"type":"object","properties":{"project_id":{"type":"string"},"user_id":{"type":"string"},"enabled":{"type":"boolean"},"labels":{"type":"array","items":{"type":"string"}},"created_at":{"type":"string","format":"date-time"}},"required":["project_id","user_id"],"additionalProperties":false}`,
	},
	{
		Name:        "execution.failed",
		Description: "Fires when an execution of the given function fails (status failed). Delivers the execution's IDs, trigger, HTTP status code, duration and timestamps, never its logs, errors or bodies: read them with the execution id.",
		Targets:     []string{ArgFunction},
		Scopes:      []string{"functions.read", "executions.read"},
		appwrite: func(a map[string]string) []string {
			// A synchronous execution is created with its final status; an asynchronous one is created
			// waiting and updated when it ends.
			return []string{
				"functions." + a[ArgFunction] + ".executions.*.create",
				"functions." + a[ArgFunction] + ".executions.*.update",
			}
		},
		filter: func(a map[string]string, p payload) bool {
			return p.ID != "" && p.statusString() == "failed" && p.functionID() == a[ArgFunction]
		},
		project: func(p payload) map[string]any {
			m := map[string]any{"function_id": p.functionID(), "execution_id": p.ID, "deployment_id": p.DeploymentID, "trigger": p.Trigger, "status": p.statusString(), "created_at": p.CreatedAt, "updated_at": p.UpdatedAt}
			if p.ResponseStatusCode != nil {
				m["response_status_code"] = *p.ResponseStatusCode
			}
			if p.Duration != nil {
				m["duration_seconds"] = *p.Duration
			}
			return m
		},
		payloadSchema: `{"type":"object","properties":{"project_id":{"type":"string"},"function_id":{"type":"string"},"execution_id":{"type":"string"},"deployment_id":{"type":"string"},"trigger":{"type":"string"},"status":{"type":"string","enum":["failed"]},"response_status_code":{"type":"integer"},"duration_seconds":{"type":"number"},"created_at":{"type":"string","format":"date-time"},"updated_at":{"type":"string","format":"date-time"}},"required":["project_id","function_id","execution_id","status"],"additionalProperties":false}`,
	},
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// All returns the catalog in listing order.
func All() []Event { return append([]Event(nil), catalog...) }

// Lookup finds an event by name.
func Lookup(name string) (Event, bool) {
	for _, e := range catalog {
		if e.Name == name {
			return e, true
		}
	}
	return Event{}, false
}

// idPattern is Appwrite's custom id rule (CustomId validator): at most 36 characters of a-z, A-Z, 0-9,
// period, hyphen and underscore, not starting with a special character.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,35}$`)

// ValidID reports whether s is a valid Appwrite resource or project id.
func ValidID(s string) bool { return idPattern.MatchString(s) }

// InputSchema is the JSON Schema of the event's subscription arguments: project_id and the targets, all
// required Appwrite ids, nothing else.
func (e Event) InputSchema() json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i, name := range append([]string{ArgProject}, e.Targets...) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `%q:{"type":"string","pattern":%q,"description":%q}`, name, idPattern.String(), argDescription[name])
	}
	b.WriteString(`},"required":[`)
	for i, name := range append([]string{ArgProject}, e.Targets...) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q", name)
	}
	b.WriteString(`],"additionalProperties":false}`)
	return json.RawMessage(b.String())
}

var argDescription = map[string]string{
	ArgProject:  "Appwrite project ID.",
	ArgDatabase: "TablesDB database ID.",
	ArgTable:    "Table ID inside the database.",
	ArgBucket:   "Storage bucket ID.",
	ArgFunction: "Function ID.",
}

// PayloadSchema is the JSON Schema of the data of a delivered event.
func (e Event) PayloadSchema() json.RawMessage { return json.RawMessage(e.payloadSchema) }

// ArgumentError says which subscription argument is wrong and why.
type ArgumentError struct {
	Arg    string
	Reason string
}

func (e *ArgumentError) Error() string { return "arguments." + e.Arg + ": " + e.Reason }

// CheckArguments validates subscription arguments against InputSchema and returns them as strings.
// raw may be nil or a JSON object.
func (e Event) CheckArguments(raw json.RawMessage) (map[string]string, error) {
	var in map[string]json.RawMessage
	if len(raw) == 0 || string(raw) == "null" {
		in = map[string]json.RawMessage{}
	} else if err := json.Unmarshal(raw, &in); err != nil || in == nil {
		return nil, &ArgumentError{Arg: "", Reason: "must be a JSON object"}
	}
	want := append([]string{ArgProject}, e.Targets...)
	out := make(map[string]string, len(want))
	for _, name := range want {
		v, ok := in[name]
		if !ok {
			return nil, &ArgumentError{Arg: name, Reason: "is required"}
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, &ArgumentError{Arg: name, Reason: "must be a string"}
		}
		if !ValidID(s) {
			return nil, &ArgumentError{Arg: name, Reason: fmt.Sprintf("%q is not an Appwrite ID (1-36 characters of a-z, A-Z, 0-9, '.', '-', '_', not starting with a special character)", s)}
		}
		out[name] = s
	}
	for name := range in {
		if _, ok := out[name]; !ok {
			return nil, &ArgumentError{Arg: name, Reason: "is not an argument of " + e.Name}
		}
	}
	return out, nil
}

// AppwriteEvents are the Appwrite event patterns of the webhook that carries a subscription with args.
func (e Event) AppwriteEvents(args map[string]string) []string { return e.appwrite(args) }

// MatchesEvents reports whether any of the Appwrite events of a delivery (X-Appwrite-Webhook-Events, split
// on commas) matches the subscription's patterns.
func (e Event) MatchesEvents(args map[string]string, delivered []string) bool {
	for _, pattern := range e.appwrite(args) {
		for _, ev := range delivered {
			if MatchPattern(pattern, strings.TrimSpace(ev)) {
				return true
			}
		}
	}
	return false
}

// MatchPattern reports whether an Appwrite event matches a pattern segment by segment, "*" matching any one
// segment (Appwrite's own matching is exact string membership over the generated wildcard forms; this is
// the same relation).
func MatchPattern(pattern, event string) bool {
	ps, es := strings.Split(pattern, "."), strings.Split(event, ".")
	if len(ps) != len(es) {
		return false
	}
	for i := range ps {
		if ps[i] != "*" && ps[i] != es[i] {
			return false
		}
	}
	return true
}

// Occurrence is what the ingress learns from one Appwrite payload.
type Occurrence struct {
	// Data is the projected payload, conforming to PayloadSchema (project_id included).
	Data map[string]any
	// ResourceID and Version identify the change: the resource's $id and $updatedAt.
	ResourceID, Version string
	// Timestamp is when the change happened ($updatedAt, else $createdAt; empty when the payload has
	// neither).
	Timestamp string
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
	data := e.project(p)
	data["project_id"] = projectID
	for k, v := range data {
		if s, ok := v.(string); ok && s == "" {
			delete(data, k)
		}
	}
	ts := p.UpdatedAt
	if ts == "" {
		ts = p.CreatedAt
	}
	return Occurrence{Data: data, ResourceID: p.ID, Version: p.UpdatedAt, Timestamp: ts}, nil
}
