package console_test

import (
	"testing"

	"appwrite-agent/shared/protocol/console"
	"appwrite-agent/shared/protocol/internal/prototest"
)

// TestGolden checks the tool result for every line of testdata/golden.jsonl,
// whose expected outputs were produced by the Python engine's validator.
//
// testdata/examples.jsonl holds the examples of the protocol documents and
// of the tool description, with the Python engine's output for each.
func TestGolden(t *testing.T) {
	prototest.Run(t, "testdata/examples.jsonl", func(in, _ string) string { return console.Result(in) })
	prototest.Run(t, "testdata/golden.jsonl", func(in, _ string) string { return console.Result(in) })
}
