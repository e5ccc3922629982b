package clarify

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"appwrite-agent/shared/protocol/internal/toolarg"
	"appwrite-agent/shared/pyjson"
)

// Envelope is the tool result: {"protocol","prompts","title"?}.
type Envelope struct {
	// Protocol is always Protocol in what the engine emits.
	Protocol string
	// Prompts holds 1 to MaxPrompts prompts with distinct ids.
	Prompts []Prompt
	// Title is the optional form title ("" omits it). It is written after
	// prompts, as the engine writes it.
	Title string
}

// Prompt is one ClarifyPrompt: Choice, Confirm or Text.
type Prompt interface {
	// PromptKind returns "choice", "confirm" or "text".
	PromptKind() string
	// PromptID returns the prompt id.
	PromptID() string
	// AppendJSON appends the prompt as compact JSON, keys in wire order.
	AppendJSON(b []byte) []byte
	isPrompt()
}

// Option is one choice option.
type Option struct {
	// ID matches IDPattern and is unique within the prompt.
	ID string
	// Label is required, at most MaxLabel characters.
	Label string
	// Description is optional, at most MaxDescription characters.
	Description string
}

// Choice asks the user to pick one option (or several).
type Choice struct {
	// ID matches IDPattern.
	ID string
	// Question is required, at most MaxQuestion characters.
	Question string
	// Hint is optional helper text.
	Hint string
	// Required defaults to true when nil; the engine always writes it.
	Required *bool
	// Options holds MinOptions to MaxOptions options.
	Options []Option
	// AllowMultiple lets the user pick several options.
	AllowMultiple bool
}

// Confirm is a yes/no gate.
type Confirm struct {
	// ID matches IDPattern.
	ID string
	// Question is required.
	Question string
	// Hint is optional helper text.
	Hint string
	// Required defaults to true when nil.
	Required *bool
	// ConfirmLabel defaults to "Confirm".
	ConfirmLabel string
	// CancelLabel defaults to "Cancel".
	CancelLabel string
	// Danger asks for destructive styling.
	Danger bool
}

// Text asks for a free-form value.
type Text struct {
	// ID matches IDPattern.
	ID string
	// Question is required.
	Question string
	// Hint is optional helper text.
	Hint string
	// Required defaults to true when nil.
	Required *bool
	// Placeholder is optional, at most MaxPlaceholder characters.
	Placeholder string
	// DefaultValue is optional, at most MaxDefault characters.
	DefaultValue string
	// Multiline asks for a text area.
	Multiline bool
}

func (Choice) isPrompt()  {}
func (Confirm) isPrompt() {}
func (Text) isPrompt()    {}

// PromptKind returns "choice".
func (Choice) PromptKind() string { return "choice" }

// PromptKind returns "confirm".
func (Confirm) PromptKind() string { return "confirm" }

// PromptKind returns "text".
func (Text) PromptKind() string { return "text" }

// PromptID returns the prompt id.
func (p Choice) PromptID() string { return p.ID }

// PromptID returns the prompt id.
func (p Confirm) PromptID() string { return p.ID }

// PromptID returns the prompt id.
func (p Text) PromptID() string { return p.ID }

// ValidationError is a rejected tool argument; Error returns the message that follows ErrorPrefix, word for word
// as the Python engine words it. It is the same type in every protocol package.
type ValidationError = toolarg.Error

func fail(msg string) error { return toolarg.Fail(msg) }

// ---- encoding ----

// AppendJSON appends the envelope as compact JSON.
func (e Envelope) AppendJSON(b []byte) []byte {
	b = append(b, `{"protocol":`...)
	b = pyjson.AppendString(b, e.Protocol)
	b = pyjson.AppendArray(append(b, `,"prompts":`...), e.Prompts)
	if e.Title != "" {
		b = append(b, `,"title":`...)
		b = pyjson.AppendString(b, e.Title)
	}
	return append(b, '}')
}

// String returns the envelope as compact JSON.
func (e Envelope) String() string { return string(e.AppendJSON(nil)) }

func common(b []byte, id, kind, question, hint string, required *bool) []byte {
	b = append(b, `{"id":`...)
	b = pyjson.AppendString(b, id)
	b = pyjson.AppendStringField(b, "kind", kind)
	b = pyjson.AppendStringField(b, "question", question)
	b = pyjson.AppendOptionalStringField(b, "hint", hint)
	if required != nil {
		b = pyjson.AppendBoolField(b, "required", *required)
	}
	return b
}

