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
	"maps"
	"slices"
	"sort"
	"strings"

	"appwrite-agent/shared/awclient"
)

// Event names of the catalog: appwrite/mcp's names (docs/events.md "Catalog"), so that one name means one
// thing across Appwrite's MCP servers.
const (
	RowCreated          = "tablesdb.row.created"
	RowUpdated          = "tablesdb.row.updated"
	RowDeleted          = "tablesdb.row.deleted"
	FileCreated         = "storage.file.created"
	UserCreated         = "users.user.created"
	ExecutionFailed     = "functions.execution.failed"
	DeploymentCompleted = "functions.deployment.completed"
	SiteDeployment      = "sites.deployment.completed"
)

// Names of the first catalog, before the renaming. Subscriptions made under them keep delivering, with
// their payload as it was, until they expire; they cannot be subscribed to again (Lookup finds them,
// Renamed says what replaces them).
const (
	LegacyRowCreated      = "row.created"
	LegacyRowUpdated      = "row.updated"
	LegacyRowDeleted      = "row.deleted"
	LegacyFileCreated     = "file.created"
	LegacyUserCreated     = "user.created"
	LegacyExecutionFailed = "execution.failed"
)

// Argument names.
const (
	ArgProject  = "project_id"
	ArgDatabase = "database_id"
	ArgTable    = "table_id"
	ArgBucket   = "bucket_id"
	ArgFunction = "function_id"
	ArgSite     = "site_id"
	// ArgStatus is the optional deployment status filter (ready or failed) of the deployment events. It is
	// not an id and Appwrite's events do not name it.
	ArgStatus = "status"
)

// ScopeWebhooksWrite is needed for every subscription: it is a webhook in the caller's project.
const ScopeWebhooksWrite = "webhooks.write"

// MaxIDLength is the longest Appwrite id (custom ids are at most 36 characters).
const MaxIDLength = 36

// IDPattern is Appwrite's custom-id alphabet: a letter or digit, then letters, digits, '.', '_' or '-'.
const IDPattern = `^[a-zA-Z0-9][a-zA-Z0-9._-]{0,35}$`

// EventIDPattern is IDPattern without '.', for the arguments that go into the webhook's Appwrite event strings
// (every argument but project_id): '.' separates their segments, and Appwrite refuses a webhook whose event
// strings hold a dotted id (docs/events.md §1, "Ids with a dot"). The input schemas publish it, so that a
// client validating its arguments learns it before subscribing; mcp-events refuses such an id with -32602.
const EventIDPattern = `^[a-zA-Z0-9][a-zA-Z0-9_-]{0,35}$`

// ValidID reports whether s is a valid Appwrite resource or project id (IDPattern: awclient.ValidID).
func ValidID(s string) bool { return awclient.ValidID(s) }

// Target names what events/subscribe reads, with the caller's token, to authorize a subscription.
type Target string

// Targets.
const (
	TargetTable    Target = "table"
	TargetBucket   Target = "bucket"
	TargetFunction Target = "function"
	TargetUsers    Target = "users"
	TargetSite     Target = "site"
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
	// Aliases are other forms of the same Appwrite events that a delivery may name instead (the
	// collections/documents aliases, and Appwrite 2.1's tablesdb. form): matched and bound like Patterns,
	// never subscribed to.
	Aliases []string
	// Filters are optional arguments that Appwrite's events do not name (a deployment's status), each with
	// its allowed values.
	Filters []Filter
	// RenamedTo, on a legacy event, is the catalog name that replaced it.
	RenamedTo string
	// Scopes are the OAuth scopes needed: every inner list must be satisfied by one of its members.
	Scopes [][]string
	// Target is the resource read to authorize the subscription.
	Target Target
	// Payload lists the payload fields: name -> JSON Schema.
	Payload map[string]map[string]any
	// PayloadRequired lists the payload fields that are always present: ids and statuses, never a time (a
	// time that does not parse is left out, see normalTime).
	PayloadRequired []string

	// filter reports whether a decoded Appwrite payload belongs to a subscription with these arguments
	// (Appwrite filters only by event name); project reduces it to the payload fields.
	filter  func(args map[string]string, p payload) bool
	project func(p payload, f *fields)
}

// Filter is an optional subscription argument that narrows what is delivered.
type Filter struct {
	Name        string
	Values      []string
	Description string
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
	out := slices.Clone(webhookScopes)
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
	ArgSite:     "Site id.",
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
	maps.Copy(p, extra)
	return p
}

// rowAliases are the other forms of a row pattern's events: Appwrite 2.1's tablesdb. form and the
// collections/documents alias every version sends beside the tables/rows form.
func rowAliases(action string) []string {
	return []string{
		"tablesdb.{database_id}.tables.{table_id}.rows.*." + action,
		"databases.{database_id}.collections.{table_id}.documents.*." + action,
	}
}

var rowScopes = [][]string{{"project:tables.read", "project:collections.read"}, {"project:rows.read", "project:documents.read"}}

