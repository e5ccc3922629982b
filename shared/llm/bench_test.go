package llm

import (
	"context"
	"errors"
	"io"
	"testing"

	"appwrite-agent/shared/devkit/scriptedllm"

	openai "github.com/sashabaranov/go-openai"
)

var benchMsgs = []Message{{Role: "system", Content: "You are a test."}, {Role: "user", Content: "What time is it?"}}

// BenchmarkClientStream is one streamed chat call through Client.Complete against the scripted server.
func BenchmarkClientStream(b *testing.B) {
	srv := scriptedllm.New()
	defer srv.Close()
	srv.SetHandler(func(scriptedllm.Request, int) scriptedllm.Reply {
		return scriptedllm.Reply{Content: "The answer is here and it is short."}
	})
	c := New(Settings{APIKey: "k", Model: "gpt-4o-mini", BaseURL: srv.BaseURL()}, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Complete(context.Background(), Request{Messages: benchMsgs, OnToken: func(string) {}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawGoOpenAIStream is the same call made with go-openai directly: the baseline for
// BenchmarkClientStream.
func BenchmarkRawGoOpenAIStream(b *testing.B) {
	srv := scriptedllm.New()
	defer srv.Close()
	srv.SetHandler(func(scriptedllm.Request, int) scriptedllm.Reply {
		return scriptedllm.Reply{Content: "The answer is here and it is short."}
	})
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = srv.BaseURL()
	api := openai.NewClientWithConfig(cfg)
	req := openai.ChatCompletionRequest{Model: "gpt-4o-mini", Stream: true, Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "You are a test."}, {Role: "user", Content: "What time is it?"}}}
	b.ReportAllocs()
	for b.Loop() {
		st, err := api.CreateChatCompletionStream(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := st.Recv(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		st.Close()
	}
}
