package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"appwrite-agent/shared/devkit/scriptedllm"
	"appwrite-agent/shared/turnrequest"
)

func TestIsReasoningModel(t *testing.T) {
	for m, want := range map[string]bool{"gpt-5": true, "openai/GPT-5.6": true, "gpt-5-mini": true, "gpt-5-chat-latest": false,
		"o1": true, "o3-mini": true, "o4-mini": true, "gpt-4o": false, "omni": false, "acme/o3": true, "llama-3": false,
		"gpt-6-sol": true, "gpt-6.1-sol": true, "gpt-6-chat": false, "gpt-4.1": false, "gpt-10": true} {
		if IsReasoningModel(m) != want {
			t.Errorf("IsReasoningModel(%q) != %v", m, want)
		}
	}
}

func TestResolve(t *testing.T) {
	if _, err := Resolve(Env{}, nil); !errors.Is(err, ErrNoAPIKey) {
		t.Fatal(err)
	}
	s, err := Resolve(Env{APIKey: "k"}, nil)
	if err != nil || s.Model != "gpt-5.6" || !s.Reasoning || s.Temperature != nil {
		t.Fatalf("%+v %v", s, err)
	}
	temp := 0.0
	if _, err := Resolve(Env{APIKey: "k"}, &turnrequest.LLM{BaseURL: "https://u"}); !errors.Is(err, ErrUserURLNeedsKey) {
		t.Fatal(err)
	}
	s, _ = Resolve(Env{APIKey: "k", Model: "openai/gpt-4o", BaseURL: "https://env"}, &turnrequest.LLM{APIKey: "u", Model: "openai/gpt-4o", BaseURL: " https://u ", Temperature: &temp})
	if s.Model != "openai/gpt-4o" || s.BaseURL != "https://u" || !s.UserBaseURL || *s.Temperature != 0 || s.Reasoning {
		t.Fatalf("%+v", s)
	}
	s, _ = Resolve(Env{APIKey: "k", Model: "gpt-4o"}, &turnrequest.LLM{})
	if *s.Temperature != DefaultTemperature || s.UserBaseURL {
		t.Fatalf("%+v", s)
	}
}

func TestChatStreamAccumulatesToolCalls(t *testing.T) {
	srv := scriptedllm.New(scriptedllm.Reply{Content: "a b", ToolCalls: []scriptedllm.ToolCall{
		{ID: "x", Name: "one", Arguments: `{"k":"v"}`}, {ID: "y", Name: "two"}}})
	defer srv.Close()
	c := New(Settings{APIKey: "k", Model: "m", BaseURL: srv.BaseURL()}, nil)
	var got []string
	res, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "q"}},
		OnToken: func(s string) { got = append(got, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "a |b" || !res.Streamed || len(res.ToolCalls) != 2 ||
		res.ToolCalls[0] != (ToolCall{ID: "x", Name: "one", Arguments: `{"k":"v"}`}) || res.ToolCalls[1].Arguments != "{}" {
		t.Fatalf("%q %+v", got, res)
	}
}

func TestDescribeAPIError(t *testing.T) {
	srv := scriptedllm.New(scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 401, Type: "invalid_api_key", Message: "bad key"}})
	defer srv.Close()
	c := New(Settings{APIKey: "k", Model: "o3", BaseURL: srv.BaseURL(), Reasoning: true}, nil)
	_, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "q"}}})
	if err == nil || err.Error() != "model error (HTTP 401 invalid_api_key): bad key" {
		t.Fatalf("%v", err)
	}
}

func TestStrictChatModelParams(t *testing.T) {
	srv := scriptedllm.New(scriptedllm.Reply{Content: "t"}, scriptedllm.Reply{Content: "t"})
	defer srv.Close()
	s, _ := Resolve(Env{APIKey: "k", Model: "gpt-5-chat-latest", BaseURL: srv.BaseURL()}, nil)
	if s.Reasoning {
		t.Fatal("gpt-5-chat is not a reasoning model")
	}
	if _, err := New(s, nil).Complete(context.Background(), Request{MaxTokens: 24, Messages: []Message{{Role: "user", Content: "q"}}}); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0].JSON()
	// gpt-5-chat* takes a temperature (the reference's _model_allows_custom_temperature): the default goes,
	// though go-openai's client would refuse anything but 1 for a gpt-5 name.
	if body["temperature"] != DefaultTemperature || body["max_completion_tokens"] != 24.0 || body["max_tokens"] != nil {
		t.Fatalf("%v", body)
	}
	s, _ = Resolve(Env{APIKey: "k", Model: "gpt-5.6", BaseURL: srv.BaseURL()}, nil)
	if _, err := New(s, nil).Complete(context.Background(), Request{MaxTokens: 24, Messages: []Message{{Role: "user", Content: "q"}}}); err != nil {
		t.Fatal(err)
	}
	body = srv.Requests()[1].JSON()
	if body["max_output_tokens"] != 1024.0 || body["reasoning"].(map[string]any)["effort"] != "low" {
		t.Fatalf("%v", body)
	}
}

// TestResponsesCarryReasoningAcrossToolRounds: a reasoning model's answer (not streamed here) returns its
// reasoning item with the encrypted content it asked for, and the next request sends that item back
// before the function call it led to; chat completions never see it.
func TestResponsesCarryReasoningAcrossToolRounds(t *testing.T) {
	srv := scriptedllm.New(
		scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{{ID: "c1", Name: "lookup"}},
			Reasoning: &scriptedllm.Reasoning{ID: "rs_1", EncryptedContent: "enc-1"}},
		scriptedllm.Reply{Content: "done"},
		scriptedllm.Reply{Content: "chat"},
	)
	defer srv.Close()
	s, err := Resolve(Env{APIKey: "k", Model: "gpt-5.6", BaseURL: srv.BaseURL()}, nil)
	if err != nil || !s.Reasoning {
		t.Fatalf("%+v %v", s, err)
	}
	c := New(s, nil)
	msgs := []Message{{Role: "user", Content: "q"}}
	res, err := c.Complete(context.Background(), Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reasoning) != 1 || !strings.Contains(string(res.Reasoning[0]), `"encrypted_content":"enc-1"`) || len(res.ToolCalls) != 1 {
		t.Fatalf("%+v", res)
	}
	msgs = append(msgs, Message{Role: "assistant", ToolCalls: res.ToolCalls, Reasoning: res.Reasoning},
		Message{Role: "tool", ToolCallID: "c1", Content: "42"})
	if _, err := c.Complete(context.Background(), Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	body := string(srv.Requests()[1].Body)
	r, f := strings.Index(body, `"id":"rs_1"`), strings.Index(body, `"type":"function_call"`)
	if r < 0 || f < r || !strings.Contains(body, `"encrypted_content":"enc-1"`) || !strings.Contains(body, `"store":false`) {
		t.Fatalf("second request %s", body)
	}

	chat := New(Settings{APIKey: "k", Model: "gpt-4o-mini", BaseURL: srv.BaseURL()}, nil)
	if _, err := chat.Complete(context.Background(), Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	if body := string(srv.Requests()[2].Body); strings.Contains(body, "rs_1") || strings.Contains(body, "include") {
		t.Fatalf("chat request carries reasoning: %s", body)
	}
}
