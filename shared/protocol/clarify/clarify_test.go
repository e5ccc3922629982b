package clarify_test

import (
	"encoding/json"
	"testing"

	"appwrite-agent/shared/devkit/consoleparse"
	"appwrite-agent/shared/devkit/snapshot"
	"appwrite-agent/shared/protocol/clarify"
	"appwrite-agent/shared/protocol/internal/prototest"
)

// TestGolden checks the tool result for every line of the golden files.
func TestGolden(t *testing.T) {
	prototest.Golden(t, clarify.Result)
}

// TestMessageCoverage checks that every error message of the reference
// (the reference engine's app/graph/clarify.py, docs/turn.md "Source") appears in the golden outputs.
func TestMessageCoverage(t *testing.T) {
	outs := prototest.Outputs(t, "testdata/golden.jsonl", "testdata/examples.jsonl")
	outs = append(outs, clarify.Call(json.RawMessage(`{"prompts":5}`)))
	prototest.Covers(t, outs,
		"— prompts is empty",
		"— prompts must be valid JSON: unexpected end of JSON input at byte 1",
		"— prompts JSON must be an object or an array of objects",
		"— prompts must be a JSON string, object, or array",
		"— prompts array is empty",
		"— at most 5 clarify prompts per call",
		"— duplicate prompt id 'p'",
		"— title exceeds 120 characters",
		"— each prompt must be a JSON object",
		"— unknown or missing kind 'poll'; expected one of ['choice', 'confirm', 'text']",
		"— unknown or missing kind None; expected one of ['choice', 'confirm', 'text']",
		"— prompt: id must match ^[a-z][a-z0-9_.-]{0,63}$ (got '9x')",
		"— prompt: id must match ^[a-z][a-z0-9_.-]{0,63}$ (got None)",
		"— prompt: id must match ^[a-z][a-z0-9_.-]{0,63}$ (got 5)",
		"— 'choice': question is required",
		"— 'choice': question must be a string",
		"— question exceeds 500 characters",
		"— hint exceeds 500 characters",
		"— 'choice': hint must be a string",
		"— 'choice': required must be a boolean",
		"— 'choice': allowMultiple must be a boolean",
		"— choice.options must be an array with at least 2 items",
		"— choice.options: at most 12 options",
		"— choice.options[1]: option must be an object",
		"— choice.options[0].id: id must match ^[a-z][a-z0-9_.-]{0,63}$ (got 'A')",
		"— 'a': label must be a string",
		"— 7: label is required",
		"— choice.options[1]: label exceeds 120 characters",
		"— choice.options[1]: description exceeds 300 characters",
		"— choice.options: duplicate id 'a'",
		"— confirm labels exceed 120 characters",
		"— 'confirm': danger must be a boolean",
		"— placeholder exceeds 200 characters",
		"— defaultValue exceeds 2000 characters",
		"— 'text': placeholder must be a string",
		"— 'text': question must be a string",
	)
}

// TestNormalize checks typed prompts and the defaults.
func TestNormalize(t *testing.T) {
	no := false
	env, err := clarify.Normalize(" Create ",
		clarify.Text{ID: "name", Question: " Database name ", Placeholder: "main"},
		clarify.Choice{ID: "region", Question: "Region?", Required: &no, Options: []clarify.Option{{ID: "fra", Label: "Frankfurt"}, {ID: "nyc", Label: "New York", Description: "US"}}},
		clarify.Confirm{ID: "ok", Question: "Proceed?", Danger: true},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"protocol":"appwrite.clarify/v1","prompts":[` +
		`{"id":"name","kind":"text","question":"Database name","required":true,"placeholder":"main","multiline":false},` +
		`{"id":"region","kind":"choice","question":"Region?","required":false,"options":[{"id":"fra","label":"Frankfurt"},{"id":"nyc","label":"New York","description":"US"}],"allowMultiple":false},` +
		`{"id":"ok","kind":"confirm","question":"Proceed?","required":true,"confirmLabel":"Confirm","cancelLabel":"Cancel","danger":true}],"title":"Create"}`
	if got := env.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestCall covers the forms the model's arguments can take.
func TestCall(t *testing.T) {
	const one = `{"protocol":"appwrite.clarify/v1","prompts":[{"id":"n","kind":"text","question":"Q","required":true,"multiline":false}]`
	for _, c := range []struct{ args, want string }{
		{`{"prompts":"[{\"id\":\"n\",\"kind\":\"text\",\"question\":\"Q\"}]"}`, one + "}"},
		{`{"prompts":"{\"id\":\"n\",\"kind\":\"text\",\"question\":\"Q\"}","title":" T "}`, one + `,"title":"T"}`},
		{`{"prompts":[{"id":"n","kind":"text","question":"Q"}],"title":""}`, one + "}"},
		{`{"prompts":{"id":"n","kind":"text","question":"Q"},"title":null}`, one + "}"},
		{`{"prompts":"[{\"id\":\"n\",\"kind\":\"text\",\"question\":\"Q\"}]","title":3}`, clarify.ErrorPrefix + "title must be a string"},
		{`{"prompts":true}`, clarify.ErrorPrefix + "prompts must be a JSON string, object, or array"},
		{`{}`, clarify.ErrorPrefix + "prompts must be a JSON string, object, or array"},
		{`{"prompts":"[]"}`, clarify.ErrorPrefix + "prompts array is empty"},
	} {
		if got := clarify.Call(json.RawMessage(c.args)); got != c.want {
			t.Errorf("Call(%s) =\n%q\nwant\n%q", c.args, got, c.want)
		}
	}
}

// TestToolSchemaSnapshot pins what turn gives the model for this tool.
func TestToolSchemaSnapshot(t *testing.T) {
	snapshot.CheckTool(t, "testdata/tool_schema.json", snapshot.Tool{Name: clarify.ToolName, Description: clarify.ToolDescription, Parameters: clarify.ToolSchema()})
}

// FuzzResult checks that the validator never panics, that every error
// carries the prefix, and that every envelope is read back by the
// consumer-side parser with nothing skipped and re-encodes to the same bytes.
func FuzzResult(f *testing.F) {
	prototest.Fuzz{Prefix: clarify.ErrorPrefix, Result: clarify.Result, Title: true, ReadBack: func(out string) (string, bool) {
		env := consoleparse.ParseClarifyEnvelope(out)
		if env == nil || len(env.Skipped) > 0 {
			return "", false
		}
		return env.Envelope.String(), true
	}}.Run(f)
}
