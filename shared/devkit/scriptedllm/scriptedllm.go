// Package scriptedllm is a scripted OpenAI-compatible HTTP server for tests: it answers
// POST /v1/chat/completions (with and without "stream", with tool calls), POST /v1/responses, scripted
// API errors (an HTTP status with an OpenAI error body and headers such as Retry-After) and slow answers,
// and records every request it received so a test can assert on what the client sent.
//
// It is as unkind as real providers: a Reply can be a 429 with Retry-After or retry-after-ms, a 5xx (with
// an OpenAI body, or a proxy's HTML through Status and Body), a connection reset before the first byte
// (Reset), a stream cut mid-answer (CutAfter), several tool calls in one answer, malformed tool-call
// arguments (Arguments is sent as given), a finish_reason of length or content_filter (Finish), or an
// empty answer (a Reply with nothing set).
//
// Replies are consumed in order, one per request, from a queue filled with Push; a Handler, when set,
// answers instead of the queue. Nothing here talks to a real model.
//
//	srv := scriptedllm.New()
//	defer srv.Close()
//	srv.Push(scriptedllm.Reply{JSON: `{"next":"FINISH","reason":"easy","final_answer":"4"}`})
//	cfg := openai.DefaultConfig("test-key"); cfg.BaseURL = srv.BaseURL()
package scriptedllm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"appwrite-agent/shared/devkit/netfault"
)

// ToolCall is a function call the scripted model asks for.
type ToolCall struct {
	// ID is the call id; empty means "call_<n>".
	ID string
	// Name is the function name.
	Name string
	// Arguments is the JSON text of the arguments; empty means "{}".
	Arguments string
}

// APIError is an error answer: Status with the OpenAI error body
// {"error":{"message","type","code","param":null}}.
type APIError struct {
	// Status is the HTTP status, e.g. 429 or 500.
	Status int
	// Type is the error type, e.g. "rate_limit_exceeded"; empty means "server_error".
	Type string
	// Code is the error code (string), optional.
	Code string
	// Message is the error message.
	Message string
}

// Reply is one scripted answer.
type Reply struct {
	// Content is the assistant text (chat) or output_text (Responses API).
	Content string
	// JSON is a convenience for structured output: it is used as Content when Content is empty.
	JSON string
	// ToolCalls are function calls the model asks for, after any Content.
	ToolCalls []ToolCall
	// Reasoning, on the Responses API, puts a reasoning item first in the output. Its encrypted_content is
	// sent only when the request's include lists "reasoning.encrypted_content", as OpenAI does.
	Reasoning *Reasoning
	// Error, when set, answers with an API error instead.
	Error *APIError
	// Delay is waited before answering (or, for a stream, before the first chunk). The wait ends early when
	// the client goes away.
	Delay time.Duration
	// ChunkDelay is waited between stream chunks.
	ChunkDelay time.Duration
	// Chunks splits Content into at most this many stream chunks; 0 means one chunk per word.
	Chunks int
	// StallAfter, when above zero, makes a stream stop after this many content chunks and send nothing more
	// until the client goes away: a model that hangs mid-answer, so that a test of the client's deadline
	// gets a partial answer without racing a chunk timer against that deadline.
	StallAfter int
	// Status and Body, when Status is non-zero, answer with exactly this status and raw body (for malformed
	// answers).
	Status int
	// Body is the raw body used with Status.
	Body string
	// Header is added to the answer's headers, whatever it is (Retry-After, retry-after-ms,
	// x-should-retry on an error answer).
	Header map[string]string
	// Reset, when set, resets the connection (TCP RST) before a byte of the answer is written: what a
	// client sees when a provider's load balancer drops it.
	Reset bool
	// CutAfter, when above zero, ends a stream abruptly after this many content chunks (no finish_reason,
	// no [DONE], the chunked body left unterminated): a stream that dies mid-answer.
	CutAfter int
	// Usage, when set, is the usage the answer reports instead of the default one (Tokens). A provider
	// that reports nothing is NoUsage.
	Usage *Usage
	// NoUsage leaves the usage out of the answer (some OpenAI-compatible servers send none).
	NoUsage bool
	// Finish, when set, is the finish_reason of a chat answer ("length", "content_filter"); on the
	// Responses API "length" and "content_filter" make the response incomplete with incomplete_details.reason
	// max_output_tokens or content_filter.
	Finish string
}

