package mcptools

import (
	"strings"
	"testing"

	"appwrite-agent/shared/turnrequest"
)

func TestResolveServer(t *testing.T) {
	for _, c := range []struct {
		in   turnrequest.MCPConnection
		want server
		err  string
	}{
		{in: turnrequest.MCPConnection{ID: "appwrite"}, want: server{BuiltinID, BuiltinName, BuiltinURL, BuiltinDescription}},
		{in: turnrequest.MCPConnection{ID: "appwrite", URL: " http://localhost:8100/ ", Name: "Local"}, want: server{"appwrite", "Local", "http://localhost:8100/", BuiltinDescription}},
		{in: turnrequest.MCPConnection{ID: " My-Server_2 ", URL: "https://x.example/mcp", Description: "d"}, want: server{"my-server_2", "my-server_2", "https://x.example/mcp", "d"}},
		{in: turnrequest.MCPConnection{ID: "x", URL: "https://x.example/"}, err: MsgBadID},
		{in: turnrequest.MCPConnection{ID: "1abc", URL: "https://x.example/"}, err: MsgBadID},
		{in: turnrequest.MCPConnection{ID: strings.Repeat("a", 65), URL: "https://x.example/"}, err: MsgBadID},
		{in: turnrequest.MCPConnection{ID: "Appwrite"}, err: MsgBadURL},
		{in: turnrequest.MCPConnection{ID: "other", URL: "ftp://x/"}, err: MsgBadURL},
	} {
		got, err := resolveServer(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%+v: err %v, want %s", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%+v: %+v %v", c.in, got, err)
		}
	}
}

func TestNames(t *testing.T) {
	n := newNamer(map[string]bool{"current_time": true})
	for _, c := range [][3]string{
		{"appwrite", "appwrite_call_tool", "appwrite_call_tool"},
		{"appwrite", "current_time", "appwrite_current_time"},
		{"other", "appwrite_call_tool", "other_appwrite_call_tool"},
		{"other", "search docs/v2", "other_search_docs_v2"},
		{"third", "appwrite_call_tool", "third_appwrite_call_tool"},
		{"other", "other_appwrite_call_tool", "other_other_appwrite_call_tool"},
		{"x", "other_appwrite_call_tool", "x_other_appwrite_call_tool"},
		{"other", "appwrite_call_tool", "other_appwrite_call_tool_2"},
		{"long", strings.Repeat("n", 80), "long_" + strings.Repeat("n", 59)},
		{"long", strings.Repeat("n", 80), "long_" + strings.Repeat("n", 57) + "_2"},
		{"e", "…", "e__"},
	} {
		if got := n.name(c[0], c[1]); got != c[2] {
			t.Errorf("name(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
	if safeName("…") != "tool" {
		t.Fatalf("safeName %q", safeName("…"))
	}
}
