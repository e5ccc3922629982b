package toolarg_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"appwrite-agent/shared/protocol/internal/toolarg"
	"appwrite-agent/shared/pyjson"
)

// keys is a protocol with one item rule: every item is an object, read as its keys.
var keys = toolarg.List[string]{Name: "actions", Noun: "test actions", Max: 2, Item: func(raw *pyjson.Value) (string, error) {
	if raw.Kind() != pyjson.Object {
		return "", toolarg.Fail("each action must be an object")
	}
	var ks []string
	for _, m := range raw.Members() {
		ks = append(ks, m.Key)
	}
	return strings.Join(ks, "+"), nil
}}

func ExampleList() {
	items, err := keys.Parse(` [{"a":1},{"b":2,"c":3}] `)
	fmt.Println(items, err)
	for _, arg := range []string{`{"type":"navigate"`, `[]`, `[{},{},{}]`, `[{},7]`} {
		_, err := keys.Parse(arg)
		fmt.Println(err)
	}
	// Output:
	// [a b+c] <nil>
	// actions must be valid JSON: unexpected end of JSON input at byte 18
	// actions array is empty
	// at most 2 test actions per call
	// each action must be an object
}

func TestFromCall(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{`{"actions":"{\"a\":1}"}`, "a"},
		{`{"actions":{"a":1}}`, "a"},
		{`{"actions":[{"a":1},{"b":1}]}`, "a b"},
		{`{"actions":"[]"}`, "actions array is empty"},
		{`{"actions":5}`, "actions must be a JSON string, object, or array"},
		{`{}`, "actions must be a JSON string, object, or array"},
		{`[{"actions":[{"a":1}]}]`, "actions must be a JSON string, object, or array"},
		{`not json`, "actions must be a JSON string, object, or array"},
	} {
		_, items, err := keys.FromCall(json.RawMessage(c.args))
		got := strings.Join(items, " ")
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("FromCall(%s) = %q, want %q", c.args, got, c.want)
		}
	}
}

func TestResult(t *testing.T) {
	if got := toolarg.Result("Error: x — ", stringer("{}"), nil); got != "{}" {
		t.Errorf("envelope: %q", got)
	}
	if got := toolarg.Result("Error: x — ", stringer("{}"), toolarg.Fail("bad")); got != "Error: x — bad" {
		t.Errorf("error: %q", got)
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

func TestFieldReadersNameTheField(t *testing.T) {
	raw, err := toolarg.Decode(`{"type":"card","title":"  ","n":3,"flag":"yes"}`, "actions")
	if err != nil {
		t.Fatal(err)
	}
	where := func(v *pyjson.Value) string { return v.Lookup("type").Repr() }
	for _, c := range []struct {
		got  error
		want string
	}{
		{second(toolarg.RequiredString(&raw, "title", where)), "'card': title is required"},
		{second(toolarg.RequiredString(&raw, "n", nil)), "n must be a string"},
		{second(toolarg.OptionalString(&raw, "n", where)), "'card': n must be a string"},
		{second(toolarg.OptionalBool(&raw, "flag", where)), "'card': flag must be a boolean"},
		{second(toolarg.Items(pyjson.StringValue("x"), "prompts")), "prompts JSON must be an object or an array of objects"},
		{second(toolarg.Decode("  ", "report")), "report is empty"},
	} {
		if c.got == nil || c.got.Error() != c.want {
			t.Errorf("got %v, want %q", c.got, c.want)
		}
	}
	if s, err := toolarg.OptionalString(&raw, "missing", where); s != "" || err != nil {
		t.Fatalf("absent optional string: %q %v", s, err)
	}
	if b, err := toolarg.OptionalBool(&raw, "missing", where); b != nil || err != nil {
		t.Fatalf("absent optional bool: %v %v", b, err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestListMessages: List words its failures as the engine does.
func TestListMessages(t *testing.T) {
	for arg, want := range map[string]string{
		"  ":  "actions is empty",
		`[1,`: "actions must be valid JSON: unexpected end of JSON input at byte 3",
		`"x"`: "actions JSON must be an object or an array of objects",
	} {
		if _, err := keys.Parse(arg); err == nil || err.Error() != want {
			t.Errorf("List(%q) = %v, want %q", arg, err, want)
		}
	}
	list, err := keys.Parse(`{"a":1}`)
	if err != nil || len(list) != 1 || list[0] != "a" {
		t.Fatalf("List of one object = %v, %v", list, err)
	}
}