// Usage is the tokens an answer reports. Chat completions report it in the answer, and in a stream only
// when the request asks for it (stream_options.include_usage, as OpenAI does), in a last chunk with no
// choices; the Responses API reports it in the response.
type Usage struct {
	Prompt, Completion, Total int
}

// Tokens is the usage an answer reports unless Reply.Usage says otherwise: 10 prompt tokens per request
// message, one completion token per content piece (Split with reply.Chunks) and per tool call, at least
// one; the total is their sum.
func Tokens(req Request, reply Reply) Usage {
	if reply.Usage != nil {
		return *reply.Usage
	}
	var body struct {
		Messages []json.RawMessage `json:"messages"`
		Input    []json.RawMessage `json:"input"`
	}
	_ = json.Unmarshal(req.Body, &body)
	prompt := 10 * (len(body.Messages) + len(body.Input))
	completion := max(1, len(Split(reply.text(), reply.Chunks))+len(reply.ToolCalls))
	return Usage{Prompt: prompt, Completion: completion, Total: prompt + completion}
}

// Reasoning is a reasoning item of a Responses API answer.
type Reasoning struct {
	// ID is the item id; empty means "rs_scripted".
	ID string
	// Summary is the summary text (none when empty).
	Summary string
	// EncryptedContent is the opaque reasoning state a stateless client (store: false) sends back.
	EncryptedContent string
}

// Request is one request the server received.
type Request struct {
	// Method and Path of the request, e.g. POST /v1/chat/completions.
	Method, Path string
	// Header is a copy of the request headers.
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// Model and Stream are read from the body.
	Model string
	// Stream is the body's "stream" flag.
	Stream bool
	// Time is when the request arrived.
	Time time.Time
}

// JSON decodes the request body into a generic map (nil when it is not a JSON object).
func (r Request) JSON() map[string]any {
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		return nil
	}
	return m
}

// Handler answers a request dynamically; it receives the request and how many requests came before it.
type Handler func(req Request, index int) Reply

// Server is a running scripted model. Its methods are safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex
	queue    []Reply
	handler  Handler
	fallback *Reply
	requests []Request
	// divert, when set, takes the requests it matches away from the script (see Divert).
	divert   func(Request) bool
	diverted []Reply
	side     []Request
	// hangUps are the times clients went away from stalled streams (Reply.StallAfter); hungUp is closed and
	// replaced at each one, for WaitHangUps.
	hangUps []time.Time
	hungUp  chan struct{}
}

// New starts a scripted server on a loopback port with the given replies queued.
func New(replies ...Reply) *Server {
	s := &Server{queue: append([]Reply(nil), replies...), hungUp: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the server's root URL (http://127.0.0.1:port).
func (s *Server) URL() string { return s.srv.URL }

// BaseURL is the OpenAI-style base URL (URL + "/v1") to give a client.
func (s *Server) BaseURL() string { return s.srv.URL + "/v1" }

// Close stops the server; it waits for requests in flight.
func (s *Server) Close() { s.srv.Close() }

// Push appends replies to the queue.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	s.queue = append(s.queue, replies...)
	s.mu.Unlock()
}

// SetHandler answers every later request with h instead of the queue (nil restores the queue).
func (s *Server) SetHandler(h Handler) {
	s.mu.Lock()
	s.handler = h
	s.mu.Unlock()
}

// SetFallback answers with r whenever the queue is empty (instead of a 500 "script exhausted" error).
func (s *Server) SetFallback(r Reply) {
	s.mu.Lock()
	s.fallback = &r
	s.mu.Unlock()
}

// Pending is how many queued replies are left.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns a copy of every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Reset drops the queue, the handler, the fallback, the recorded requests and hang-ups. A diversion stays in place,
// with no replies and no requests.
func (s *Server) Reset() {
	s.mu.Lock()
	s.queue, s.handler, s.fallback, s.requests = nil, nil, nil, nil
	s.diverted, s.side, s.hangUps = nil, nil, nil
	s.mu.Unlock()
}

// Divert answers every later request that match reports true for from replies, in order (and, once they
// are used up, with the "script exhausted" error), instead of the queue, the handler or the fallback. Those
// requests are recorded apart (Diverted): Requests, the queue and the handler's index see only the others,
// in their order. It is meant for a call that a client makes concurrently with the scripted conversation,
// such as a conversation title, which would otherwise take another call's reply. Calling Divert again
// replaces the match and the replies (nil match ends the diversion).
func (s *Server) Divert(match func(Request) bool, replies ...Reply) {
	s.mu.Lock()
	s.divert, s.diverted, s.side = match, append([]Reply(nil), replies...), nil
	s.mu.Unlock()
}

// PushDiverted appends replies to the diversion's replies.
func (s *Server) PushDiverted(replies ...Reply) {
	s.mu.Lock()
	s.diverted = append(s.diverted, replies...)
	s.mu.Unlock()
}

// Diverted returns a copy of every diverted request so far, in arrival order.
func (s *Server) Diverted() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.side...)
}

