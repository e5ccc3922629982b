package toolarg_test

import (
	"fmt"
	"testing"

	"appwrite-agent/shared/protocol/internal/toolarg"
	"appwrite-agent/shared/pyjson"
)

func ExampleList() {
	_, err := toolarg.List(`{"type":"navigate"`, "actions")
	fmt.Println(err)
	items, err := toolarg.List(` [{"a":1},{"b":2}] `, "actions")
	fmt.Println(len(items), err)
	// Output:
	// actions must be valid JSON: Expecting ',' delimiter: line 1 column 19 (char 18)
	// 2 <nil>
}

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
		`[1,`: "actions must be valid JSON: Expecting value: line 1 column 4 (char 3)",
		`"x"`: "actions JSON must be an object or an array of objects",
	} {
		if _, err := toolarg.List(arg, "actions"); err == nil || err.Error() != want {
			t.Errorf("List(%q) = %v, want %q", arg, err, want)
		}
	}
	list, err := toolarg.List(`{"a":1}`, "actions")
	if err != nil || len(list) != 1 || list[0].Lookup("a").Text() != "1" {
		t.Fatalf("List of one object = %v, %v", list, err)
	}
}
