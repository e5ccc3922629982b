// Package console implements the appwrite.console/v1 protocol: the envelope
// the agent's console tool returns and the Appwrite Console turns into UI
// (theme, navigation, toasts, dialogs, resource cards and lists, usage
// charts, cache refreshes).
//
// Validate and Result take the tool argument, a JSON string holding one
// action object or an array of them (Call takes the model's call arguments),
// and reproduce the Python engine
// (app/graph/console.py) byte for byte: the same normalization (stripped
// strings, lower-cased enums and scopes, "card-" and "#" handling, total
// defaulting, numbers in charts as floats), the same key order, compact JSON
// with UTF-8 left unescaped, and the same error messages. The engine is
// all-or-nothing: any invalid action, including an unknown type, rejects
// the whole call.
//
// The wire format is documented in docs/console-protocol.md.
package console

import (
	"encoding/json"

	"appwrite-agent/shared/protocol/internal/toolarg"
	"appwrite-agent/shared/pyjson"
)

// Protocol is the wire protocol id.
const Protocol = "appwrite.console/v1"

// ErrorPrefix starts every error result of the console tool (the separator
// is an em dash, U+2014).
const ErrorPrefix = "Error: invalid console actions — "

// Limits, as in the Python engine.
const (
	MaxActions      = 20   // actions per call
	MaxListItems    = 50   // rows per resource_list
	MaxMetadata     = 20   // metadata entries per item
	MaxFields       = 40   // fields entries per item
	MaxColumns      = 12   // columns per resource_list
	MaxChartMetrics = 10   // series per chart
	MaxChartPoints  = 5000 // points per series
)

// ToolName is the name of the tool the model calls.
const ToolName = "console"

// ToolDescription is the tool description given to the model.
const ToolDescription = `Post UI metadata to the Appwrite Console (theme, nav, lists, charts, resource cards).

Does NOT create/update/delete Appwrite resources — use MCP for that, then call
console with type=resource so the Console can render a card. For list/query
results (databases, users, buckets, …) use type=resource_list — never dump the
list as markdown. For usage_list_events / usage_list_gauges results use
type=chart (metric network.requests for API requests; always set interval for
time series). Unknown action types are rejected. The tool result is the
canonical JSON envelope the Console parses from the tool_end output.`

// ActionsDescription describes the tool's only parameter, actions.
const ActionsDescription = "JSON array (or single object) of ConsoleAction envelopes for the " +
	"Appwrite Console UI. Each object needs a `type` plus type-specific " +
	"fields. Types: set_theme, navigate, open_create, open_dialog, toast, " +
	"show_pane, toggle_terminal, scroll_to_card, resource, resource_list, " +
	"chart, refresh. " +
	"Examples: " +
	`[{"type":"set_theme","theme":"dark"}] or ` +
	`[{"type":"resource_list","resourceType":"database","items":[` +
	`{"resourceId":"main","title":"Main","href":"/project/x/databases/main"}]}] or ` +
	`[{"type":"resource","mutation":"create","resourceType":"database",` +
	`"resourceId":"db1","title":"Main DB"}] or ` +
	`[{"type":"chart","title":"Requests (last 24 hours)","unitLabel":"requests",` +
	`"interval":"1h","metrics":[{"metric":"network.requests","points":` +
	`[{"time":"2026-08-04T08:00:00Z","value":49}]}]}]. ` +
	"For usage charts: after usage_list_events/gauges, emit type=chart and " +
	"pass metrics through. API request counts use metric network.requests " +
	"(never bare requests). Always set interval for time series. " +
	"Full contract: docs/console-protocol.md (protocol appwrite.console/v1)."

// ToolSchema returns the JSON Schema of the tool's arguments:
// {"actions": string}, required.
func ToolSchema() json.RawMessage {
	b := []byte(`{"type":"object","properties":{"actions":{"type":"string","description":`)
	b = pyjson.AppendString(b, ActionsDescription)
	b = append(b, `}},"required":["actions"],"additionalProperties":false}`...)
	return json.RawMessage(b)
}

// Call runs the tool on the model's raw call arguments, a JSON object
// {"actions": …}, and returns the tool result. actions is normally a JSON
// string; an object or array given directly is accepted too (as the Python
// engine's parse_actions_arg accepts a dict or list). Anything else, a
// missing actions included, gives "actions must be a JSON string, object,
// or array".
func Call(args json.RawMessage) string {
	_, list, err := actionList.FromCall(args)
	return toolarg.Result(ErrorPrefix, Envelope{Protocol: Protocol, Actions: list}, err)
}