func filePayload(size string) map[string]map[string]any {
	return map[string]map[string]any{
		ArgProject:   str("Project id."),
		ArgBucket:    str("Bucket id."),
		"file_id":    str("File id."),
		"mime_type":  str("MIME type of the file."),
		size:         {"type": "integer", "description": "Size of the file in bytes."},
		"created_at": ts("When the file was created."),
	}
}

var deploymentStatus = Filter{Name: ArgStatus, Values: []string{"ready", "failed"},
	Description: "Deliver only deployments that end with this status (ready or failed); both when absent."}

func deploymentPayload(resourceArg, resource string) map[string]map[string]any {
	return map[string]map[string]any{
		ArgProject:      str("Project id."),
		resourceArg:     str(resource + " id."),
		"deployment_id": str("Deployment id."),
		"status":        str("How the build ended: ready or failed."),
		"updated_at":    ts("When the deployment reached that status."),
	}
}

var events = []Event{
	{
		Name:            RowCreated,
		Description:     "Fires when a row is created in a TablesDB table of an Appwrite project.",
		Args:            []string{ArgDatabase, ArgTable},
		Patterns:        []string{"databases.{database_id}.tables.{table_id}.rows.*.create"},
		Aliases:         rowAliases("create"),
		Scopes:          rowScopes,
		Target:          TargetTable,
		Payload:         rowPayload(nil),
		PayloadRequired: []string{ArgProject, ArgDatabase, ArgTable, "row_id"},
		filter:          rowFilter, project: rowProjection,
	},
	{
		Name:        RowUpdated,
		Description: "Fires when a row of a TablesDB table is updated (an update or an upsert).",
		Args:        []string{ArgDatabase, ArgTable},
		Patterns: []string{
			"databases.{database_id}.tables.{table_id}.rows.*.update",
			"databases.{database_id}.tables.{table_id}.rows.*.upsert",
		},
		Aliases:         append(rowAliases("update"), rowAliases("upsert")...),
		Scopes:          rowScopes,
		Target:          TargetTable,
		Payload:         rowPayload(nil),
		PayloadRequired: []string{ArgProject, ArgDatabase, ArgTable, "row_id"},
		filter:          rowFilter, project: rowProjection,
	},
	{
		Name:            RowDeleted,
		Description:     "Fires when a row is deleted from a TablesDB table.",
		Args:            []string{ArgDatabase, ArgTable},
		Patterns:        []string{"databases.{database_id}.tables.{table_id}.rows.*.delete"},
		Aliases:         rowAliases("delete"),
		Scopes:          rowScopes,
		Target:          TargetTable,
		Payload:         rowPayload(nil),
		PayloadRequired: []string{ArgProject, ArgDatabase, ArgTable, "row_id"},
		filter:          rowFilter, project: rowProjection,
	},
	{
		Name:            FileCreated,
		Description:     "Fires when a file is uploaded to a Storage bucket.",
		Args:            []string{ArgBucket},
		Patterns:        []string{"buckets.{bucket_id}.files.*.create"},
		Scopes:          [][]string{{"project:buckets.read"}, {"project:files.read"}},
		Target:          TargetBucket,
		Payload:         filePayload("size"),
		PayloadRequired: []string{ArgProject, ArgBucket, "file_id"},
		filter:          fileFilter, project: fileProjection("size"),
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
		PayloadRequired: []string{ArgProject, "user_id"},
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
	{
		Name: DeploymentCompleted,
		Description: "Fires when a deployment of an Appwrite function finishes building: ready or failed (or only " +
			"the status given).",
		Args:            []string{ArgFunction},
		Patterns:        []string{"functions.{function_id}.deployments.*.update"},
		Filters:         []Filter{deploymentStatus},
		Scopes:          [][]string{{"project:functions.read"}},
		Target:          TargetFunction,
		Payload:         deploymentPayload(ArgFunction, "Function"),
		PayloadRequired: []string{ArgProject, ArgFunction, "deployment_id", "status"},
		filter:          deploymentFilter("functions", ArgFunction), project: deploymentProjection(ArgFunction),
	},
	{
		Name: SiteDeployment,
		Description: "Fires when a deployment of an Appwrite site finishes building: ready or failed (or only " +
			"the status given).",
		Args:            []string{ArgSite},
		Patterns:        []string{"sites.{site_id}.deployments.*.update"},
		Filters:         []Filter{deploymentStatus},
		Scopes:          [][]string{{"project:sites.read"}},
		Target:          TargetSite,
		Payload:         deploymentPayload(ArgSite, "Site"),
		PayloadRequired: []string{ArgProject, ArgSite, "deployment_id", "status"},
		filter:          deploymentFilter("sites", ArgSite), project: deploymentProjection(ArgSite),
	},
}

// legacy are the events of the first catalog under their old names: as they were (the file's size in
// size_bytes), for the subscriptions made before the renaming.
var legacy = func() []Event {
	renames := []struct{ old, current string }{
		{LegacyRowCreated, RowCreated}, {LegacyRowUpdated, RowUpdated}, {LegacyRowDeleted, RowDeleted},
		{LegacyFileCreated, FileCreated}, {LegacyUserCreated, UserCreated}, {LegacyExecutionFailed, ExecutionFailed},
	}
	out := make([]Event, 0, len(renames))
	for _, r := range renames {
		e := *lookupIn(events, r.current)
		e.Name, e.RenamedTo = r.old, r.current
		if r.current == FileCreated {
			e.Payload, e.project = filePayload("size_bytes"), fileProjection("size_bytes")
		}
		out = append(out, e)
	}
	return out
}()

func lookupIn(list []Event, name string) *Event {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

// All returns the catalog in its fixed order.
func All() []Event { return slices.Clone(events) }

// Lookup returns the event called name: a catalog event, or a legacy one (RenamedTo set).
func Lookup(name string) (Event, bool) {
	if e := lookupIn(events, name); e != nil {
		return *e, true
	}
	if e := lookupIn(legacy, name); e != nil {
		return *e, true
	}
	return Event{}, false
}

// RequiredArgs returns project_id followed by the event's own arguments.
func (e Event) RequiredArgs() []string { return append([]string{ArgProject}, e.Args...) }

// InputSchema is the JSON Schema of the subscription arguments.
func (e Event) InputSchema() map[string]any {
	props := map[string]any{}
	for _, a := range e.RequiredArgs() {
		pattern := EventIDPattern
		if a == ArgProject {
			pattern = IDPattern
		}
		props[a] = map[string]any{
			"type": "string", "description": argDescriptions[a],
			"pattern": pattern, "minLength": 1, "maxLength": MaxIDLength,
		}
	}
	for _, f := range e.Filters {
		props[f.Name] = map[string]any{"type": "string", "description": f.Description, "enum": f.Values}
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
		"required":             slices.Clone(e.PayloadRequired),
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

// Unmet returns the requirements (each a list of alternatives) that granted meets with none of their
// alternatives (HasScope), in order.
func Unmet(requirements [][]string, granted map[string]bool) [][]string {
	var out [][]string
	for _, group := range requirements {
		if !slices.ContainsFunc(group, func(s string) bool { return HasScope(granted, s) }) {
			out = append(out, group)
		}
	}
	return out
}

// unmet is Unmet of e's requirements, webhook scopes first.
func (e Event) unmet(scopes map[string]bool) [][]string {
	return Unmet(slices.Concat(webhookScopes, e.Scopes), scopes)
}

// MissingScopes returns the scope requirements (each "a or b") that scopes do not satisfy, webhook scopes
// included; empty means the caller may use the event.
func (e Event) MissingScopes(scopes map[string]bool) []string {
	var missing []string
	for _, group := range e.unmet(scopes) {
		missing = append(missing, strings.Join(group, " or "))
	}
	return missing
}

// StepUpScopes returns, for each requirement scopes do not satisfy (as MissingScopes), the scope to ask the
// user for: the first of its alternatives. It is what an insufficient_scope challenge names.
func (e Event) StepUpScopes(scopes map[string]bool) []string {
	var out []string
	for _, group := range e.unmet(scopes) {
		out = append(out, group[0])
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
	names := e.RequiredArgs()
	for _, a := range names {
		allowed[a] = true
	}
	for _, f := range e.Filters {
		allowed[f.Name] = true
		names = append(names, f.Name)
	}
	var extra []string
	for k := range m {
		if !allowed[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, fmt.Errorf("arguments: unknown argument %q for %s (allowed: %s)", extra[0], e.Name, strings.Join(names, ", "))
	}
	out := map[string]string{}
	for _, f := range e.Filters {
		v, ok := m[f.Name]
		if !ok || string(v) == "null" {
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil || !slices.Contains(f.Values, s) {
			return nil, fmt.Errorf("arguments.%s: must be one of %s", f.Name, strings.Join(f.Values, ", "))
		}
		out[f.Name] = s
	}
	for _, a := range e.RequiredArgs() {
		v, ok := m[a]
		if !ok {
			return nil, fmt.Errorf("arguments.%s: required", a)
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("arguments.%s: must be a string", a)
		}
		if !ValidID(s) {
			return nil, fmt.Errorf("arguments.%s: must be an Appwrite id (1-%d characters of a-z, A-Z, 0-9, '.', '_', '-', not starting with a symbol)", a, MaxIDLength)
		}
		out[a] = s
	}
	return out, nil
}

// AppwriteEvents returns the event's Appwrite patterns with the arguments filled in.
func (e Event) AppwriteEvents(args map[string]string) []string {
	return fill(e.Patterns, args)
}

// fill returns patterns with the arguments filled in.
func fill(patterns []string, args map[string]string) []string {
	out := make([]string, 0, len(patterns))
	for _, p := range patterns {
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
