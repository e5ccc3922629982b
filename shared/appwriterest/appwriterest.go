// Package appwriterest sends one request to Appwrite's REST API: a JSON body, Appwrite's error answer
// ({"message","code","type"}) returned as an *Error, and a bounded answer decoded into the caller's value.
// Authentication and the paths are the caller's: each function keeps its own small client of the endpoints it
// uses on top of Do.
package appwriterest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Error is an Appwrite API error or a transport failure (Status 0).
type Error struct {
	// Status is the HTTP status; 0 when no answer arrived.
	Status int
	// Type is Appwrite's error type, e.g. "row_not_found"; "invalid_response" when a 2xx answer is not the
	// expected JSON or is larger than the request allows.
	Type string
	// Message is Appwrite's message (or the start of a non-JSON error answer).
	Message string
	// Err is the transport error when Status is 0.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("appwrite: %v", e.Err)
	}
	return fmt.Sprintf("appwrite: HTTP %d %s: %s", e.Status, e.Type, e.Message)
}

// Unwrap returns the transport error.
func (e *Error) Unwrap() error { return e.Err }

// StatusOf returns the HTTP status of an *Error in err's chain, or 0.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// TypeOf returns the Appwrite error type of an *Error in err's chain, or "".
func TypeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Type
	}
	return ""
}

// Request is one call.
type Request struct {
	// Method and URL of the call (the URL with its query).
	Method, URL string
	// Header is sent as given (project, authentication, response format); Content-Type and Accept are set here.
	Header http.Header
	// Body, when not nil, is sent as JSON.
	Body any
	// MaxAnswer bounds the answer read, in bytes: a larger 2xx answer to decode is an error, never a truncated
	// value (an error answer keeps its status, with what could be read of its message).
	MaxAnswer int64
}

// Do sends r with hc and decodes a 2xx answer into out (nil: the answer is read and dropped). An answer of 300
// or more is an *Error with Appwrite's type and message; a transport failure is an *Error with Status 0 that
// names the method and URL.
func Do(ctx context.Context, hc *http.Client, r Request, out any) error {
	var rd io.Reader
	if r.Body != nil {
		b, err := json.Marshal(r.Body)
		if err != nil {
			return &Error{Err: fmt.Errorf("encode %s %s: %w", r.Method, r.URL, err)}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, rd)
	if err != nil {
		return &Error{Err: err}
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := hc.Do(req)
	if err != nil {
		return &Error{Err: err} // *url.Error names the method and URL
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, r.MaxAnswer+1))
	if err != nil {
		return &Error{Err: fmt.Errorf("%s %s: read answer: %w", r.Method, r.URL, err)}
	}
	if res.StatusCode >= 300 {
		return ErrorOf(res.StatusCode, raw)
	}
	if out == nil || len(raw) == 0 {
		return nil // an answer nobody decodes is read only as far as the bound
	}
	if int64(len(raw)) > r.MaxAnswer {
		return &Error{Status: res.StatusCode, Type: "invalid_response", Message: fmt.Sprintf("the answer is over %d bytes", r.MaxAnswer)}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &Error{Status: res.StatusCode, Type: "invalid_response", Message: "the answer is not the expected JSON: " + err.Error()}
	}
	return nil
}

// ErrorOf is the *Error of an answer of status (300 or more) whose body is raw: Appwrite's type and message
// ({"message","code","type"}), or the start of a body that is not that JSON.
func ErrorOf(status int, raw []byte) *Error {
	e := &Error{Status: status}
	var b struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	}
	if json.Unmarshal(raw, &b) == nil {
		e.Type, e.Message = b.Type, b.Message
	} else {
		e.Message = strings.TrimSpace(string(raw[:min(len(raw), 200)]))
	}
	return e
}
