package eventcatalog

// This file is the ingress side of the catalog: which Appwrite deliveries belong to a subscription, and the
// projection of Appwrite's resource model (whole rows, user emails, phones, prefs) to the event's
// PayloadSchema.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

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

func rowProjection(p payload, d data) {
	d.str(ArgDatabase, p.DatabaseID)
	d.str(ArgTable, p.tableID())
	d.str("row_id", p.ID)
	d.str("created_at", p.CreatedAt)
	d.str("updated_at", p.UpdatedAt)
}

func fileFilter(a map[string]string, p payload) bool { return p.ID != "" && p.BucketID == a[ArgBucket] }

// fileProjection leaves out the file's name: names are user content.
func fileProjection(p payload, d data) {
	d.str(ArgBucket, p.BucketID)
	d.str("file_id", p.ID)
	d.str("mime_type", p.MimeType)
	d.str("created_at", p.CreatedAt)
	if p.SizeOriginal != nil {
		d["size_bytes"] = *p.SizeOriginal
	}
}

func userFilter(_ map[string]string, p payload) bool { return p.ID != "" }

// userProjection leaves out everything personal: name, email, phone, prefs, labels, targets.
func userProjection(p payload, d data) {
	d.str("user_id", p.ID)
	d.str("created_at", p.CreatedAt)
	if b, ok := p.Status.(bool); ok {
		d["status"] = b
	}
}

// executionFailedFilter passes only failed executions of the subscribed function: a synchronous execution
// is created with its final status, an asynchronous one is created waiting and updated when it ends.
func executionFailedFilter(a map[string]string, p payload) bool {
	return p.ID != "" && p.statusString() == "failed" && p.functionID() == a[ArgFunction]
}

// executionProjection leaves out logs, errors, request and response bodies and headers.
func executionProjection(p payload, d data) {
	d.str(ArgFunction, p.functionID())
	d.str("execution_id", p.ID)
	d.str("deployment_id", p.DeploymentID)
	d.str("trigger", p.Trigger)
	d.str("status", p.statusString())
	d.str("created_at", p.CreatedAt)
	d.str("updated_at", p.UpdatedAt)
	if p.ResponseStatusCode != nil {
		d["response_status_code"] = int64(*p.ResponseStatusCode)
	}
	if p.Duration != nil {
		d["duration"] = *p.Duration
	}
}

// MatchesEvents reports whether any of the Appwrite events of a delivery (X-Appwrite-Webhook-Events, split
// on commas) matches the subscription's patterns filled with args (AppwriteEvents).
func (e Event) MatchesEvents(args map[string]string, delivered []string) bool {
	evs := splitEvents(delivered)
	for _, pattern := range e.AppwriteEvents(args) {
		ps := strings.Split(pattern, ".")
		for _, es := range evs {
			if segmentsEqual(ps, es) {
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

// segmentsEqual reports whether the split event es matches the split pattern ps, "*" matching any one
// segment.
func segmentsEqual(ps, es []string) bool {
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
	// Data is the projected payload, conforming to PayloadSchema (project_id included): name -> string,
	// bool, int64 or float64.
	Data map[string]any
	// Timestamp is when the change happened ($updatedAt, else $createdAt; empty when the payload has
	// neither).
	Timestamp string
}

// data is a projection being made; an empty string is left out (the field is absent from the payload).
type data map[string]any

func (d data) str(name, v string) {
	if v != "" {
		d[name] = v
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
	d := data{}
	e.project(p, d)
	d.str(ArgProject, projectID)
	ts := p.UpdatedAt
	if ts == "" {
		ts = p.CreatedAt
	}
	return Occurrence{Data: d, Timestamp: ts}, nil
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
	for _, e := range events {
		if args, ok := e.argsFrom(evs); ok {
			out = append(out, Binding{Event: e.Name, Args: args})
		}
	}
	return out
}

// argsFrom reads e's arguments from Appwrite events (splitEvents): every event is compared with every
// pattern split on dots, segment by segment.
func (e Event) argsFrom(evs [][]string) (map[string]string, bool) {
	args := map[string]string{}
	matched := false
	for _, p := range e.Patterns {
		ps := strings.Split(p, ".")
		for _, es := range evs {
			if !segmentsMatch(ps, es) {
				continue
			}
			matched = true
			for i, seg := range ps {
				if !isPlaceholder(seg) || es[i] == "*" {
					continue
				}
				name := seg[1 : len(seg)-1]
				if v, seen := args[name]; seen && v != es[i] {
					return nil, false
				}
				args[name] = es[i]
			}
		}
	}
	if !matched || len(args) != len(e.Args) {
		return nil, false
	}
	for _, a := range e.Args {
		if !ValidID(args[a]) {
			return nil, false
		}
	}
	return args, true
}

// segmentsMatch reports whether the split event es equals the split pattern ps in length and in every
// segment that is neither "*" nor a placeholder.
func segmentsMatch(ps, es []string) bool {
	if len(ps) != len(es) {
		return false
	}
	for i, seg := range ps {
		if seg != "*" && !isPlaceholder(seg) && seg != es[i] {
			return false
		}
	}
	return true
}

func isPlaceholder(seg string) bool {
	return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}")
}
