// Package fnhttp holds the small pieces every function answers with: JSON responses, JSON errors that are
// never empty (an empty 4xx/5xx body on a function domain is replaced by Appwrite's HTML page) and
// the /health document.
package fnhttp

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// BearerToken is the token of an Authorization header value "Bearer <token>" (the scheme in any case,
// RFC 9110 §11.1; spaces around the token ignored); ok is false for another scheme or an empty token.
func BearerToken(authorization string) (token string, ok bool) {
	scheme, tok, found := strings.Cut(strings.TrimSpace(authorization), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// HealthStatus is the body of GET /health.
type HealthStatus struct {
	Status  string `json:"status"`
	BuildID string `json:"build_id"`
}

// Health answers GET /health: 200 {"status":"ok","build_id":buildID}, buildID being the running deployment's
// (platform.Env.BuildID).
func Health(rt openruntimes.Context, buildID string) openruntimes.Response {
	return JSON(rt, http.StatusOK, HealthStatus{Status: "ok", BuildID: buildID})
}

// ErrorBody is the JSON body of every error a function answers with itself.
type ErrorBody struct {
	// Error is a stable machine-readable code, such as "not_found" or "invalid_request".
	Error string `json:"error"`
	// Message says what failed, for a person.
	Message string `json:"message"`
}

// JSON answers with status and v encoded as JSON. An encoding failure becomes a JSON 500.
func JSON(rt openruntimes.Context, status int, v any) openruntimes.Response {
	body, err := json.Marshal(v)
	if err != nil {
		rt.Error("encode response: " + err.Error())
		body = []byte(`{"error":"internal","message":"could not encode the response"}`)
		status = http.StatusInternalServerError
	}
	return openruntimes.Response{
		Body:       body,
		StatusCode: status,
		Headers:    map[string]string{"content-type": "application/json"},
	}
}

// Error answers with status and {"error": code, "message": message}.
func Error(rt openruntimes.Context, status int, code, message string) openruntimes.Response {
	return JSON(rt, status, ErrorBody{Error: code, Message: message})
}

// DetailBody is ErrorBody with the reference engine's "detail" field (FastAPI's error key) carrying the
// same message, for the agent functions whose clients read detail.
type DetailBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
	Detail  string `json:"detail"`
}

// DetailError answers with status and {"error": code, "message": message, "detail": message}.
func DetailError(rt openruntimes.Context, status int, code, message string) openruntimes.Response {
	return JSON(rt, status, DetailBody{Error: code, Message: message, Detail: message})
}

// NotFound answers an unknown method or path with a JSON 404 that names them.
func NotFound(rt openruntimes.Context) openruntimes.Response {
	return Error(rt, http.StatusNotFound, "not_found", "no route for "+rt.Req.Method+" "+rt.Req.Path)
}
