package clarify_test

import (
	"fmt"

	"appwrite-agent/shared/protocol/clarify"
)

func ExampleResult() {
	fmt.Println(clarify.Result(`{"id": "confirm_delete", "kind": "confirm", "question": "Delete bucket avatars?", "danger": true, "confirmLabel": "Delete"}`, "Before deleting"))
	fmt.Println(clarify.Result(`[{"id": "Bucket", "kind": "text", "question": "Which bucket?"}]`, ""))
	// Output:
	// {"protocol":"appwrite.clarify/v1","prompts":[{"id":"confirm_delete","kind":"confirm","question":"Delete bucket avatars?","required":true,"confirmLabel":"Delete","cancelLabel":"Cancel","danger":true}],"title":"Before deleting"}
	// Error: invalid clarify prompts — prompt: id must match ^[a-z][a-z0-9_.-]{0,63}$ (got 'Bucket')
}
