package prototest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"appwrite-agent/shared/protocol/internal/prototest"
)

func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "prototest")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "golden.jsonl")
	_ = os.WriteFile(path, []byte(`{"name":"empty","in":"","out":"Error: invalid console actions — actions is empty"}`+"\n"), 0o644)
	for _, c := range prototest.Load(&testing.T{}, path) {
		fmt.Printf("%s: %q -> %s\n", c.Name, c.In, c.Out)
	}
	// Output:
	// empty: "" -> Error: invalid console actions — actions is empty
}
