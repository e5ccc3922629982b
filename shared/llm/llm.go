// Package llm builds the turn's model client on go-openai: settings from the environment with the
// per-turn override, the reasoning-model rule (Responses API, no temperature), and one Complete call that
// covers chat completions (streamed or not, with tools and structured output) and the Responses API.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/turnrequest"
)

// DefaultModel is LLM_MODEL when unset, as in the reference engine.
const DefaultModel = "openai/gpt-5.6"

// minReasoningOutputTokens is the smallest max_output_tokens sent to a reasoning model.
const minReasoningOutputTokens = 1024

// DefaultTemperature is the temperature of non-reasoning models without an override.
const DefaultTemperature = 0.2

// ErrNoAPIKey is the reference's message when neither LLM_API_KEY nor llm.api_key is given.
var ErrNoAPIKey = errors.New("LLM_API_KEY is not configured")

// ErrUserURLNeedsKey refuses a per-turn base_url without a per-turn api_key: the environment's key is
// never sent to an endpoint chosen by a user.
var ErrUserURLNeedsKey = errors.New("llm.api_key is required when llm.base_url is given (the server's key is never sent to another endpoint)")

// Env is the LLM part of the environment: LLM_API_KEY, LLM_MODEL, LLM_BASE_URL, and the SSRF policy a
// per-request base_url goes through. Read it once per process (EnvFromOS) and pass it down.
type Env struct {
	APIKey, Model, BaseURL string
	// UserPolicy is the SSRF policy of a per-request base_url: SAFEHTTP_ALLOW and SAFEHTTP_ALLOW_HTTP as
	// read, and the roots of SAFEHTTP_CA_FILE, parsed on the first such request and then kept, shared by
	// every copy of the Env.
	UserPolicy safehttp.Options
	// UserPolicyErr is why UserPolicy could not be read (a bad SAFEHTTP_ALLOW); HTTPClient then refuses
	// every per-request base_url with it.
	UserPolicyErr error
	// MaxRetries is LLM_MAX_RETRIES (DefaultMaxRetries when unset; 0 turns retries off): the retries of one
	// model call (Retry). A zero Env retries nothing.
	MaxRetries int
	// Warnings lists values that were ignored (a bad LLM_MAX_RETRIES).
	Warnings []string
}

// EnvFromOS reads Env from the process environment. Nothing is parsed beyond the variables themselves:
// the CA file is read on the first request to a per-request base_url.
func EnvFromOS() Env {
	e := Env{
		APIKey:  strings.TrimSpace(os.Getenv("LLM_API_KEY")),
		Model:   strings.TrimSpace(os.Getenv("LLM_MODEL")),
		BaseURL: strings.TrimSpace(os.Getenv("LLM_BASE_URL")),
	}
	opts, err := safehttp.FromEnv(safehttp.Options{})
	e.UserPolicy, e.UserPolicyErr = safehttp.LazyCAFromEnv(opts), err
	e.MaxRetries = DefaultMaxRetries
	if raw := strings.TrimSpace(os.Getenv(EnvMaxRetries)); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 || n > 10 {
			e.Warnings = append(e.Warnings, EnvMaxRetries+" must be an integer from 0 to 10; using the default "+strconv.Itoa(DefaultMaxRetries))
		} else {
			e.MaxRetries = n
		}
	}
	return e
}

// Settings are the resolved client settings of one turn.
type Settings struct {
	// APIKey is the bearer key sent to the endpoint.
	APIKey string
	// Model is the model name sent to the endpoint.
	Model string
	// BaseURL is the endpoint base URL ("" means OpenAI's).
	BaseURL string
	// Temperature is nil for reasoning models, otherwise the override or DefaultTemperature.
	Temperature *float64
	// UserBaseURL reports that BaseURL came from the request (untrusted: use the SSRF-safe client).
	UserBaseURL bool
	// Reasoning reports a reasoning model (Responses API, no temperature).
	Reasoning bool
	// Retry is the retry policy of the model calls: Max is Env.MaxRetries; the caller adds OnRetry (and
	// tests Sleep and Jitter) before New.
	Retry Retry

	// userPolicy and userPolicyErr are Env's, for HTTPClient.
	userPolicy    safehttp.Options
	userPolicyErr error
}

// ChatModel is the environment model name with everything up to the first "/" removed
// ("openai/gpt-5.6" -> "gpt-5.6").
func ChatModel(model string) string {
	if i := strings.Index(model, "/"); i >= 0 {
		return model[i+1:]
	}
	return model
}

