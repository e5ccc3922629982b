package progress

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"appwrite-agent/shared/awclient"
)

func TestStoppedLooksForTheTurnsStopRow(t *testing.T) {
	rows := `{"total":0,"rows":[]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()["queries[]"]
		want := []string{`{"method":"equal","attribute":"turn_id","values":["t1"]}`,
			`{"method":"equal","attribute":"type","values":["stop"]}`, `{"method":"limit","values":[1]}`}
		if r.Method != http.MethodGet || r.URL.Path != "/v1/tablesdb/db/tables/tp/rows" || strings.Join(q, " ") != strings.Join(want, " ") ||
			r.Header.Get("X-Appwrite-Key") != "dynamic_k" || r.Header.Get("X-Appwrite-Project") != "p" {
			t.Errorf("%s %s %q %v", r.Method, r.URL.Path, q, r.Header)
		}
		w.Header().Set("Content-Type", "application/json") // as Appwrite answers: the SDK reads nothing else
		_, _ = w.Write([]byte(rows))
	}))
	defer srv.Close()
	r := &Realtime{Endpoint: srv.URL + "/v1", ProjectID: "p", Key: "dynamic_k", DatabaseID: "db", TableID: "tp",
		UserID: "alice", TurnID: "t1", Client: srv.Client()}
	if stopped, err := r.Stopped(context.Background()); stopped || err != nil {
		t.Fatalf("no stop row: %v %v", stopped, err)
	}
	rows = `{"total":1,"rows":[{"$id":"r1","turn_id":"t1","seq":0,"type":"stop","payload":"{\"type\":\"stop\"}"}]}`
	if stopped, err := r.Stopped(context.Background()); !stopped || err != nil {
		t.Fatalf("with the stop row: %v %v", stopped, err)
	}
}

// scriptedLooks answers the watch's looks one at a time, from the test.
type scriptedLooks struct {
	asked   chan struct{}
	answers chan error // nil: no stop row; errFound: the row is there
}

var errFound = errors.New("found")

func (s scriptedLooks) stopped(ctx context.Context) (bool, error) {
	s.asked <- struct{}{}
	err := <-s.answers
	if err == errFound {
		return true, nil
	}
	return false, err
}

func TestStopWatchStopsOnceTheRowAppearsAndRidesOutTransientFailures(t *testing.T) {
	clk := newClock()
	looks := scriptedLooks{asked: make(chan struct{}), answers: make(chan error)}
	stopped := make(chan struct{})
	end := StopWatch{Stopped: looks.stopped, Clock: clk}.Watch(context.Background(), func() { close(stopped) })
	defer end()
	for i, answer := range []error{nil, &awclient.Error{Status: http.StatusServiceUnavailable, Message: "busy"},
		&awclient.Error{Status: http.StatusTooManyRequests, Message: "slow down"}, errors.New("connection reset"), errFound} {
		waitArmed(t, clk)
		clk.Advance(DefaultStopPoll - time.Millisecond)
		select {
		case <-looks.asked:
			t.Fatalf("look %d before its tick", i)
		default:
		}
		clk.Advance(time.Millisecond)
		<-looks.asked
		looks.answers <- answer
	}
	<-stopped
}

func TestStopWatchGivesUpWhenAppwriteRefusesTheLook(t *testing.T) {
	clk := newClock()
	looks := scriptedLooks{asked: make(chan struct{}), answers: make(chan error)}
	logs := make(chan string, 1)
	end := StopWatch{Stopped: looks.stopped, Clock: clk, Log: func(s string) { logs <- s }}.Watch(context.Background(),
		func() { t.Error("stopped without a stop row") })
	waitArmed(t, clk)
	clk.Advance(DefaultStopPoll)
	<-looks.asked
	looks.answers <- &awclient.Error{Status: http.StatusUnauthorized, Type: "general_unauthorized_scope", Message: "missing scope (rows.read)"}
	if l := <-logs; !strings.Contains(l, "can no longer be stopped") || !strings.Contains(l, "rows.read") {
		t.Fatalf("log %q", l)
	}
	end() // the watch has ended: end returns at once
}

func TestStopWatchEndsWithTheTurn(t *testing.T) {
	clk := newClock()
	end := StopWatch{Stopped: func(context.Context) (bool, error) { return false, nil }, Clock: clk}.Watch(context.Background(),
		func() { t.Error("stopped without a stop row") })
	waitArmed(t, clk)
	end()
}
