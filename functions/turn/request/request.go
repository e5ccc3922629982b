// Package request parses and validates a turn request before any model call: the reference's fields,
// the history window, attachment limits and normalisation, and the memories field (ours).
package request

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"appwrite-agent/shared/attachment"
	"appwrite-agent/shared/protocol/memory"
	"appwrite-agent/shared/turnrequest"
)

// MaxBodyBytes is the largest turn request body: what Appwrite accepts as an execution's body
// (attachment.MaxExecutionBody). A function domain's router takes up to 12 MiB with the headers
// (app/http.php: `$payloadSize = 12 * (1024 * 1024)`, Swoole's package_max_length) and the Go runtime 20 MiB;
// the smaller limit holds for both paths, so a turn that works through one works through the other, and a
// body over it gets the engine's 413 with its reason rather than the platform's.
const MaxBodyBytes = attachment.MaxExecutionBody

// Default limits: the attachment count is the reference's; the size is lowered from its 10,000,000 so that
// one attachment at the limit, base64-encoded (4 characters for 3 bytes: 10,000,000 characters), fits in
// MaxBodyBytes with room for the message, history and memories.
const (
	DefaultMaxAttachments     = attachment.DefaultMaxPerMessage
	DefaultMaxAttachmentBytes = attachment.DefaultMaxBytes
	MaxMemoryContent          = 8192
	MaxMemoryPriority         = 1_000_000
)

// Limits are the configurable request limits.
type Limits struct {
	// MaxAttachments is ATTACHMENTS_MAX_PER_MESSAGE.
	MaxAttachments int
	// MaxAttachmentBytes is ATTACHMENTS_MAX_BYTES, per decoded file.
	MaxAttachmentBytes int
}

// Attachment is a normalised attachment with its decoded bytes.
type Attachment struct {
	ID, Name, Mime, Kind string
	Data                 []byte
}

// Turn is a validated request, ready for the engine.
type Turn struct {
	// Message is the user's message, stripped.
	Message string
	// History is the last turnrequest.HistoryWindow messages, stripped, empty ones dropped.
	History []turnrequest.HistoryMessage
	// Attachments are normalised and decoded.
	Attachments []Attachment
	// MCPConnections are passed through for the MCP tool source.
	MCPConnections []turnrequest.MCPConnection
	// LLM is the per-turn override (nil when absent).
	LLM *turnrequest.LLM
	// Memories are the active memories, highest priority first (not yet cut to the size budget).
	Memories []turnrequest.Memory
	// FirstTurn is true when the kept history is empty: the turn then gets a conversation title.
	FirstTurn bool
	// Async is the request's async flag.
	Async bool
	// Progress are the requested sinks (nil when none).
	Progress *Progress
}

// Error is a validation failure: an HTTP status and a message.
type Error struct {
	Status  int
	Message string
}

// Error implements error.
func (e *Error) Error() string { return e.Message }

func invalid(format string, args ...any) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Message: fmt.Sprintf(format, args...)}
}

