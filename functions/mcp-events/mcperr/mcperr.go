// Package mcperr holds the JSON-RPC error codes of the MCP events extension and the error value the events
// methods answer with.
//
// Two numberings exist (reference: SEP-3415 and the working-group design sketch). They are kept behind
// constants and chosen by configuration: the design-sketch numbers (ChatGPT's profile) by default, the SEP
// numbers with MCP_EVENTS_ERROR_CODES=sep.
package mcperr

import (
	"errors"
	"fmt"
)

// JSON-RPC codes shared by both numberings.
const (
	// CodeInvalidParams is JSON-RPC's invalid params (-32602).
	CodeInvalidParams = -32602
	// CodeMethodNotFound is JSON-RPC's method not found (-32601).
	CodeMethodNotFound = -32601
	// CodeInternal is JSON-RPC's internal error (-32603).
	CodeInternal = -32603
)

// Design-sketch numbers (the default).
const (
	SketchNotFound              = -32011
	SketchForbidden             = -32012
	SketchResourceExhausted     = -32013
	SketchUnsupported           = -32014
	SketchCallbackEndpointError = -32015
)

// SEP-3415 numbers (provisional).
const (
	SEPNotFound              = -32023
	SEPForbidden             = -32024
	SEPResourceExhausted     = -32025
	SEPUnsupported           = -32026
	SEPCallbackEndpointError = -32027
)

// Kind names an error of the events extension independently of its number.
type Kind string

// The kinds of the extension's error table.
const (
	InvalidParams         Kind = "InvalidParams"
	NotFound              Kind = "NotFound"
	Forbidden             Kind = "Forbidden"
	ResourceExhausted     Kind = "ResourceExhausted"
	Unsupported           Kind = "Unsupported"
	CallbackEndpointError Kind = "CallbackEndpointError"
	Internal              Kind = "Internal"
)

// Numbering maps kinds to JSON-RPC codes.
type Numbering struct {
	// Name is "sketch" or "sep".
	Name                                                                       string
	NotFound, Forbidden, ResourceExhausted, Unsupported, CallbackEndpointError int
}

// Sketch is the design-sketch numbering (-32011...-32015), the default.
var Sketch = Numbering{"sketch", SketchNotFound, SketchForbidden, SketchResourceExhausted, SketchUnsupported, SketchCallbackEndpointError}

// SEP is the SEP-3415 numbering (-32023...-32027).
var SEP = Numbering{"sep", SEPNotFound, SEPForbidden, SEPResourceExhausted, SEPUnsupported, SEPCallbackEndpointError}

// ParseNumbering returns the numbering named "sketch" (or empty) or "sep".
func ParseNumbering(name string) (Numbering, error) {
	switch name {
	case "", "sketch":
		return Sketch, nil
	case "sep":
		return SEP, nil
	default:
		return Numbering{}, fmt.Errorf("unknown error numbering %q (want sketch or sep)", name)
	}
}

// Code returns the JSON-RPC code of kind k.
func (n Numbering) Code(k Kind) int {
	switch k {
	case InvalidParams:
		return CodeInvalidParams
	case NotFound:
		return n.NotFound
	case Forbidden:
		return n.Forbidden
	case ResourceExhausted:
		return n.ResourceExhausted
	case Unsupported:
		return n.Unsupported
	case CallbackEndpointError:
		return n.CallbackEndpointError
	default:
		return CodeInternal
	}
}

// Callback endpoint failure reasons (data.reason of CallbackEndpointError).
const (
	ReasonChallengeFailed   = "challenge_failed"
	ReasonTimeout           = "timeout"
	ReasonConnectionRefused = "connection_refused"
	ReasonTLSError          = "tls_error"
	ReasonHTTP4xx           = "http_4xx"
	ReasonHTTP5xx           = "http_5xx"
)

// Error is an events-method failure: its kind, a message for the client and optional data.
type Error struct {
	Kind    Kind
	Message string
	Data    map[string]any
	// StepUp, on a Forbidden error caused by the caller's token lacking scopes, lists the scopes the call
	// needs: the server answers HTTP 403 with an insufficient_scope challenge naming them. Never on the wire.
	StepUp []string
	// Fault, on an Internal error, is a short machine-readable cause for operators (appwrite_503,
	// appwrite_unreachable, ...): the reason tag of fault reports. Never on the wire.
	Fault string
}

// FaultReason returns e's fault cause, "internal" when none was recorded.
func (e *Error) FaultReason() string {
	if e.Fault != "" {
		return e.Fault
	}
	return "internal"
}

// Error implements error: the kind and the message.
func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

// New returns an *Error of kind k.
func New(k Kind, data map[string]any, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...), Data: data}
}

// Invalid returns an InvalidParams error; field, when not empty, is put in data.field.
func Invalid(field, format string, args ...any) *Error {
	var data map[string]any
	if field != "" {
		data = map[string]any{"field": field}
	}
	return New(InvalidParams, data, format, args...)
}

// Callback returns a CallbackEndpointError with data.reason.
func Callback(reason, format string, args ...any) *Error {
	return New(CallbackEndpointError, map[string]any{"reason": reason}, format, args...)
}

// As returns err as an *Error, wrapping anything else as Internal with a generic message (the detail stays in
// the logs, never in the answer).
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: Internal, Message: "internal error"}
}

// WireError is the JSON-RPC error object.
type WireError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// Wire renders e with numbering n.
func (n Numbering) Wire(e *Error) WireError {
	return WireError{Code: n.Code(e.Kind), Message: e.Message, Data: e.Data}
}

// InsufficientScope returns a Forbidden error for a token that lacks scopes: missing lists each unmet
// requirement ("a or b", shown in data.missingScopes), stepUp the scopes to ask for.
func InsufficientScope(missing, stepUp []string, format string, args ...any) *Error {
	e := New(Forbidden, map[string]any{"missingScopes": missing}, format, args...)
	e.StepUp = stepUp
	return e
}
