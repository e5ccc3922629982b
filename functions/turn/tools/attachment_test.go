package tools

import (
	"strings"
	"testing"

	"appwrite-agent/functions/turn/request"
)

func TestReadAttachment(t *testing.T) {
	ra := ReadAttachment{Attachments: []request.Attachment{
		{ID: "att1", Name: "notes.md", Mime: "text/markdown", Kind: "text", Data: []byte("# Notes\n" + strings.Repeat("é", 1000))},
		{ID: "img", Name: "pic.png", Mime: "image/png", Kind: "image", Data: []byte("\x89PNG\r\n\x1a\n\xff\xfe")},
		{ID: "latin", Name: "old.txt", Mime: "text/plain", Kind: "text", Data: []byte("caf\xe9")},
	}}
	if out := run(t, ra, map[string]any{"attachment_id": "att1"}); out != "name='notes.md' mime=text/markdown size=2008\n\n# Notes\n"+strings.Repeat("é", 1000) {
		t.Errorf("by id: %q", out[:60])
	}
	out := run(t, ra, map[string]any{"attachment_id": "notes.md", "max_chars": 10})
	if out != "name='notes.md' mime=text/markdown size=2008\n\n# Notes\n"+strings.Repeat("é", 492)+"\n\n… truncated at 500 characters" {
		t.Errorf("by name, clamped to 500: %q", out)
	}
	if out := run(t, ra, map[string]any{"attachment_id": "pic.png"}); out != "name='pic.png' mime=image/png size=10\n\n(binary image file; 10 bytes not shown as text)" {
		t.Errorf("binary: %q", out)
	}
	if out := run(t, ra, map[string]any{"attachment_id": "latin"}); out != "name='old.txt' mime=text/plain size=4\n\ncaf\uFFFD" {
		t.Errorf("invalid UTF-8 is replaced: %q", out)
	}
	if out := run(t, ra, map[string]any{"attachment_id": "other"}); out != "Unknown attachment id='other'. Only files attached on this turn are available." {
		t.Errorf("unknown: %q", out)
	}
}
