package subscriptions_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
	"appwrite-agent/shared/devkit/localruntime"
)

// TestCountersAreLogged: every subscribe and unsubscribe writes an mcp_events_subscriptions_total line.
func TestCountersAreLogged(t *testing.T) {
	st := eventstest.NewStack(t)
	logs := make(chan string, 16)
	srv := st.Server(handler.Options{})
	ts := httptest.NewServer(localruntime.New(handler.New(srv), localruntime.Options{
		LogDir: t.TempDir(), OnLog: func(_, l, _ string) { logs <- l },
	}))
	defer ts.Close()
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	eventstest.RPC(t, ts.URL, tok, "events/subscribe", eventstest.SubParams("row.exploded", eventstest.RowArgs(), st.Recv.URL("/h"), eventstest.NewSecret(), nil))
	select {
	case l := <-logs:
		if !strings.Contains(l, `{"metric":"mcp_events_subscriptions_total","event":"unknown","op":"subscribe","outcome":"not_found","inc":1}`) {
			t.Fatalf("logs: %s", l)
		}
	default:
		// The runtime hands an execution's logs over before it answers (localruntime's finishLogs): the
		// line is there by the time the call returns, or never.
		t.Fatal("no log")
	}
}