// AppendJSON appends {"id","kind":"choice","question","hint"?,"required","options","allowMultiple"}.
func (p Choice) AppendJSON(b []byte) []byte {
	b = common(b, p.ID, "choice", p.Question, p.Hint, p.Required)
	b = append(b, `,"options":[`...)
	for i, o := range p.Options {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = pyjson.AppendString(b, o.ID)
		b = pyjson.AppendStringField(b, "label", o.Label)
		b = pyjson.AppendOptionalStringField(b, "description", o.Description)
		b = append(b, '}')
	}
	b = append(b, ']')
	return append(pyjson.AppendBoolField(b, "allowMultiple", p.AllowMultiple), '}')
}

// AppendJSON appends {"id","kind":"confirm","question","hint"?,"required","confirmLabel","cancelLabel","danger"}.
func (p Confirm) AppendJSON(b []byte) []byte {
	b = common(b, p.ID, "confirm", p.Question, p.Hint, p.Required)
	b = pyjson.AppendOptionalStringField(b, "confirmLabel", p.ConfirmLabel)
	b = pyjson.AppendOptionalStringField(b, "cancelLabel", p.CancelLabel)
	return append(pyjson.AppendBoolField(b, "danger", p.Danger), '}')
}

// AppendJSON appends {"id","kind":"text","question","hint"?,"required","placeholder"?,"defaultValue"?,"multiline"}.
func (p Text) AppendJSON(b []byte) []byte {
	b = common(b, p.ID, "text", p.Question, p.Hint, p.Required)
	b = pyjson.AppendOptionalStringField(b, "placeholder", p.Placeholder)
	b = pyjson.AppendOptionalStringField(b, "defaultValue", p.DefaultValue)
	return append(pyjson.AppendBoolField(b, "multiline", p.Multiline), '}')
}

// ---- validation ----

// promptList is the tool's prompts argument: 1 to MaxPrompts prompts with distinct ids.
var promptList = toolarg.List[Prompt]{Name: "prompts", Noun: "clarify prompts", Max: MaxPrompts, Item: validatePrompt, Across: distinctIDs}

// Validate checks the tool arguments and returns the normalized envelope or a
// *ValidationError with the engine's exact message.
func Validate(prompts, title string) (Envelope, error) {
	list, err := promptList.Parse(prompts)
	if err != nil {
		return Envelope{}, err
	}
	return envelope(list, title)
}

// envelope adds the title to validated prompts.
func envelope(prompts []Prompt, title string) (Envelope, error) {
	t := strings.TrimSpace(title)
	if utf8.RuneCountInString(t) > MaxTitle {
		return Envelope{}, fail("title exceeds 120 characters")
	}
	return Envelope{Protocol: Protocol, Prompts: prompts, Title: t}, nil
}

// Result returns what the clarify tool returns: the envelope, or ErrorPrefix
// followed by the message.
func Result(prompts, title string) string {
	env, err := Validate(prompts, title)
	return toolarg.Result(ErrorPrefix, env, err)
}

// Normalize validates typed prompts exactly as if the model had sent them as
// JSON, and returns the normalized envelope.
func Normalize(title string, prompts ...Prompt) (Envelope, error) {
	return Validate(string(pyjson.AppendArray(nil, prompts)), title)
}

func distinctIDs(prompts []Prompt) error {
	for i := range prompts {
		for j := 0; j < i; j++ {
			if prompts[j].PromptID() == prompts[i].PromptID() {
				return fail("duplicate prompt id " + pyjson.ReprString(prompts[i].PromptID()))
			}
		}
	}
	return nil
}

// prefix is repr(obj.get('kind') or obj.get('id')).
func prefix(raw *pyjson.Value) string {
	if k := raw.Lookup("kind"); k.Truthy() {
		return k.Repr()
	}
	return raw.Lookup("id").Repr()
}

func requireStr(raw *pyjson.Value, key string) (string, error) {
	return toolarg.RequiredString(raw, key, prefix)
}

func optionalStr(raw *pyjson.Value, key string) (string, error) {
	return toolarg.OptionalString(raw, key, prefix)
}

func optionalBool(raw *pyjson.Value, key string, def bool) (bool, error) {
	b, err := toolarg.OptionalBool(raw, key, prefix)
	switch {
	case err != nil:
		return false, err
	case b == nil:
		return def, nil
	}
	return *b, nil
}

// idPattern is IDPattern, compiled on first use.
var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(IDPattern) })

// ValidID reports whether s matches IDPattern.
func ValidID(s string) bool { return idPattern().MatchString(s) }

