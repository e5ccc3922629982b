package handler_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"appwrite-agent/functions/turn/progress"
	"appwrite-agent/shared/devkit/scriptedllm"
)

// slowModel answers every call after delay: the router, then rounds tool calls (current_time), then a
// streamed answer, then the title.
func slowModel(st *stack, delay time.Duration, rounds int) {
	st.model.SetHandler(func(r scriptedllm.Request, _ int) scriptedllm.Reply {
		if !r.Stream {
			if bytes.Contains(r.Body, []byte(`"name":"Route"`)) {
				return scriptedllm.Reply{JSON: `{"next":"platform","reason":"bench","final_answer":""}`, Delay: delay}
			}
			return scriptedllm.Reply{Content: "Bench", Delay: delay}
		}
		if bytes.Count(r.Body, []byte(`"role":"tool"`)) < rounds {
			return scriptedllm.Reply{ToolCalls: []scriptedllm.ToolCall{{Name: "current_time", Arguments: "{}"}}, Delay: delay}
		}
		return scriptedllm.Reply{Content: "Here is the answer, in a few words.", Delay: delay}
	})
}

// watchTimed is watch with the arrival time of each row.
func (b *browser) watchTimed() ([]progressRow, []time.Time) {
	var rows []progressRow
	var at []time.Time
	for {
		m := b.read()
		now := time.Now()
		var ev struct {
			Payload progressRow `json:"payload"`
		}
		must(b.t, json.Unmarshal(m.Data, &ev))
		rows = append(rows, ev.Payload)
		at = append(at, now)
		if ev.Payload.Type == "complete" {
			return rows, at
		}
	}
}

func percentile(xs []time.Duration, p float64) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkRealtimeLatency: the scripted model answers each call after 300 ms; an async turn (router, 3 tool
// rounds, answer, title) is watched through the stand-in's Realtime as a browser would. first_ms is from
// the execution request to the first row's arrival; p95_ms and max_ms are from each event's emission (the
// row's time) to its arrival.
func BenchmarkRealtimeLatency(b *testing.B) {
	st := newStack(b)
	slowModel(st, 300*time.Millisecond, 3)
	session, _ := st.aw.CreateSession(progProject, "alice")
	var firsts, lags []time.Duration
	for i := 0; i < b.N; i++ {
		turnID := "bench-" + strconv.Itoa(i)
		br := openBrowser(b, st, session, turnID)
		start := time.Now()
		status, _ := st.execute(b, session, true, map[string]any{"message": "m", "async": true,
			"progress": map[string]any{"realtime": true, "turn_id": turnID}})
		if status != http.StatusAccepted {
			b.Fatalf("execution %d", status)
		}
		rows, at := br.watchTimed()
		decodeRows(b, rows)
		firsts = append(firsts, at[0].Sub(start))
		for j, r := range rows {
			emitted, err := time.Parse(progress.TimeFormat, r.Time)
			must(b, err)
			lags = append(lags, at[j].Sub(emitted))
		}
		_ = br.ws.CloseNow()
	}
	b.ReportMetric(float64(percentile(firsts, 0.5).Microseconds())/1000, "first_ms")
	b.ReportMetric(float64(percentile(lags, 0.95).Microseconds())/1000, "p95_ms")
	b.ReportMetric(float64(percentile(lags, 1).Microseconds())/1000, "max_ms")
	b.ReportMetric(float64(len(lags))/float64(b.N), "events/turn")
}

// BenchmarkAsyncTurn90s: an async turn of about 90 s (300 ms per model call, 290 tool rounds) runs to the
// end and its timeline arrives whole and in order through Realtime. It takes 90 s: set TURN_BENCH_LONG=1.
//
//	TURN_BENCH_LONG=1 go test -run '^$' -bench AsyncTurn90s -benchtime 1x .
func BenchmarkAsyncTurn90s(b *testing.B) {
	if os.Getenv("TURN_BENCH_LONG") != "1" {
		b.Skip("takes 90 s; set TURN_BENCH_LONG=1")
	}
	st := newStack(b)
	b.Setenv("SUBAGENT_MAX_STEPS", "400")
	slowModel(st, 300*time.Millisecond, 290)
	session, _ := st.aw.CreateSession(progProject, "alice")
	for i := 0; i < b.N; i++ {
		turnID := "long-" + strconv.Itoa(i)
		br := openBrowser(b, st, session, turnID)
		start := time.Now()
		status, _ := st.execute(b, session, true, map[string]any{"message": "m", "async": true,
			"progress": map[string]any{"realtime": true, "turn_id": turnID}})
		if status != http.StatusAccepted {
			b.Fatalf("execution %d", status)
		}
		rows, at := br.watchTimed()
		evs := decodeRows(b, rows) // whole (seq 1..n without a gap), in order, CheckOrder
		tools := 0
		for _, e := range evs {
			if e.Type() == "tool_end" {
				tools++
			}
		}
		if tools != 290 || evs[len(evs)-3].Type() != "done" {
			b.Fatalf("%d tool rounds; end %v", tools, evs[len(evs)-3:])
		}
		b.ReportMetric(at[len(at)-1].Sub(start).Seconds(), "turn_s")
		b.ReportMetric(float64(len(rows)), "events")
		_ = br.ws.CloseNow()
	}
}
