package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/tables"

	"github.com/appwrite/sdk-for-go/models"
	"github.com/appwrite/sdk-for-go/query"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

// An automation (docs/chat.md "Automations") is a user's subscription to an event of their MCP events
// server, whose deliveries start turns in the automation's own conversation. Its row holds the subscription
// (the event, its arguments, the MCP connection it was made with, the whsec_ secret sealed like the other
// secrets, when it must be refreshed and why a refresh failed) and has no permission: only chat reads it.
// Each delivery is a row of automation_runs, whose id is derived from the automation and the delivery's
// webhook-id: a redelivery finds it taken. The run's id is also its turn's id, and the run keeps the turn's
// tokens once the turn is stored, so an automation's usage is the sum of its runs.

// Automation statuses and the reasons of a pause.
const (
	AutomationActive = "active"
	AutomationPaused = "paused"
	// PausedByUser and PausedByLimit say who paused it: the user, or the rate limit.
	PausedByUser  = "user"
	PausedByLimit = "rate_limit"
)

// Run statuses: a run started its turn, or was refused by the rate limit.
const (
	RunStarted = "started"
	RunLimited = "limited"
)

// Sizes of the automations' text columns (shared/tables).
const (
	// InstructionChars bounds an automation's instruction.
	InstructionChars = tables.InstructionChars
	// ArgumentsChars bounds its arguments (JSON).
	ArgumentsChars = tables.ArgumentsChars
	// RefreshErrorChars bounds the reason a refresh failed.
	RefreshErrorChars = tables.RefreshErrorChars
)

// purposeAutomationSecret is the sealing purpose of an automation's whsec_ secret (secrets.go).
const purposeAutomationSecret = "chat/automations/secret"

// Automation is an automation row.
type Automation struct {
	ID             string
	UserID         string
	ConversationID string
	// ConnectionID is the user's MCP connection the subscription is made with (and refreshed with).
	ConnectionID string
	Event        string
	Arguments    map[string]string
	Instruction  string
	Status       string
	PauseReason  string
	// SubscriptionID is what events/subscribe answered; Subscribed says a subscription is live (or may be:
	// an unsubscribe that failed leaves it true, for the scheduled run to try again).
	SubscriptionID string
	Subscribed     bool
	// RefreshBefore is the subscription's refreshBefore, RefreshedAt the last successful (re)subscription,
	// RefreshError why the last refresh failed ("" when it did not).
	RefreshBefore, RefreshedAt, RefreshError string
	// Generation counts resumes: the rate limit counts the runs of one window and generation.
	Generation int64
	CreatedAt  string
	UpdatedAt  string
	// secret is the sealed column.
	secret string
}

func automationOf(r Row) Automation {
	a := Automation{ID: r.ID, UserID: r.Str("user_id"), ConversationID: r.Str("conversation_id"), ConnectionID: r.Str("connection_id"),
		Event: r.Str("event"), Instruction: r.Str("instruction"), Status: r.Str("status"), PauseReason: r.Str("pause_reason"),
		SubscriptionID: r.Str("subscription_id"), Subscribed: r.Bool("subscribed"), RefreshBefore: r.Str("refresh_before"),
		RefreshedAt: r.Str("refreshed_at"), RefreshError: r.Str("refresh_error"), Generation: r.Int("generation"),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, secret: r.Str("secret"), Arguments: map[string]string{}}
	_ = json.Unmarshal([]byte(r.Str("arguments")), &a.Arguments)
	return a
}

// CreateAutomation stores a new automation of a.UserID under a.ID (the caller makes the id: the callback URL,
// and the secret's sealing, name it before the row exists), with its whsec_ secret sealed. The row has no
// permission.
func (s *Store) CreateAutomation(ctx context.Context, a Automation, secret string) (Automation, error) {
	sealed, err := s.sealSecret(secret, purposeAutomationSecret, a.UserID, a.ID)
	if err != nil {
		return Automation{}, err
	}
	args, _ := json.Marshal(a.Arguments)
	r, err := s.create(ctx, Automations, a.ID, map[string]any{
		"user_id": a.UserID, "conversation_id": a.ConversationID, "connection_id": a.ConnectionID, "event": a.Event,
		"arguments": string(args), "instruction": cut(a.Instruction, InstructionChars), "status": a.Status, "pause_reason": a.PauseReason,
		"secret": sealed, "subscription_id": a.SubscriptionID, "subscribed": a.Subscribed, "generation": a.Generation,
	}, []string{})
	if err != nil {
		return Automation{}, err
	}
	return automationOf(r), nil
}

