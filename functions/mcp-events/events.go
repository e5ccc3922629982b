package handler

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"appwrite-agent/functions/mcp-events/mcperr"
	"appwrite-agent/functions/mcp-events/oauth"
	"appwrite-agent/functions/mcp-events/subscriptions"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/faultreport"
)

// This file answers the methods of the events extension: events/list, events/subscribe, events/unsubscribe.

// ListResult is the result of events/list.
type ListResult struct {
	ResultType string                 `json:"resultType"`
	Events     []eventcatalog.Listing `json:"events"`
}

// List returns the catalog entries the scopes allow.
func List(scopes map[string]bool) ListResult {
	out := ListResult{ResultType: "complete", Events: []eventcatalog.Listing{}}
	for _, e := range eventcatalog.All() {
		if len(e.MissingScopes(scopes)) == 0 {
			out.Events = append(out.Events, e.Listing())
		}
	}
	return out
}

// listEvents serves events/list: the events the token's scopes allow, in one page. A token that can use none
// is asked to step up.
func listEvents(p *oauth.Principal, params json.RawMessage) (any, *mcperr.Error) {
	// The MCP spec's pagination: a cursor the server did not issue is invalid params. events/list answers
	// every event in one page and issues none.
	var in struct {
		Cursor json.RawMessage `json:"cursor"`
	}
	if len(params) > 0 && string(params) != "null" {
		if err := decodeParams(params, &in); err != nil {
			return nil, err
		}
	}
	if len(in.Cursor) > 0 && string(in.Cursor) != "null" {
		return nil, mcperr.Invalid("cursor", "cursor: not a cursor of this server (events/list answers every event in one page and issues none)")
	}
	res := List(p.Scopes)
	if len(res.Events) > 0 {
		return res, nil
	}
	ask := listStepUp(p.Scopes)
	merr := mcperr.InsufficientScope(nil, ask,
		"the access token carries none of the scopes any event needs; ask for %s", strings.Join(ask, " "))
	merr.Data = map[string]any{"missingScopes": ask}
	return res, merr
}

// listStepUp is what a token that can use no event at all is asked to add: for every event, the scopes it
// lacks (first alternatives), without repeats.
func listStepUp(scopes map[string]bool) []string {
	var out []string
	for _, e := range eventcatalog.All() {
		for _, sc := range e.StepUpScopes(scopes) {
			if !slices.Contains(out, sc) {
				out = append(out, sc)
			}
		}
	}
	return out
}

// serveEvents answers an events/* request of principal p (head is its JSON-RPC head): the transport rules the
// SDK applies to every other method, then events/list from the catalog, events/subscribe and
// events/unsubscribe through the subscriptions service, and Method not found for any other events/* method
// or when events are off. Server faults are reported; a missing scope is answered with a step-up challenge.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request, p *oauth.Principal, head rpcHead) {
	e := detectEra(r, head.Params)
	if f := checkEventsTransport(r, head, e); f != nil {
		f.write(w)
		return
	}
	if len(head.ID) == 0 || string(head.ID) == "null" {
		w.WriteHeader(http.StatusAccepted) // a notification: nothing to answer
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	call := subscriptions.Call{Principal: p, Log: logSink(ctx)}
	var result any
	var merr *mcperr.Error
	if head.JSONRPC != "2.0" {
		writeJSON(w, statusFor(e, codeInvalidRequest), rpcError(head.ID, codeInvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"", nil))
		return
	}
	method := head.Method
	if !s.cfg.Enabled {
		method = "" // with events off, no events/* method exists
	}
	switch method {
	case "events/list":
		result, merr = listEvents(p, head.Params)
	case "events/subscribe":
		result, merr = callWith(ctx, call, head.Params, s.subs.Subscribe)
	case "events/unsubscribe":
		result, merr = callWith(ctx, call, head.Params, s.subs.Unsubscribe)
	default:
		writeJSON(w, statusFor(e, mcperr.CodeMethodNotFound), rpcError(head.ID, mcperr.CodeMethodNotFound, "Method not found: "+head.Method, nil))
		return
	}
	if merr != nil {
		if merr.Kind == mcperr.Internal {
			s.reportEventsFault(head, merr)
		}
		if merr.Kind == mcperr.Forbidden && len(merr.StepUp) > 0 {
			s.insufficientScope(w, r, head.ID, merr)
			return
		}
		we := s.cfg.Codes.Wire(merr)
		writeJSON(w, statusFor(e, we.Code), rpcResponse{JSONRPC: "2.0", ID: head.ID, Error: &we})
		return
	}
	writeJSON(w, http.StatusOK, rpcResponse{JSONRPC: "2.0", ID: head.ID, Result: result})
}

// reportEventsFault reports an events/* call that failed on the server's side (Appwrite failing or
// unreachable, an internal error); the caller's bad input and the subscriber's endpoint never come here.
func (s *Server) reportEventsFault(head rpcHead, merr *mcperr.Error) {
	if s.faults == nil {
		return
	}
	var p struct {
		Name      string `json:"name"`
		Arguments struct {
			ProjectID string `json:"project_id"`
		} `json:"arguments"`
	}
	_ = json.Unmarshal(head.Params, &p)
	event := p.Name
	if _, ok := eventcatalog.Lookup(event); !ok {
		event = ""
	}
	project := p.Arguments.ProjectID
	if !eventcatalog.ValidID(project) {
		project = ""
	}
	s.faults.Report(faultreport.Fault{Operation: head.Method, Event: event, ProjectID: project,
		Outcome: subscriptions.OutcomeError, Reason: merr.FaultReason(), Detail: merr.Message})
}

// callWith decodes a method's params and calls method with them: its result, or the decoding's error or its
// own.
func callWith[P, R any](ctx context.Context, call subscriptions.Call, raw json.RawMessage,
	method func(context.Context, subscriptions.Call, P) (*R, *mcperr.Error)) (any, *mcperr.Error) {
	var params P
	if err := decodeParams(raw, &params); err != nil {
		return nil, err
	}
	res, err := method(ctx, call, params)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// decodeParams decodes a method's params into v, answering InvalidParams that names the field of a value of
// the wrong type.
func decodeParams(raw json.RawMessage, v any) *mcperr.Error {
	if len(raw) == 0 || string(raw) == "null" {
		return mcperr.Invalid("params", "params: required object")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return mcperr.Invalid(te.Field, "%s: must be %s", te.Field, te.Type.String())
		}
		return mcperr.Invalid("params", "params: not a valid object")
	}
	return nil
}
