package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	for _, c := range []struct {
		args  []string
		stdin string
		out   string
		code  int
	}{
		{[]string{"console"}, `{"type":"set_theme","theme":"DARK"}` + "\n", `{"protocol":"appwrite.console/v1","actions":[{"type":"set_theme","theme":"dark"}]}` + "\n", 0},
		{[]string{"console"}, "[", "Error: invalid console actions — actions must be valid JSON: unexpected end of JSON input at byte 1\n", 1},
		{[]string{"-title", "T", "clarify"}, `{"id":"n","kind":"text","question":"Q"}`, `{"protocol":"appwrite.clarify/v1","prompts":[{"id":"n","kind":"text","question":"Q","required":true,"multiline":false}],"title":"T"}` + "\n", 0},
		{[]string{"memory"}, `{"type":"forget","key":"ab"}`, `{"protocol":"appwrite.memory/v1","actions":[{"type":"forget","key":"ab","scope":"user"}]}` + "\n", 0},
		{[]string{"threat"}, `{"category":"illegal","summary":"s","details":"d"}`, `{"protocol":"appwrite.threat/v1","category":"illegal","summary":"s","details":"d"}` + "\n", 0},
		{[]string{"-args", "memory"}, `{"actions":"[]"}`, "Error: invalid memory actions — actions array is empty\n", 1},
		{[]string{"-lines", "console"}, "\"[]\"\n\"{\\\"type\\\":\\\"toggle_terminal\\\"}\"\n", "\"Error: invalid console actions — actions array is empty\"\n\"{\\\"protocol\\\":\\\"appwrite.console/v1\\\",\\\"actions\\\":[{\\\"type\\\":\\\"toggle_terminal\\\"}]}\"\n", 0},
		{[]string{"nope"}, "", "", 2},
		{nil, "", "", 2},
	} {
		var out, errOut bytes.Buffer
		code := run(c.args, strings.NewReader(c.stdin), &out, &errOut)
		if code != c.code || out.String() != c.out {
			t.Errorf("run(%q) = %d %q (stderr %q), want %d %q", c.args, code, out.String(), errOut.String(), c.code, c.out)
		}
	}
}