// WaitHangUps waits until clients have gone away from at least n stalled streams (Reply.StallAfter: a stream
// the model never ends, so only its client can close it) and returns when each went away, in order; it fails
// when ctx ends first.
func (s *Server) WaitHangUps(ctx context.Context, n int) ([]time.Time, error) {
	for {
		s.mu.Lock()
		got, ch := append([]time.Time(nil), s.hangUps...), s.hungUp
		s.mu.Unlock()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return got, fmt.Errorf("scriptedllm: %d of %d stalled streams closed by their client: %w", len(got), n, ctx.Err())
		}
	}
}

// noteHangUp records that the client of a stalled stream went away (its request's context ended before the
// handler did).
func (s *Server) noteHangUp(r *http.Request) {
	if r.Context().Err() == nil {
		return
	}
	s.mu.Lock()
	s.hangUps = append(s.hangUps, time.Now())
	close(s.hungUp)
	s.hungUp = make(chan struct{})
	s.mu.Unlock()
}

// ExhaustedMessage is the error message answered (HTTP 500) when a request arrives with nothing scripted.
const ExhaustedMessage = "scriptedllm: script exhausted"

func (s *Server) next(req Request) Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.divert != nil && s.divert(req) {
		s.side = append(s.side, req)
		if len(s.diverted) > 0 {
			r := s.diverted[0]
			s.diverted = s.diverted[1:]
			return r
		}
		return Reply{Error: &APIError{Status: http.StatusInternalServerError, Message: ExhaustedMessage}}
	}
	index := len(s.requests)
	s.requests = append(s.requests, req)
	if h := s.handler; h != nil {
		s.mu.Unlock()
		r := h(req, index)
		s.mu.Lock()
		return r
	}
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		return r
	}
	if s.fallback != nil {
		return *s.fallback
	}
	return Reply{Error: &APIError{Status: http.StatusInternalServerError, Message: ExhaustedMessage}}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Time: time.Now()}
	var head struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	_ = json.Unmarshal(body, &head)
	req.Model, req.Stream = head.Model, head.Stream

	kind := ""
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		kind = "chat"
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses"):
		kind = "responses"
	default:
		writeError(w, APIError{Status: http.StatusNotFound, Type: "invalid_request_error", Message: "scriptedllm: no route for " + r.Method + " " + r.URL.Path})
		return
	}
	reply := s.next(req)
	if reply.StallAfter > 0 {
		defer s.noteHangUp(r)
	}
	if reply.Delay > 0 && !sleep(r, reply.Delay) {
		return
	}
	if reply.Reset {
		netfault.Reset(w)
		return
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	switch {
	case reply.Error != nil:
		writeError(w, *reply.Error)
	case reply.Status != 0:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		_, _ = io.WriteString(w, reply.Body)
	case kind == "chat" && req.Stream:
		streamChat(w, r, req, reply)
	case kind == "chat":
		writeJSON(w, chatCompletion(req, reply))
	case req.Stream:
		streamResponse(w, r, req, reply)
	default:
		writeJSON(w, response(req, reply))
	}
}

