package engine_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"appwrite-agent/functions/turn/builtins"
	"appwrite-agent/functions/turn/engine"
	"appwrite-agent/functions/turn/request"
	"appwrite-agent/functions/turn/timeline"
	"appwrite-agent/functions/turn/tools"
	"appwrite-agent/shared/llm"
	"appwrite-agent/shared/turnrequest"
)

// instantModel answers without I/O: the router picks platform, then rounds tool-call rounds, then an
// answer streamed in 8 tokens. It measures the engine alone.
type instantModel struct {
	rounds int
	n      int
}

var benchRoute = mustJSON(engine.Route{Next: engine.AgentPlatform, Reason: "bench"})

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func (m *instantModel) Complete(_ context.Context, req llm.Request) (llm.Result, error) {
	i := m.n
	m.n++
	switch {
	case req.Schema != nil:
		return llm.Result{Content: benchRoute}, nil
	case i <= m.rounds:
		return llm.Result{ToolCalls: []llm.ToolCall{{ID: "c" + strconv.Itoa(i), Name: "current_time", Arguments: "{}"}}}, nil
	default:
		for _, w := range []string{"The ", "answer ", "is ", "here ", "and ", "it ", "is ", "short."} {
			req.OnToken(w)
		}
		return llm.Result{Content: "The answer is here and it is short.", Streamed: true}, nil
	}
}

// BenchmarkTurnRoundTrip runs whole turns (router + 10 tool rounds + answer = 12 model calls) against an
// instant in-process model and reports the engine's cost per model round trip.
func BenchmarkTurnRoundTrip(b *testing.B) {
	const rounds = 10
	reg := builtins.Registry(tools.Web{}, nil, nil)
	turn := request.Turn{Message: "What time is it?", History: []turnrequest.HistoryMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}},
		Memories: []turnrequest.Memory{{Key: "tone", Content: "Be brief.", Category: "preference", Priority: 1}}}
	b.ReportAllocs()
	for b.Loop() {
		e := &engine.Engine{Model: &instantModel{rounds: rounds}, Tools: reg}
		var rec timeline.Recorder
		e.Run(context.Background(), turn, rec.Emit)
		if _, err := timeline.SSE(rec.Events()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rounds+2), "ns/roundtrip")
}
