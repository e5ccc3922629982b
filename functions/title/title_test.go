package handler_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	handler "appwrite-agent/functions/title"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/scriptedllm"
)

// titleServer runs the function behind the local runtime (opts, with a temporary LogDir) with the env LLM
// pointing at model.
func titleServer(t *testing.T, model *scriptedllm.Server, opts localruntime.Options) *httptest.Server {
	t.Helper()
	t.Setenv("LLM_API_KEY", "env-key")
	t.Setenv("LLM_MODEL", "openai/gpt-4.1-mini")
	t.Setenv("LLM_BASE_URL", model.BaseURL())
	t.Setenv("AGENT_API_KEY", "session-key")
	opts.LogDir = t.TempDir()
	srv := httptest.NewServer(localruntime.New(envMain, opts))
	t.Cleanup(srv.Close)
	return srv
}

type reply struct {
	status int
	body   map[string]any
}

func post(t *testing.T, url, key, body string) reply {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-Session-API-Key", key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%d: body is not JSON: %q", res.StatusCode, raw)
	}
	return reply{res.StatusCode, m}
}

func TestTitleOverHTTP(t *testing.T) {
	model := scriptedllm.New(scriptedllm.Reply{Content: "Title: \"Fix Login Redirect Loop!\"\nSecond line"})
	defer model.Close()
	srv := titleServer(t, model, localruntime.Options{})
	for _, path := range []string{"/", "/api/title"} {
		model.Push(scriptedllm.Reply{Content: "Title: \"Fix Login Redirect Loop!\"\nSecond line"})
		r := post(t, srv.URL+path, "session-key", `{"message":"my login page keeps redirecting to itself","assistant_message":"Let's check the session cookie."}`)
		if r.status != 200 || r.body["title"] != "Fix Login Redirect Loop" {
			t.Fatalf("%s: %+v", path, r)
		}
	}
	reqs := model.Requests()
	body := reqs[0].JSON()
	if reqs[0].Header.Get("Authorization") != "Bearer env-key" || body["model"] != "gpt-4.1-mini" {
		t.Fatalf("env model not used: %v %v", reqs[0].Header, body["model"])
	}
	if body["max_tokens"] != float64(24) {
		t.Fatalf("max_tokens %v", body["max_tokens"])
	}
	msgs := body["messages"].([]any)
	user := msgs[1].(map[string]any)["content"].(string)
	if !strings.HasPrefix(user, "User message:\nmy login page") || !strings.Contains(user, "Agent reply (context only):\nLet's check") || !strings.HasSuffix(user, "Conversation title:") {
		t.Fatalf("prompt %q", user)
	}
}

