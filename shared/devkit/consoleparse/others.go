package consoleparse

import (
	"encoding/json"

	"appwrite-agent/shared/protocol/clarify"
	"appwrite-agent/shared/protocol/memory"
	"appwrite-agent/shared/protocol/threat"
)

// ClarifyEnvelope is a parsed appwrite.clarify/v1 tool result.
type ClarifyEnvelope struct {
	// Envelope holds the prompts to render, in order.
	clarify.Envelope
	// Skipped lists the prompts left out (unknown kind or malformed).
	Skipped []Skipped
}

// ParseClarifyEnvelope is the Console's parseClarifyEnvelope plus typed
// decoding: nil for "Error:" outputs, another protocol, or prompts that is
// not an array; unknown kinds and malformed prompts are skipped.
func ParseClarifyEnvelope(output string) *ClarifyEnvelope {
	env, prompts, skipped, ok := parseEntries(output, clarify.Protocol, "prompts", parsePrompt)
	if !ok {
		return nil
	}
	title, ok := env.str("title")
	if !ok {
		title = ""
	}
	return &ClarifyEnvelope{Envelope: clarify.Envelope{Protocol: clarify.Protocol, Prompts: prompts, Title: title}, Skipped: skipped}
}

func parsePrompt(raw json.RawMessage) (clarify.Prompt, string, string) {
	o, ok := decodeObject(raw)
	if !ok {
		return nil, "", "not an object"
	}
	kind, _ := o.str("kind")
	bad := func(f string) (clarify.Prompt, string, string) { return nil, kind, "invalid " + f }
	if kind != "choice" && kind != "confirm" && kind != "text" {
		return nil, kind, "unknown kind"
	}
	id, ok := o.reqStr("id")
	if !ok {
		return bad("id")
	}
	q, ok := o.reqStr("question")
	if !ok {
		return bad("question")
	}
	hint, ok := o.str("hint")
	if !ok {
		return bad("hint")
	}
	req, ok := o.optBool("required")
	if !ok {
		return bad("required")
	}
	flag := func(k string) (bool, bool) {
		b, ok := o.optBool(k)
		return b != nil && *b, ok
	}
	switch kind {
	case "choice":
		l, ok := o.list("options")
		if !ok {
			return bad("options")
		}
		p := clarify.Choice{ID: id, Question: q, Hint: hint, Required: req, Options: make([]clarify.Option, 0, len(l))}
		for _, r := range l {
			oo, ok := decodeObject(r)
			if !ok {
				return bad("options")
			}
			oid, ok1 := oo.reqStr("id")
			label, ok2 := oo.reqStr("label")
			desc, ok3 := oo.str("description")
			if !ok1 || !ok2 || !ok3 {
				return bad("options")
			}
			p.Options = append(p.Options, clarify.Option{ID: oid, Label: label, Description: desc})
		}
		if p.AllowMultiple, ok = flag("allowMultiple"); !ok {
			return bad("allowMultiple")
		}
		return p, kind, ""
	case "confirm":
		p := clarify.Confirm{ID: id, Question: q, Hint: hint, Required: req}
		var ok1, ok2, ok3 bool
		p.ConfirmLabel, ok1 = o.str("confirmLabel")
		p.CancelLabel, ok2 = o.str("cancelLabel")
		p.Danger, ok3 = flag("danger")
		if !ok1 || !ok2 || !ok3 {
			return bad("confirm fields")
		}
		return p, kind, ""
	}
	p := clarify.Text{ID: id, Question: q, Hint: hint, Required: req}
	var ok1, ok2, ok3 bool
	p.Placeholder, ok1 = o.str("placeholder")
	p.DefaultValue, ok2 = o.str("defaultValue")
	p.Multiline, ok3 = flag("multiline")
	if !ok1 || !ok2 || !ok3 {
		return bad("text fields")
	}
	return p, kind, ""
}

// MemoryEnvelope is a parsed appwrite.memory/v1 tool result.
type MemoryEnvelope struct {
	// Envelope holds the actions to persist, in order.
	memory.Envelope
	// Skipped lists the actions left out.
	Skipped []Skipped
}

// ParseMemoryEnvelope reads a memory tool result as Cloud is expected to
// (Cloud's code is not public; the rules mirror parseConsoleEnvelope): nil
// for "Error:" outputs, another protocol, or actions that is not an array;
// unknown types and malformed actions are skipped.
func ParseMemoryEnvelope(output string) *MemoryEnvelope {
	_, actions, skipped, ok := parseEntries(output, memory.Protocol, "actions", parseMemoryAction)
	if !ok {
		return nil
	}
	return &MemoryEnvelope{Envelope: memory.Envelope{Protocol: memory.Protocol, Actions: actions}, Skipped: skipped}
}

func parseMemoryAction(raw json.RawMessage) (memory.Action, string, string) {
	o, ok := decodeObject(raw)
	if !ok {
		return nil, "", "not an object"
	}
	typ, _ := o.str("type")
	key, ok1 := o.reqStr("key")
	scope, ok2 := o.reqStr("scope")
	owner, ok3 := o.str("ownerId")
	if !ok1 || !ok2 || !ok3 || !memory.ValidKey(key) {
		return nil, typ, "invalid key, scope or ownerId"
	}
	switch typ {
	case "forget":
		return memory.Forget{Key: key, Scope: scope, OwnerID: owner}, typ, ""
	case "set":
		content, ok1 := o.reqStr("content")
		cat, ok2 := o.reqStr("category")
		n, ok3 := o.num("priority")
		var prio int64
		if ok3 {
			if err := json.Unmarshal([]byte(n), &prio); err != nil || prio < 0 || prio > memory.MaxPriority {
				ok3 = false
			}
		}
		if !ok1 || !ok2 || !ok3 {
			return nil, typ, "invalid set fields"
		}
		return memory.Set{Key: key, Scope: scope, OwnerID: owner, Content: content, Category: cat, Priority: prio}, typ, ""
	}
	return nil, typ, "unknown type"
}

// ParseThreatEnvelope reads a report_threat tool result as Cloud is expected
// to: nil for "Error:" outputs, another protocol, or missing fields.
func ParseThreatEnvelope(output string) *threat.Report {
	env, _, ok := start(output, threat.Protocol, "")
	if !ok {
		return nil
	}
	var r threat.Report
	var ok1, ok2, ok3, ok4 bool
	r.Category, ok1 = env.reqStr("category")
	r.Summary, ok2 = env.reqStr("summary")
	r.Details, ok3 = env.reqStr("details")
	r.Quote, ok4 = env.str("quote")
	if !ok1 || !ok2 || !ok3 || !ok4 || (r.Category != threat.CategoryIllegal && r.Category != threat.CategoryImmoral) {
		return nil
	}
	return &r
}