// sleep waits d or until the client goes away; it reports whether the wait completed.
// stalled holds the stream once sent content chunks reach reply.StallAfter, until the client goes away,
// and reports whether it did.
func stalled(r *http.Request, reply Reply, sent int) bool {
	if reply.StallAfter <= 0 || sent < reply.StallAfter {
		return false
	}
	<-r.Context().Done()
	return true
}

// cut ends a response abruptly: net/http closes the connection without terminating the chunked body.
func cut() { panic(http.ErrAbortHandler) }

func sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, e APIError) {
	if e.Status == 0 {
		e.Status = http.StatusInternalServerError
	}
	if e.Type == "" {
		e.Type = "server_error"
	}
	var code any
	if e.Code != "" {
		code = e.Code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": e.Message, "type": e.Type, "code": code, "param": nil,
	}})
}

func (r Reply) text() string {
	if r.Content != "" {
		return r.Content
	}
	return r.JSON
}

func callID(c ToolCall, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("call_%d", i+1)
}

func callArgs(c ToolCall) string {
	if c.Arguments == "" {
		return "{}"
	}
	return c.Arguments
}

func chatCompletion(req Request, reply Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": reply.text()}
	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		calls := make([]map[string]any, len(reply.ToolCalls))
		for i, c := range reply.ToolCalls {
			calls[i] = map[string]any{"id": callID(c, i), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": callArgs(c)}}
		}
		msg["tool_calls"] = calls
		finish = "tool_calls"
	}
	if reply.Finish != "" {
		finish = reply.Finish
	}
	out := map[string]any{
		"id": "chatcmpl-scripted", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish}},
	}
	if !reply.NoUsage {
		u := Tokens(req, reply)
		out["usage"] = map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion, "total_tokens": u.Total}
	}
	return out
}

// wantsUsage reports a streamed chat request with stream_options.include_usage.
func wantsUsage(req Request) bool {
	opts, _ := req.JSON()["stream_options"].(map[string]any)
	on, _ := opts["include_usage"].(bool)
	return on
}

// Split cuts s into at most n pieces of roughly equal rune counts; n <= 0 means one piece per word (each
// word keeps its following spaces). Concatenating the pieces gives s back.
func Split(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n <= 0 {
		var out []string
		start := 0
		for i := 1; i < len(s); i++ {
			if s[i-1] == ' ' && s[i] != ' ' {
				out = append(out, s[start:i])
				start = i
			}
		}
		return append(out, s[start:])
	}
	runes := []rune(s)
	if n > len(runes) {
		n = len(runes)
	}
	out := make([]string, 0, n)
	size := (len(runes) + n - 1) / n
	for i := 0; i < len(runes); i += size {
		end := min(i+size, len(runes))
		out = append(out, string(runes[i:end]))
	}
	return out
}

