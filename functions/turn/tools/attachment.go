package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/shared/pyjson"
)

// read_attachment limits, as in the reference.
const (
	AttachmentDefaultChars = 12_000
	AttachmentMinChars     = 500
	AttachmentMaxChars     = 50_000
)

// ReadAttachment is the read_attachment tool: the text of a file attached to this turn, found by id or
// name.
type ReadAttachment struct {
	// Attachments are this turn's attachments (only these can be read).
	Attachments []request.Attachment
}

// Name implements toolapi.Tool.
func (ReadAttachment) Name() string { return "read_attachment" }

// Description implements toolapi.Tool.
func (ReadAttachment) Description() string {
	return "Read the content of a file the user attached to this message, by its id or file name (as listed under " +
		"### Attachments). Text is returned as text, cut at max_chars; binary files are only described. Files from " +
		"earlier messages are not available."
}

// Parameters implements toolapi.Tool.
func (ReadAttachment) Parameters() json.RawMessage {
	return schema([][2]string{
		{"attachment_id", prop("string", "The attachment's id or file name.", "")},
		{"max_chars", prop("integer", "Most characters to return (500 to 50000).", `"default":12000`)},
	}, "attachment_id")
}

// Run implements toolapi.Tool.
func (r ReadAttachment) Run(_ context.Context, args json.RawMessage) (string, error) {
	var a struct {
		ID       string `json:"attachment_id"`
		MaxChars optInt `json:"max_chars"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	limit := int(clamp(a.MaxChars.or(AttachmentDefaultChars), AttachmentMinChars, AttachmentMaxChars))
	id := strings.TrimSpace(a.ID)
	var att *request.Attachment
	for i := range r.Attachments {
		if r.Attachments[i].ID == id {
			att = &r.Attachments[i]
			break
		}
	}
	if att == nil {
		for i := range r.Attachments {
			if r.Attachments[i].Name == id {
				att = &r.Attachments[i]
				break
			}
		}
	}
	if att == nil {
		return fmt.Sprintf("Unknown attachment id=%s. Only files attached on this turn are available.", pyjson.ReprString(id)), nil
	}
	head := fmt.Sprintf("name=%s mime=%s size=%d\n\n", pyjson.ReprString(att.Name), att.Mime, len(att.Data))
	if att.Kind != "text" && !utf8.Valid(att.Data) {
		return head + fmt.Sprintf("(binary %s file; %d bytes not shown as text)", att.Kind, len(att.Data)), nil
	}
	text := strings.ToValidUTF8(string(att.Data), "\uFFFD")
	if cut, was := cutRunes(text, limit); was {
		text = cut + fmt.Sprintf("\n\n… truncated at %d characters", limit)
	}
	return head + text, nil
}
