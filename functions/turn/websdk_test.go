package handler_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"appwrite-agent/functions/turn/timeline/timelinetest"
)

// TestWebSDKWatchesAnAsyncTurn runs testdata/websdk/watch.cjs: the real Appwrite Web SDK subscribes to the
// progress rows through the stand-in's Realtime and creates the async execution with the user's session; the
// rows it prints must be the whole timeline, in order. It needs Node and the SDK installed in a folder named by
// APPWRITE_WEB_SDK (npm install appwrite@27 ws@8 there), so it is skipped otherwise:
//
//	mkdir -p /tmp/websdk && (cd /tmp/websdk && npm install appwrite@27.0.0 ws@8)
//	APPWRITE_WEB_SDK=/tmp/websdk go test -run WebSDK .
func TestWebSDKWatchesAnAsyncTurn(t *testing.T) {
	dir := os.Getenv("APPWRITE_WEB_SDK")
	if dir == "" {
		t.Skip("set APPWRITE_WEB_SDK to a folder with node_modules/appwrite and node_modules/ws")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	st := newStack(t, timeToolTurn()...)
	session, _ := st.aw.CreateSession(progProject, "alice")
	script, _ := filepath.Abs("testdata/websdk/watch.cjs")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"), "ENDPOINT="+st.api.URL+"/v1",
		"PROJECT="+progProject, "SESSION="+session, "TURN_ID=websdk-1", "DATABASE="+progDB, "TABLE="+progTable,
		"SESSION_KEY="+testKey)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr.String())
	}
	var evs []timelinetest.Decoded
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var line struct {
			Seq    int                  `json:"seq"`
			TurnID string               `json:"turn_id"`
			Event  timelinetest.Decoded `json:"event"`
		}
		must(t, json.Unmarshal(sc.Bytes(), &line))
		if line.TurnID != "websdk-1" || line.Seq != len(evs)+1 {
			t.Fatalf("row %d: %s", len(evs)+1, sc.Bytes())
		}
		evs = append(evs, line.Event)
	}
	must(t, timelinetest.CheckOrder(evs))
	if evs[len(evs)-3].Str("answer") != "It is late." {
		t.Fatalf("%v", evs)
	}
	t.Logf("the Web SDK received %d rows in order; %s", len(evs), stderr.String())
}
