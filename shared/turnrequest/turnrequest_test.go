package turnrequest

import (
	"encoding/json"
	"testing"
)

// TestEncoding pins the bytes of the requests chat sends (they were the same before the types were shared):
// the empty optional fields are left out, message, history and async always written.
func TestEncoding(t *testing.T) {
	progress := &Progress{TurnID: "t1", Realtime: true}
	for _, c := range []struct {
		body Body
		want string
	}{
		{Body{Message: "hi", History: []HistoryMessage{{Role: "user", Content: "a"}, {Role: "assistant", Content: "b"}},
			Attachments: []InlineAttachment{{Name: "a.txt", Mime: "text/plain", Size: 3, ContentBase64: "YWJj"}},
			MCPConnections: []MCPConnection{{ID: "aw", Name: "Appwrite", URL: "https://mcp.example.com/mcp", Description: "d",
				Tokens: json.RawMessage(`{"access_token":"t"}`), ClientInfo: json.RawMessage(`{"client_id":"c"}`)}},
			LLM:      &LLM{Model: "m", APIKey: "k", BaseURL: "https://llm.example.com/v1"},
			Memories: []Memory{{Key: "lang", Content: "French", Category: "instruction", Priority: 3}, {Key: "x", Content: "y", Category: "fact"}},
			Async:    true, Progress: progress},
			`{"message":"hi","history":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}],"attachments":[{"name":"a.txt","mime":"text/plain","size":3,"content_base64":"YWJj"}],"mcp_connections":[{"id":"aw","name":"Appwrite","url":"https://mcp.example.com/mcp","description":"d","tokens":{"access_token":"t"},"client_info":{"client_id":"c"}}],"llm":{"api_key":"k","model":"m","base_url":"https://llm.example.com/v1"},"memories":[{"key":"lang","content":"French","category":"instruction","priority":3},{"key":"x","content":"y","category":"fact"}],"async":true,"progress":{"turn_id":"t1","realtime":true}}`},
		{Body{Message: "hi", History: []HistoryMessage{}, Async: true, Progress: progress},
			`{"message":"hi","history":[],"async":true,"progress":{"turn_id":"t1","realtime":true}}`},
		{Body{History: []HistoryMessage{}, Attachments: []InlineAttachment{{Name: "e", ContentBase64: "AA=="}}, MCPConnections: []MCPConnection{{ID: "x"}},
			LLM: &LLM{}, Async: true, Progress: progress},
			`{"message":"","history":[],"attachments":[{"name":"e","content_base64":"AA=="}],"mcp_connections":[{"id":"x"}],"llm":{},"async":true,"progress":{"turn_id":"t1","realtime":true}}`},
	} {
		got, err := json.Marshal(c.body)
		if err != nil || string(got) != c.want {
			t.Errorf("got  %s (%v)\nwant %s", got, err, c.want)
		}
	}
}
