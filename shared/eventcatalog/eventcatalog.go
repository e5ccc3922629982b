// Package eventcatalog is the MCP events catalog (v1) and everything both halves of the events feature must
// agree on: six events, their input and payload schemas, the Appwrite event patterns each one is narrowed
// to, the OAuth scopes a caller needs, the validation of subscription arguments (mcp-events lists and
// subscribes with these), and the matching, filtering and projection of Appwrite's payloads (webhook-ingress
// delivers with these; see projection.go).
//
// Payloads carry IDs and metadata only (ids, status, timestamps, error codes); an agent fetches details
// with its own Appwrite tools. The ingress projects Appwrite's full payload down to PayloadSchema.
package eventcatalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"appwrite-agent/shared/ident"
)

// Event names of the v1 catalog.
const (
	RowCreated      = "row.created"
	RowUpdated      = "row.updated"
	RowDeleted      = "row.deleted"
	FileCreated     = "file.created"
	UserCreated     = "user.created"
	ExecutionFailed = "execution.failed"
)

// Argument names.
const (
	ArgProject  = "project_id"
	ArgDatabase = "database_id"
	ArgTable    = "table_id"
	ArgBucket   = "bucket_id"
	ArgFunction = "function_id"
)

// ScopeWebhooksWrite is needed for every subscription: it is a webhook in the caller's project.
const ScopeWebhooksWrite = "webhooks.write"

// MaxIDLength is the longest Appwrite id (custom ids are at most 36 characters).
const MaxIDLength = 36

// IDPattern is Appwrite's custom-id alphabet: a letter or digit, then letters, digits, '.', '_' or '-'.
const IDPattern = `^[a-zA-Z0-9][a-zA-Z0-9._-]{0,35}$`

// idPattern is IDPattern, checked without a regular expression.
var idPattern = ident.Pattern{First: ident.Chars("a-zA-Z0-9"), Rest: ident.Chars("a-zA-Z0-9._-"), MaxRest: MaxIDLength - 1}

// ValidID reports whether s is a valid Appwrite resource or project id.
func ValidID(s string) bool { return idPattern.Match(s) }

// Target names what events/subscribe reads, with the caller's token, to authorize a subscription.
type Target string

// Targets.
const (
	TargetTable    Target = "table"
	TargetBucket   Target = "bucket"
	TargetFunction Target = "function"
	TargetUsers    Target = "users"
)

// Event is one catalog entry.
type Event struct {
	// Name is the MCP event name.
	Name string
	// Description says when it fires, for a person and a model.
	Description string
	// Args are the argument names besides project_id, all required.
	Args []string
	// Patterns are the Appwrite event patterns, with {arg} placeholders, the webhook subscribes to.
	Patterns []string
	// Scopes are the OAuth scopes needed: every inner list must be satisfied by one of its members.
	Scopes [][]string
	// Target is the resource read to authorize the subscription.
	Target Target
	// Payload lists the payload fields: name -> JSON Schema.
	Payload map[string]map[string]any
	// PayloadRequired lists the payload fields that are always present.
	PayloadRequired []string

	// filter reports whether a decoded Appwrite payload belongs to a subscription with these arguments
	// (Appwrite filters only by event name); project reduces it to the payload fields.
	filter  func(args map[string]string, p payload) bool
	project func(p payload, f fieldList) fieldList
	// wholeSegments is set (catalog events only) when every placeholder of Patterns is a whole segment.
	wholeSegments bool
}

// webhookScopes are needed for every event: the subscription is a project webhook.
var webhookScopes = [][]string{{"project:webhooks.read"}, {"project:webhooks.write"}}

// ScopePrefix starts the name of every project scope an Appwrite Cloud OAuth token carries
// ("project:rows.read"); the part after it is the API-key scope of the same name. Appwrite Cloud's
// authorization server grants only these names (and ScopeAll): bare names ("rows.read") are API-key scopes,
// which no access token carries.
const ScopePrefix = "project:"

// ScopeAll is Appwrite Cloud's scope that grants every project scope.
const ScopeAll = "project:all"

// ScopeRequirements returns every scope requirement of the catalog, the webhook scopes first, each once:
// every inner list is met by any one of its alternatives (Cloud names).
func ScopeRequirements() [][]string {
	out := append([][]string(nil), webhookScopes...)
	seen := map[string]bool{}
	for _, g := range out {
		seen[strings.Join(g, " ")] = true
	}
	for _, e := range All() {
		for _, g := range e.Scopes {
			if k := strings.Join(g, " "); !seen[k] {
				seen[k] = true
				out = append(out, g)
			}
		}
	}
	return out
}

// HasScope reports whether granted (the scopes of an access token) satisfies scope (a Cloud name,
// "project:<scope>"): it holds scope itself or ScopeAll.
func HasScope(granted map[string]bool, scope string) bool {
	return granted[scope] || (strings.HasPrefix(scope, ScopePrefix) && granted[ScopeAll])
}

