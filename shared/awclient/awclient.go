// Package awclient is how every function calls Appwrite: one Client per endpoint and project, and two ways
// to make a call through it.
//
//   - Do runs a call of the official Go SDK (github.com/appwrite/sdk-for-go v1.0.0), which covers TablesDB,
//     functions, the account and most of the API. The SDK takes no context.Context: Do gives each call an
//     *http.Client of its own whose transport carries the call's context (its deadline and cancellation) and
//     bounds the answer.
//   - Client.Call sends one REST request for what the SDK lacks (webhooks, health/version) and for calls made
//     with an OAuth bearer token in admin mode: a JSON body, a bounded answer decoded into the caller's value.
//
// Both authenticate the same way (Auth: an API key or the execution's dynamic key, a user's JWT, an OAuth
// bearer token in admin mode, or nothing), ask for the same response format (ResponseFormat, the SDK's), and
// fail with the same *Error: Appwrite's error answer ({"message","code","type"}) decoded in one place, or a
// transport failure with Status 0.
package awclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// ResponseFormat is the response format every call asks for (X-Appwrite-Response-Format): the Go SDK
// v1.0.0's, so that its models and the REST calls read the same answers. For the models the functions read
// (rows, tables, executions, the account, webhooks) Appwrite 1.9.6's response filters below 2.0.0 differ from
// the current format only in the webhook's field names (Response/Filters/V22.php, which Webhook reads in both
// spellings) and the execution's functionId (V27.php, applied to every format below 2.0.0).
const ResponseFormat = "1.8.0"

// DefaultMaxAnswer bounds the answers of a Client made with maxAnswer 0.
const DefaultMaxAnswer = 4 << 20

// Client calls one Appwrite project at one endpoint over one *http.Client. It holds no state of its own
// between calls and is safe for concurrent use.
type Client struct {
	endpoint  string // ".../v1", without a trailing slash
	project   string // "" sends no X-Appwrite-Project
	hc        *http.Client
	maxAnswer int64
}

// New returns a client of project at endpoint (".../v1", APPWRITE_FUNCTION_API_ENDPOINT in a function) over
// hc: the platform's own API is trusted and gets a plain client; an endpoint a user names gets the SSRF-safe
// client of shared/safehttp. hc's Timeout bounds each call, as the call's context does. maxAnswer bounds
// every answer read, in bytes (DefaultMaxAnswer when 0): a larger successful answer is an error, never a
// truncated value. project "" is for the routes that need none (health/version).
func New(endpoint, project string, hc *http.Client, maxAnswer int64) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	if maxAnswer <= 0 {
		maxAnswer = DefaultMaxAnswer
	}
	return &Client{endpoint: strings.TrimRight(endpoint, "/"), project: project, hc: hc, maxAnswer: maxAnswer}
}

// Endpoint returns the endpoint the client calls (".../v1").
func (c *Client) Endpoint() string { return c.endpoint }

// Project returns the project the client calls.
func (c *Client) Project() string { return c.project }

// Auth says how a call authenticates. The zero Auth sends no credentials (a public route).
type Auth struct {
	key, jwt, bearer string
}

// Key authenticates with an API key (X-Appwrite-Key): a project key, or the execution's dynamic key that
// Appwrite hands a function in the x-appwrite-key header, with the function's scopes.
func Key(key string) Auth { return Auth{key: key} }

// JWT authenticates as the user a JWT of account.createJWT() names (X-Appwrite-JWT).
func JWT(jwt string) Auth { return Auth{jwt: jwt} }

// Bearer authenticates with an OAuth access token (Authorization: Bearer) in admin mode
// (X-Appwrite-Mode: admin), as the hosted Appwrite MCP server drives Appwrite Cloud. The open-source server
// reads no bearer token (app/init/resources/request.php:462-585, 1.9.6): such calls need Appwrite Cloud.
func Bearer(token string) Auth { return Auth{bearer: token} }

// headers are the request headers of a call as a, on project.
func (a Auth) headers(project string) map[string]string {
	h := map[string]string{"X-Appwrite-Response-Format": ResponseFormat}
	if project != "" {
		h["X-Appwrite-Project"] = project
	}
	switch {
	case a.key != "":
		h["X-Appwrite-Key"] = a.key
	case a.jwt != "":
		h["X-Appwrite-JWT"] = a.jwt
	case a.bearer != "":
		h["Authorization"] = "Bearer " + a.bearer
		h["X-Appwrite-Mode"] = "admin"
	}
	return h
}

// Error is an Appwrite error answer or a failure to get one (Status 0).
type Error struct {
	// Status is the HTTP status; 0 when no answer arrived (or the request was refused before it was sent).
	Status int
	// Type is Appwrite's error type, e.g. "row_not_found"; "invalid_response" when a successful answer is
	// not the expected JSON or is larger than the client allows.
	Type string
	// Message is Appwrite's message (or the start of an error answer that is not Appwrite's JSON).
	Message string
	// Err is the transport error when Status is 0.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Status == 0 && e.Err != nil {
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

// errorAnswer decodes an error answer of Appwrite's (status 300 or more): its type and message, or the
// start of a body that is not Appwrite's JSON.
func errorAnswer(status int, raw []byte) *Error {
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

// invalidAnswer is a successful answer the call cannot use.
func invalidAnswer(status int, format string, args ...any) *Error {
	return &Error{Status: status, Type: "invalid_response", Message: fmt.Sprintf(format, args...)}
}

// Request is one REST call (Client.Call).
type Request struct {
	// Method is the HTTP method.
	Method string
	// Path is the route below the endpoint, its segments escaped: build it with Path.
	Path string
	// Query is sent as the URL's query (queries[] as Appwrite reads it).
	Query url.Values
	// Body, when not nil, is sent as JSON.
	Body any
}

// Path joins route segments into a path below the endpoint, each escaped (url.PathEscape), so an id is
// always one segment: Path("webhooks", id, "secret") is "/webhooks/<id>/secret".
func Path(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// Call sends r as auth and decodes a successful answer into out (nil: the answer is read, within the bound,
// and dropped). An answer of 300 or more is an *Error with Appwrite's status, type and message; a transport
// failure is an *Error with Status 0 whose Err names the method and URL.
func (c *Client) Call(ctx context.Context, auth Auth, r Request, out any) error {
	u := c.endpoint + r.Path
	if len(r.Query) > 0 {
		u += "?" + r.Query.Encode()
	}
	var body io.Reader
	if r.Body != nil {
		b, err := json.Marshal(r.Body)
		if err != nil {
			return &Error{Err: fmt.Errorf("encode the body of %s %s: %w", r.Method, u, err)}
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u, body)
	if err != nil {
		return &Error{Err: err}
	}
	for k, v := range auth.headers(c.project) {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "application/json")
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return &Error{Err: err} // *url.Error names the method and URL
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, c.maxAnswer+1))
	if err != nil {
		return &Error{Err: fmt.Errorf("%s %s: read the answer: %w", r.Method, u, err)}
	}
	if res.StatusCode >= 300 {
		return errorAnswer(res.StatusCode, raw)
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if int64(len(raw)) > c.maxAnswer {
		return invalidAnswer(res.StatusCode, "the answer is over %d bytes", c.maxAnswer)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return invalidAnswer(res.StatusCode, "the answer is not the expected JSON: %v", err)
	}
	return nil
}
