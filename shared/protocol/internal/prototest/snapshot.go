package prototest

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// Snapshot compares the tool's surface with the file at path, or rewrites the
// file when update is set.
func Snapshot(t *testing.T, path string, update bool, name, desc string, schema json.RawMessage) {
	t.Helper()
	if !json.Valid(schema) {
		t.Fatalf("schema is not valid JSON: %s", schema)
	}
	doc := struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}{name, desc, schema}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	if update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("tool surface changed; if deliberate, rerun with -update\ngot:\n%s", buf.Bytes())
	}
}
