// Package memory implements the appwrite.memory/v1 protocol: set and forget
// actions for lasting user preferences and instructions. The agent's memory
// tool returns the envelope; Cloud persists a successful result into its
// agentMemories store and injects active memories on later turns (that part
// is outside the engine).
//
// Validate and Result take the tool argument (a JSON string holding one
// action object or an array of them; Call takes the model's call arguments) and reproduce the Python engine
// (app/graph/memory.py) byte for byte, error messages included.
//
// The wire format is documented in docs/memory-protocol.md.
package memory

import (
	"encoding/json"
	"regexp"
	"strconv"
	"sync"
	"unicode/utf8"

	"appwrite-agent/shared/protocol/internal/toolarg"
	"appwrite-agent/shared/pyjson"
)

// Protocol is the wire protocol id.
const Protocol = "appwrite.memory/v1"

// ErrorPrefix starts every error result of the memory tool.
const ErrorPrefix = "Error: invalid memory actions — "

// Limits, as in the Python engine.
const (
	MaxActions   = 10
	MaxContent   = 8192 // code points, after strip
	MaxPriority  = 1000000
	MinKeyLength = 2
	MaxKeyLength = 128
)

// KeyPattern is the pattern memory keys must match.
const KeyPattern = "^[a-z][a-z0-9_.-]{1,127}$"

// Scopes. Only ScopeUser is writable; the others are reserved.
const (
	ScopeUser    = "user"
	ScopeTeam    = "team"
	ScopeProject = "project"
)

// Categories of a set action.
const (
	CategoryPreference  = "preference"
	CategoryInstruction = "instruction"
	CategoryFact        = "fact"
)

// ToolName is the name of the tool the model calls.
const ToolName = "memory"

// ToolDescription is the tool description given to the model.
const ToolDescription = `Save or forget lasting user preferences and instructions across conversations.

Cloud persists successful calls into agent memory (injected on later turns).
Prefer one clear key per fact and update it instead of creating duplicates.`

// ActionsDescription describes the actions parameter.
const ActionsDescription = "JSON array (or single object) of memory actions to remember or forget. " +
	"Each object needs type=set|forget and a stable key matching " +
	"^[a-z][a-z0-9_.-]{1,127}$ (e.g. style.concise, prefer.region). " +
	"For type=set also pass content (required) and optional category " +
	"(preference|instruction|fact, default preference), priority (int, " +
	"higher kept first under budget), and scope (only user is supported). " +
	"For type=forget pass key (+ optional scope=user). " +
	"Examples: " +
	`[{"type":"set","key":"style.concise","content":"Prefer concise answers",` +
	`"category":"preference","priority":10}] or ` +
	`[{"type":"forget","key":"style.concise"}]. ` +
	"Use when the user states a lasting preference/instruction, or asks " +
	"you to remember or forget something across conversations. Do not store " +
	"secrets, one-off task details, or transient console context."

// ToolSchema returns the JSON Schema of the tool's arguments: {"actions": string}.
func ToolSchema() json.RawMessage {
	b := []byte(`{"type":"object","properties":{"actions":{"type":"string","description":`)
	b = pyjson.AppendString(b, ActionsDescription)
	b = append(b, `}},"required":["actions"],"additionalProperties":false}`...)
	return json.RawMessage(b)
}

// Envelope is the tool result: {"protocol","actions"}.
type Envelope struct {
	// Protocol is always Protocol in what the engine emits.
	Protocol string
	// Actions holds 1 to MaxActions actions.
	Actions []Action
}

// Action is Set or Forget.
type Action interface {
	// ActionType returns "set" or "forget".
	ActionType() string
	// AppendJSON appends the action as compact JSON, keys in wire order.
	AppendJSON(b []byte) []byte
	isAction()
}

// Set remembers content under a key.
type Set struct {
	// Key matches KeyPattern.
	Key string
	// Scope defaults to "user" ("" means default).
	Scope string
	// OwnerID is optional and passed through.
	OwnerID string
	// Content is required, at most MaxContent characters.
	Content string
	// Category is preference (default), instruction or fact.
	Category string
	// Priority is 0..MaxPriority; higher is kept first under Cloud's budget.
	Priority int64
}

// Forget removes the memory under a key.
type Forget struct {
	// Key matches KeyPattern.
	Key string
	// Scope defaults to "user".
	Scope string
	// OwnerID is optional and passed through.
	OwnerID string
}

func (Set) isAction()    {}
func (Forget) isAction() {}

// ActionType returns "set".
func (Set) ActionType() string { return "set" }

// ActionType returns "forget".
func (Forget) ActionType() string { return "forget" }

func head(b []byte, t, key, scope, owner string) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, t...)
	b = append(b, '"')
	b = pyjson.AppendStringField(b, "key", key)
	if scope != "" {
		b = pyjson.AppendStringField(b, "scope", scope)
	}
	if owner != "" {
		b = pyjson.AppendStringField(b, "ownerId", owner)
	}
	return b
}

// AppendJSON appends {"type":"set","key","scope","ownerId"?,"content","category","priority"}.
func (a Set) AppendJSON(b []byte) []byte {
	b = head(b, "set", a.Key, a.Scope, a.OwnerID)
	b = pyjson.AppendStringField(b, "content", a.Content)
	if a.Category != "" {
		b = pyjson.AppendStringField(b, "category", a.Category)
	}
	b = append(b, `,"priority":`...)
	b = strconv.AppendInt(b, a.Priority, 10)
	return append(b, '}')
}

