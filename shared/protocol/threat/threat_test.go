package threat_test

import (
	"encoding/json"
	"testing"

	"appwrite-agent/shared/devkit/consoleparse"
	"appwrite-agent/shared/devkit/snapshot"
	"appwrite-agent/shared/protocol/internal/prototest"
	"appwrite-agent/shared/protocol/threat"
)

// TestGolden checks the tool result for every line of the golden files.
func TestGolden(t *testing.T) {
	prototest.Golden(t, func(in, _ string) string { return threat.Result(in) })
}

// TestMessageCoverage checks that every error message of the reference
// (the reference engine's app/graph/threat.py, docs/turn.md "Source") appears in the golden outputs.
func TestMessageCoverage(t *testing.T) {
	outs := prototest.Outputs(t, "testdata/golden.jsonl", "testdata/examples.jsonl")
	prototest.Covers(t, outs,
		"— report is empty",
		"— report must be valid JSON: unexpected end of JSON input at byte 1",
		"— report must be an object",
		"— category must be a string",
		"— category is required",
		"— category must be one of ['illegal', 'immoral']; got 'bad'",
		"— category must be one of ['illegal', 'immoral']; got \"it's\"",
		"— summary must be a string",
		"— summary is required",
		"— summary exceeds 280 characters",
		"— details must be a string",
		"— details exceeds 4000 characters",
		"— quote must be a string",
		"— quote exceeds 1000 characters",
	)
}

// TestNormalize checks a typed report.
func TestNormalize(t *testing.T) {
	r, err := threat.Normalize(threat.Report{Category: " Illegal ", Summary: " s ", Details: "d"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.String(), `{"protocol":"appwrite.threat/v1","category":"illegal","summary":"s","details":"d"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := threat.Call(json.RawMessage(`{"category":"immoral","summary":"s","details":"d","quote":" q "}`)),
		`{"protocol":"appwrite.threat/v1","category":"immoral","summary":"s","details":"d","quote":"q"}`; got != want {
		t.Errorf("Call: got %s, want %s", got, want)
	}
}

// TestToolSchemaSnapshot pins what turn gives the model for this tool.
func TestToolSchemaSnapshot(t *testing.T) {
	snapshot.CheckTool(t, "testdata/tool_schema.json", snapshot.Tool{Name: threat.ToolName, Description: threat.ToolDescription, Parameters: threat.ToolSchema()})
}

// FuzzResult checks that the validator never panics, that every error
// carries the prefix, and that every envelope is read back by the
// consumer-side parser with nothing skipped and re-encodes to the same bytes.
func FuzzResult(f *testing.F) {
	prototest.Fuzz{Prefix: threat.ErrorPrefix, Result: func(in, _ string) string { return threat.Result(in) }, Title: false, ReadBack: func(out string) (string, bool) {
		r := consoleparse.ParseThreatEnvelope(out)
		if r == nil {
			return "", false
		}
		return r.String(), true
	}}.Run(f)
}
