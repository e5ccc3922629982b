package handler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"appwrite-agent/functions/mcp-events/mcperr"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds the transport rules this package applies itself: the JSON-RPC shape of a request (before
// any method is looked at), the Streamable HTTP rules of protocol 2026-07-28 for the events/* methods that
// the SDK never sees (the SDK applies the same rules to every other method), and JSON bodies for every answer
// on the MCP path.

// JSON-RPC codes of the transport.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
)

// Header names and the first protocol version of the 2026-07-28 transport (SEP-2575).
const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerLastEventID     = "Last-Event-ID"
	version20260728       = "2026-07-28"
)

// modernProtocol reports whether version is 2026-07-28 or later (the versions are ISO dates).
func modernProtocol(version string) bool { return version >= version20260728 }

// knownProtocol reports whether version is one the server speaks (the SDK's list).
func knownProtocol(version string) bool {
	return slices.Contains(sdk.SupportedProtocolVersions(), version)
}

// rpcFault is a transport-level refusal: an HTTP status and the JSON-RPC error answered with it.
type rpcFault struct {
	status int
	id     json.RawMessage
	code   int
	msg    string
	data   map[string]any
}

func (f *rpcFault) write(w http.ResponseWriter) {
	writeJSON(w, f.status, rpcError(f.id, f.code, f.msg, f.data))
}

// checkShape checks that body is one JSON-RPC message: valid JSON (else -32700), an object, not a batch,
// whose id, when present, is a string, a number or null (else -32600). Batches are valid JSON, so they are
// an invalid request, not a parse error; MCP removed batching in 2025-06-18.
func checkShape(body []byte) *rpcFault {
	trimmed := bytes.Trim(body, " \t\r\n") // JSON's whitespace only
	if len(trimmed) == 0 || !json.Valid(body) {
		return &rpcFault{status: http.StatusBadRequest, code: codeParseError, msg: "Parse error: the request body is not valid JSON"}
	}
	switch trimmed[0] {
	case '{':
	case '[':
		return &rpcFault{status: http.StatusBadRequest, code: codeInvalidRequest,
			msg: "Invalid Request: JSON-RPC batches are not supported; send one request per HTTP POST"}
	default:
		return &rpcFault{status: http.StatusBadRequest, code: codeInvalidRequest,
			msg: "Invalid Request: the body must be a JSON-RPC request object"}
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &msg); err != nil {
		return &rpcFault{status: http.StatusBadRequest, code: codeInvalidRequest, msg: "Invalid Request: " + err.Error()}
	}
	if id, ok := msg["id"]; ok {
		switch c := firstByte(id); {
		case c == '"', c == '-', c >= '0' && c <= '9', string(bytes.Trim(id, " \t\r\n")) == "null":
		default:
			return &rpcFault{status: http.StatusBadRequest, code: codeInvalidRequest,
				msg: "Invalid Request: id must be a string, a number or null"}
		}
	}
	if m, ok := msg["method"]; ok && firstByte(m) != '"' {
		return &rpcFault{status: http.StatusBadRequest, id: validID(msg["id"]), code: codeInvalidRequest,
			msg: "Invalid Request: method must be a string"}
	}
	return nil
}

func firstByte(raw json.RawMessage) byte {
	t := bytes.Trim(raw, " \t\r\n")
	if len(t) == 0 {
		return 0
	}
	return t[0]
}

func validID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return nil
	}
	return id
}

// era is the protocol era of one POST: modern (2026-07-28 or later, named by the header or the body's
// _meta) or legacy.
type era struct {
	modern        bool
	headerVersion string
	metaVersion   string
}

func detectEra(r *http.Request, params json.RawMessage) era {
	e := era{headerVersion: r.Header.Get(headerProtocolVersion)}
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if len(params) > 0 && json.Unmarshal(params, &p) == nil {
		e.metaVersion, _ = p.Meta[sdk.MetaKeyProtocolVersion].(string)
	}
	e.modern = modernProtocol(e.metaVersion) || modernProtocol(e.headerVersion)
	return e
}

// checkEventsTransport applies to an events/* request the rules the SDK applies to every other method: a
// legacy request's Mcp-Protocol-Version header must name a known version; a modern request must state its
// version in both the header and _meta, the two must agree, the version must be served, and the standard
// Mcp-Method header must mirror the body. Refusals are HTTP 400.
func checkEventsTransport(r *http.Request, head rpcHead, e era) *rpcFault {
	bad := func(code int, msg string) *rpcFault {
		return &rpcFault{status: http.StatusBadRequest, id: head.ID, code: code, msg: msg}
	}
	if !e.modern {
		if e.headerVersion != "" && !knownProtocol(e.headerVersion) {
			return bad(codeInvalidRequest, "Unsupported protocol version: "+e.headerVersion)
		}
		return nil
	}
	if r.Header.Get(headerLastEventID) != "" {
		return bad(sdk.CodeHeaderMismatch, "Last-Event-ID is not supported in protocol version "+version20260728)
	}
	if e.headerVersion == "" {
		return bad(sdk.CodeHeaderMismatch, headerProtocolVersion+" header is required for requests carrying "+strconv.Quote(sdk.MetaKeyProtocolVersion))
	}
	if e.metaVersion == "" {
		return bad(mcperr.CodeInvalidParams, "missing or invalid _meta field "+strconv.Quote(sdk.MetaKeyProtocolVersion))
	}
	if e.headerVersion != e.metaVersion {
		return bad(sdk.CodeHeaderMismatch, fmt.Sprintf("%s header %q does not match request %s %q",
			headerProtocolVersion, e.headerVersion, sdk.MetaKeyProtocolVersion, e.metaVersion))
	}
	if !knownProtocol(e.metaVersion) {
		return bad(sdk.CodeUnsupportedProtocolVersion, "Unsupported protocol version: "+e.metaVersion)
	}
	switch m := r.Header.Get(headerMethod); m {
	case "":
		return bad(sdk.CodeHeaderMismatch, "missing required Mcp-Method header")
	case head.Method:
		return nil
	default:
		return bad(sdk.CodeHeaderMismatch, fmt.Sprintf("header mismatch: Mcp-Method header value '%s' does not match body value '%s'", m, head.Method))
	}
}

