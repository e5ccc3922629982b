package ingress

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/jsonquote"
)

// marshalled is what appendEvent replaces.
func marshalled(eventID, name, timestamp string, data map[string]any) []byte {
	b, _ := json.Marshal(struct {
		EventID   string         `json:"eventId"`
		Name      string         `json:"name"`
		Timestamp string         `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}{eventID, name, timestamp, data})
	return b
}

// fields is data as Project returns it: typed fields sorted by name (nil for nil).
func fields(data map[string]any) []eventcatalog.Field {
	if data == nil {
		return nil
	}
	out := []eventcatalog.Field{}
	for k, v := range data {
		f := eventcatalog.Field{Name: k}
		switch v := v.(type) {
		case string:
			f.Kind, f.Str = eventcatalog.String, v
		case bool:
			f.Kind, f.Bool = eventcatalog.Bool, v
		case int64:
			f.Kind, f.Int = eventcatalog.Integer, v
		case float64:
			f.Kind, f.Num = eventcatalog.Number, v
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b eventcatalog.Field) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func TestAppendEventMatchesEncodingJSON(t *testing.T) {
	for _, data := range []map[string]any{
		nil, {},
		{"project_id": "p1", "database_id": "db1", "table_id": "t", "row_id": "r1", "created_at": "2026-12-01T10:00:00.000+00:00"},
		{"size_bytes": int64(1 << 40), "mime_type": "image/png", "user_id": "u", "status": true, "response_status_code": int64(500), "duration": 0.125},
		{"weird": "<a href=\"x\">&amp;</a>\n\t\u2028é\x01", "big": 1e21, "small": 1e-7, "neg": int64(-3), "f": false, "whole": 3.0},
	} {
		for _, id := range []string{"evt_0123abcd", "a\"b<>&"} {
			want := marshalled(id, "row.created", "2026-12-01T10:00:00Z", data)
			got, err := appendEvent(nil, id, "row.created", "2026-12-01T10:00:00Z", fields(data))
			if err != nil || string(got) != string(want) {
				t.Errorf("appendEvent = %s, %v\nencoding/json %s", got, err, want)
			}
		}
	}
}

// TestAppendEventOfProjections: for a payload of every catalog event, the event written from Project's
// fields is encoding/json's of Occurrence.Data().
func TestAppendEventOfProjections(t *testing.T) {
	for _, tc := range []struct{ event, body string }{
		{eventcatalog.RowCreated, `{"$id":"r1","$databaseId":"db","$tableId":"t1","$createdAt":"2026-12-01T10:00:00.000+00:00","$updatedAt":"2026-12-01T10:00:00.000+00:00","title":"x"}`},
		{eventcatalog.FileCreated, `{"$id":"f1","bucketId":"b1","$createdAt":"2026-12-01T10:00:00.000+00:00","mimeType":"image/png","sizeOriginal":1234}`},
		{eventcatalog.UserCreated, `{"$id":"u1","$createdAt":"2026-12-01T10:00:00.000+00:00","status":true,"email":"a@b.c"}`},
		{eventcatalog.ExecutionFailed, `{"$id":"e1","functionId":"fn1","trigger":"http","status":"failed","responseStatusCode":500,"duration":0.25}`},
	} {
		e, _ := eventcatalog.Lookup(tc.event)
		args := map[string]string{"database_id": "db", "table_id": "t1", "bucket_id": "b1", "function_id": "fn1"}
		for _, a := range []string{"database_id", "table_id", "bucket_id", "function_id"} {
			if !slices.Contains(e.Args, a) {
				delete(args, a)
			}
		}
		occ, err := e.Project("P", args, []byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.event, err)
		}
		got, err := appendEvent(nil, "evt_1", tc.event, occ.Timestamp, occ.Fields)
		if want := marshalled("evt_1", tc.event, occ.Timestamp, occ.Data()); err != nil || string(got) != string(want) {
			t.Errorf("%s: appendEvent = %s, %v\nencoding/json %s", tc.event, got, err, want)
		}
		if n := eventSize("evt_1", tc.event, occ.Timestamp, occ.Fields); n < len(got) {
			t.Errorf("%s: eventSize %d, the event is %d bytes", tc.event, n, len(got))
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "\"\\", "é", "\xff", "\u2028", "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := jsonquote.Append(nil, s); string(got) != string(want) {
			t.Fatalf("%q: %s, want %s", s, got, want)
		}
		data := map[string]any{s: s, "k": int64(len(s))}
		if got, _ := appendEvent(nil, s, s, s, fields(data)); string(got) != string(marshalled(s, s, s, data)) {
			t.Fatalf("event for %q: %s", s, got)
		}
	})
}

// TestOutcomeAppendJSONIsMarshal: the answer's bytes are encoding/json's.
func TestOutcomeAppendJSONIsMarshal(t *testing.T) {
	for _, o := range []Outcome{{}, {Status: "delivered", EventID: "evt_1", Attempts: 1}, {Status: "ignored", Reason: "filtered"},
		{Status: "abandoned", EventID: "e", Attempts: -2, Reason: "<&>\"é\u2028"}, {Status: "scheduled", Attempts: 12, Reason: "http_5xx"}} {
		want, _ := json.Marshal(o)
		if got := o.AppendJSON([]byte("x")); string(got) != "x"+string(want) {
			t.Errorf("%+v: %s, want x%s", o, got, want)
		}
	}
}
