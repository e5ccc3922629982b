package ingress

import (
	"encoding/json"
	"testing"
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

func TestAppendEventMatchesEncodingJSON(t *testing.T) {
	for _, data := range []map[string]any{
		nil, {},
		{"project_id": "p1", "database_id": "db1", "table_id": "t", "row_id": "r1", "created_at": "2026-12-01T10:00:00.000+00:00"},
		{"size_bytes": int64(1 << 40), "mime_type": "image/png", "user_id": "u", "status": true, "response_status_code": 500, "duration": 0.125},
		{"weird": "<a href=\"x\">&amp;</a>\n\t\u2028é\x01", "big": 1e21, "small": 1e-7, "neg": -3, "f": false, "n": nil},
	} {
		for _, id := range []string{"evt_0123abcd", "a\"b<>&"} {
			want := marshalled(id, "row.created", "2026-12-01T10:00:00Z", data)
			got, err := appendEvent(nil, id, "row.created", "2026-12-01T10:00:00Z", data)
			if err != nil || string(got) != string(want) {
				t.Errorf("appendEvent = %s, %v\nencoding/json %s", got, err, want)
			}
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "\"\\", "é", "\xff", "\u2028", "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: %s, want %s", s, got, want)
		}
		data := map[string]any{s: s, "k": int64(len(s))}
		if got, _ := appendEvent(nil, s, s, s, data); string(got) != string(marshalled(s, s, s, data)) {
			t.Fatalf("event for %q: %s", s, got)
		}
	})
}