// Parse decodes and validates body, a turnrequest.Body. Unknown fields are ignored, as pydantic does.
func Parse(body []byte, lim Limits) (Turn, *Error) {
	if lim.MaxAttachments <= 0 {
		lim.MaxAttachments = DefaultMaxAttachments
	}
	if lim.MaxAttachmentBytes <= 0 {
		lim.MaxAttachmentBytes = DefaultMaxAttachmentBytes
	}
	if len(body) > MaxBodyBytes {
		return Turn{}, &Error{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf(
			"The request body is %d bytes, more than the %d bytes Appwrite accepts for an execution: send fewer or smaller attachments (base64 makes a file a third larger)",
			len(body), MaxBodyBytes)}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return Turn{}, &Error{Status: http.StatusBadRequest, Message: "request body must be a JSON object"}
	}
	var b turnrequest.Body
	if err := json.Unmarshal(body, &b); err != nil {
		return Turn{}, &Error{Status: http.StatusBadRequest, Message: "request body must be a JSON object: " + err.Error()}
	}
	t := Turn{Message: strings.TrimSpace(b.Message), LLM: b.LLM, MCPConnections: b.MCPConnections}
	if t.Message == "" && len(b.Attachments) == 0 {
		return Turn{}, invalid("message or attachments required")
	}
	for i, h := range b.History {
		role := strings.ToLower(strings.TrimSpace(h.Role))
		if role != "user" && role != "assistant" {
			return Turn{}, invalid("history[%d].role must be 'user' or 'assistant'", i)
		}
		b.History[i].Role = role
	}
	hist := b.History
	if len(hist) > turnrequest.HistoryWindow {
		hist = hist[len(hist)-turnrequest.HistoryWindow:]
	}
	for _, h := range hist {
		if c := strings.TrimSpace(h.Content); c != "" {
			t.History = append(t.History, turnrequest.HistoryMessage{Role: h.Role, Content: c})
		}
	}
	t.FirstTurn = len(t.History) == 0

	if len(b.Attachments) > lim.MaxAttachments {
		p := attachment.TooMany(lim.MaxAttachments)
		return Turn{}, &Error{Status: p.Status, Message: p.Message}
	}
	for i, a := range b.Attachments {
		att, err := normalizeAttachment(a, i, lim.MaxAttachmentBytes)
		if err != nil {
			return Turn{}, err
		}
		t.Attachments = append(t.Attachments, att)
	}
	for i, c := range b.MCPConnections {
		if strings.TrimSpace(c.ID) == "" {
			return Turn{}, invalid("mcp_connections[%d].id is required", i)
		}
	}
	if o := b.LLM; o != nil && strings.TrimSpace(o.BaseURL) != "" {
		u := strings.ToLower(strings.TrimSpace(o.BaseURL))
		if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
			return Turn{}, invalid("llm.base_url must be an http(s) URL")
		}
	}
	mems, err := validateMemories(b.Memories)
	if err != nil {
		return Turn{}, err
	}
	t.Memories = mems
	prog, err := parseProgress(b.Progress, b.Async)
	if err != nil {
		return Turn{}, err
	}
	t.Async, t.Progress = b.Async, prog
	return t, nil
}

func validateMemories(in []turnrequest.Memory) ([]turnrequest.Memory, *Error) {
	if len(in) > turnrequest.MaxMemories {
		return nil, invalid("at most %d memories per turn", turnrequest.MaxMemories)
	}
	var out []turnrequest.Memory
	for i, m := range in {
		m.Key = strings.TrimSpace(m.Key)
		if !memory.ValidKey(m.Key) {
			return nil, invalid("memories[%d].key must match ^[a-z][a-z0-9_.-]{1,127}$ (got '%s')", i, m.Key)
		}
		m.Content = strings.TrimSpace(m.Content)
		if m.Content == "" {
			return nil, invalid("memories[%d].content is required", i)
		}
		if n := len([]rune(m.Content)); n > MaxMemoryContent {
			return nil, invalid("memories[%d].content exceeds %d characters", i, MaxMemoryContent)
		}
		if m.Category == "" {
			m.Category = "preference"
		}
		if m.Category != "preference" && m.Category != "instruction" && m.Category != "fact" {
			return nil, invalid("memories[%d].category must be one of ['fact', 'instruction', 'preference']", i)
		}
		if m.Priority < 0 || m.Priority > MaxMemoryPriority {
			return nil, invalid("memories[%d].priority must be between 0 and %d", i, MaxMemoryPriority)
		}
		if m.Active != nil && !*m.Active {
			continue
		}
		out = append(out, m)
	}
	// Highest priority first; equal priorities keep the caller's order.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Priority > out[j-1].Priority; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

func normalizeAttachment(a turnrequest.InlineAttachment, i int, maxBytes int) (Attachment, *Error) {
	name := attachment.SanitizeName(a.Name)
	raw := a.ContentBase64
	if raw == "" {
		raw = a.DataBase64
	}
	data, p := attachment.Decode(name, raw, maxBytes)
	if p != nil {
		return Attachment{}, &Error{Status: p.Status, Message: p.Message}
	}
	mime := normalizeMime(a.Mime)
	if mime == "" {
		mime = guessMime(name)
	}
	id := strings.TrimSpace(a.ID)
	if id == "" {
		id = name
	}
	return Attachment{ID: id, Name: name, Mime: mime, Kind: kindOf(mime, name, a.Kind), Data: data}, nil
}