func streamChat(w http.ResponseWriter, r *http.Request, req Request, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	chunk := func(delta map[string]any, finish any) bool {
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": req.Model,
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}},
		})
		var buf bytes.Buffer
		buf.WriteString("data: ")
		buf.Write(b)
		buf.WriteString("\n\n")
		if _, err := w.Write(buf.Bytes()); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		if reply.ChunkDelay > 0 {
			return sleep(r, reply.ChunkDelay)
		}
		return true
	}
	if !chunk(map[string]any{"role": "assistant", "content": ""}, nil) {
		return
	}
	for i, piece := range Split(reply.text(), reply.Chunks) {
		if !chunk(map[string]any{"content": piece}, nil) || stalled(r, reply, i+1) {
			return
		}
		if reply.CutAfter > 0 && i+1 >= reply.CutAfter {
			cut()
		}
	}
	if reply.CutAfter > 0 {
		cut() // fewer chunks than CutAfter: the stream dies before its end
	}
	for i, c := range reply.ToolCalls {
		// The name and id come first, the arguments in two halves, as real servers split them.
		if !chunk(map[string]any{"tool_calls": []map[string]any{{"index": i, "id": callID(c, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil) {
			return
		}
		args := callArgs(c)
		half := len(args) / 2
		for _, part := range []string{args[:half], args[half:]} {
			if !chunk(map[string]any{"tool_calls": []map[string]any{{"index": i,
				"function": map[string]any{"arguments": part}}}}, nil) {
				return
			}
		}
	}
	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	if reply.Finish != "" {
		finish = reply.Finish
	}
	if !chunk(map[string]any{}, finish) {
		return
	}
	if wantsUsage(req) && !reply.NoUsage {
		u := Tokens(req, reply)
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{}, "usage": map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion, "total_tokens": u.Total},
		})
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return
		}
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func response(req Request, reply Reply) map[string]any {
	var output []map[string]any
	if rs := reply.Reasoning; rs != nil {
		id := rs.ID
		if id == "" {
			id = "rs_scripted"
		}
		summary := []map[string]any{}
		if rs.Summary != "" {
			summary = append(summary, map[string]any{"type": "summary_text", "text": rs.Summary})
		}
		item := map[string]any{"type": "reasoning", "id": id, "summary": summary}
		if includes(req, "reasoning.encrypted_content") {
			item["encrypted_content"] = rs.EncryptedContent
		}
		output = append(output, item)
	}
	if text := reply.text(); text != "" {
		output = append(output, map[string]any{
			"type": "message", "id": "msg_scripted", "status": "completed", "role": "assistant",
			"content": []map[string]any{{"type": "output_text", "text": text, "annotations": []any{}}},
		})
	}
	for i, c := range reply.ToolCalls {
		output = append(output, map[string]any{
			"type": "function_call", "id": fmt.Sprintf("fc_%d", i+1), "call_id": callID(c, i),
			"name": c.Name, "arguments": callArgs(c), "status": "completed",
		})
	}
	if output == nil {
		output = []map[string]any{}
	}
	out := map[string]any{
		"id": "resp_scripted", "object": "response", "created_at": time.Now().Unix(), "status": "completed",
		"model": req.Model, "output": output,
	}
	if !reply.NoUsage {
		u := Tokens(req, reply)
		out["usage"] = map[string]any{"input_tokens": u.Prompt, "output_tokens": u.Completion, "total_tokens": u.Total}
	}
	switch reply.Finish {
	case "length":
		out["status"], out["incomplete_details"] = "incomplete", map[string]any{"reason": "max_output_tokens"}
	case "content_filter":
		out["status"], out["incomplete_details"] = "incomplete", map[string]any{"reason": "content_filter"}
	}
	return out
}

// includes reports whether the request's "include" array lists name.
func includes(req Request, name string) bool {
	list, _ := req.JSON()["include"].([]any)
	for _, v := range list {
		if v == name {
			return true
		}
	}
	return false
}

// streamResponse answers a streamed Responses API call with response.created, one
// response.output_text.delta per chunk, and response.completed carrying the whole response.
func streamResponse(w http.ResponseWriter, r *http.Request, req Request, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	full := response(req, reply)
	seq := 0
	event := func(typ string, fields map[string]any) bool {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(fields)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		if reply.ChunkDelay > 0 {
			return sleep(r, reply.ChunkDelay)
		}
		return true
	}
	if !event("response.created", map[string]any{"response": map[string]any{"id": "resp_scripted", "object": "response", "status": "in_progress", "model": req.Model, "output": []any{}}}) {
		return
	}
	index := 0
	if reply.Reasoning != nil {
		index = 1 // the reasoning item comes first
	}
	for i, piece := range Split(reply.text(), reply.Chunks) {
		if !event("response.output_text.delta", map[string]any{"item_id": "msg_scripted", "output_index": index, "content_index": 0, "delta": piece}) || stalled(r, reply, i+1) {
			return
		}
		if reply.CutAfter > 0 && i+1 >= reply.CutAfter {
			cut()
		}
	}
	if reply.CutAfter > 0 {
		cut()
	}
	done := "response.completed"
	if full["status"] == "incomplete" {
		done = "response.incomplete"
	}
	event(done, map[string]any{"response": full})
}
