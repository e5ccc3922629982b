package consoleparse_test

import (
	"fmt"
	"testing"

	"appwrite-agent/shared/devkit/consoleparse"
	"appwrite-agent/shared/protocol/console"
)

func TestParseConsoleEnvelope(t *testing.T) {
	for _, out := range []string{
		"Error: invalid console actions — actions is empty",
		"  Error: anything",
		`{"protocol":"appwrite.console/v2","actions":[]}`,
		`{"protocol":"appwrite.console/v1"}`,
		`{"protocol":"appwrite.console/v1","actions":{}}`,
		`[{"protocol":"appwrite.console/v1","actions":[]}]`,
		`not json`,
		`{"protocol":"appwrite.console/v1","actions":[{"type":"set_theme","theme":NaN}]}`,
	} {
		if env := consoleparse.ParseConsoleEnvelope(out); env != nil {
			t.Errorf("ParseConsoleEnvelope(%q) = %+v, want nil", out, env)
		}
	}
	env := consoleparse.ParseConsoleEnvelope("\ufeff\n " + `{"protocol":"appwrite.console/v1","actions":[` +
		`{"type":"confetti"},{"type":"set_theme","theme":"neon"},{"type":"toggle_terminal"},7,` +
		`{"type":"resource_list","resourceType":"user","items":[{"resourceId":"u","title":"U","fields":{"n":1,"f":1.0,"z":null}}]}]}` + "\n")
	if env == nil {
		t.Fatal("nil envelope")
	}
	if len(env.Actions) != 2 || len(env.Skipped) != 3 {
		t.Fatalf("actions %d skipped %+v", len(env.Actions), env.Skipped)
	}
	if env.Skipped[0].Reason != "unknown type" || env.Skipped[1].Reason != "invalid theme" || env.Skipped[2].Index != 3 {
		t.Errorf("skipped %+v", env.Skipped)
	}
	list := env.Actions[1].(console.ResourceList)
	f := list.Items[0].Fields
	if f[0].Value.Kind() != console.FieldInt || f[1].Value.Kind() != console.FieldFloat || f[2].Value.Kind() != console.FieldNull {
		t.Errorf("fields %+v", f)
	}
}

func TestParseOthers(t *testing.T) {
	c := consoleparse.ParseClarifyEnvelope(`{"protocol":"appwrite.clarify/v1","title":"T","prompts":[{"id":"a","kind":"slider","question":"?"},{"id":"b","kind":"confirm","question":"Sure?","required":true,"confirmLabel":"Yes","cancelLabel":"No","danger":true}]}`)
	if c == nil || c.Title != "T" || len(c.Prompts) != 1 || len(c.Skipped) != 1 {
		t.Fatalf("clarify: %+v", c)
	}
	m := consoleparse.ParseMemoryEnvelope(`{"protocol":"appwrite.memory/v1","actions":[{"type":"set","key":"ab","scope":"user","content":"c","category":"fact","priority":3},{"type":"pin","key":"ab","scope":"user"}]}`)
	if m == nil || len(m.Actions) != 1 || len(m.Skipped) != 1 {
		t.Fatalf("memory: %+v", m)
	}
	if r := consoleparse.ParseThreatEnvelope(`{"protocol":"appwrite.threat/v1","category":"illegal","summary":"s","details":"d"}`); r == nil || r.Summary != "s" {
		t.Fatalf("threat: %+v", r)
	}
	if r := consoleparse.ParseThreatEnvelope(`Error: invalid threat report — report is empty`); r != nil {
		t.Fatalf("threat error: %+v", r)
	}
}

func ExampleParseConsoleEnvelope() {
	out := console.Result(`[{"type":"set_theme","theme":"Dark"},{"type":"refresh","scopes":["Databases"]}]`)
	env := consoleparse.ParseConsoleEnvelope(out)
	for _, a := range env.Actions {
		switch a := a.(type) {
		case console.SetTheme:
			fmt.Println("theme:", a.Theme)
		case console.Refresh:
			fmt.Println("refresh:", a.Scopes)
		}
	}
	fmt.Println(consoleparse.ParseConsoleEnvelope("Error: invalid console actions — actions is empty") == nil)
	// Output:
	// theme: dark
	// refresh: [databases]
	// true
}
