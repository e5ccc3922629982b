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

// TestWithListRecyclesMemory checks that WithList gives f the list List gives, returns f's result and error,
// and that strings f keeps stay intact while later calls reuse the decoded values' memory.
func TestWithListRecyclesMemory(t *testing.T) {
	firstKey := func(list []pyjson.Value) (string, error) {
		ms := list[0].Members()
		if len(ms) == 0 {
			return "", toolarg.Fail("empty object")
		}
		return ms[0].Key + "=" + ms[0].Value.PyStr(), nil
	}
	var kept []string
	for i := 0; i < 50; i++ {
		arg := fmt.Sprintf(`[{"key%d":"value%d","other":[1,2,3]},{"b":%d}]`, i, i, i)
		want, err := toolarg.List(arg, "actions")
		if err != nil {
			t.Fatal(err)
		}
		got, err := toolarg.WithList(arg, "actions", firstKey)
		if err != nil || got != want[0].Members()[0].Key+"="+want[0].Members()[0].Value.PyStr() {
			t.Fatalf("WithList = %q, %v", got, err)
		}
		kept = append(kept, got)
	}
	for i, k := range kept {
		if want := fmt.Sprintf("key%d=value%d", i, i); k != want {
			t.Fatalf("kept %q, want %q", k, want)
		}
	}
	if _, err := toolarg.WithList(`[{}]`, "actions", firstKey); err == nil || err.Error() != "empty object" {
		t.Fatalf("f's error: %v", err)
	}
	if _, err := toolarg.WithList(`[1,`, "actions", firstKey); err == nil || err.Error() != "actions must be valid JSON: Expecting value: line 1 column 4 (char 3)" {
		t.Fatalf("decode error: %v", err)
	}
	if _, err := toolarg.WithList(`"x"`, "actions", firstKey); err == nil || err.Error() != "actions JSON must be an object or an array of objects" {
		t.Fatalf("items error: %v", err)
	}
}
