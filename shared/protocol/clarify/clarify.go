// Package clarify implements the appwrite.clarify/v1 protocol: structured
// follow-up questions (choice, confirm, text) that the agent's clarify tool
// returns and the Appwrite Console renders as a form; the user's answers come
// back on the next turn as ordinary message text.
//
// Validate and Result take the tool arguments (prompts: a JSON string
// holding one prompt object or an array of them; title: optional) and
// reproduce the Python engine (app/graph/clarify.py) byte for byte: defaults
// (required=true, allowMultiple=false, confirmLabel "Confirm", cancelLabel
// "Cancel", danger=false, multiline=false), stripped strings, length limits
// counted in code points, key order protocol, prompts, title, and the exact
// error messages.
//
// The wire format is documented in docs/clarify-protocol.md.
package clarify

import (
	"encoding/json"

	"appwrite-agent/shared/protocol/internal/toolarg"
	"appwrite-agent/shared/pyjson"
)

// Protocol is the wire protocol id.
const Protocol = "appwrite.clarify/v1"

// ErrorPrefix starts every error result of the clarify tool.
const ErrorPrefix = "Error: invalid clarify prompts — "

// Limits, as in the Python engine. Lengths are in code points, after strip.
const (
	MaxPrompts     = 5
	MinOptions     = 2
	MaxOptions     = 12
	MaxQuestion    = 500
	MaxHint        = 500
	MaxLabel       = 120
	MaxDescription = 300
	MaxPlaceholder = 200
	MaxDefault     = 2000
	MaxTitle       = 120
	MaxIDLength    = 64
)

// IDPattern is the pattern prompt ids and option ids must match.
const IDPattern = "^[a-z][a-z0-9_.-]{0,63}$"

// ToolName is the name of the tool the model calls.
const ToolName = "clarify"

// ToolDescription is the tool description given to the model.
const ToolDescription = `Ask the user a structured follow-up in the Console (choices, confirm, text).

Use when a required detail is missing or before destructive deletes. Do not
guess permissions or invent slug IDs. Prefer unique() without clarifying for
routine creates/uploads (especially file_id when attachments are present).
Never use a choice of "auto vs custom ID" — that cannot collect a custom
value; use kind=text with defaultValue unique() if the user must pick an ID.
After a successful call, stop mutating this turn; wait for the user's next
message with answers. The tool result is the canonical JSON envelope the
Console parses from tool_end.`

// PromptsDescription describes the prompts parameter.
const PromptsDescription = "JSON array (or single object) of clarify prompts for the Console UI. " +
	"Each object needs id, kind (choice|confirm|text), and question. " +
	"choice also needs options[{id,label,description?}]; confirm may set " +
	"danger/confirmLabel/cancelLabel; text may set placeholder/defaultValue/" +
	"multiline. Optional hint and required on any kind. " +
	"Examples: " +
	`[{"id":"bucket","kind":"choice","question":"Which bucket?",` +
	`"options":[{"id":"a","label":"avatars"},{"id":"u","label":"uploads"}]}] or ` +
	`[{"id":"confirm_delete","kind":"confirm","question":"Delete this bucket?",` +
	`"danger":true,"confirmLabel":"Delete"}] or ` +
	`[{"id":"name","kind":"text","question":"Database name","placeholder":"main"}]. ` +
	"Full contract: docs/clarify-protocol.md (protocol appwrite.clarify/v1)."

// TitleDescription describes the title parameter.
const TitleDescription = "Optional short form title shown above the prompts"

// ToolSchema returns the JSON Schema of the tool's arguments: prompts
// (string, required) and title (string, optional).
func ToolSchema() json.RawMessage {
	b := []byte(`{"type":"object","properties":{"prompts":{"type":"string","description":`)
	b = pyjson.AppendString(b, PromptsDescription)
	b = append(b, `},"title":{"type":"string","description":`...)
	b = pyjson.AppendString(b, TitleDescription)
	b = append(b, `,"default":""}},"required":["prompts"],"additionalProperties":false}`...)
	return json.RawMessage(b)
}

// Call runs the tool on the model's raw call arguments {"prompts": …,
// "title": …} and returns the tool result. prompts is normally a JSON string;
// an object or array given directly is accepted too. A prompts value of any
// other type (or missing) gives "prompts must be a JSON string, object, or
// array"; a title that is neither a string nor null gives "title must be a
// string" (the Python tool's argument schema refuses it before the validator
// runs).
func Call(args json.RawMessage) string {
	v, list, err := promptList.FromCall(args)
	if err != nil {
		return ErrorPrefix + err.Error()
	}
	title := ""
	switch tv := v.Lookup("title"); tv.Kind() {
	case pyjson.Null:
	case pyjson.String:
		title = tv.Text()
	default:
		return ErrorPrefix + "title must be a string"
	}
	env, err := envelope(list, title)
	return toolarg.Result(ErrorPrefix, env, err)
}
