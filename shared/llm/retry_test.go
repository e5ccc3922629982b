package llm

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/shared/devkit/scriptedllm"
	"appwrite-agent/shared/turnrequest"
)

// waits records the retry policy's waits instead of sleeping.
type waits struct {
	mu     sync.Mutex
	slept  []time.Duration
	events []RetryEvent
}

func (w *waits) policy(maxRetries int) Retry {
	return Retry{Max: maxRetries, Jitter: func() float64 { return 0.5 },
		Sleep: func(ctx context.Context, d time.Duration) error {
			w.mu.Lock()
			w.slept = append(w.slept, d)
			w.mu.Unlock()
			return ctx.Err()
		},
		OnRetry: func(e RetryEvent) {
			w.mu.Lock()
			w.events = append(w.events, e)
			w.mu.Unlock()
		}}
}

func (w *waits) reasons() string {
	var out []string
	for _, e := range w.events {
		out = append(out, e.Reason)
	}
	return strings.Join(out, ",")
}

// client is a chat client of srv with the recording policy.
func client(srv *scriptedllm.Server, w *waits, maxRetries int, model string) *Client {
	s, err := Resolve(Env{APIKey: "k", Model: model, BaseURL: srv.BaseURL(), MaxRetries: maxRetries}, nil)
	if err != nil {
		panic(err)
	}
	s.Retry = w.policy(maxRetries)
	return New(s, nil)
}

var question = []Message{{Role: "user", Content: "q"}}

func TestRetryHonoursRetryAfter(t *testing.T) {
	srv := scriptedllm.New(
		scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 429, Type: "rate_limit_exceeded", Message: "Rate limit reached"},
			Header: map[string]string{"Retry-After": "1"}},
		scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 429, Message: "again"}, Header: map[string]string{"retry-after-ms": "250", "Retry-After": "9"}},
		scriptedllm.Reply{Content: "fine"})
	defer srv.Close()
	w := &waits{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := client(srv, w, 2, "gpt-4o").Complete(ctx, Request{Messages: question})
	if err != nil || res.Content != "fine" {
		t.Fatalf("%+v %v", res, err)
	}
	// retry-after-ms wins over Retry-After (OpenAI's SDKs read it first).
	if len(w.slept) != 2 || w.slept[0] != time.Second || w.slept[1] != 250*time.Millisecond || len(srv.Requests()) != 3 {
		t.Fatalf("slept %v after %d requests", w.slept, len(srv.Requests()))
	}
	e := w.events[0]
	if e.Attempt != 1 || e.Max != 2 || e.Reason != "http_429" || e.Status != 429 || !e.FromProvider ||
		!strings.Contains(e.String(), "waiting 1s (Retry-After)") || e.Metric() != `{"metric":"llm_retries_total","reason":"http_429","inc":1}` {
		t.Fatalf("%+v %s %s", e, e, e.Metric())
	}
}

func TestRetryBacksOffOnServerErrors(t *testing.T) {
	srv := scriptedllm.New(
		scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 500, Message: "boom"}},
		scriptedllm.Reply{Status: 502, Body: "<html>Bad Gateway</html>"},
		scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 503, Message: "overloaded"}})
	defer srv.Close()
	w := &waits{}
	_, err := client(srv, w, 2, "gpt-4o").Complete(context.Background(), Request{Messages: question})
	// Two retries, then the third failure is the answer; full jitter at 0.5 of 0.5 s and 1 s.
	if err == nil || err.Error() != "model error (HTTP 503 server_error): overloaded" || len(srv.Requests()) != 3 {
		t.Fatalf("%v after %d requests", err, len(srv.Requests()))
	}
	if w.reasons() != "http_500,http_502" || w.slept[0] != 250*time.Millisecond || w.slept[1] != 500*time.Millisecond {
		t.Fatalf("%s %v", w.reasons(), w.slept)
	}
}

func TestRetryNeverOnClientErrors(t *testing.T) {
	srv := scriptedllm.New(
		scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 400, Type: "invalid_request_error", Message: "bad"}},
		scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 503, Message: "no"}, Header: map[string]string{"x-should-retry": "false"}},
		scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 400, Message: "asked"}, Header: map[string]string{"x-should-retry": "true"}},
		scriptedllm.Reply{Content: "ok"})
	defer srv.Close()
	w := &waits{}
	c := client(srv, w, 2, "gpt-4o")
	for _, want := range []string{"HTTP 400 invalid_request_error", "HTTP 503"} {
		if _, err := c.Complete(context.Background(), Request{Messages: question}); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%v, want %s", err, want)
		}
	}
	if len(w.events) != 0 {
		t.Fatalf("retried: %s", w.reasons())
	}
	if res, err := c.Complete(context.Background(), Request{Messages: question}); err != nil || res.Content != "ok" || w.reasons() != "http_400" {
		t.Fatalf("x-should-retry: true: %v %s", err, w.reasons())
	}
}

