// Command protocol validates a tool argument the way the agent's console,
// clarify, memory and report_threat tools do, and prints the canonical
// envelope or the exact error text. It is for Console developers checking a
// payload by hand, and for tests.
//
// Usage:
//
//	go run ./scripts/protocol [flags] console|clarify|memory|threat < argument
//
// The argument on stdin is the tool argument: for console and memory the
// actions JSON (one object or an array), for clarify the prompts JSON, for
// threat the report object {"category","summary","details","quote"?}.
//
// Flags:
//
//	-title string  clarify only: the title argument
//	-args          stdin holds the whole tool-call arguments object, e.g.
//	               {"actions":"[…]"}, as the model sends it
//	-lines         batch mode: every stdin line is a JSON string holding one
//	               argument; every output line is the JSON-encoded result
//
// The exit status is 0 for an envelope, 1 when the result is an error text,
// and 2 for a usage error.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"appwrite-agent/shared/protocol/clarify"
	"appwrite-agent/shared/protocol/console"
	"appwrite-agent/shared/protocol/memory"
	"appwrite-agent/shared/protocol/threat"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("protocol", flag.ContinueOnError)
	fs.SetOutput(stderr)
	title := fs.String("title", "", "clarify only: the title argument")
	args := fs.Bool("args", false, "stdin is the whole tool-call arguments object")
	lines := fs.Bool("lines", false, "batch mode: one JSON-encoded argument per line in, one JSON-encoded result per line out")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: protocol [-title t] [-args] [-lines] console|clarify|memory|threat < argument")
		fs.PrintDefaults()
	}
	if err := fs.Parse(argv); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	tool, ok := tools(*title, *args)[fs.Arg(0)]
	if !ok {
		fmt.Fprintf(stderr, "protocol: unknown protocol %q (want console, clarify, memory or threat)\n", fs.Arg(0))
		return 2
	}
	if *lines {
		return batch(tool, stdin, stdout, stderr)
	}
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "protocol:", err)
		return 2
	}
	out := tool(string(in))
	fmt.Fprintln(stdout, out)
	if strings.HasPrefix(out, "Error:") {
		return 1
	}
	return 0
}

func tools(title string, args bool) map[string]func(string) string {
	if args {
		return map[string]func(string) string{
			"console": func(s string) string { return console.Call(json.RawMessage(s)) },
			"clarify": func(s string) string { return clarify.Call(json.RawMessage(s)) },
			"memory":  func(s string) string { return memory.Call(json.RawMessage(s)) },
			"threat":  func(s string) string { return threat.Call(json.RawMessage(s)) },
		}
	}
	return map[string]func(string) string{
		"console": console.Result,
		"clarify": func(s string) string { return clarify.Result(s, title) },
		"memory":  memory.Result,
		"threat":  threat.Result,
	}
}

func batch(tool func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for sc.Scan() {
		var arg string
		if err := json.Unmarshal(sc.Bytes(), &arg); err != nil {
			fmt.Fprintln(stderr, "protocol: a -lines input line must be a JSON string:", err)
			return 2
		}
		if err := enc.Encode(tool(arg)); err != nil {
			fmt.Fprintln(stderr, "protocol:", err)
			return 2
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(stderr, "protocol:", err)
		return 2
	}
	return 0
}