// Automation reads one of the user's automations (ErrNotFound for another user's).
func (s *Store) Automation(ctx context.Context, userID, id string) (Automation, error) {
	r, err := s.get(ctx, Automations, id, userID)
	if err != nil {
		return Automation{}, err
	}
	return automationOf(r), nil
}

// AutomationByID reads an automation whoever owns it: a delivery names it by id alone, and proves itself
// with the automation's secret.
func (s *Store) AutomationByID(ctx context.Context, id string) (Automation, error) {
	if !awclient.ValidID(id) {
		return Automation{}, ErrNotFound
	}
	var r Row
	err := s.do(ctx, func() error {
		var err error
		r, err = rowCall(ctx, s.aw, s.key, func(db *tablesdb.TablesDB) (*models.Row, error) { return db.GetRow(s.database, Automations, id) })
		return err
	})
	if t := awclient.TypeOf(err); t == "row_not_found" || t == "document_not_found" {
		return Automation{}, ErrNotFound
	}
	if err != nil {
		return Automation{}, err
	}
	return automationOf(r), nil
}

// Automations lists the user's automations, oldest first.
func (s *Store) Automations(ctx context.Context, userID string) ([]Automation, error) {
	rows, err := s.list(ctx, Automations, userID)
	if err != nil {
		return nil, err
	}
	return automationsOf(rows), nil
}

// AllAutomations lists every user's automations, for the scheduled run.
func (s *Store) AllAutomations(ctx context.Context) ([]Automation, error) {
	var rows []Row
	err := s.do(ctx, func() error {
		var err error
		rows, err = ListRows(ctx, s.aw, s.key, s.database, Automations)
		return err
	})
	if err != nil {
		return nil, err
	}
	return automationsOf(rows), nil
}

func automationsOf(rows []Row) []Automation {
	out := make([]Automation, 0, len(rows))
	for _, r := range rows {
		out = append(out, automationOf(r))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt < out[j].CreatedAt })
	return out
}

// AutomationSecret opens an automation's whsec_ secret.
func (s *Store) AutomationSecret(a Automation) (string, error) {
	v, err := s.openSecret(a.secret, purposeAutomationSecret, a.UserID, a.ID)
	if err != nil {
		return "", fmt.Errorf("automation '%s': %w", a.ID, err)
	}
	return v, nil
}

// AutomationUpdate holds the columns to change (nil: unchanged).
type AutomationUpdate struct {
	Status, PauseReason, SubscriptionID, RefreshError *string
	Subscribed                                        *bool
	// RefreshBefore and RefreshedAt are written as given (Appwrite datetimes).
	RefreshBefore, RefreshedAt *time.Time
	Generation                 *int64
}

// UpdateAutomation writes the columns u sets and returns the row as stored.
func (s *Store) UpdateAutomation(ctx context.Context, id string, u AutomationUpdate) (Automation, error) {
	data := map[string]any{}
	set := func(k string, v *string, n int) {
		if v != nil {
			data[k] = cut(*v, n)
		}
	}
	set("status", u.Status, 16)
	set("pause_reason", u.PauseReason, 16)
	set("subscription_id", u.SubscriptionID, 64)
	set("refresh_error", u.RefreshError, RefreshErrorChars)
	if u.Subscribed != nil {
		data["subscribed"] = *u.Subscribed
	}
	if u.RefreshBefore != nil {
		data["refresh_before"] = datetime(*u.RefreshBefore)
	}
	if u.RefreshedAt != nil {
		data["refreshed_at"] = datetime(*u.RefreshedAt)
	}
	if u.Generation != nil {
		data["generation"] = *u.Generation
	}
	r, err := s.update(ctx, Automations, id, data)
	if awclient.TypeOf(err) == "row_not_found" {
		return Automation{}, ErrNotFound
	}
	if err != nil {
		return Automation{}, err
	}
	return automationOf(r), nil
}