func TestRetryConnectionFailures(t *testing.T) {
	srv := scriptedllm.New(
		scriptedllm.Reply{Reset: true},
		scriptedllm.Reply{CutAfter: 1}, // streamed: dies after the role chunk, before a token
		scriptedllm.Reply{Content: "after two failures"})
	defer srv.Close()
	w := &waits{}
	var tokens []string
	res, err := client(srv, w, 2, "gpt-4o").Complete(context.Background(), Request{Messages: question,
		OnToken: func(s string) { tokens = append(tokens, s) }})
	if err != nil || res.Content != "after two failures" || strings.Join(tokens, "") != "after two failures" {
		t.Fatalf("%+v %v %q", res, err, tokens)
	}
	if w.reasons() != "connection_reset,stream_cut" {
		t.Fatalf("reasons %s", w.reasons())
	}

	// Refused: nothing listens on the port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	w = &waits{}
	s, _ := Resolve(Env{APIKey: "k", Model: "gpt-4o", BaseURL: "http://" + addr + "/v1"}, nil)
	s.Retry = w.policy(1)
	if _, err := New(s, nil).Complete(context.Background(), Request{Messages: question}); err == nil || w.reasons() != "connection_refused" {
		t.Fatalf("%v %s", err, w.reasons())
	}
}

// TestNoRetryAfterTokens: once a token went out, a cut stream is the answer (a retry would repeat it).
func TestNoRetryAfterTokens(t *testing.T) {
	srv := scriptedllm.New(scriptedllm.Reply{Content: "one two three", CutAfter: 2}, scriptedllm.Reply{Content: "never"})
	defer srv.Close()
	w := &waits{}
	var tokens []string
	_, err := client(srv, w, 2, "gpt-4o").Complete(context.Background(), Request{Messages: question,
		OnToken: func(s string) { tokens = append(tokens, s) }})
	if err == nil || strings.Join(tokens, "") != "one two " || len(srv.Requests()) != 1 || len(w.events) != 0 {
		t.Fatalf("%v %q %d", err, tokens, len(srv.Requests()))
	}
	if !strings.Contains(err.Error(), "the stream ended before the answer was finished") {
		t.Fatal(err)
	}
}