var (
	oSeries   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^o[0-9]`) })
	gptFamily = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^gpt-([0-9]+)`) })
)

// IsReasoningModel applies the reference rule to the last path segment, lower-cased: the gpt-5 family
// except gpt-5-chat*, or an o-series model (o1, o3-mini, o4…). Later families (gpt-6*, which go-openai
// v1.43.0 knows as reasoning models that need the Responses API for tools) count too, except their -chat
// variants.
func IsReasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	if g := gptFamily().FindStringSubmatch(m); g != nil {
		n, err := strconv.Atoi(g[1])
		return err == nil && n >= 5 && !strings.HasPrefix(m[len(g[0]):], "-chat")
	}
	return oSeries().MatchString(m)
}

// strictChatModel reports a model name go-openai's client-side validator treats as a reasoning model on
// chat completions (o1*, o3*, o4*, gpt-5*: in practice gpt-5-chat*): it refuses max_tokens and a
// temperature other than 1 for them, so those are not sent.
func strictChatModel(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// Resolve merges env and the per-turn override: each non-empty override field wins. The environment model
// is prefix-stripped (ChatModel); an override model is used as given. ErrNoAPIKey when no key is left;
// ErrUserURLNeedsKey when the override names a base URL without its own key.
func Resolve(env Env, o *turnrequest.LLM) (Settings, error) {
	s := Settings{APIKey: env.APIKey, BaseURL: env.BaseURL, userPolicy: env.UserPolicy, userPolicyErr: env.UserPolicyErr,
		Retry: Retry{Max: env.MaxRetries}}
	model := env.Model
	if model == "" {
		model = DefaultModel
	}
	s.Model = ChatModel(model)
	var temp *float64
	if o != nil {
		if k := strings.TrimSpace(o.APIKey); k != "" {
			s.APIKey = k
		}
		if m := strings.TrimSpace(o.Model); m != "" {
			s.Model = m
		}
		if u := strings.TrimSpace(o.BaseURL); u != "" {
			s.BaseURL, s.UserBaseURL = u, true
		}
		temp = o.Temperature
	}
	if s.UserBaseURL && strings.TrimSpace(o.APIKey) == "" {
		return Settings{}, ErrUserURLNeedsKey
	}
	if strings.TrimSpace(s.APIKey) == "" {
		return Settings{}, ErrNoAPIKey
	}
	s.Reasoning = IsReasoningModel(s.Model)
	if !s.Reasoning {
		t := DefaultTemperature
		if temp != nil {
			t = *temp
		}
		s.Temperature = &t
	}
	return s, nil
}

// ToolCall is a function call asked for by the model.
type ToolCall struct {
	ID, Name, Arguments string
}

// Message is one message of a model call. Role is system, user, assistant or tool.
type Message struct {
	Role    string
	Content string
	// Images are data: URLs (or https URLs) sent as image parts of a user message.
	Images []string
	// ToolCalls are the calls of an assistant message.
	ToolCalls []ToolCall
	// ToolCallID is the call a tool message answers.
	ToolCallID string
	// Reasoning are the reasoning items of an assistant message (Result.Reasoning of the answer it
	// records), sent back before its content and calls on the Responses API so that a reasoning model keeps
	// its chain of thought across tool rounds; chat completions ignore them.
	Reasoning []json.RawMessage
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name, Description string
	// Parameters is the JSON Schema of the arguments.
	Parameters json.RawMessage
}

// Schema asks for structured output: a JSON object that matches Schema.
type Schema struct {
	Name   string
	Schema json.RawMessage
}

// Request is one model call.
type Request struct {
	Messages []Message
	Tools    []ToolSpec
	// Schema, when set, asks for structured output (not streamed).
	Schema *Schema
	// MaxTokens caps the completion (0: no cap).
	MaxTokens int
	// OnToken, when set, streams the answer: it receives every text chunk as it arrives.
	OnToken func(string)
}

// Result is the model's answer.
type Result struct {
	Content   string
	ToolCalls []ToolCall
	// Streamed reports that Content was delivered through OnToken.
	Streamed bool
	// Reasoning are the answer's reasoning items on the Responses API (type "reasoning", with their
	// encrypted_content: requests are sent with store false and include reasoning.encrypted_content), as
	// the API returned them. Put them in the assistant Message that records this answer.
	Reasoning []json.RawMessage
	// Stop is why the model stopped when it was not a normal end: StopLength (the output limit: the text,
	// or a call's arguments, may be cut) or StopContentFilter (the provider's filter withheld the rest).
	Stop string
	// Usage is the call's tokens as the provider reported them (all zero when it reported none).
	Usage Usage
}

// Usage is the tokens of one model call: chat completions' usage (streamed with stream_options.include_usage),
// the Responses API's input, output and total tokens.
type Usage struct {
	PromptTokens, CompletionTokens, TotalTokens int
}

// Zero reports a call the provider reported no tokens for.
func (u Usage) Zero() bool {
	return u.PromptTokens <= 0 && u.CompletionTokens <= 0 && u.TotalTokens <= 0
}

// usageOf is a call's usage, the total being the sum of the parts when the provider left it out.
func usageOf(prompt, completion, total int) Usage {
	if total <= 0 {
		total = prompt + completion
	}
	return Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: total}
}

