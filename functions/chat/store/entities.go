package store

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"appwrite-agent/shared/awclient"

	"github.com/appwrite/sdk-for-go/models"
	"github.com/appwrite/sdk-for-go/query"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

// Conversation is a conversation row.
type Conversation struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func conversationOf(r Row) Conversation {
	return Conversation{ID: r.ID, Title: r.Str("title"), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// Conversations lists the user's conversations, most recently updated first.
func (s *Store) Conversations(ctx context.Context, userID string) ([]Conversation, error) {
	rows, err := s.list(ctx, Conversations, userID)
	if err != nil {
		return nil, err
	}
	out := make([]Conversation, 0, len(rows))
	for _, r := range rows {
		out = append(out, conversationOf(r))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt > out[j].UpdatedAt })
	return out, nil
}

// Conversation reads one of the user's conversations.
func (s *Store) Conversation(ctx context.Context, userID, id string) (Conversation, error) {
	r, err := s.get(ctx, Conversations, id, userID)
	if err != nil {
		return Conversation{}, err
	}
	return conversationOf(r), nil
}

// CreateConversation creates a conversation whose first message is message (cut to FirstMessageChars):
// its create event is what starts the title function.
func (s *Store) CreateConversation(ctx context.Context, userID, message string) (Conversation, error) {
	r, err := s.create(ctx, Conversations, "unique()", map[string]any{
		"user_id": userID, "title": "", "message": cut(message, FirstMessageChars),
	}, owner(userID))
	if err != nil {
		return Conversation{}, err
	}
	return conversationOf(r), nil
}

// TouchConversation marks a conversation the caller has found to be the user's as used at now (it moves to
// the top of the list) and returns it as Appwrite answered the update. It writes active_at (in Appwrite's
// own datetime format, milliseconds): Appwrite moves a row's $updatedAt only when a value changes
// (utopia-php/database updateDocument), so rewriting what is stored would leave the list's order.
func (s *Store) TouchConversation(ctx context.Context, id string, now time.Time) (Conversation, error) {
	r, err := s.update(ctx, Conversations, id, map[string]any{"active_at": now.UTC().Format("2006-01-02T15:04:05.000-07:00")})
	if err != nil {
		return Conversation{}, err
	}
	return conversationOf(r), nil
}

// SetTitleIfEmpty writes title when the conversation has none yet.
func (s *Store) SetTitleIfEmpty(ctx context.Context, userID, id, title string) error {
	r, err := s.get(ctx, Conversations, id, userID)
	if err != nil || r.Str("title") != "" || title == "" {
		return err
	}
	_, err = s.update(ctx, Conversations, id, map[string]any{"title": cut(title, TitleChars)})
	return err
}

// TitleChars bounds a conversation's title (its column's size).
const TitleChars = 256

// RenameConversation sets the title of a conversation of the user.
func (s *Store) RenameConversation(ctx context.Context, userID, id, title string) (Conversation, error) {
	if _, err := s.get(ctx, Conversations, id, userID); err != nil {
		return Conversation{}, err
	}
	r, err := s.update(ctx, Conversations, id, map[string]any{"title": cut(title, TitleChars)})
	if err != nil {
		return Conversation{}, err
	}
	return conversationOf(r), nil
}

// DeleteConversation deletes a conversation of the user and its messages.
func (s *Store) DeleteConversation(ctx context.Context, userID, id string) error {
	if _, err := s.get(ctx, Conversations, id, userID); err != nil {
		return err
	}
	msgs, err := s.list(ctx, Messages, userID, query.Equal("conversation_id", id))
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := s.delete(ctx, Messages, m.ID); err != nil {
			return err
		}
	}
	return s.delete(ctx, Conversations, id)
}

// Attachment is what is kept of an attachment: its metadata, and for an image the small thumbnail the page
// made (a data: URL, at most ThumbnailChars).
type Attachment struct {
	Name      string `json:"name"`
	Mime      string `json:"mime"`
	Size      int    `json:"size"`
	Thumbnail string `json:"thumbnail,omitempty"`
}

// ThumbnailChars bounds one attachment's thumbnail; the attachments column (AttachmentsChars) holds a
// message's whole list.
const ThumbnailChars = 12_000

// TurnError is a failed turn's error.
type TurnError struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// Message statuses.
const (
	StatusDone    = "done"
	StatusRunning = "running"
	StatusFailed  = "failed"
	// StatusStopped is a turn its user stopped: its partial answer is kept.
	StatusStopped = "stopped"
)

// Message is a message row.
type Message struct {
	ID             string            `json:"id"`
	ConversationID string            `json:"-"`
	Role           string            `json:"role"`
	Content        string            `json:"content"`
	Status         string            `json:"status"`
	TurnID         string            `json:"turn_id"`
	ExecutionID    string            `json:"-"`
	Attachments    []Attachment      `json:"attachments"`
	Timeline       []json.RawMessage `json:"timeline"`
	Error          *TurnError        `json:"error,omitempty"`
	// Usage is the turn's tokens (turns.Usage as JSON), on a finished assistant message whose turn reported any.
	Usage     json.RawMessage `json:"usage,omitempty"`
	CreatedAt string          `json:"created_at"`
}

