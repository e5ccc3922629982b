package timeline_test

import (
	"fmt"

	"appwrite-agent/functions/turn/timeline"
)

// The usage event of one model call, in the reference's field order.
func ExampleUsage() {
	b, _ := timeline.Usage("gpt-4o-mini", "supervisor", 120, 14, 134).MarshalJSON()
	fmt.Println(string(b))
	// Output: {"type":"usage","model":"gpt-4o-mini","prompt_tokens":120,"completion_tokens":14,"total_tokens":134,"agent":"supervisor"}
}

// A stopped turn's error event: code cancelled, with the partial answer.
func ExampleError_cancelled() {
	b, _ := timeline.Error(timeline.CodeCancelled, "The turn was stopped; the answer is partial.", "Here is the beginning").MarshalJSON()
	fmt.Println(string(b))
	// Output: {"type":"error","detail":"The turn was stopped; the answer is partial.","code":"cancelled","answer":"Here is the beginning"}
}
