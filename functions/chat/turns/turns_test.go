package turns

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"appwrite-agent/shared/turnrequest"
)

func ev(seq int64, js string) Event { return Event{Seq: seq, Event: json.RawMessage(js)} }

func TestHistoryKeepsTheLast12MessagesWithText(t *testing.T) {
	var in []turnrequest.HistoryMessage
	for i := 0; i < 20; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		in = append(in, turnrequest.HistoryMessage{Role: role, Content: "m" + strconv.Itoa(i)})
	}
	in = append(in, turnrequest.HistoryMessage{Role: "assistant", Content: "  "}, turnrequest.HistoryMessage{Role: "system", Content: "x"})
	out := History(in)
	if len(out) != 12 || out[0].Content != "m8" || out[11].Content != "m19" {
		t.Fatalf("%+v", out)
	}
	if h := History(nil); h == nil || len(h) != 0 {
		t.Fatalf("empty history %#v: turn needs [] (a first turn)", h)
	}
}

func TestOrderedSortsAndDropsRepeats(t *testing.T) {
	out := Ordered([]Event{ev(3, `{}`), ev(1, `{}`), ev(2, `{}`), ev(1, `{}`), ev(3, `{}`)})
	if len(out) != 3 || out[0].Seq != 1 || out[1].Seq != 2 || out[2].Seq != 3 {
		t.Fatalf("%+v", out)
	}
}

func TestSummarize(t *testing.T) {
	memOK := `{"protocol":"appwrite.memory/v1","actions":[{"type":"set","key":"lang","scope":"user","content":"French","category":"instruction","priority":3},{"type":"forget","key":"old.pref","scope":"user"}]}`
	memOut, _ := json.Marshal(memOK)
	evs := []Event{
		ev(1, `{"type":"status","message":"Routing request…"}`),
		ev(2, `{"type":"mcp_credentials","credentials":[{"id":"aw","tokens":{"access_token":"new"}}]}`),
		ev(3, `{"type":"tool_end","tool":"memory","run_id":"run_1","output":`+string(memOut)+`}`),
		ev(4, `{"type":"tool_end","tool":"memory","run_id":"run_2","output":"Error: invalid memory actions — actions is empty","failed":true}`),
		ev(5, `{"type":"tool_end","tool":"memory","run_id":"run_3","output":"{\"protocol\":\"appwrite.memory/v1\",\"actions\":[{\"type\":\"set\",\"key\":\"X bad\",\"content\":\"y\"}]}"}`),
		ev(6, `{"type":"done","content":"Bonjour","answer":"Bonjour"}`),
		ev(7, `{"type":"conversation_title","title":"Greetings"}`),
		ev(8, `not json`),
		ev(9, `{"type":"complete"}`),
	}
	r := Summarize(evs)
	if !r.Complete || r.Failed || r.Answer != "Bonjour" || r.Title != "Greetings" {
		t.Fatalf("%+v", r)
	}
	if len(r.Credentials) != 1 || r.Credentials[0].ID != "aw" || !strings.Contains(string(r.Credentials[0].Tokens), "new") {
		t.Fatalf("credentials %+v", r.Credentials)
	}
	if len(r.Memories) != 2 || r.Memories[0] != (MemoryAction{Type: "set", Key: "lang", Content: "French", Category: "instruction", Priority: 3}) ||
		r.Memories[1] != (MemoryAction{Type: "forget", Key: "old.pref"}) {
		t.Fatalf("memories %+v", r.Memories)
	}
	failed := Summarize([]Event{ev(1, `{"type":"error","code":"budget_exceeded","detail":"ran out","answer":"partial"}`), ev(2, `{"type":"complete"}`)})
	if !failed.Failed || failed.ErrorCode != "budget_exceeded" || failed.Answer != "partial" || !failed.Complete {
		t.Fatalf("%+v", failed)
	}
	if running := Summarize([]Event{ev(1, `{"type":"status"}`)}); running.Complete {
		t.Fatal("complete without a complete event")
	}
}

// FuzzSummarize: any progress payloads (they come from rows a key can write) are read without panicking,
// and only valid memory keys come out.
func FuzzSummarize(f *testing.F) {
	f.Add(`{"type":"done","answer":"x"}`, `{"type":"tool_end","tool":"memory","output":"{\"protocol\":\"appwrite.memory/v1\",\"actions\":[{\"type\":\"set\",\"key\":\"ab\",\"content\":\"c\"}]}"}`)
	f.Add(`{"type":"mcp_credentials","credentials":[{"id":1}]}`, `{"type":"error","answer":null}`)
	f.Add(`[]`, `{"type":"complete"}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		r := Summarize([]Event{ev(1, a), ev(2, b)})
		for _, m := range r.Memories {
			if len(m.Key) < 2 || (m.Type != "set" && m.Type != "forget") {
				t.Fatalf("memory %+v", m)
			}
		}
	})
}
