package threat_test

import (
	"encoding/json"
	"strings"
	"testing"

	"appwrite-agent/shared/devkit/consoleparse"
	"appwrite-agent/shared/devkit/snapshot"
	"appwrite-agent/shared/protocol/internal/prototest"
	"appwrite-agent/shared/protocol/threat"
)

// TestMessageCoverage checks that every error message of the reference
// (the reference engine's app/graph/threat.py, docs/turn.md "Source") appears in the golden outputs.
func TestMessageCoverage(t *testing.T) {
	outs := prototest.Outputs(t, "testdata/golden.jsonl", "testdata/examples.jsonl")
	for _, m := range []string{
		"— report is empty",
		"— report must be valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
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
	} {
		found := false
		for _, o := range outs {
			if strings.Contains(o, m) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no golden output contains %q", m)
		}
	}
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

// FuzzResult checks that the validator never panics and that every envelope
// is read back by the consumer-side parser unchanged.
func FuzzResult(f *testing.F) {
	for _, c := range prototest.Load(f, "testdata/examples.jsonl") {
		f.Add(c.In)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := threat.Result(in)
		if strings.HasPrefix(out, "Error:") {
			if !strings.HasPrefix(out, threat.ErrorPrefix) {
				t.Fatalf("error without prefix: %q", out)
			}
			return
		}
		r := consoleparse.ParseThreatEnvelope(out)
		if r == nil {
			t.Fatalf("parser rejected %q", out)
		}
		if back := r.String(); back != out {
			t.Fatalf("round trip differs:\n%q\n%q", out, back)
		}
	})
}