// statusFor is the HTTP status of a JSON-RPC error answer: protocol 2026-07-28 maps codes onto statuses
// (method not found 404; malformed requests, params and headers 400; anything else 200), earlier versions
// answer every JSON-RPC error with 200.
func statusFor(e era, code int) int {
	if !e.modern {
		return http.StatusOK
	}
	switch code {
	case codeMethodNotFound:
		return http.StatusNotFound
	case sdk.CodeHeaderMismatch, sdk.CodeMissingRequiredClientCapabilities, sdk.CodeUnsupportedProtocolVersion,
		codeInvalidRequest, mcperr.CodeInvalidParams, codeParseError:
		return http.StatusBadRequest
	default:
		return http.StatusOK
	}
}

// methodNotAllowed answers every method but POST on the MCP path: the server is stateless and never
// streams, so there is no GET stream and no session to DELETE.
func methodNotAllowed(w http.ResponseWriter, method string) {
	w.Header().Set("Allow", http.MethodPost)
	writeJSON(w, http.StatusMethodNotAllowed, rpcError(nil, codeInvalidRequest,
		"Method Not Allowed: "+method+" is not served on the MCP endpoint; send JSON-RPC requests with POST", nil))
}

// jsonBody makes sure an answer of the SDK on the MCP path is JSON: its plain-text refusals (http.Error: wrong
// content type or Accept, unsupported protocol version, an unknown method) become a JSON-RPC error answering
// the request's id, with the same status and text. The one refusal that is a JSON-RPC error of its own is a
// legacy request's unknown method ("JSON RPC not handled: …", a 400; 2026-07-28 requests get the SDK's own
// 404 with -32601): it becomes Method not found in a 200, as this package answers an unknown events/* method.
func jsonBody(status *int, header http.Header, body []byte, id json.RawMessage) []byte {
	if strings.HasPrefix(header.Get("Content-Type"), "application/json") || (len(body) == 0 && *status < 400) {
		return body
	}
	msg := strings.TrimSpace(string(body))
	if msg == "" {
		msg = http.StatusText(*status)
	}
	code := codeInvalidRequest
	if *status == http.StatusBadRequest && strings.HasPrefix(msg, "JSON RPC not handled") {
		*status, code = http.StatusOK, codeMethodNotFound
	}
	header.Set("Content-Type", "application/json")
	header.Del("Content-Length")
	header.Del("X-Content-Type-Options")
	b, _ := json.Marshal(rpcError(id, code, msg, nil))
	return append(b, '\n')
}

// rpcHead is the part of a JSON-RPC message the dispatcher looks at.
type rpcHead struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// rpcResponse is a JSON-RPC answer.
type rpcResponse struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Result  any               `json:"result,omitempty"`
	Error   *mcperr.WireError `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error answer to id (null when the request had none).
func rpcError(id json.RawMessage, code int, msg string, data map[string]any) rpcResponse {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return rpcResponse{JSONRPC: "2.0", ID: id, Error: &mcperr.WireError{Code: code, Message: msg, Data: data}}
}

// methodSetLevel is the logging utility's request, which this server refuses.
const methodSetLevel = "logging/setLevel"

// SetLevelRefusal is the message of the Method not found error that answers a legacy logging/setLevel.
const SetLevelRefusal = "Method not found: logging/setLevel (this server does not declare the logging capability and sends no log notifications)"

// refuseSetLevel answers a legacy logging/setLevel request with JSON-RPC Method not found (-32601, in a 200
// as every legacy JSON-RPC error) and reports whether it did. The server declares no logging capability
// (capabilities are negotiated, and only negotiated ones may be used): it is stateless and answers JSON,
// never a stream, so it has no session to keep a level in and nothing to carry a notifications/message;
// the SDK would answer {} and keep the level in a session that ends with the request. Logging is
// deprecated by protocol 2026-07-28 (SEP-2577), whose requests the SDK refuses the method for itself (404,
// -32601). A notification (no id) and a request with an unknown protocol version header are left to the SDK.
func refuseSetLevel(w http.ResponseWriter, r *http.Request, head rpcHead) bool {
	e := detectEra(r, head.Params)
	if e.modern || (e.headerVersion != "" && !knownProtocol(e.headerVersion)) || len(head.ID) == 0 || string(head.ID) == "null" {
		return false
	}
	writeJSON(w, http.StatusOK, rpcError(head.ID, codeMethodNotFound, SetLevelRefusal, nil))
	return true
}