func requireID(v pyjson.Value, ctx string) (string, error) {
	if v.Kind() != pyjson.String || !ValidID(strings.TrimSpace(v.Text())) {
		return "", fail(ctx + ": id must match ^[a-z][a-z0-9_.-]{0,63}$ (got " + v.Repr() + ")")
	}
	return strings.TrimSpace(v.Text()), nil
}

func validatePrompt(raw *pyjson.Value) (Prompt, error) {
	if raw.Kind() != pyjson.Object {
		return nil, fail("each prompt must be a JSON object")
	}
	kv := raw.Lookup("kind")
	kind := ""
	if kv.Kind() == pyjson.String {
		kind = strings.TrimSpace(kv.Text())
	}
	if kind != "choice" && kind != "confirm" && kind != "text" {
		return nil, fail("unknown or missing kind " + kv.Repr() + "; expected one of ['choice', 'confirm', 'text']")
	}
	id, err := requireID(raw.Lookup("id"), "prompt")
	if err != nil {
		return nil, err
	}
	question, err := requireStr(raw, "question")
	if err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(question) > MaxQuestion {
		return nil, fail("question exceeds 500 characters")
	}
	hint, err := optionalStr(raw, "hint")
	if err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(hint) > MaxHint {
		return nil, fail("hint exceeds 500 characters")
	}
	req, err := optionalBool(raw, "required", true)
	if err != nil {
		return nil, err
	}
	required := &req

	switch kind {
	case "choice":
		ov := raw.Lookup("options")
		options := ov.Elems()
		if ov.Kind() != pyjson.Array || len(options) < MinOptions {
			return nil, fail("choice.options must be an array with at least 2 items")
		}
		if len(options) > MaxOptions {
			return nil, fail("choice.options: at most 12 options")
		}
		opts := make([]Option, 0, len(options))
		for i := range options {
			o, err := validateOption(&options[i], "choice.options["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			opts = append(opts, o)
		}
		for i := range opts {
			for j := 0; j < i; j++ {
				if opts[j].ID == opts[i].ID {
					return nil, fail("choice.options: duplicate id " + pyjson.ReprString(opts[i].ID))
				}
			}
		}
		multi, err := optionalBool(raw, "allowMultiple", false)
		if err != nil {
			return nil, err
		}
		return Choice{ID: id, Question: question, Hint: hint, Required: required, Options: opts, AllowMultiple: multi}, nil

	case "confirm":
		cl, err := optionalStr(raw, "confirmLabel")
		if err != nil {
			return nil, err
		}
		if cl == "" {
			cl = "Confirm"
		}
		xl, err := optionalStr(raw, "cancelLabel")
		if err != nil {
			return nil, err
		}
		if xl == "" {
			xl = "Cancel"
		}
		if utf8.RuneCountInString(cl) > MaxLabel || utf8.RuneCountInString(xl) > MaxLabel {
			return nil, fail("confirm labels exceed 120 characters")
		}
		danger, err := optionalBool(raw, "danger", false)
		if err != nil {
			return nil, err
		}
		return Confirm{ID: id, Question: question, Hint: hint, Required: required, ConfirmLabel: cl, CancelLabel: xl, Danger: danger}, nil
	}

	ph, err := optionalStr(raw, "placeholder")
	if err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(ph) > MaxPlaceholder {
		return nil, fail("placeholder exceeds 200 characters")
	}
	dv, err := optionalStr(raw, "defaultValue")
	if err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(dv) > MaxDefault {
		return nil, fail("defaultValue exceeds 2000 characters")
	}
	ml, err := optionalBool(raw, "multiline", false)
	if err != nil {
		return nil, err
	}
	return Text{ID: id, Question: question, Hint: hint, Required: required, Placeholder: ph, DefaultValue: dv, Multiline: ml}, nil
}

func validateOption(raw *pyjson.Value, ctx string) (Option, error) {
	if raw.Kind() != pyjson.Object {
		return Option{}, fail(ctx + ": option must be an object")
	}
	id, err := requireID(raw.Lookup("id"), ctx+".id")
	if err != nil {
		return Option{}, err
	}
	label, err := requireStr(raw, "label")
	if err != nil {
		return Option{}, err
	}
	if utf8.RuneCountInString(label) > MaxLabel {
		return Option{}, fail(ctx + ": label exceeds 120 characters")
	}
	desc, err := optionalStr(raw, "description")
	if err != nil {
		return Option{}, err
	}
	if utf8.RuneCountInString(desc) > MaxDescription {
		return Option{}, fail(ctx + ": description exceeds 300 characters")
	}
	return Option{ID: id, Label: label, Description: desc}, nil
}
