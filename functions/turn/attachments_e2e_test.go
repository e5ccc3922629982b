package handler_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"appwrite-agent/functions/turn/request"
)

// TestAttachmentsFitThePlatform: a file at the default ATTACHMENTS_MAX_BYTES, base64-encoded in a turn,
// fits in what Appwrite accepts as an execution body and is answered; a byte more is the engine's 413 for
// that file; a body over Appwrite's limit (two files under the per-file limit) is the engine's 413 with the
// reason, before a model call.
func TestAttachmentsFitThePlatform(t *testing.T) {
	model, srv := env(t, route("FINISH", "", "Got it."))
	file := func(name string, n int) map[string]any {
		return map[string]any{"name": name, "content_base64": base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a", n)))}
	}
	at := map[string]any{"message": "read it", "history": history, "attachments": []any{file("big.txt", request.DefaultMaxAttachmentBytes)}}
	evs := turn(t, srv, at)
	if find(evs, "done")[0].Str("answer") != "Got it." {
		t.Fatalf("types %s", types(evs))
	}
	if len(model.Requests()) != 1 || !strings.Contains(string(model.Requests()[0].Body), "big.txt") {
		t.Fatalf("the model did not get the file")
	}

	over := do(t, srv, "POST", "/", map[string]any{"message": "read it", "history": history,
		"attachments": []any{file("big.txt", request.DefaultMaxAttachmentBytes+1)}}, auth)
	if over.status != 413 || !strings.Contains(string(over.body), fmt.Sprintf("Attachment 'big.txt' exceeds max size (%d bytes)", request.DefaultMaxAttachmentBytes)) {
		t.Fatalf("%d %s", over.status, over.body)
	}

	model.Reset()
	body := do(t, srv, "POST", "/", map[string]any{"message": "read them", "history": history,
		"attachments": []any{file("a.txt", 4_000_000), file("b.txt", 4_000_000)}}, auth)
	if body.status != 413 || !strings.Contains(string(body.body), `"error":"too_large"`) ||
		!strings.Contains(string(body.body), fmt.Sprintf("more than the %d bytes Appwrite accepts for an execution", request.MaxBodyBytes)) {
		t.Fatalf("%d %s", body.status, body.body)
	}
	if len(model.Requests()) != 0 {
		t.Fatal("a refused turn reached the model")
	}
}