// Result.Stop values: chat completions' finish_reason, and the Responses API's incomplete_details.reason
// mapped to them (max_output_tokens is StopLength).
const (
	StopLength        = "length"
	StopContentFilter = "content_filter"
)

// Model is one model call; the engine depends on this interface only.
type Model interface {
	Complete(ctx context.Context, req Request) (Result, error)
}

// Client is the implementation of Model: chat completions are sent as this package marshals them (so that
// every parameter set is sent, a zero temperature included), the Responses API through go-openai.
type Client struct {
	api      *openai.Client
	http     *http.Client
	baseURL  string
	settings Settings
}

// New returns the client for s; httpClient carries the requests (use the SSRF-safe client when
// s.UserBaseURL), nil means a plain http.Client. Its transport is wrapped to read the retry hints of the
// provider's answers.
func New(s Settings, httpClient *http.Client) *Client {
	cfg := openai.DefaultConfig(s.APIKey)
	if s.BaseURL != "" {
		cfg.BaseURL = strings.TrimRight(s.BaseURL, "/")
	}
	hc := http.Client{}
	if httpClient != nil {
		hc = *httpClient
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = recorder{base: base}
	cfg.HTTPClient = &hc
	return &Client{api: openai.NewClientWithConfig(cfg), http: &hc, baseURL: cfg.BaseURL, settings: s}
}

// Settings returns the client's settings.
func (c *Client) Settings() Settings { return c.settings }

// once is one attempt of a model call.
func (c *Client) once(ctx context.Context, req Request) (Result, error) {
	if c.settings.Reasoning {
		return c.responses(ctx, req)
	}
	return c.chat(ctx, req)
}

// Describe turns a go-openai error into one a person can read: "model error (HTTP 429 rate_limit): …".
// Context errors are returned unchanged so callers can test them with errors.Is.
func Describe(err error) error {
	if err == nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	var api *openai.APIError
	if errors.As(err, &api) {
		kind := api.Type
		if kind == "" {
			kind = "error"
		}
		return fmt.Errorf("model error (HTTP %d %s): %s", api.HTTPStatusCode, kind, api.Message)
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return fmt.Errorf("model error (HTTP %d): %s", reqErr.HTTPStatusCode, strings.TrimSpace(string(reqErr.Body)))
	}
	return fmt.Errorf("model error: %w", err)
}

func (c *Client) responses(ctx context.Context, req Request) (Result, error) {
	var input []any
	for _, m := range req.Messages {
		switch m.Role {
		case "tool":
			input = append(input, openai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: m.ToolCallID, Output: m.Content})
		case "assistant":
			for _, r := range m.Reasoning {
				input = append(input, r)
			}
			if m.Content != "" {
				input = append(input, openai.ResponseInputMessage{Type: "message", Role: "assistant", Content: m.Content})
			}
			for _, tc := range m.ToolCalls {
				input = append(input, map[string]any{"type": "function_call", "call_id": tc.ID, "name": tc.Name, "arguments": tc.Arguments})
			}
		default:
			if len(m.Images) == 0 {
				input = append(input, openai.ResponseInputMessage{Type: "message", Role: m.Role, Content: m.Content})
				continue
			}
			parts := []any{openai.ResponseInputText{Type: "input_text", Text: m.Content}}
			for _, img := range m.Images {
				parts = append(parts, openai.ResponseInputImage{Type: "input_image", ImageURL: img, Detail: "auto"})
			}
			input = append(input, openai.ResponseInputMessage{Type: "message", Role: m.Role, Content: parts})
		}
	}
	rr := openai.CreateResponseRequest{Model: c.settings.Model, Input: input}
	// Stateless (nothing kept at the provider): the reasoning comes back encrypted and is sent again with
	// the next round's input.
	store := false
	rr.Store = &store
	rr.Include = []openai.ResponseInclude{openai.ResponseIncludeReasoningEncryptedContent}
	if req.MaxTokens > 0 {
		// A reasoning model spends output tokens on reasoning first: a small cap (the title's 24) would
		// leave no visible text, so short calls get low effort and room to think.
		rr.MaxOutputTokens = max(req.MaxTokens, minReasoningOutputTokens)
		rr.Reasoning = &openai.ResponseReasoning{Effort: openai.ReasoningEffortLow}
	}
	for _, t := range req.Tools {
		rr.Tools = append(rr.Tools, openai.NewResponseFunctionTool(openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters,
		}))
	}
	if req.Schema != nil {
		rr.Text = &openai.ResponseTextConfig{Format: &openai.ResponseTextFormat{
			Type: "json_schema", Name: req.Schema.Name, Schema: req.Schema.Schema, Strict: true,
		}}
	}
	if req.OnToken != nil && req.Schema == nil {
		return c.responsesStream(ctx, rr, req.OnToken)
	}
	resp, err := c.api.CreateResponse(ctx, rr)
	if err != nil {
		return Result{}, err
	}
	return responseResult(resp)
}

