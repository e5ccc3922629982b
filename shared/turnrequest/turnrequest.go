// Package turnrequest is the turn function's request (docs/turn.md "Request"): the JSON body of POST / as
// turn reads it and its callers (chat) write it, and the rules the callers keep to as well (the history
// window, the number of memories, the turn id). turn validates a Body (functions/turn/request); chat builds
// one (functions/chat/api.go). One definition, so the two cannot drift apart.
//
// Fields a caller leaves empty are left out of the JSON (omitempty), except message, history and async,
// which are always written: turn reads an absent field and an empty one alike.
package turnrequest

import (
	"encoding/json"
	"regexp"
	"sync"
)

// HistoryWindow is how many history messages (not turns) a turn keeps: the last 12, as the reference
// engine does.
const HistoryWindow = 12

// MaxMemories is how many memories one turn request may carry: turn refuses a request with more.
const MaxMemories = 200

// turnID is what a turn id must match, compiled on first use.
var turnID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,35}$`) })

// ValidTurnID reports whether id is usable as a turn id (progress.turn_id: in progress rows and webhook
// ids): 1 to 36 characters of A-Z, a-z, 0-9, _ and -, not starting with _ or -.
func ValidTurnID(id string) bool { return turnID().MatchString(id) }

// Body is the JSON body of turn's POST / (and POST /api/turn).
type Body struct {
	Message        string             `json:"message"`
	History        []HistoryMessage   `json:"history"`
	Attachments    []InlineAttachment `json:"attachments,omitempty"`
	MCPConnections []MCPConnection    `json:"mcp_connections,omitempty"`
	LLM            *LLM               `json:"llm,omitempty"`
	Memories       []Memory           `json:"memories,omitempty"`
	// Async says the call is an async execution (ours): the budget is then TURN_ASYNC_BUDGET and a progress
	// sink is required. Appwrite tells a function neither its mode nor its timeout, so the caller must.
	Async bool `json:"async"`
	// Progress names the sinks that receive the timeline while the turn runs (ours).
	Progress *Progress `json:"progress,omitempty"`
}

// HistoryMessage is one earlier message of the conversation: role user or assistant.
type HistoryMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// InlineAttachment is an attachment sent in the request, its content base64-encoded (content_base64, or
// data_base64 as the reference also read it).
type InlineAttachment struct {
	ID            string `json:"id,omitempty"`
	Name          string `json:"name"`
	Mime          string `json:"mime,omitempty"`
	Size          int64  `json:"size,omitempty"`
	Kind          string `json:"kind,omitempty"`
	ContentBase64 string `json:"content_base64,omitempty"`
	DataBase64    string `json:"data_base64,omitempty"`
}

// MCPConnection is an MCP server the caller connected, with the tokens it owns. turn's mcp_credentials
// event hands refreshed tokens back in the same shape.
type MCPConnection struct {
	ID          string          `json:"id"`
	Name        string          `json:"name,omitempty"`
	URL         string          `json:"url,omitempty"`
	Description string          `json:"description,omitempty"`
	Tokens      json.RawMessage `json:"tokens,omitempty"`
	ClientInfo  json.RawMessage `json:"client_info,omitempty"`
}

// LLM is the per-turn model: any OpenAI-compatible endpoint chosen by the user (each field set wins over the
// function's environment; shared/llm.Resolve). The title function's request has the same llm field.
type LLM struct {
	APIKey      string   `json:"api_key,omitempty"`
	Model       string   `json:"model,omitempty"`
	BaseURL     string   `json:"base_url,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
}

// Memory is a saved memory the caller injects (ours: the reference left injection to Cloud).
type Memory struct {
	Key      string `json:"key"`
	Content  string `json:"content"`
	Category string `json:"category,omitempty"`
	Priority int64  `json:"priority,omitempty"`
	// Active defaults to true; inactive entries are ignored.
	Active *bool `json:"active,omitempty"`
}

// Progress is the request's "progress" field: where the engine publishes the timeline while the turn runs.
// Realtime and Webhook may both be set.
type Progress struct {
	// TurnID names the turn in every published event (rows and webhook batches). Optional: the execution id
	// (x-appwrite-execution-id), else a random id, is used. A browser that sets it can filter its
	// subscription before the execution exists.
	TurnID string `json:"turn_id,omitempty"`
	// Realtime writes the events as rows of the configured progress table, readable only by the calling user.
	Realtime bool `json:"realtime,omitempty"`
	// Webhook posts signed batches to a URL.
	Webhook *Webhook `json:"webhook,omitempty"`
}

// Webhook is the webhook sink of a request.
type Webhook struct {
	// URL receives the batches (https, public address).
	URL string `json:"url"`
	// Secret signs them with Standard Webhooks ("whsec_" + base64 of 24 to 64 bytes).
	Secret string `json:"secret"`
}