func TestTitleErrors(t *testing.T) {
	model := scriptedllm.New()
	defer model.Close()
	srv := titleServer(t, model, localruntime.Options{})

	cases := []struct {
		name, key, body string
		replies         []scriptedllm.Reply
		status          int
		code            string
	}{
		{"no key", "", `{"message":"hi"}`, nil, 401, "unauthorized"},
		{"wrong key", "nope", `{"message":"hi"}`, nil, 401, "unauthorized"},
		{"not json", "session-key", `{"message":`, nil, 400, "invalid_request"},
		{"unknown field", "session-key", `{"message":"hi","extra":1}`, nil, 400, "invalid_request"},
		{"empty message", "session-key", `{"message":"   "}`, nil, 422, "invalid_request"},
		{"empty title", "session-key", `{"message":"hi"}`, []scriptedllm.Reply{{Content: "\"...\""}}, 422, "no_title"},
		{"model error", "session-key", `{"message":"hi"}`, []scriptedllm.Reply{{Error: &scriptedllm.APIError{Status: 429, Type: "rate_limit_exceeded", Message: "slow down"}}}, 502, "model_error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			model.Reset()
			model.Push(tc.replies...)
			r := post(t, srv.URL+"/", tc.key, tc.body)
			if r.status != tc.status || r.body["error"] != tc.code || r.body["detail"] == "" {
				t.Fatalf("%+v", r)
			}
			if tc.replies == nil && len(model.Requests()) != 0 {
				t.Fatal("the model was called for a refused request")
			}
		})
	}
	t.Run("no LLM key", func(t *testing.T) {
		t.Setenv("LLM_API_KEY", "")
		r := post(t, srv.URL+"/", "session-key", `{"message":"hi"}`)
		if r.status != 503 || r.body["detail"] != handler.MsgNoLLMKey {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("auth off only when switched off", func(t *testing.T) {
		t.Setenv("AGENT_API_KEY", "")
		if r := post(t, srv.URL+"/", "", `{"message":"hi"}`); r.status != 401 || r.body["error"] != "auth_not_configured" {
			t.Fatalf("%+v", r)
		}
		t.Setenv("AGENT_ALLOW_UNAUTHENTICATED", "true")
		model.Reset()
		model.Push(scriptedllm.Reply{Content: "Greeting"})
		if r := post(t, srv.URL+"/", "", `{"message":"hi"}`); r.status != 200 || r.body["title"] != "Greeting" {
			t.Fatalf("%+v", r)
		}
	})
}

func TestTitleHonoursTheLLMOverride(t *testing.T) {
	envModel := scriptedllm.New()
	defer envModel.Close()
	userModel := scriptedllm.New(scriptedllm.Reply{Content: "Billing Question"})
	defer userModel.Close()
	srv := titleServer(t, envModel, localruntime.Options{})

	body := `{"message":"why was I charged twice","llm":{"api_key":"user-key","model":"my-model","base_url":"` + userModel.BaseURL() + `"}}`
	// A user's base URL goes through the SSRF-safe client: loopback is refused without the allowlist.
	if r := post(t, srv.URL+"/", "session-key", body); r.status == 200 {
		t.Fatalf("loopback base_url reached without the allowlist: %+v", r)
	}
	t.Setenv("SAFEHTTP_ALLOW", "127.0.0.0/8")
	t.Setenv("SAFEHTTP_ALLOW_HTTP", "true")
	r := post(t, srv.URL+"/", "session-key", body)
	if r.status != 200 || r.body["title"] != "Billing Question" {
		t.Fatalf("%+v", r)
	}
	reqs := userModel.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer user-key" || reqs[0].Model != "my-model" {
		t.Fatalf("user endpoint got %+v", reqs)
	}
	if len(envModel.Requests()) != 0 {
		t.Fatal("the environment's model was called")
	}
	if r := post(t, srv.URL+"/", "session-key", `{"message":"x","llm":{"base_url":"`+userModel.BaseURL()+`"}}`); r.status != 422 {
		t.Fatalf("base_url without api_key: %+v", r)
	}
}

func TestEventHeaderIsIgnoredOnHTTPTrigger(t *testing.T) {
	model := scriptedllm.New()
	defer model.Close()
	srv := titleServer(t, model, localruntime.Options{Headers: map[string]string{"x-appwrite-trigger": "http"}})
	req, _ := http.NewRequest("POST", srv.URL+"/", strings.NewReader(`{"$id":"r1"}`))
	req.Header.Set("x-appwrite-event", "databases.agent.tables.conversations.rows.r1.create")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("a domain request with an event header was treated as an event: %d", res.StatusCode)
	}
}

// TestTitleRetries: a 503 and a 429 from the provider are retried (with the wait it asks for, kept short
// here through retry-after-ms) and the caller gets its title; each retry is logged and counted.
func TestTitleRetries(t *testing.T) {
	model := scriptedllm.New(
		scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 503, Message: "overloaded"}, Header: map[string]string{"retry-after-ms": "1"}},
		scriptedllm.Reply{Error: &scriptedllm.APIError{Status: 429, Type: "rate_limit_exceeded", Message: "slow down"}, Header: map[string]string{"retry-after-ms": "2"}},
		scriptedllm.Reply{Content: "Billing Question"})
	defer model.Close()
	var mu sync.Mutex
	var logs, errs string
	srv := titleServer(t, model, localruntime.Options{OnLog: func(_, l, e string) { mu.Lock(); logs, errs = logs+l, errs+e; mu.Unlock() }})
	r := post(t, srv.URL, "session-key", `{"message":"why was I charged twice?"}`)
	if r.status != 200 || r.body["title"] != "Billing Question" || len(model.Requests()) != 3 {
		t.Fatalf("%+v after %d requests", r, len(model.Requests()))
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs, `{"metric":"llm_retries_total","reason":"http_503","inc":1}`) ||
		!strings.Contains(logs, `{"metric":"llm_retries_total","reason":"http_429","inc":1}`) ||
		!strings.Contains(errs, "model call retry 2 of 2 after http_429 (status 429): waiting 2ms (Retry-After)") {
		t.Fatalf("logs %q errors %q", logs, errs)
	}
}
