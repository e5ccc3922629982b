package memory_test

import (
	"fmt"

	"appwrite-agent/shared/protocol/memory"
)

func ExampleResult() {
	fmt.Println(memory.Result(`[{"type": "set", "key": "style.concise", "content": "Prefer concise answers", "priority": 10}]`))
	fmt.Println(memory.Result(`{"type": "forget", "key": "style.concise", "content": "x"}`))
	// Output:
	// {"protocol":"appwrite.memory/v1","actions":[{"type":"set","key":"style.concise","scope":"user","content":"Prefer concise answers","category":"preference","priority":10}]}
	// Error: invalid memory actions — forget actions must not include content
}