// responsesStream streams a Responses API call: output_text deltas go to onToken, the final
// response.completed (or response.incomplete) event carries the function calls. A stream that fails returns
// no Result, as readChatStream.
func (c *Client) responsesStream(ctx context.Context, rr openai.CreateResponseRequest, onToken func(string)) (Result, error) {
	stream, err := c.api.CreateResponseStream(ctx, rr)
	if err != nil {
		return Result{}, err
	}
	defer stream.Close()
	var content strings.Builder
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return Result{}, errStreamCut
		}
		if errors.Is(err, io.EOF) {
			return Result{}, fmt.Errorf("%w (no response.completed)", errStreamCut)
		}
		if err != nil {
			if ctx.Err() != nil {
				return Result{}, ctx.Err()
			}
			return Result{}, err
		}
		switch ev.Type {
		case openai.ResponseStreamEventType("response.output_text.delta"):
			if ev.Delta != "" {
				content.WriteString(ev.Delta)
				onToken(ev.Delta)
			}
		case openai.ResponseStreamEventType("response.completed"), openai.ResponseStreamEventType("response.incomplete"):
			if ev.Response == nil {
				return Result{}, errors.New("model error: " + string(ev.Type) + " without a response")
			}
			res, err := responseResult(*ev.Response)
			if err != nil {
				return res, err
			}
			if content.Len() > 0 {
				res.Content, res.Streamed = content.String(), true
			}
			return res, nil
		case openai.ResponseStreamEventType("response.failed"), openai.ResponseStreamEventType("error"):
			msg := ev.Message
			if ev.Response != nil && ev.Response.Error != nil {
				msg = ev.Response.Error.Message
			}
			if msg == "" {
				msg = string(ev.Type)
			}
			return Result{}, errors.New("model error: " + msg)
		}
	}
}

// responseResult reads the text and function calls of a finished response.
func responseResult(resp openai.CreateResponseResponse) (Result, error) {
	if resp.Error != nil {
		return Result{}, fmt.Errorf("model error (%s): %s", resp.Error.Code, resp.Error.Message)
	}
	res := Result{Content: resp.GetOutputText()}
	if u := resp.Usage; u != nil {
		res.Usage = usageOf(u.InputTokens, u.OutputTokens, u.TotalTokens)
	}
	if d := resp.IncompleteDetails; d != nil {
		switch d.Reason {
		case "max_output_tokens":
			res.Stop = StopLength
		case "content_filter":
			res.Stop = StopContentFilter
		}
	}
	for _, raw := range resp.Output {
		data, err := json.Marshal(raw)
		if err != nil {
			continue
		}
		var item openai.ResponseOutputItem
		if json.Unmarshal(data, &item) != nil {
			continue
		}
		switch item.Type {
		case "function_call":
			res.ToolCalls = append(res.ToolCalls, ToolCall{ID: item.CallID, Name: item.Name, Arguments: item.Arguments})
		case "reasoning":
			res.Reasoning = append(res.Reasoning, json.RawMessage(data))
		}
	}
	return res, nil
}
