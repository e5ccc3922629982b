// Package tables defines the TablesDB tables the product keeps in a project: the chat's database (its seven
// tables, functions/chat/store) and turn's Realtime progress table (functions/turn/progress, docs/turn.md
// "Progress sinks and long turns"). chat creates its tables on first use and scripts/deploy creates all of
// them beforehand, from this one definition. Every table has row security on and no table-level permission:
// a row is visible only through its own permissions.
package tables

// Column is one column: Type is the TablesDB column route's type (string, integer, boolean, datetime); Size
// is a string column's size.
type Column struct {
	Key      string
	Type     string
	Size     int
	Required bool
}

// Table is one table of a database.
type Table struct {
	ID, Name string
	Columns  []Column
}

// The chat database's tables.
const (
	Conversations  = "conversations"
	Messages       = "messages"
	Memories       = "memories"
	Settings       = "settings"
	MCPConnections = "mcp_connections"
	// Automations and AutomationRuns are chat's automations and each delivery they received (docs/chat.md
	// "Automations").
	Automations    = "automations"
	AutomationRuns = "automation_runs"
)

// Sizes of the chat's text columns.
const (
	// FirstMessageChars is the conversation's first message (what title reads), cut to this many characters.
	FirstMessageChars = 4000
	// ContentChars bounds a message's text.
	ContentChars = 1_000_000
	// TimelineChars bounds a turn's stored timeline (JSON).
	TimelineChars = 5_000_000
	// AttachmentsChars bounds a message's attachments (JSON, thumbnails included).
	AttachmentsChars = 100_000
	// UsageChars bounds a turn's usage (JSON).
	UsageChars = 65_536
	// InstructionChars bounds an automation's instruction.
	InstructionChars = 4000
	// ArgumentsChars bounds an automation's arguments (JSON).
	ArgumentsChars = 2048
	// RefreshErrorChars bounds the reason an automation's refresh failed.
	RefreshErrorChars = 2000
)

func str(key string, size int) Column { return Column{Key: key, Type: "string", Size: size} }

// Chat returns the chat database's tables (a new slice on every call).
func Chat() []Table {
	return []Table{
		{Conversations, "Conversations", []Column{
			{Key: "user_id", Type: "string", Size: 36, Required: true}, str("title", 256), str("message", FirstMessageChars),
			{Key: "active_at", Type: "datetime"}, str("automation_id", 36), {Key: "read_at", Type: "datetime"},
		}},
		{Messages, "Messages", []Column{
			{Key: "user_id", Type: "string", Size: 36, Required: true}, {Key: "conversation_id", Type: "string", Size: 36, Required: true},
			{Key: "role", Type: "string", Size: 16, Required: true}, str("content", ContentChars), str("status", 16),
			str("turn_id", 36), str("execution_id", 36), str("attachments", AttachmentsChars), str("timeline", TimelineChars),
			str("error", 10_000), str("usage", UsageChars),
		}},
		{Memories, "Memories", []Column{
			{Key: "user_id", Type: "string", Size: 36, Required: true}, {Key: "key", Type: "string", Size: 128, Required: true},
			str("content", 8192), str("category", 16), {Key: "priority", Type: "integer"}, {Key: "active", Type: "boolean"},
		}},
		{Settings, "Agent settings", []Column{
			{Key: "user_id", Type: "string", Size: 36, Required: true}, str("model", 256), str("base_url", 2048), str("api_key", 4096),
		}},
		{MCPConnections, "MCP connections", []Column{
			{Key: "user_id", Type: "string", Size: 36, Required: true}, {Key: "connection_id", Type: "string", Size: 36, Required: true},
			str("name", 256), str("url", 2048), str("description", 2048), str("tokens", 65_536), str("client_info", 65_536),
		}},
		{Automations, "Automations", []Column{
			{Key: "user_id", Type: "string", Size: 36, Required: true}, str("conversation_id", 36), str("connection_id", 36),
			str("event", 128), str("arguments", ArgumentsChars), str("instruction", InstructionChars), str("status", 16),
			str("pause_reason", 16), str("secret", 512), str("subscription_id", 64), {Key: "subscribed", Type: "boolean"},
			{Key: "refresh_before", Type: "datetime"}, {Key: "refreshed_at", Type: "datetime"}, str("refresh_error", RefreshErrorChars),
			{Key: "generation", Type: "integer"},
		}},
		{AutomationRuns, "Automation runs", []Column{
			{Key: "user_id", Type: "string", Size: 36, Required: true}, {Key: "automation_id", Type: "string", Size: 36, Required: true},
			str("webhook_id", 256), str("window", 64), str("status", 16),
			{Key: "prompt_tokens", Type: "integer"}, {Key: "completion_tokens", Type: "integer"}, {Key: "total_tokens", Type: "integer"},
		}},
	}
}

// Columns of turn's progress table.
const (
	ProgressTurnID  = "turn_id"
	ProgressSeq     = "seq"
	ProgressType    = "type"
	ProgressPayload = "payload"
	ProgressTime    = "time"
	// ProgressPayloadChars is the size of the payload column.
	ProgressPayloadChars = 1_000_000
)

// DefaultProgressTable is the progress table's id a deploy creates (TURN_PROGRESS_TABLE), in the chat's
// database.
const DefaultProgressTable = "turn_progress"

// Progress returns turn's progress table with id: one row per timeline event, readable by the calling user.
func Progress(id string) Table {
	return Table{ID: id, Name: "Turn progress", Columns: []Column{
		{Key: ProgressTurnID, Type: "string", Size: 64, Required: true},
		{Key: ProgressSeq, Type: "integer", Required: true},
		{Key: ProgressType, Type: "string", Size: 32, Required: true},
		{Key: ProgressPayload, Type: "string", Size: ProgressPayloadChars, Required: true},
		{Key: ProgressTime, Type: "datetime", Required: true},
	}}
}
