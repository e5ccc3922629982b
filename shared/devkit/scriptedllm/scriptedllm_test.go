package scriptedllm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func client(s *Server) *openai.Client {
	cfg := openai.DefaultConfig("test-key")
	cfg.BaseURL = s.BaseURL()
	return openai.NewClientWithConfig(cfg)
}

var msgs = []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}

func TestChatNonStreamAndRecording(t *testing.T) {
	s := New(Reply{Content: "hello", ToolCalls: []ToolCall{{Name: "f", Arguments: `{"a":1}`}}})
	defer s.Close()
	res, err := client(s).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "m1", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Choices[0].Message
	if m.Content != "hello" || len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != "call_1" || m.ToolCalls[0].Function.Arguments != `{"a":1}` ||
		res.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("%+v", res)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Model != "m1" || reqs[0].Stream || reqs[0].Path != "/v1/chat/completions" ||
		reqs[0].Header.Get("Authorization") != "Bearer test-key" || reqs[0].JSON()["messages"] == nil {
		t.Fatalf("%+v", reqs)
	}
}

func TestChatStream(t *testing.T) {
	s := New(Reply{Content: "one two three", ToolCalls: []ToolCall{{ID: "x", Name: "f", Arguments: `{"k":"v"}`}}})
	defer s.Close()
	st, err := client(s).CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{Model: "m", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var text, args strings.Builder
	var pieces int
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d := c.Choices[0].Delta; d.Content != "" {
			text.WriteString(d.Content)
			pieces++
		} else if len(d.ToolCalls) > 0 {
			args.WriteString(d.ToolCalls[0].Function.Arguments)
		}
	}
	if text.String() != "one two three" || pieces != 3 || args.String() != `{"k":"v"}` {
		t.Fatalf("%q (%d) %q", text.String(), pieces, args.String())
	}
}

// A stalled stream sends its first chunks and then nothing until the client gives up.
func TestChatStreamStalls(t *testing.T) {
	s := New(Reply{Content: "one two three", StallAfter: 1})
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := client(s).CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{Model: "m", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var text strings.Builder
	for text.String() == "" {
		c, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(c.Choices[0].Delta.Content)
	}
	wait, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	if got, _ := s.WaitHangUps(wait, 0); len(got) != 0 {
		t.Fatalf("hang-ups %v before the client went away", got)
	}
	cancel() // the only way the stream ends now
	if _, err := st.Recv(); err == nil || text.String() != "one " {
		t.Fatalf("after %q: %v", text.String(), err)
	}
	if got, err := s.WaitHangUps(wait, 1); err != nil || len(got) != 1 {
		t.Fatalf("the stalled stream's hang-up: %v %v", got, err)
	}
}

func TestResponses(t *testing.T) {
	s := New(Reply{Content: "answer", ToolCalls: []ToolCall{{ID: "c1", Name: "f"}}})
	defer s.Close()
	res, err := client(s).CreateResponse(context.Background(), openai.CreateResponseRequest{Model: "o3", Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetOutputText() != "answer" || len(res.Output) != 2 {
		t.Fatalf("%+v", res)
	}
	if s.Requests()[0].Path != "/v1/responses" {
		t.Fatal(s.Requests()[0].Path)
	}
}

func TestErrorsDelaysFallbackHandler(t *testing.T) {
	s := New(Reply{Error: &APIError{Status: 429, Type: "rate_limit_exceeded", Code: "rate", Message: "slow down"}},
		Reply{Delay: 5 * time.Second, Content: "late"})
	defer s.Close()
	c := client(s)
	_, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "m", Messages: msgs})
	var api *openai.APIError
	if !errors.As(err, &api) || api.HTTPStatusCode != 429 || api.Message != "slow down" || api.Type != "rate_limit_exceeded" {
		t.Fatalf("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "m", Messages: msgs}); err == nil {
		t.Fatal("slow answer arrived before the deadline")
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("delay ignored the deadline")
	}
	// Queue empty: a 500 names the problem; then a fallback; then a handler.
	_, err = c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "m", Messages: msgs})
	if !errors.As(err, &api) || api.HTTPStatusCode != 500 || api.Message != ExhaustedMessage {
		t.Fatalf("%v", err)
	}
	s.SetFallback(Reply{Content: "again"})
	res, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "m", Messages: msgs})
	if err != nil || res.Choices[0].Message.Content != "again" {
		t.Fatal(err)
	}
	s.SetHandler(func(r Request, i int) Reply { return Reply{Content: r.Model} })
	res, err = c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "echo-me", Messages: msgs})
	if err != nil || res.Choices[0].Message.Content != "echo-me" {
		t.Fatal(err)
	}
	if len(s.Requests()) != 5 {
		t.Fatalf("%d requests", len(s.Requests()))
	}
	resp, err := http.Get(s.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatal(resp.StatusCode)
	}
	s.Reset()
	if len(s.Requests()) != 0 || s.Pending() != 0 {
		t.Fatal("reset")
	}
}