func messageOf(r Row) Message {
	m := Message{ID: r.ID, ConversationID: r.Str("conversation_id"), Role: r.Str("role"), Content: r.Str("content"),
		Status: r.Str("status"), TurnID: r.Str("turn_id"), ExecutionID: r.Str("execution_id"), CreatedAt: r.CreatedAt,
		Attachments: []Attachment{}, Timeline: []json.RawMessage{}}
	if a := r.Str("attachments"); a != "" {
		_ = json.Unmarshal([]byte(a), &m.Attachments)
	}
	if t := r.Str("timeline"); t != "" {
		_ = json.Unmarshal([]byte(t), &m.Timeline)
	}
	if u := r.Str("usage"); u != "" && json.Valid([]byte(u)) {
		m.Usage = json.RawMessage(u)
	}
	if e := r.Str("error"); e != "" {
		var te TurnError
		if json.Unmarshal([]byte(e), &te) == nil {
			m.Error = &te
		}
	}
	return m
}

// Messages lists a conversation's messages, oldest first. The conversation must be the user's.
func (s *Store) Messages(ctx context.Context, userID, conversationID string) ([]Message, error) {
	rows, err := s.list(ctx, Messages, userID, query.Equal("conversation_id", conversationID))
	if err != nil {
		return nil, err
	}
	out := make([]Message, 0, len(rows))
	for _, r := range rows {
		out = append(out, messageOf(r))
	}
	// Oldest first; within one turn (rows may share a timestamp) the user's message first.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt < out[j].CreatedAt
		}
		return out[i].TurnID == out[j].TurnID && out[i].Role == "user" && out[j].Role == "assistant"
	})
	return out, nil
}

// MessageByTurn finds the user's assistant message of a turn.
func (s *Store) MessageByTurn(ctx context.Context, userID, turnID string) (Message, error) {
	r, err := s.get(ctx, Messages, turnID, userID)
	if err != nil {
		return Message{}, err
	}
	return messageOf(r), nil
}

// ErrTurnExists is a turn id already used.
var ErrTurnExists = errors.New("turn id already used")

// AddTurnMessages stores a turn's user message and its running assistant message, whose row id is the
// turn id, so that a turn id is used once (ErrTurnExists).
func (s *Store) AddTurnMessages(ctx context.Context, userID, conversationID, turnID, text string, atts []Attachment) (Message, Message, error) {
	if atts == nil {
		atts = []Attachment{}
	}
	if _, err := rowCall(ctx, s.aw, s.key, func(db *tablesdb.TablesDB) (*models.Row, error) { return db.GetRow(s.database, Messages, turnID) }); err == nil {
		return Message{}, Message{}, ErrTurnExists
	} else if t := awclient.TypeOf(err); t != "row_not_found" && t != "document_not_found" && !missingSchema(err) {
		return Message{}, Message{}, err
	}
	ab, _ := json.Marshal(atts)
	if len(ab) > AttachmentsChars { // the thumbnails do not fit together: the metadata does
		for i := range atts {
			atts[i].Thumbnail = ""
		}
		ab, _ = json.Marshal(atts)
	}
	usr, err := s.create(ctx, Messages, "unique()", map[string]any{
		"user_id": userID, "conversation_id": conversationID, "role": "user", "content": cut(text, ContentChars),
		"status": StatusDone, "turn_id": turnID, "attachments": string(ab), "timeline": "[]",
	}, readOnly(userID))
	if err != nil {
		return Message{}, Message{}, err
	}
	asst, err := s.create(ctx, Messages, turnID, map[string]any{
		"user_id": userID, "conversation_id": conversationID, "role": "assistant", "content": "", "status": StatusRunning,
		"turn_id": turnID, "attachments": "[]", "timeline": "[]",
	}, readOnly(userID))
	if err != nil {
		// The turn does not start: its user message goes too.
		_ = s.delete(ctx, Messages, usr.ID)
		if t := awclient.TypeOf(err); t == "row_already_exists" || t == "document_already_exists" {
			return Message{}, Message{}, ErrTurnExists
		}
		return Message{}, Message{}, err
	}
	return messageOf(usr), messageOf(asst), nil
}

// SetExecution records the execution of a running turn.
func (s *Store) SetExecution(ctx context.Context, messageID, executionID string) error {
	_, err := s.update(ctx, Messages, messageID, map[string]any{"execution_id": executionID})
	return err
}

// FinishTurn stores a finished turn's answer, status, timeline, error and usage (JSON, or nil) on its assistant
// message.
func (s *Store) FinishTurn(ctx context.Context, messageID, content, status string, timeline []json.RawMessage, terr *TurnError, usage json.RawMessage) (Message, error) {
	tl, _ := json.Marshal(timeline)
	if len(tl) > TimelineChars {
		tl = []byte("[]")
	}
	data := map[string]any{"content": cut(content, ContentChars), "status": status, "timeline": string(tl), "error": ""}
	if len(usage) > 0 && len(usage) <= UsageChars {
		data["usage"] = string(usage)
	}
	if terr != nil {
		eb, _ := json.Marshal(terr)
		data["error"] = string(eb)
	}
	r, err := s.update(ctx, Messages, messageID, data)
	if err != nil {
		return Message{}, err
	}
	return messageOf(r), nil
}

// cut keeps the first n runes of s.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
