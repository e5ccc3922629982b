package handler_test

import (
	"net/http"
	"strings"
	"testing"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
)

func TestEventsListFilteredByTokenScope(t *testing.T) {
	st := eventstest.NewStack(t)
	url := st.Instance(st.Server(handler.Options{}))
	names := func(scopes []string) []string {
		r := eventstest.RPC(t, url, st.Token(eventstest.UserID, scopes), "events/list", map[string]any{})
		if r.Error != nil {
			t.Fatalf("events/list: %s", r.Raw)
		}
		if r.Result["resultType"] != "complete" {
			t.Fatalf("resultType: %s", r.Raw)
		}
		var out []string
		for _, e := range r.Result["events"].([]any) {
			ev := e.(map[string]any)
			if d := ev["delivery"].([]any); len(d) != 1 || d[0] != "webhook" {
				t.Fatalf("delivery: %v", d)
			}
			out = append(out, ev["name"].(string))
		}
		return out
	}
	if got := strings.Join(names(eventstest.AllScopes), ","); got != "tablesdb.row.created,tablesdb.row.updated,tablesdb.row.deleted,storage.file.created,users.user.created,functions.execution.failed,functions.deployment.completed,sites.deployment.completed" {
		t.Fatalf("all scopes: %s", got)
	}
	if got := strings.Join(names([]string{"project:webhooks.read", "project:webhooks.write", "project:users.read"}), ","); got != "users.user.created" {
		t.Fatalf("users only: %s", got)
	}
	// project:all grants every project scope (Appwrite Cloud's consent offers it).
	if got := strings.Join(names([]string{"openid", "project:all"}), ","); got != "tablesdb.row.created,tablesdb.row.updated,tablesdb.row.deleted,storage.file.created,users.user.created,functions.execution.failed,functions.deployment.completed,sites.deployment.completed" {
		t.Fatalf("project:all: %s", got)
	}
	// Bare names are API-key scopes, which no Appwrite access token carries: they grant nothing.
	if r := eventstest.RPC(t, url, st.Token(eventstest.UserID, []string{"webhooks.read", "webhooks.write", "users.read", "all"}), "events/list", map[string]any{}); r.Status != http.StatusForbidden || r.Error == nil || r.Error.Code != -32012 {
		t.Fatalf("bare scope names: %d %s", r.Status, r.Raw)
	}
	// A token that can use no event is asked to step up (HTTP 403, insufficient_scope), not shown an
	// empty list.
	r := eventstest.RPC(t, url, st.Token(eventstest.UserID, []string{"project:tables.read", "project:rows.read", "project:users.read"}), "events/list", map[string]any{})
	chal := r.Header.Get("WWW-Authenticate")
	if r.Status != http.StatusForbidden || r.Error == nil || r.Error.Code != -32012 ||
		!strings.HasPrefix(chal, `Bearer error="insufficient_scope", scope="project:webhooks.read project:webhooks.write `) ||
		!strings.Contains(chal, `resource_metadata="`+eventstest.PublicURL+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("without webhook scopes: %d %q %s", r.Status, chal, r.Raw)
	}
}

func TestEventsOffByFlag(t *testing.T) {
	st := eventstest.NewStack(t)
	st.Env["MCP_EVENTS_ENABLED"] = "false"
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	for _, m := range []string{"events/list", "events/subscribe", "events/unsubscribe"} {
		r := eventstest.RPC(t, url, tok, m, map[string]any{})
		if r.Error == nil || r.Error.Code != -32601 {
			t.Fatalf("%s with events off: %s", m, r.Raw)
		}
	}
	r := eventstest.RPC(t, url, tok, "initialize", map[string]any{"protocolVersion": "2025-11-25", "clientInfo": map[string]any{"name": "t", "version": "1"}, "capabilities": map[string]any{}})
	caps := r.Result["capabilities"].(map[string]any)
	if _, ok := caps["events"]; ok {
		t.Fatalf("events advertised while off: %s", r.Raw)
	}
	if _, ok := caps["extensions"]; ok {
		t.Fatalf("extension advertised while off: %s", r.Raw)
	}
}

func TestSEPErrorNumbering(t *testing.T) {
	st := eventstest.NewStack(t)
	st.Env["MCP_EVENTS_ERROR_CODES"] = "sep"
	url := st.Instance(st.Server(handler.Options{}))
	r := eventstest.RPC(t, url, st.Token(eventstest.UserID, eventstest.AllScopes), "events/subscribe", eventstest.SubParams("nope", eventstest.RowArgs(), st.Recv.URL("/h"), eventstest.NewSecret(), nil))
	if r.Error == nil || r.Error.Code != -32023 {
		t.Fatalf("%s", r.Raw)
	}
}