// datetime is Appwrite's datetime format, milliseconds.
func datetime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000-07:00") }

// DeleteAutomation deletes one of the user's automations and its runs. Its conversation stays, as an
// ordinary one.
func (s *Store) DeleteAutomation(ctx context.Context, userID, id string) error {
	a, err := s.Automation(ctx, userID, id)
	if err != nil {
		return err
	}
	runs, err := s.list(ctx, AutomationRuns, userID, query.Equal("automation_id", id))
	if err != nil {
		return err
	}
	for _, r := range runs {
		if err := s.delete(ctx, AutomationRuns, r.ID); err != nil {
			return err
		}
	}
	if err := s.delete(ctx, Automations, id); err != nil {
		return err
	}
	if a.ConversationID != "" {
		if _, err := s.update(ctx, Conversations, a.ConversationID, map[string]any{"automation_id": ""}); err != nil && awclient.TypeOf(err) != "row_not_found" {
			return err
		}
	}
	return nil
}

// ErrDuplicate is a delivery whose run exists already: a redelivery.
var ErrDuplicate = errors.New("this delivery was received before")

// RunID is the id of the run of a delivery: derived from the automation and the delivery's webhook-id, so a
// redelivery gets the same one. It is also the turn's id.
func RunID(automationID, webhookID string) string { return derivedID("r", automationID, webhookID) }

// ClaimRun records a delivery of a as a run of window (the rate limit's window and generation), or answers
// ErrDuplicate when it was recorded before. Appwrite creates a row id once (409 otherwise), so of two
// deliveries of one webhook-id at the same time, one claims it.
func (s *Store) ClaimRun(ctx context.Context, a Automation, webhookID, window string) (string, error) {
	id := RunID(a.ID, webhookID)
	_, err := s.create(ctx, AutomationRuns, id, map[string]any{"user_id": a.UserID, "automation_id": a.ID,
		"webhook_id": cut(webhookID, 256), "window": window, "status": RunStarted}, []string{})
	if t := awclient.TypeOf(err); t == "row_already_exists" || t == "document_already_exists" {
		return id, ErrDuplicate
	}
	return id, err
}

// RunPosition is how many runs of an automation in window were recorded before runID (in the database's
// order: Appwrite's $sequence, then the creation time and the id), and how many there are in all.
func (s *Store) RunPosition(ctx context.Context, userID, automationID, window, runID string) (before, total int, err error) {
	rows, err := s.list(ctx, AutomationRuns, userID, query.Equal("automation_id", automationID), query.Equal("window", window))
	if err != nil {
		return 0, 0, err
	}
	sort.SliceStable(rows, func(i, j int) bool {
		si, sj := sequence(rows[i]), sequence(rows[j])
		if si != sj {
			return si < sj
		}
		if rows[i].CreatedAt != rows[j].CreatedAt {
			return rows[i].CreatedAt < rows[j].CreatedAt
		}
		return rows[i].ID < rows[j].ID
	})
	before = len(rows)
	for i, r := range rows {
		if r.ID == runID {
			before = i
			break
		}
	}
	return before, len(rows), nil
}

// sequence is a row's $sequence: Appwrite's insertion counter, a string in its answers (Response/Model/Row.php),
// read as a number too.
func sequence(r Row) int64 {
	switch v := r.Data["$sequence"].(type) {
	case float64:
		return int64(v)
	case string:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return 0
}

// SetRunStatus writes a run's status.
func (s *Store) SetRunStatus(ctx context.Context, runID, status string) error {
	_, err := s.update(ctx, AutomationRuns, runID, map[string]any{"status": status})
	return err
}

// DeleteRun forgets a run (its turn could not start: a retry of the delivery may start it).
func (s *Store) DeleteRun(ctx context.Context, runID string) error {
	return s.delete(ctx, AutomationRuns, runID)
}

// RunTokens are a turn's tokens, kept on its run.
type RunTokens struct {
	Prompt, Completion, Total int64
}

// SetRunTokens records the tokens of a stored turn on its run; a turn that is not a run (an ordinary turn)
// is left alone.
func (s *Store) SetRunTokens(ctx context.Context, userID, turnID string, t RunTokens) error {
	if _, err := s.get(ctx, AutomationRuns, turnID, userID); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	}
	_, err := s.update(ctx, AutomationRuns, turnID, map[string]any{"prompt_tokens": t.Prompt, "completion_tokens": t.Completion, "total_tokens": t.Total})
	return err
}