var argDescriptions = map[string]string{
	ArgProject:  "Appwrite project id.",
	ArgDatabase: "TablesDB database id.",
	ArgTable:    "Table id in that database.",
	ArgBucket:   "Storage bucket id.",
	ArgFunction: "Function id.",
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
func ts(desc string) map[string]any {
	return map[string]any{"type": "string", "format": "date-time", "description": desc}
}

func rowPayload(extra map[string]map[string]any) map[string]map[string]any {
	p := map[string]map[string]any{
		ArgProject:   str("Project id."),
		ArgDatabase:  str("Database id."),
		ArgTable:     str("Table id."),
		"row_id":     str("Row id."),
		"created_at": ts("When the row was created."),
		"updated_at": ts("When the row was last updated."),
	}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

var events = []Event{
	{
		Name:        RowCreated,
		Description: "Fires when a row is created in a TablesDB table of an Appwrite project.",
		Args:        []string{ArgDatabase, ArgTable},
		Patterns:    []string{"databases.{database_id}.tables.{table_id}.rows.*.create"},
		Scopes:      [][]string{{"project:tables.read", "project:collections.read"}, {"project:rows.read", "project:documents.read"}},
		Target:      TargetTable,
		Payload:     rowPayload(nil),
		PayloadRequired: []string{
			ArgProject, ArgDatabase, ArgTable, "row_id", "created_at",
		},
		filter: rowFilter, project: rowProjection,
	},
	{
		Name:        RowUpdated,
		Description: "Fires when a row of a TablesDB table is updated (an update or an upsert).",
		Args:        []string{ArgDatabase, ArgTable},
		Patterns: []string{
			"databases.{database_id}.tables.{table_id}.rows.*.update",
			"databases.{database_id}.tables.{table_id}.rows.*.upsert",
		},
		Scopes:          [][]string{{"project:tables.read", "project:collections.read"}, {"project:rows.read", "project:documents.read"}},
		Target:          TargetTable,
		Payload:         rowPayload(nil),
		PayloadRequired: []string{ArgProject, ArgDatabase, ArgTable, "row_id", "updated_at"},
		filter:          rowFilter, project: rowProjection,
	},
	{
		Name:            RowDeleted,
		Description:     "Fires when a row is deleted from a TablesDB table.",
		Args:            []string{ArgDatabase, ArgTable},
		Patterns:        []string{"databases.{database_id}.tables.{table_id}.rows.*.delete"},
		Scopes:          [][]string{{"project:tables.read", "project:collections.read"}, {"project:rows.read", "project:documents.read"}},
		Target:          TargetTable,
		Payload:         rowPayload(nil),
		PayloadRequired: []string{ArgProject, ArgDatabase, ArgTable, "row_id"},
		filter:          rowFilter, project: rowProjection,
	},
	{
		Name:        FileCreated,
		Description: "Fires when a file is uploaded to a Storage bucket.",
		Args:        []string{ArgBucket},
		Patterns:    []string{"buckets.{bucket_id}.files.*.create"},
		Scopes:      [][]string{{"project:buckets.read"}, {"project:files.read"}},
		Target:      TargetBucket,
		Payload: map[string]map[string]any{
			ArgProject:   str("Project id."),
			ArgBucket:    str("Bucket id."),
			"file_id":    str("File id."),
			"mime_type":  str("MIME type of the file."),
			"size_bytes": {"type": "integer", "description": "Size of the file in bytes."},
			"created_at": ts("When the file was created."),
		},
		PayloadRequired: []string{ArgProject, ArgBucket, "file_id", "created_at"},
		filter:          fileFilter, project: fileProjection,
	},
	{
		Name:        UserCreated,
		Description: "Fires when a user signs up or is created in an Appwrite project (IDs only: no email, phone or prefs).",
		Args:        nil,
		Patterns:    []string{"users.*.create"},
		Scopes:      [][]string{{"project:users.read"}},
		Target:      TargetUsers,
		Payload: map[string]map[string]any{
			ArgProject:   str("Project id."),
			"user_id":    str("User id."),
			"status":     {"type": "boolean", "description": "Whether the user is enabled."},
			"created_at": ts("When the user was created."),
		},
		PayloadRequired: []string{ArgProject, "user_id", "created_at"},
		filter:          userFilter, project: userProjection,
	},
	{
		Name: ExecutionFailed,
		Description: "Fires when an execution of an Appwrite function fails (status failed). Executions served " +
			"through function domains fire no Appwrite event and are not covered.",
		Args:     []string{ArgFunction},
		Patterns: []string{"functions.{function_id}.executions.*.create", "functions.{function_id}.executions.*.update"},
		Scopes:   [][]string{{"project:functions.read"}, {"project:executions.read", "project:execution.read"}},
		Target:   TargetFunction,
		Payload: map[string]map[string]any{
			ArgProject:             str("Project id."),
			ArgFunction:            str("Function id."),
			"execution_id":         str("Execution id."),
			"deployment_id":        str("Deployment id."),
			"trigger":              str("What started the execution: http, schedule or event."),
			"status":               str("Execution status (always failed)."),
			"response_status_code": {"type": "integer", "description": "HTTP status the function answered with."},
			"duration":             {"type": "number", "description": "Duration in seconds."},
			"created_at":           ts("When the execution was created."),
			"updated_at":           ts("When the execution last changed (when it failed)."),
		},
		PayloadRequired: []string{ArgProject, ArgFunction, "execution_id", "status"},
		filter:          executionFailedFilter, project: executionProjection,
	},
}

// All returns the catalog in its fixed order.
func All() []Event { return append([]Event(nil), events...) }

// Lookup returns the event called name.
func Lookup(name string) (Event, bool) {
	for i := range events { // by index: an Event is a large value to copy
		if events[i].Name == name {
			return events[i], true
		}
	}
	return Event{}, false
}

// RequiredArgs returns project_id followed by the event's own arguments.
func (e Event) RequiredArgs() []string { return append([]string{ArgProject}, e.Args...) }

// InputSchema is the JSON Schema of the subscription arguments.
func (e Event) InputSchema() map[string]any {
	props := map[string]any{}
	for _, a := range e.RequiredArgs() {
		props[a] = map[string]any{
			"type": "string", "description": argDescriptions[a],
			"pattern": IDPattern, "minLength": 1, "maxLength": MaxIDLength,
		}
	}
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             e.RequiredArgs(),
		"additionalProperties": false,
	}
}

// PayloadSchema is the JSON Schema of the data of a delivered occurrence.
func (e Event) PayloadSchema() map[string]any {
	props := map[string]any{}
	for k, v := range e.Payload {
		props[k] = v
	}
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             append([]string(nil), e.PayloadRequired...),
		"additionalProperties": false,
	}
}

