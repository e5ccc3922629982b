// Package prototest holds the protocol packages' test helpers.
//
// Golden files are JSON lines {"name"?, "in", "title"?, "out", "note"?,
// "python"?}: out is the exact tool result for in. The expected results were
// produced by the Python engine's validators, except the message after
// "must be valid JSON: " for an argument that is not JSON, which is ours
// (pyjson.Decode); a line with a note records where this implementation
// deliberately differs otherwise (python then holds the Python engine's
// result). Snapshot files pin a tool's name, description and
// argument schema (shared/devkit/snapshot).
package prototest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"appwrite-agent/shared/devkit/snapshot"
)

// Case is one golden line.
type Case struct {
	// Name labels a hand-written case.
	Name string `json:"name,omitempty"`
	// In is the tool argument.
	In string `json:"in"`
	// Title is clarify's title argument.
	Title string `json:"title,omitempty"`
	// Out is the expected tool result.
	Out string `json:"out"`
	// Note explains a deliberate difference from the Python engine.
	Note string `json:"note,omitempty"`
	// Python is what the Python engine returns, when it differs from Out.
	Python string `json:"python,omitempty"`
}

// Load reads a golden file.
func Load(t testing.TB, path string) []Case {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []Case
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var c Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// Outputs returns every Out of a golden file (for coverage checks).
func Outputs(t testing.TB, paths ...string) []string {
	t.Helper()
	var outs []string
	for _, p := range paths {
		for _, c := range Load(t, p) {
			outs = append(outs, c.Out)
		}
	}
	return outs
}

// Run checks every case against fn, or rewrites Out from fn when the run updates snapshots
// (UPDATE_SNAPSHOTS=1, shared/devkit/snapshot).
func Run(t *testing.T, path string, fn func(in, title string) string) {
	t.Helper()
	cases := Load(t, path)
	if snapshot.Update() {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for _, c := range cases {
			c.Out = fn(c.In, c.Title)
			if c.Python == c.Out {
				c.Python, c.Note = "", ""
			}
			if err := enc.Encode(c); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	fails := 0
	for i, c := range cases {
		if got := fn(c.In, c.Title); got != c.Out {
			fails++
			if fails <= 20 {
				t.Errorf("%s line %d %s\n in:   %q\n got:  %q\n want: %q", path, i+1, c.Name, trunc(c.In), trunc(got), trunc(c.Out))
			}
		}
	}
	if fails > 0 {
		t.Errorf("%d of %d golden cases differ", fails, len(cases))
	}
}

func trunc(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

// Golden runs result over the package's two golden files, testdata/examples.jsonl (the examples of the
// protocol documents and of the tool description) and testdata/golden.jsonl, whose expected outputs were
// produced by the Python engine's validator (see Case for the deliberate differences).
func Golden(t *testing.T, result func(in, title string) string) {
	t.Helper()
	Run(t, "testdata/examples.jsonl", result)
	Run(t, "testdata/golden.jsonl", result)
}

// Covers checks that every message of the reference (the engine's validator, docs/turn.md "Source") appears
// in one of outputs, so that each is pinned word for word by a golden line. outputs are the package's golden
// outputs (Outputs) and the results of any case kept out of the golden files.
func Covers(t *testing.T, outputs []string, messages ...string) {
	t.Helper()
	for _, m := range messages {
		if !slices.ContainsFunc(outputs, func(o string) bool { return strings.Contains(o, m) }) {
			t.Errorf("no golden output contains %q", m)
		}
	}
}

// Fuzz is a protocol's FuzzResult: the validator never panics, every error result starts with the
// protocol's prefix and is refused by the consumer-side parser, and every envelope is read back by that
// parser with nothing skipped and re-encodes to the same bytes.
type Fuzz struct {
	// Prefix is the protocol's ErrorPrefix.
	Prefix string
	// Result is the tool result for an argument (and clarify's title).
	Result func(in, title string) string
	// Title says the tool takes a title as well (clarify): the fuzz function then takes two strings, as the
	// corpus in testdata/fuzz/FuzzResult holds them.
	Title bool
	// ReadBack is the consumer-side parser (shared/devkit/consoleparse): the envelope it read, re-encoded,
	// and ok false when it refused the output or skipped any of it.
	ReadBack func(out string) (back string, ok bool)
}

// Run seeds the fuzz test with the inputs of testdata/examples.jsonl and runs it.
func (z Fuzz) Run(f *testing.F) {
	examples := Load(f, "testdata/examples.jsonl")
	check := func(t *testing.T, in, title string) {
		out := z.Result(in, title)
		back, ok := z.ReadBack(out)
		if strings.HasPrefix(out, "Error:") {
			if !strings.HasPrefix(out, z.Prefix) {
				t.Fatalf("error without prefix: %q", out)
			}
			if ok {
				t.Fatalf("the parser accepted an error: %q", out)
			}
			return
		}
		if !ok {
			t.Fatalf("the parser refused or skipped part of %q", out)
		}
		if back != out {
			t.Fatalf("round trip differs:\n%q\n%q", out, back)
		}
	}
	if z.Title {
		for _, c := range examples {
			f.Add(c.In, c.Title)
		}
		f.Fuzz(func(t *testing.T, in, title string) { check(t, in, title) })
		return
	}
	for _, c := range examples {
		f.Add(c.In)
	}
	f.Fuzz(func(t *testing.T, in string) { check(t, in, "") })
}
