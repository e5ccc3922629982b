package progress

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

func TestRealtimeSendsInBulkChunksAndCountsWhatWasStored(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	status := []int{http.StatusCreated, http.StatusInternalServerError}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Appwrite-Key") != "dynamic_k" || r.Header.Get("X-Appwrite-Project") != "p" ||
			r.URL.Path != "/v1/tablesdb/db/tables/tp/rows" {
			t.Errorf("%s %v", r.URL.Path, r.Header)
		}
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		bodies = append(bodies, b)
		st := status[min(len(bodies)-1, len(status)-1)]
		mu.Unlock()
		w.WriteHeader(st)
		_, _ = w.Write([]byte(`{"message":"boom","type":"general_unknown"}`))
	}))
	defer srv.Close()
	r := &Realtime{Endpoint: srv.URL + "/v1", ProjectID: "p", Key: "dynamic_k", DatabaseID: "db", TableID: "tp",
		UserID: "alice", TurnID: "t1", Client: srv.Client()}
	n, err := r.Send(context.Background(), envelopes(150, "x"))
	if n != 100 || err == nil || errors.Is(err, ErrPermanent) {
		t.Fatalf("%d %v", n, err)
	}
	rows := bodies[0]["rows"].([]any)
	first := rows[0].(map[string]any)
	if len(rows) != 100 || first["seq"] != float64(1) || first["turn_id"] != "t1" || first["type"] != "token" ||
		first["$permissions"].([]any)[0] != `read("user:alice")` {
		t.Fatalf("%v", first)
	}
	if len(bodies[1]["rows"].([]any)) != 50 {
		t.Fatal("second chunk")
	}
	// One event: a plain row create; 404 (table gone) is permanent.
	status = []int{http.StatusNotFound}
	bodies = nil
	if _, err := r.Send(context.Background(), envelopes(1, "x")); !errors.Is(err, ErrPermanent) {
		t.Fatalf("404: %v", err)
	}
	if bodies[0]["rowId"] != "unique()" || bodies[0]["data"] == nil || bodies[0]["permissions"].([]any)[0] != `read("user:alice")` {
		t.Fatalf("%v", bodies[0])
	}
}