// AppendJSON appends {"type":"forget","key","scope","ownerId"?}.
func (a Forget) AppendJSON(b []byte) []byte {
	return append(head(b, "forget", a.Key, a.Scope, a.OwnerID), '}')
}

// AppendJSON appends the envelope as compact JSON.
func (e Envelope) AppendJSON(b []byte) []byte {
	b = append(b, `{"protocol":`...)
	b = pyjson.AppendString(b, e.Protocol)
	b = pyjson.AppendArray(append(b, `,"actions":`...), e.Actions)
	return append(b, '}')
}

// String returns the envelope as compact JSON.
func (e Envelope) String() string { return string(e.AppendJSON(nil)) }

// ValidationError is a rejected tool argument; Error returns the message that follows ErrorPrefix, word for word
// as the Python engine words it. It is the same type in every protocol package.
type ValidationError = toolarg.Error

func fail(msg string) error { return toolarg.Fail(msg) }

// actionList is the tool's argument: 1 to MaxActions actions.
var actionList = toolarg.List[Action]{Name: "actions", Noun: "memory actions", Max: MaxActions, Item: validateAction}

// Validate checks the tool argument and returns the normalized envelope or a
// *ValidationError with the engine's exact message.
func Validate(actions string) (Envelope, error) {
	list, err := actionList.Parse(actions)
	if err != nil {
		return Envelope{}, err
	}
	return Envelope{Protocol: Protocol, Actions: list}, nil
}

// Result returns what the memory tool returns: the envelope, or ErrorPrefix
// followed by the message.
func Result(actions string) string {
	env, err := Validate(actions)
	return toolarg.Result(ErrorPrefix, env, err)
}

// Normalize validates typed actions exactly as if the model had sent them as JSON.
func Normalize(actions ...Action) (Envelope, error) {
	return Validate(string(pyjson.AppendArray(nil, actions)))
}

// Call runs the tool on the model's raw call arguments {"actions": …}. An
// object or array given directly as actions is accepted too; anything else
// gives "actions must be a JSON string, object, or array".
func Call(args json.RawMessage) string {
	_, list, err := actionList.FromCall(args)
	return toolarg.Result(ErrorPrefix, Envelope{Protocol: Protocol, Actions: list}, err)
}

// keyPattern is KeyPattern, compiled on first use.
var keyPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(KeyPattern) })

// ValidKey reports whether s matches KeyPattern.
func ValidKey(s string) bool { return keyPattern().MatchString(s) }

func prefix(raw *pyjson.Value) string { return raw.Lookup("type").Repr() }

func requireStr(raw *pyjson.Value, key string) (string, error) {
	return toolarg.RequiredString(raw, key, prefix)
}

func optionalStr(raw *pyjson.Value, key string) (string, error) {
	return toolarg.OptionalString(raw, key, prefix)
}

func validateAction(raw *pyjson.Value) (Action, error) {
	if raw.Kind() != pyjson.Object {
		return nil, fail("each action must be an object")
	}
	tv := raw.Lookup("type")
	if tv.Kind() != pyjson.String || (tv.Text() != "set" && tv.Text() != "forget") {
		return nil, fail("type must be one of ['forget', 'set']; got " + tv.Repr())
	}
	key, err := requireStr(raw, "key")
	if err != nil {
		return nil, err
	}
	if !ValidKey(key) {
		return nil, fail("key must match ^[a-z][a-z0-9_.-]{1,127}$ (got " + pyjson.ReprString(key) + ")")
	}
	scope, err := optionalStr(raw, "scope")
	if err != nil {
		return nil, err
	}
	if scope == "" {
		scope = ScopeUser
	}
	if scope != ScopeUser && scope != ScopeTeam && scope != ScopeProject {
		return nil, fail("scope must be one of ['project', 'team', 'user']")
	}
	if scope != ScopeUser {
		return nil, fail("scope=" + pyjson.ReprString(scope) + " is reserved; only scope=user is supported currently")
	}
	owner, err := optionalStr(raw, "ownerId")
	if err != nil {
		return nil, err
	}
	if tv.Text() == "forget" {
		for _, k := range []string{"content", "category", "priority"} {
			if v, ok := raw.Get(k); ok && v.Kind() != pyjson.Null {
				return nil, fail("forget actions must not include " + k)
			}
		}
		return Forget{Key: key, Scope: scope, OwnerID: owner}, nil
	}
	content, err := requireStr(raw, "content")
	if err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(content) > MaxContent {
		return nil, fail("content exceeds 8192 characters")
	}
	category, err := optionalStr(raw, "category")
	if err != nil {
		return nil, err
	}
	if category == "" {
		category = CategoryPreference
	}
	if category != CategoryPreference && category != CategoryInstruction && category != CategoryFact {
		return nil, fail("category must be one of ['fact', 'instruction', 'preference']")
	}
	var priority int64
	switch pv := raw.Lookup("priority"); pv.Kind() {
	case pyjson.Null:
	case pyjson.Int:
		n, err := strconv.ParseInt(pv.Text(), 10, 64)
		if err != nil || n < 0 || n > MaxPriority {
			return nil, fail("priority must be between 0 and 1000000")
		}
		priority = n
	default:
		return nil, fail(prefix(raw) + ": priority must be an integer")
	}
	return Set{Key: key, Scope: scope, OwnerID: owner, Content: content, Category: category, Priority: priority}, nil
}
