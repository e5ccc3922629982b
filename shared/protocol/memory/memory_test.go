package memory_test

import (
	"encoding/json"
	"strings"
	"testing"

	"appwrite-agent/shared/devkit/consoleparse"
	"appwrite-agent/shared/devkit/snapshot"
	"appwrite-agent/shared/protocol/internal/prototest"
	"appwrite-agent/shared/protocol/memory"
)

// TestGolden checks the tool result for every line of the golden files.
func TestGolden(t *testing.T) {
	prototest.Golden(t, func(in, _ string) string { return memory.Result(in) })
}

// TestMessageCoverage checks that every error message of the reference
// (the reference engine's app/graph/memory.py, docs/turn.md "Source") appears in the golden outputs.
func TestMessageCoverage(t *testing.T) {
	outs := prototest.Outputs(t, "testdata/golden.jsonl", "testdata/examples.jsonl")
	outs = append(outs, memory.Call(json.RawMessage(`{"actions":5}`)))
	prototest.Covers(t, outs,
		"— actions is empty",
		"— actions must be valid JSON: unexpected end of JSON input at byte 1",
		"— actions JSON must be an object or an array of objects",
		"— actions must be a JSON string, object, or array",
		"— actions array is empty",
		"— at most 10 memory actions per call",
		"— each action must be an object",
		"— type must be one of ['forget', 'set']; got 'Set'",
		"— type must be one of ['forget', 'set']; got None",
		"— type must be one of ['forget', 'set']; got 3",
		"— 'set': key must be a string",
		"— 'set': key is required",
		"— key must match ^[a-z][a-z0-9_.-]{1,127}$ (got 'a')",
		"— key must match ^[a-z][a-z0-9_.-]{1,127}$ (got 'Ab')",
		"— scope must be one of ['project', 'team', 'user']",
		"— scope='team' is reserved; only scope=user is supported currently",
		"— scope='project' is reserved; only scope=user is supported currently",
		"— 'set': scope must be a string",
		"— 'set': ownerId must be a string",
		"— 'set': content is required",
		"— 'set': content must be a string",
		"— content exceeds 8192 characters",
		"— category must be one of ['fact', 'instruction', 'preference']",
		"— priority must be between 0 and 1000000",
		"— 'set': priority must be an integer",
		"— forget actions must not include content",
		"— forget actions must not include category",
		"— forget actions must not include priority",
	)
}

// TestNormalize checks typed actions and the defaults.
func TestNormalize(t *testing.T) {
	env, err := memory.Normalize(
		memory.Set{Key: "style.concise", Content: " Prefer concise answers "},
		memory.Set{Key: "prefer.region", Content: "fra", Category: memory.CategoryFact, Priority: 10, OwnerID: "u1"},
		memory.Forget{Key: "old.key"},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"protocol":"appwrite.memory/v1","actions":[` +
		`{"type":"set","key":"style.concise","scope":"user","content":"Prefer concise answers","category":"preference","priority":0},` +
		`{"type":"set","key":"prefer.region","scope":"user","ownerId":"u1","content":"fra","category":"fact","priority":10},` +
		`{"type":"forget","key":"old.key","scope":"user"}]}`
	if got := env.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := memory.Normalize(memory.Set{Key: "k", Content: "c"}); err == nil || !strings.HasPrefix(err.Error(), "key must match") {
		t.Errorf("short key: %v", err)
	}
}

// TestCall covers the forms the model's arguments can take.
func TestCall(t *testing.T) {
	const forget = `{"protocol":"appwrite.memory/v1","actions":[{"type":"forget","key":"ab","scope":"user"}]}`
	for _, c := range []struct{ args, want string }{
		{`{"actions":"[{\"type\":\"forget\",\"key\":\"ab\"}]"}`, forget},
		{`{"actions":[{"type":"forget","key":"ab"}]}`, forget},
		{`{"actions":{"type":"forget","key":"ab"}}`, forget},
		{`{"actions":null}`, memory.ErrorPrefix + "actions must be a JSON string, object, or array"},
		{`[]`, memory.ErrorPrefix + "actions must be a JSON string, object, or array"},
	} {
		if got := memory.Call(json.RawMessage(c.args)); got != c.want {
			t.Errorf("Call(%s) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestToolSchemaSnapshot pins what turn gives the model for this tool.
func TestToolSchemaSnapshot(t *testing.T) {
	snapshot.CheckTool(t, "testdata/tool_schema.json", snapshot.Tool{Name: memory.ToolName, Description: memory.ToolDescription, Parameters: memory.ToolSchema()})
}

// FuzzResult checks that the validator never panics, that every error
// carries the prefix, and that every envelope is read back by the
// consumer-side parser with nothing skipped and re-encodes to the same bytes.
func FuzzResult(f *testing.F) {
	prototest.Fuzz{Prefix: memory.ErrorPrefix, Result: func(in, _ string) string { return memory.Result(in) }, Title: false, ReadBack: func(out string) (string, bool) {
		env := consoleparse.ParseMemoryEnvelope(out)
		if env == nil || len(env.Skipped) > 0 {
			return "", false
		}
		return env.Envelope.String(), true
	}}.Run(f)
}
