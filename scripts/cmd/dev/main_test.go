package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/staging"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestDevServesHealthOnEveryPort runs the dev command on free ports and calls each function's /health.
func TestDevServesHealthOnEveryPort(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts four binaries")
	}
	ports := map[string]*int{}
	for _, name := range staging.Functions {
		p := freePort(t)
		ports[name] = &p
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	done := make(chan error, 1)
	go func() { done <- run(ctx, "127.0.0.1", ports) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("dev returned %v", err)
		}
	}()

	for _, name := range staging.Functions {
		url := "http://127.0.0.1:" + strconv.Itoa(*ports[name]) + "/health"
		if err := waitHealthy(ctx, url); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Status  string `json:"status"`
			BuildID string `json:"build_id"`
		}
		err = json.NewDecoder(res.Body).Decode(&h)
		res.Body.Close()
		if err != nil || h.Status != "ok" || h.BuildID == "" {
			t.Fatalf("%s /health: %+v %v", name, h, err)
		}
	}
}