// AutomationUsage is what an automation has cost: the turns it started and their tokens (of the turns
// stored so far).
type AutomationUsage struct {
	Turns            int   `json:"turns"`
	Limited          int   `json:"limited"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// Usage adds up the user's automations' runs, by automation.
func (s *Store) Usage(ctx context.Context, userID string) (map[string]AutomationUsage, error) {
	rows, err := s.list(ctx, AutomationRuns, userID)
	if err != nil {
		return nil, err
	}
	out := map[string]AutomationUsage{}
	for _, r := range rows {
		u := out[r.Str("automation_id")]
		if r.Str("status") == RunLimited {
			u.Limited++
		} else {
			u.Turns++
		}
		u.PromptTokens += r.Int("prompt_tokens")
		u.CompletionTokens += r.Int("completion_tokens")
		u.TotalTokens += r.Int("total_tokens")
		out[r.Str("automation_id")] = u
	}
	return out, nil
}

// CreateAutomationConversation creates the conversation of an automation: titled, so the title function
// leaves it alone, and marked with the automation's id.
func (s *Store) CreateAutomationConversation(ctx context.Context, userID, title, automationID string) (Conversation, error) {
	r, err := s.create(ctx, Conversations, "unique()", map[string]any{
		"user_id": userID, "title": cut(title, TitleChars), "message": "", "automation_id": automationID,
	}, owner(userID))
	if err != nil {
		return Conversation{}, err
	}
	return conversationOf(r), nil
}

// MarkRead records that the user has read an automation's conversation at now (its unread mark goes).
func (s *Store) MarkRead(ctx context.Context, conversationID string, now time.Time) error {
	_, err := s.update(ctx, Conversations, conversationID, map[string]any{"read_at": datetime(now)})
	return err
}

// RoleNotice is a message of chat itself in a conversation (an automation created, paused by the rate
// limit): shown, never sent to the model as history.
const RoleNotice = "notice"

// AddNotice writes a notice in the user's conversation under id (a notice id already used is left as it
// is: two deliveries pausing an automation at once write one notice).
func (s *Store) AddNotice(ctx context.Context, userID, conversationID, id, text string) error {
	_, err := s.create(ctx, Messages, id, map[string]any{
		"user_id": userID, "conversation_id": conversationID, "role": RoleNotice, "content": cut(text, ContentChars),
		"status": StatusDone, "turn_id": "", "attachments": "[]", "timeline": "[]",
	}, readOnly(userID))
	if t := awclient.TypeOf(err); t == "row_already_exists" || t == "document_already_exists" {
		return nil
	}
	return err
}

// NoticeID is the id of a notice about automationID that is written once per key.
func NoticeID(automationID, key string) string { return derivedID("n", automationID, key) }

// RunningTurns lists every user's assistant messages still running, by conversation: what a scheduled run
// may have to store (one read for all automations).
func (s *Store) RunningTurns(ctx context.Context) (map[string][]Message, error) {
	var rows []Row
	err := s.do(ctx, func() error {
		var err error
		rows, err = ListRows(ctx, s.aw, s.key, s.database, Messages, query.Equal("status", StatusRunning))
		return err
	})
	if err != nil {
		return nil, err
	}
	out := map[string][]Message{}
	for _, r := range rows {
		if m := messageOf(r); m.Role == "assistant" {
			out[m.ConversationID] = append(out[m.ConversationID], m)
		}
	}
	return out, nil
}

// DeleteMessage deletes a message (of a turn that could not start).
func (s *Store) DeleteMessage(ctx context.Context, id string) error {
	return s.delete(ctx, Messages, id)
}
