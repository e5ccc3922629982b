package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// chatRequest is the body of a chat completion. go-openai's ChatCompletionRequest drops a zero temperature
// (float32 with omitempty), so a caller who pins 0 would get the provider's default (1.0); this field,
// shallower than the embedded one, replaces it in the JSON and is sent whenever it is set. go-openai's
// client also refuses any temperature but 1 for gpt-5* names, gpt-5-chat* included, which take one: the
// body is sent by this package, not by go-openai's CreateChatCompletion.
type chatRequest struct {
	openai.ChatCompletionRequest
	// Temperature is the sampling temperature; nil sends none.
	Temperature *float64 `json:"temperature,omitempty"`
}

// maxErrorBody bounds the error body read from a failed answer.
const maxErrorBody = 1 << 20

// post sends body to path under the base URL and returns the answer when its status is 2xx; a failed
// answer is an *openai.APIError (the OpenAI error body) or an *openai.RequestError (anything else).
func (c *Client) post(ctx context.Context, path string, body any, stream bool) (*http.Response, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+path, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if stream {
		hr.Header.Set("Accept", "text/event-stream")
		hr.Header.Set("Cache-Control", "no-cache")
	}
	if c.settings.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+c.settings.APIKey)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var er openai.ErrorResponse
	if json.Unmarshal(raw, &er) == nil && er.Error != nil {
		er.Error.HTTPStatus, er.Error.HTTPStatusCode = resp.Status, resp.StatusCode
		return nil, er.Error
	}
	if rerr == nil {
		rerr = errors.New(resp.Status)
	}
	return nil, &openai.RequestError{HTTPStatus: resp.Status, HTTPStatusCode: resp.StatusCode, Err: rerr, Body: raw}
}

func (c *Client) chatMessages(msgs []Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		cm := openai.ChatCompletionMessage{Role: m.Role, ToolCallID: m.ToolCallID}
		if len(m.Images) > 0 {
			cm.MultiContent = append(cm.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: m.Content})
			for _, img := range m.Images {
				cm.MultiContent = append(cm.MultiContent, openai.ChatMessagePart{
					Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: img},
				})
			}
		} else {
			cm.Content = m.Content
		}
		for _, tc := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
		}
		out = append(out, cm)
	}
	return out
}

// chatBody is the chat completion request for req: max_completion_tokens for the names OpenAI treats as
// reasoning models on this API (o1*, o3*, o4*, gpt-5*), max_tokens otherwise, and the settings'
// temperature as set (Resolve leaves none for reasoning models, which go to the Responses API).
func (c *Client) chatBody(req Request) chatRequest {
	cr := chatRequest{ChatCompletionRequest: openai.ChatCompletionRequest{
		Model:    c.settings.Model,
		Messages: c.chatMessages(req.Messages),
	}, Temperature: c.settings.Temperature}
	if strictChatModel(c.settings.Model) {
		cr.MaxCompletionTokens = req.MaxTokens
	} else {
		//lint:ignore SA1019 max_tokens is what non-reasoning models and most OpenAI-compatible servers take;
		// max_completion_tokens goes to the strict (reasoning) models above.
		cr.MaxTokens = req.MaxTokens
	}
	for _, t := range req.Tools {
		cr.Tools = append(cr.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters,
		}})
	}
	if req.Schema != nil {
		cr.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name: req.Schema.Name, Schema: req.Schema.Schema, Strict: true,
			},
		}
	}
	return cr
}

func stopOf(r openai.FinishReason) string {
	switch r {
	case openai.FinishReasonLength:
		return StopLength
	case openai.FinishReasonContentFilter:
		return StopContentFilter
	}
	return ""
}

func (c *Client) chat(ctx context.Context, req Request) (Result, error) {
	cr := c.chatBody(req)
	if req.OnToken == nil || req.Schema != nil {
		resp, err := c.post(ctx, "/chat/completions", cr, false)
		if err != nil {
			return Result{}, err
		}
		defer resp.Body.Close()
		var out openai.ChatCompletionResponse
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return Result{}, fmt.Errorf("reading the answer: %w", err)
		}
		if len(out.Choices) == 0 {
			return Result{}, errors.New("the answer has no choices")
		}
		m := out.Choices[0].Message
		res := Result{Content: m.Content, Stop: stopOf(out.Choices[0].FinishReason),
			Usage: usageOf(out.Usage.PromptTokens, out.Usage.CompletionTokens, out.Usage.TotalTokens)}
		for _, tc := range m.ToolCalls {
			res.ToolCalls = append(res.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		return res, nil
	}
	// include_usage asks for the usage chunk (choices empty) before [DONE], as the reference's stream_usage does.
	cr.Stream, cr.StreamOptions = true, &openai.StreamOptions{IncludeUsage: true}
	resp, err := c.post(ctx, "/chat/completions", cr, true)
	if err != nil {
		return Result{}, err
	}
	defer resp.Body.Close()
	return readChatStream(ctx, resp.Body, req.OnToken)
}

// readChatStream reads a chat completion stream (server-sent events, "data: <chunk>" lines ending with
// "data: [DONE]"). A stream that ends before [DONE] and before any finish_reason was cut: errStreamCut.
func readChatStream(ctx context.Context, body io.Reader, onToken func(string)) (Result, error) {
	br := bufio.NewReader(body)
	var content strings.Builder
	var calls []ToolCall
	var usage Usage
	// A stream that fails returns no Result: what arrived before has gone to onToken, and Complete does not
	// retry once a token has.
	done := func(stop string) (Result, error) {
		return Result{Content: content.String(), ToolCalls: calls, Streamed: true, Stop: stop, Usage: usage}, nil
	}
	finished := false
	stop := ""
	for {
		line, err := br.ReadString('\n')
		if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
			switch {
			case ctx.Err() != nil:
				return Result{}, ctx.Err()
			case errors.Is(err, io.EOF) && finished:
				return done(stop)
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
				return Result{}, errStreamCut
			}
			return Result{}, err
		}
		line = strings.TrimRight(line, "\r\n")
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue // blank lines, comments, event: and id: fields
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			return done(stop)
		}
		var chunk openai.ChatCompletionStreamResponse
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return Result{}, fmt.Errorf("reading the stream: %w", err)
		}
		if u := chunk.Usage; u != nil {
			usage = usageOf(u.PromptTokens, u.CompletionTokens, u.TotalTokens)
		}
		if len(chunk.Choices) == 0 {
			var er openai.ErrorResponse
			if json.Unmarshal([]byte(data), &er) == nil && er.Error != nil {
				return Result{}, er.Error
			}
		}
		for _, ch := range chunk.Choices {
			if d := ch.Delta.Content; d != "" {
				content.WriteString(d)
				onToken(d)
			}
			for _, tc := range ch.Delta.ToolCalls {
				i := len(calls)
				if tc.Index != nil {
					i = *tc.Index
				}
				if i < 0 || i > 1024 {
					return Result{}, fmt.Errorf("reading the stream: tool call index %d", i)
				}
				for len(calls) <= i {
					calls = append(calls, ToolCall{})
				}
				if tc.ID != "" {
					calls[i].ID = tc.ID
				}
				if tc.Function.Name != "" {
					calls[i].Name += tc.Function.Name
				}
				calls[i].Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != "" && ch.FinishReason != openai.FinishReasonNull {
				finished = true
				if s := stopOf(ch.FinishReason); s != "" {
					stop = s
				}
			}
		}
	}
}
