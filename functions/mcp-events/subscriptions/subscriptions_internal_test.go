package subscriptions

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"appwrite-agent/functions/mcp-events/mcperr"
	"appwrite-agent/shared/awclient"
)

func TestIDIsDeterministicAndKeyed(t *testing.T) {
	args := map[string]string{"project_id": "p", "database_id": "d", "table_id": "t"}
	a := ID("user-1", "https://cb/x", "tablesdb.row.created", args)
	if a != ID("user-1", "https://cb/x", "tablesdb.row.created", map[string]string{"table_id": "t", "project_id": "p", "database_id": "d"}) {
		t.Fatal("argument order changed the id")
	}
	if len(a) != IDLength || !strings.HasPrefix(a, IDPrefix) {
		t.Fatalf("id %q", a)
	}
	for _, other := range []string{
		ID("user-2", "https://cb/x", "tablesdb.row.created", args),
		ID("user-1", "https://cb/y", "tablesdb.row.created", args),
		ID("user-1", "https://cb/x", "tablesdb.row.updated", args),
		ID("user-1", "https://cb/x", "tablesdb.row.created", map[string]string{"project_id": "p", "database_id": "d", "table_id": "u"}),
	} {
		if other == a {
			t.Fatal("a key part did not change the id")
		}
	}
}

func TestClampTTL(t *testing.T) {
	s := &Service{o: Options{TTLDefault: time.Hour, TTLMin: 5 * time.Minute, TTLMax: 24 * time.Hour}}
	for _, c := range []struct {
		raw  string
		want time.Duration
	}{
		{"", time.Hour}, {"null", 24 * time.Hour}, {"1", 5 * time.Minute}, {"-5", 5 * time.Minute},
		{"7200000", 2 * time.Hour}, {"1e300", 24 * time.Hour}, {"3600000.5", time.Hour},
		// Extremes: clamped before the conversion to a Duration could overflow.
		{"-1e13", 5 * time.Minute}, {"-9.3e18", 5 * time.Minute}, {"-1e400", 5 * time.Minute},
		{"1e13", 24 * time.Hour}, {"9.3e18", 24 * time.Hour}, {"1e400", 24 * time.Hour},
		{"-0", 5 * time.Minute}, {"300000", 5 * time.Minute}, {"86400000", 24 * time.Hour},
	} {
		got, err := s.clampTTL(json.RawMessage(c.raw))
		if err != nil || got != c.want {
			t.Errorf("%q: %v %v, want %v", c.raw, got, err, c.want)
		}
	}
	for _, bad := range []string{`"soon"`, `"NaN"`, `"Infinity"`, `true`, `{}`, `[1]`, `NaN`, `Infinity`, `-`, `1e`} {
		if _, err := s.clampTTL(json.RawMessage(bad)); err == nil {
			t.Errorf("ttlMs %s was accepted", bad)
		}
	}
}

func TestMapAppwrite(t *testing.T) {
	for _, c := range []struct {
		err   error
		kind  mcperr.Kind
		field string
	}{
		{&awclient.Error{Status: 401, Type: "user_unauthorized"}, mcperr.Forbidden, ""},
		{&awclient.Error{Status: 403, Type: "general_access_forbidden"}, mcperr.Forbidden, ""},
		{&awclient.Error{Status: 404, Type: "table_not_found"}, mcperr.NotFound, ""},
		{&awclient.Error{Status: 400, Type: "general_argument_invalid", Message: "Invalid `authPassword` param: Value is too long"}, mcperr.InvalidParams, "authPassword"},
		{&awclient.Error{Status: 400, Type: "general_argument_invalid", Message: "Invalid `url` param: x"}, mcperr.InvalidParams, "MCP_EVENTS_INGRESS_URL"},
		{&awclient.Error{Status: 500, Type: "general_unknown"}, mcperr.Internal, ""},
		{&awclient.Error{Err: errors.New("dial")}, mcperr.Internal, ""},
	} {
		e := mapAppwrite(c.err, "table", "p")
		if e.Kind != c.kind {
			t.Errorf("%v: %s, want %s", c.err, e.Kind, c.kind)
		}
		if c.field != "" && !strings.Contains(e.Data["field"].(string), c.field) {
			t.Errorf("%v: field %v", c.err, e.Data["field"])
		}
	}
}

// FuzzClampTTL: whatever ttlMs holds, the grant is an error or a duration within [min, max].
func FuzzClampTTL(f *testing.F) {
	for _, s := range []string{"", "null", "-1e13", "-5", "1e400", "-1e400", "9.3e18", `"NaN"`, "true", "3600000.5", "-0", "1e-400"} {
		f.Add(s)
	}
	s := &Service{o: Options{TTLDefault: time.Hour, TTLMin: 5 * time.Minute, TTLMax: 24 * time.Hour}}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := s.clampTTL(json.RawMessage(raw))
		if err == nil && (got < s.o.TTLMin || got > s.o.TTLMax) {
			t.Fatalf("%q: granted %v", raw, got)
		}
	})
}
