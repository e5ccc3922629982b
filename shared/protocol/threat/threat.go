// Package threat implements the appwrite.threat/v1 protocol: the abuse report
// the agent's report_threat tool returns when a user's request is a clear
// illegal or immoral ask. Cloud creates a threats document (and alerts) from
// a successful result.
//
// Validate and Result reproduce the Python engine (app/graph/threat.py)
// byte for byte: category lower-cased, strings stripped, length limits in
// code points, a flat envelope {"protocol","category","summary","details",
// "quote"?}, and the exact error messages.
package threat

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"appwrite-agent/shared/protocol/internal/toolarg"
	"appwrite-agent/shared/pyjson"
)

// Protocol is the wire protocol id.
const Protocol = "appwrite.threat/v1"

// ErrorPrefix starts every error result of the report_threat tool.
const ErrorPrefix = "Error: invalid threat report — "

// Limits, in code points after strip.
const (
	MaxSummary = 280
	MaxDetails = 4000
	MaxQuote   = 1000
)

// Categories.
const (
	CategoryIllegal = "illegal"
	CategoryImmoral = "immoral"
)

// ToolName is the name of the tool the model calls.
const ToolName = "report_threat"

// ToolDescription is the tool description given to the model.
const ToolDescription = `Report a clear illegal or immoral user request for Cloud abuse review.

Call only when the user's ask is an unambiguous violation — not edgy
jokes, hypothetical defensive security research, legal grey areas, or
controversial-but-lawful topics. Refuse to help in your spoken answer
and call this tool once. Cloud creates a threat alert from the envelope.`

// Parameter descriptions.
const (
	CategoryDescription = "illegal or immoral. Use illegal for clear law-breaking asks " +
		"(fraud, malware, unauthorized access, CSAM, violence for crime, " +
		"trafficking, etc.). Use immoral for clear severe harm/abuse that " +
		"may not be a crime but is an obvious policy violation (scams, " +
		"social-engineering attacks, targeted harassment campaigns)."
	SummaryDescription = "One short line describing the violation (max ~280 chars)."
	DetailsDescription = "What the user asked for and why it is a clear violation. Be " +
		"specific; do not invent facts beyond the turn."
	QuoteDescription = "Optional short quote from the user's message that shows the ask."
)

// ToolSchema returns the JSON Schema of the tool's arguments: category,
// summary and details (strings, required) and quote (string, optional).
func ToolSchema() json.RawMessage {
	b := []byte(`{"type":"object","properties":{`)
	for i, p := range [][2]string{{"category", CategoryDescription}, {"summary", SummaryDescription},
		{"details", DetailsDescription}, {"quote", QuoteDescription}} {
		if i > 0 {
			b = append(b, ',')
		}
		b = pyjson.AppendString(b, p[0])
		b = append(b, `:{"type":"string","description":`...)
		b = pyjson.AppendString(b, p[1])
		if p[0] == "category" {
			b = append(b, `,"enum":["illegal","immoral"]`...)
		}
		if p[0] == "quote" {
			b = append(b, `,"default":""`...)
		}
		b = append(b, '}')
	}
	b = append(b, `},"required":["category","summary","details"],"additionalProperties":false}`...)
	return json.RawMessage(b)
}

// Report is the validated report; the envelope is the report with the
// protocol id in front.
type Report struct {
	// Category is illegal or immoral (lower-cased).
	Category string
	// Summary is one line, at most MaxSummary characters.
	Summary string
	// Details says what was asked and why it is a violation, at most MaxDetails.
	Details string
	// Quote is optional, at most MaxQuote characters.
	Quote string
}

// AppendJSON appends the envelope {"protocol","category","summary","details","quote"?}.
func (r Report) AppendJSON(b []byte) []byte {
	b = append(b, `{"protocol":`...)
	b = pyjson.AppendString(b, Protocol)
	b = append(b, `,"category":`...)
	b = pyjson.AppendString(b, r.Category)
	b = append(b, `,"summary":`...)
	b = pyjson.AppendString(b, r.Summary)
	b = append(b, `,"details":`...)
	b = pyjson.AppendString(b, r.Details)
	if r.Quote != "" {
		b = append(b, `,"quote":`...)
		b = pyjson.AppendString(b, r.Quote)
	}
	return append(b, '}')
}

// String returns the envelope as compact JSON.
func (r Report) String() string { return string(r.AppendJSON(nil)) }

// ValidationError is a rejected report; Error returns the message that follows ErrorPrefix, word for word
// as the Python engine words it. It is the same type in every protocol package.
type ValidationError = toolarg.Error

func fail(msg string) error { return toolarg.Fail(msg) }

// Validate checks a report given as JSON text (the tool call's arguments
// object, or parse_report_arg's string) and returns it normalized.
func Validate(report string) (Report, error) {
	v, err := toolarg.Decode(report, "report")
	if err != nil {
		return Report{}, err
	}
	return validate(&v)
}

// Result returns what the report_threat tool returns: the envelope, or
// ErrorPrefix followed by the message.
func Result(report string) string {
	r, err := Validate(report)
	return toolarg.Result(ErrorPrefix, r, err)
}

// Call runs the tool on the model's raw call arguments
// {"category","summary","details","quote"?}; it is Result of the arguments.
func Call(args json.RawMessage) string { return Result(string(args)) }

// Normalize validates a typed report as emit_threat_report does.
func Normalize(r Report) (Report, error) {
	v := pyjson.ObjectValue([]pyjson.Member{
		{Key: "category", Value: pyjson.StringValue(r.Category)},
		{Key: "summary", Value: pyjson.StringValue(r.Summary)},
		{Key: "details", Value: pyjson.StringValue(r.Details)},
		{Key: "quote", Value: pyjson.StringValue(r.Quote)},
	})
	return validate(&v)
}

func requireStr(raw *pyjson.Value, key string) (string, error) {
	return toolarg.RequiredString(raw, key, nil)
}

func validate(raw *pyjson.Value) (Report, error) {
	if raw.Kind() != pyjson.Object {
		return Report{}, fail("report must be an object")
	}
	cat, err := requireStr(raw, "category")
	if err != nil {
		return Report{}, err
	}
	cat = strings.ToLower(cat)
	if cat != CategoryIllegal && cat != CategoryImmoral {
		return Report{}, fail("category must be one of ['illegal', 'immoral']; got " + pyjson.ReprString(cat))
	}
	r := Report{Category: cat}
	if r.Summary, err = requireStr(raw, "summary"); err != nil {
		return Report{}, err
	}
	if utf8.RuneCountInString(r.Summary) > MaxSummary {
		return Report{}, fail("summary exceeds 280 characters")
	}
	if r.Details, err = requireStr(raw, "details"); err != nil {
		return Report{}, err
	}
	if utf8.RuneCountInString(r.Details) > MaxDetails {
		return Report{}, fail("details exceeds 4000 characters")
	}
	switch q := raw.Lookup("quote"); q.Kind() {
	case pyjson.Null:
	case pyjson.String:
		r.Quote = strings.TrimSpace(q.Text())
		if utf8.RuneCountInString(r.Quote) > MaxQuote {
			return Report{}, fail("quote exceeds 1000 characters")
		}
	default:
		return Report{}, fail("quote must be a string")
	}
	return r, nil
}