func TestSplit(t *testing.T) {
	if got := strings.Join(Split("a  b c", 0), "|"); got != "a  |b |c" {
		t.Fatal(got)
	}
	if got := strings.Join(Split("abcdef", 4), "|"); got != "ab|cd|ef" {
		t.Fatal(got)
	}
	if Split("", 3) != nil {
		t.Fatal("empty")
	}
}

// TestDivert checks that diverted requests take their own replies, are recorded apart, and leave the queue,
// the handler's index and Requests to the others; Reset keeps the diversion without its replies.
func TestDivert(t *testing.T) {
	s := New(Reply{Content: "main-1"}, Reply{Content: "main-2"})
	defer s.Close()
	side := func(r Request) bool { return strings.Contains(string(r.Body), "side") }
	s.Divert(side, Reply{Content: "side-1"})
	ask := func(text string) (string, error) {
		res, err := client(s).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "m",
			Messages: []openai.ChatCompletionMessage{{Role: "user", Content: text}}})
		if err != nil {
			return "", err
		}
		return res.Choices[0].Message.Content, nil
	}
	for _, c := range []struct{ ask, want string }{{"side", "side-1"}, {"a", "main-1"}, {"b", "main-2"}} {
		if got, err := ask(c.ask); err != nil || got != c.want {
			t.Fatalf("%s: %q %v, want %q", c.ask, got, err, c.want)
		}
	}
	if _, err := ask("side again"); err == nil || !strings.Contains(err.Error(), ExhaustedMessage) {
		t.Fatalf("used-up diversion: %v", err)
	}
	if n, d := len(s.Requests()), len(s.Diverted()); n != 2 || d != 2 {
		t.Fatalf("%d requests, %d diverted", n, d)
	}
	s.SetHandler(func(r Request, i int) Reply { return Reply{Content: "handled-" + string(rune('0'+i))} })
	s.PushDiverted(Reply{Content: "side-2"})
	if got, _ := ask("side"); got != "side-2" {
		t.Fatalf("pushed diversion: %q", got)
	}
	if got, _ := ask("c"); got != "handled-2" {
		t.Fatalf("handler index: %q", got)
	}
	s.Reset()
	if len(s.Diverted()) != 0 {
		t.Fatal("Reset kept diverted requests")
	}
	if _, err := ask("side"); err == nil || len(s.Requests()) != 0 {
		t.Fatalf("after Reset a side request is still diverted: %v, %d requests", err, len(s.Requests()))
	}
}

// TestFaults: the faults as go-openai (an independent client) sees them.
func TestFaults(t *testing.T) {
	s := New(
		Reply{Error: &APIError{Status: 429, Type: "rate_limit_exceeded", Message: "slow down"}, Header: map[string]string{"Retry-After": "1", "retry-after-ms": "1000"}},
		Reply{Reset: true},
		Reply{Content: "one two three", CutAfter: 2},
		Reply{Content: "cut", Finish: "length"},
		Reply{Content: "hidden", Finish: "content_filter"},
		Reply{},
	)
	defer s.Close()
	// The 429 with its headers, read raw.
	res, err := http.Post(s.BaseURL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "1" || res.Header.Get("retry-after-ms") != "1000" || !strings.Contains(string(body), `"type":"rate_limit_exceeded"`) {
		t.Fatalf("%d %v %s", res.StatusCode, res.Header, body)
	}
	c := client(s)
	ctx := context.Background()
	if _, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "m", Messages: msgs}); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("reset: %v", err)
	}
	stream, err := c.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{Model: "m", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for {
		chunk, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				t.Fatal("a cut stream ended cleanly")
			}
			break
		}
		for _, ch := range chunk.Choices {
			got += ch.Delta.Content
			if ch.FinishReason != "" {
				t.Fatalf("finish_reason %q in a cut stream", ch.FinishReason)
			}
		}
	}
	stream.Close()
	if got != "one two " {
		t.Fatalf("cut stream %q", got)
	}
	for _, want := range []openai.FinishReason{"length", "content_filter", "stop"} {
		r, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "m", Messages: msgs})
		if err != nil || r.Choices[0].FinishReason != want {
			t.Fatalf("%v %+v", err, r)
		}
		if want == "stop" && (r.Choices[0].Message.Content != "" || len(r.Choices[0].Message.ToolCalls) != 0) {
			t.Fatalf("empty answer %+v", r)
		}
	}
	// On the Responses API a length stop is an incomplete response.
	s.Push(Reply{Content: "cut", Finish: "length"})
	r, err := c.CreateResponse(ctx, openai.CreateResponseRequest{Model: "o3", Input: "hi"})
	if err != nil || r.Status != "incomplete" || r.IncompleteDetails == nil || r.IncompleteDetails.Reason != "max_output_tokens" {
		t.Fatalf("%v %+v", err, r)
	}
}