// Listing is one entry of the events/list result.
type Listing struct {
	Name          string         `json:"name"`
	Description   string         `json:"description"`
	Delivery      []string       `json:"delivery"`
	InputSchema   map[string]any `json:"inputSchema"`
	PayloadSchema map[string]any `json:"payloadSchema"`
}

// Listing renders e for events/list; webhook is the only delivery mode.
func (e Event) Listing() Listing {
	return Listing{
		Name: e.Name, Description: e.Description, Delivery: []string{"webhook"},
		InputSchema: e.InputSchema(), PayloadSchema: e.PayloadSchema(),
	}
}

// MissingScopes returns the scope requirements (each "a or b") that scopes do not satisfy, webhook scopes
// included; empty means the caller may use the event.
func (e Event) MissingScopes(scopes map[string]bool) []string {
	var missing []string
	for _, group := range append(append([][]string(nil), webhookScopes...), e.Scopes...) {
		ok := false
		for _, s := range group {
			if HasScope(scopes, s) {
				ok = true
				break
			}
		}
		if !ok {
			missing = append(missing, strings.Join(group, " or "))
		}
	}
	return missing
}

// StepUpScopes returns, for each requirement scopes do not satisfy (as MissingScopes), the scope to ask the
// user for: the first of its alternatives. It is what an insufficient_scope challenge names.
func (e Event) StepUpScopes(scopes map[string]bool) []string {
	var out []string
	for _, group := range append(append([][]string(nil), webhookScopes...), e.Scopes...) {
		if !slices.ContainsFunc(group, func(s string) bool { return HasScope(scopes, s) }) {
			out = append(out, group[0])
		}
	}
	return out
}

// ValidateArgs checks raw subscription arguments against the input schema and returns them as strings. The
// error says which argument is wrong and why.
func (e Event) ValidateArgs(raw json.RawMessage) (map[string]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("arguments: required object with %s", strings.Join(e.RequiredArgs(), ", "))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("arguments: must be an object")
	}
	allowed := map[string]bool{}
	for _, a := range e.RequiredArgs() {
		allowed[a] = true
	}
	var extra []string
	for k := range m {
		if !allowed[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, fmt.Errorf("arguments: unknown argument %q for %s (allowed: %s)", extra[0], e.Name, strings.Join(e.RequiredArgs(), ", "))
	}
	out := map[string]string{}
	for _, a := range e.RequiredArgs() {
		v, ok := m[a]
		if !ok {
			return nil, fmt.Errorf("arguments.%s: required", a)
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("arguments.%s: must be a string", a)
		}
		if !idPattern.Match(s) {
			return nil, fmt.Errorf("arguments.%s: must be an Appwrite id (1-%d characters of a-z, A-Z, 0-9, '.', '_', '-', not starting with a symbol)", a, MaxIDLength)
		}
		out[a] = s
	}
	return out, nil
}

// AppwriteEvents returns the event's Appwrite patterns with the arguments filled in.
func (e Event) AppwriteEvents(args map[string]string) []string {
	out := make([]string, 0, len(e.Patterns))
	for _, p := range e.Patterns {
		for k, v := range args {
			p = strings.ReplaceAll(p, "{"+k+"}", v)
		}
		out = append(out, p)
	}
	return out
}

// Canonical returns the canonical JSON of args: keys sorted, no spaces (encoding/json sorts map keys).
func Canonical(args map[string]string) string {
	b, _ := json.Marshal(args)
	return string(b)
}
