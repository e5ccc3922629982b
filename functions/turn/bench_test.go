package handler_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	handler "appwrite-agent/functions/turn"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/scriptedllm"
)

// BenchmarkHTTPTurn is a whole turn through the local runtime against the scripted model over loopback
// HTTP: router, 10 tool rounds, a streamed answer (12 model calls). ns/roundtrip includes the scripted
// server and go-openai; compare with BenchmarkRawGoOpenAIStream in ./llm for the engine's share.
func BenchmarkHTTPTurn(b *testing.B) {
	const rounds = 10
	model := scriptedllm.New()
	defer model.Close()
	model.SetHandler(func(r scriptedllm.Request, _ int) scriptedllm.Reply {
		if !r.Stream {
			return route("platform", "bench", "")
		}
		n := bytes.Count(r.Body, []byte(`"role":"tool"`))
		if n < rounds {
			return scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{{Name: "current_time"}}}
		}
		return scriptedllm.Reply{Content: "The answer is here and it is short."}
	})
	b.Setenv("AGENT_API_KEY", testKey)
	b.Setenv("LLM_API_KEY", "k")
	b.Setenv("LLM_MODEL", "gpt-4o-mini")
	b.Setenv("LLM_BASE_URL", model.BaseURL())
	srv := httptest.NewServer(localruntime.New(handler.New(handler.LoadConfig()), localruntime.Options{LogDir: b.TempDir()}))
	defer srv.Close()
	body := []byte(`{"message":"What time is it?","history":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest("POST", srv.URL+"/", bytes.NewReader(body))
		req.Header.Set("X-Session-API-Key", testKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !bytes.Contains(data, []byte(`"type":"done"`)) {
			b.Fatalf("%d %s", res.StatusCode, data)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rounds+2), "ns/roundtrip")
}