// TestRetryNeverPastTheDeadline: a Retry-After beyond the deadline ends the call at once with the wait
// named; a backoff beyond it ends it with the provider's error.
func TestRetryNeverPastTheDeadline(t *testing.T) {
	srv := scriptedllm.New(
		scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 429, Type: "rate_limit_exceeded", Message: "Rate limit reached"},
			Header: map[string]string{"Retry-After": "30"}},
		scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 503, Message: "busy"}})
	defer srv.Close()
	w := &waits{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := client(srv, w, 2, "gpt-4o")
	_, err := c.Complete(ctx, Request{Messages: question})
	var long *WaitTooLongError
	if !errors.As(err, &long) || long.Wait != 30*time.Second || long.Status != 429 || len(w.slept) != 0 {
		t.Fatalf("%v %v", err, w.slept)
	}
	if msg := err.Error(); !strings.Contains(msg, "rate limit") || !strings.Contains(msg, "wait 30s") || !strings.Contains(msg, "Rate limit reached") {
		t.Fatal(msg)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	c.settings.Retry.Jitter = func() float64 { return 0.99 } // 495 ms > the 100 ms left
	if _, err := c.Complete(short, Request{Messages: question}); err == nil || errors.As(err, &long) || !strings.Contains(err.Error(), "HTTP 503") {
		t.Fatalf("%v", err)
	}
	if len(w.slept) != 0 || len(srv.Requests()) != 2 {
		t.Fatalf("%v %d", w.slept, len(srv.Requests()))
	}
}

func TestRetryWaitBounds(t *testing.T) {
	r := Retry{Jitter: func() float64 { return 0.999999 }}
	for n, bound := range map[int]time.Duration{0: 500 * time.Millisecond, 1: time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 60: 8 * time.Second} {
		if d, asked := r.wait(n, nil, true); asked || d >= bound || d < bound*99/100 {
			t.Errorf("retry %d: %v, bound %v", n, d, bound)
		}
	}
	r.Jitter = func() float64 { return 0 }
	if d, _ := r.wait(2, nil, true); d != 0 {
		t.Errorf("full jitter starts at 0: %v", d)
	}
	h := http.Header{}
	h.Set("Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
	if d, asked := r.wait(0, h, true); !asked || d < 59*time.Minute {
		t.Errorf("date: %v %v", d, asked)
	}
	if _, asked := r.wait(0, h, false); asked {
		t.Error("without a deadline an hour is not honoured (the SDKs' 60 s bound)")
	}
	h.Set("Retry-After", "soon")
	if _, asked := r.wait(0, h, true); asked {
		t.Error("a bad Retry-After is ignored")
	}
}

func TestRetryOffAndCancelled(t *testing.T) {
	srv := scriptedllm.New(scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 503, Message: "x"}},
		scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 503, Message: "x"}})
	defer srv.Close()
	w := &waits{}
	if _, err := client(srv, w, 0, "gpt-4o").Complete(context.Background(), Request{Messages: question}); err == nil || len(srv.Requests()) != 1 {
		t.Fatalf("LLM_MAX_RETRIES=0 retried: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := client(srv, w, 2, "gpt-4o")
	c.settings.Retry.Sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	if _, err := c.Complete(ctx, Request{Messages: question}); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
}

// TestExactTemperature: what the model server receives. A chat model gets the caller's temperature, 0
// included (go-openai's omitempty would drop it), gpt-5-chat* too (go-openai's client refuses all but 1);
// a reasoning model gets none.
func TestExactTemperature(t *testing.T) {
	srv := scriptedllm.New()
	srv.SetFallback(scriptedllm.Reply{Content: "ok"})
	defer srv.Close()
	zero, warm := 0.0, 0.7
	for _, tc := range []struct {
		model string
		temp  *float64
		want  any
	}{{"gpt-4o", &zero, 0.0}, {"gpt-4o", nil, DefaultTemperature}, {"gpt-5-chat-latest", &zero, 0.0},
		{"gpt-5-chat-latest", &warm, 0.7}, {"o3-mini", &zero, nil}, {"gpt-5.6", &warm, nil}} {
		s, err := Resolve(Env{APIKey: "k", Model: tc.model, BaseURL: srv.BaseURL()}, &turnrequest.LLM{Temperature: tc.temp})
		if err != nil {
			t.Fatal(err)
		}
		for _, stream := range []bool{false, true} {
			srv.Reset()
			srv.SetFallback(scriptedllm.Reply{Content: "ok"})
			req := Request{Messages: question}
			if stream {
				req.OnToken = func(string) {}
			}
			if _, err := New(s, nil).Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			body := srv.Requests()[0].JSON()
			got, present := body["temperature"]
			if (tc.want == nil) == present || (present && got != tc.want) {
				t.Errorf("%s temperature %v (stream %v): sent %v %v", tc.model, tc.temp, stream, got, present)
			}
		}
	}
}

func TestStopReasons(t *testing.T) {
	srv := scriptedllm.New()
	defer srv.Close()
	for _, model := range []string{"gpt-4o", "gpt-5.6"} {
		for _, finish := range []string{"length", "content_filter", ""} {
			for _, stream := range []bool{false, true} {
				srv.Push(scriptedllm.Reply{Content: "partial", Finish: finish})
				s, _ := Resolve(Env{APIKey: "k", Model: model, BaseURL: srv.BaseURL()}, nil)
				req := Request{Messages: question}
				if stream {
					req.OnToken = func(string) {}
				}
				res, err := New(s, nil).Complete(context.Background(), req)
				if err != nil || res.Stop != finish || res.Content != "partial" {
					t.Errorf("%s %q stream %v: %+v %v", model, finish, stream, res, err)
				}
			}
		}
	}
}

// TestRetryResponsesAPI: a reasoning model's calls (through go-openai) are retried the same way: a 503, then
// a stream that dies before its first delta.
func TestRetryResponsesAPI(t *testing.T) {
	srv := scriptedllm.New(
		scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 503, Message: "busy"}, Header: map[string]string{"retry-after-ms": "7"}},
		scriptedllm.Reply{CutAfter: 1}, // response.created, then the connection dies
		scriptedllm.Reply{Content: "thought it through"})
	defer srv.Close()
	w := &waits{}
	var tokens []string
	res, err := client(srv, w, 2, "gpt-5.6").Complete(context.Background(), Request{Messages: question,
		OnToken: func(s string) { tokens = append(tokens, s) }})
	if err != nil || res.Content != "thought it through" || strings.Join(tokens, "") != "thought it through" {
		t.Fatalf("%+v %v", res, err)
	}
	if w.reasons() != "http_503,stream_cut" || w.slept[0] != 7*time.Millisecond || srv.Requests()[0].Path != "/v1/responses" {
		t.Fatalf("%s %v", w.reasons(), w.slept)
	}
}
