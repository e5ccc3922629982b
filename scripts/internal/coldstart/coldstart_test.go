package coldstart

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/stack"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/scriptedllm"
	"appwrite-agent/shared/devkit/webhookreceiver"
	"appwrite-agent/shared/eventsclient"
)

var (
	load   = flag.Bool("load", false, "measure cold start and memory of every function (scripts/load)")
	runs   = flag.Int("runs", 10, "starts per function")
	report = flag.String("report", "", "write the table (Markdown) to this file")
)

// TestColdStartAndMemory starts the baseline (BuildBaseline) and each staged binary -runs times, in turns
// (process start to first /health answer), reads their memory at idle and after one typical request, and
// reports the medians; each function's median cold start must be within MaxColdRatio of the baseline's.
func TestColdStartAndMemory(t *testing.T) {
	if !*load {
		t.Skip("needs -load")
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(raw)
	rcv := webhookreceiver.New(secret)
	defer rcv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "receiver.pem")
	if err := os.WriteFile(ca, rcv.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	st, err := stack.Start(ctx, stack.Options{StateDir: filepath.Join(dir, "stack"), Env: map[string][]string{"*": {"SAFEHTTP_CA_FILE=" + ca}},
		Appwrite: localappwrite.Options{DeliveryIDHeader: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Stop()
	d := st.Demo
	aw := st.Appwrite.Server
	if err := aw.SeedDatabase(d.ProjectID, localappwrite.DatabaseSpec{ID: d.DatabaseID, Tables: []localappwrite.TableSpec{{ID: "coldstart"}}}); err != nil {
		t.Fatal(err)
	}
	args := map[string]string{"project_id": d.ProjectID, "database_id": d.DatabaseID, "table_id": "coldstart"}
	mcp := &eventsclient.Client{Endpoint: st.URLs["mcp-events"] + "/mcp", Token: d.OAuthToken}
	if _, err := mcp.Subscribe(ctx, "tablesdb.row.created", args, rcv.URL(), secret, 0); err != nil {
		t.Fatal(err)
	}
	model := scriptedllm.New()
	defer model.Close()

	post := func(ctx context.Context, url, body string, header map[string]string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("%d %.200s", res.StatusCode, out)
		}
		return nil
	}
	session := map[string]string{"X-Session-API-Key": st.Secrets.SessionKey}
	route, _ := json.Marshal(map[string]string{"next": "FINISH", "reason": "greeting", "final_answer": "[planner] Hello! How can I help?"})
	rows := 0
	typical := map[string]func(context.Context, string) error{
		// One whole turn: the router answers directly (one model call, streamed timeline).
		"turn": func(ctx context.Context, base string) error {
			model.Push(scriptedllm.Reply{JSON: string(route)})
			return post(ctx, base+"/", `{"message":"hey","history":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`, session)
		},
		// One title over HTTP (one model call).
		"title": func(ctx context.Context, base string) error {
			model.Push(scriptedllm.Reply{Content: "Title: Fix Login Redirect Loop"})
			return post(ctx, base+"/", `{"message":"my login page keeps redirecting to itself","assistant_message":"Let's check the session cookie."}`, session)
		},
		// What ChatGPT does first: server/discover, then events/list (token verified against the JWKS).
		"mcp-events": func(ctx context.Context, base string) error {
			c := &eventsclient.Client{Endpoint: base + "/mcp", Token: d.OAuthToken}
			if _, err := c.Discover(ctx); err != nil {
				return err
			}
			_, err := c.List(ctx)
			return err
		},
		// One Appwrite webhook delivery through the function domain, delivered to the subscriber.
		"webhook-ingress": func(ctx context.Context, base string) error {
			if err := aw.SetFunctionURL(d.ProjectID, "webhook-ingress", base); err != nil {
				return err
			}
			before := len(rcv.Events())
			rows++
			body, _ := json.Marshal(map[string]any{"rowId": fmt.Sprintf("cold%d", rows), "data": map[string]any{}})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, d.Endpoint+"/tablesdb/"+d.DatabaseID+"/tables/coldstart/rows", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Appwrite-Project", d.ProjectID)
			req.Header.Set("X-Appwrite-Key", d.APIKey)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			res.Body.Close()
			if err := aw.Flush(ctx); err != nil {
				return err
			}
			if n := len(rcv.Events()); n != before+1 {
				return fmt.Errorf("the subscriber got %d events, want 1", n-before)
			}
			return nil
		},
	}
	var buildLog strings.Builder
	baseline, err := BuildBaseline(ctx, filepath.Join(dir, "baseline"), &buildLog)
	if err != nil {
		t.Fatalf("%v\n%s", err, buildLog.String())
	}
	names := []string{"turn", "title", "mcp-events", "webhook-ingress", "chat"}
	specs := map[string]Spec{}
	for _, name := range append([]string{BaselineName}, names...) {
		env := append(os.Environ(), "OPEN_RUNTIMES_ENV=development", "OPEN_RUNTIMES_SECRET=", "OPEN_RUNTIMES_LOG_DIR="+filepath.Join(dir, "logs", name))
		if name == BaselineName {
			specs[name] = Spec{Name: name, Binary: baseline, Env: env}
			continue
		}
		env = append(env, st.FunctionEnv(name)...)
		env = append(env, "LLM_API_KEY=scripted", "LLM_MODEL=openai/gpt-4o-mini", "LLM_BASE_URL="+model.BaseURL())
		specs[name] = Spec{Name: name, Binary: st.BinaryPath(name), Env: env, Typical: typical[name]}
	}
	// The starts take turns (baseline, turn, title, ... then again), so that the machine's load, shared with
	// other work, weighs on every binary alike.
	samples := map[string][]Sample{}
	for range *runs {
		for _, name := range append([]string{BaselineName}, names...) {
			ss, err := Run(ctx, specs[name], 1)
			if err != nil {
				t.Fatal(err)
			}
			samples[name] = append(samples[name], ss...)
		}
	}
	base := Summarize(BaselineName, samples[BaselineName])
	var sums []Summary
	for _, name := range names {
		s := Summarize(name, samples[name])
		if len(s.Errors) > 0 {
			t.Errorf("%s: typical request failed: %v", name, s.Errors)
		}
		if r := Ratio(s, base); r > MaxColdRatio {
			t.Errorf("%s: median cold start %.1f ms is %.2fx the baseline's %.1f ms (at most %.1fx)", name, ms(s.ColdMed), r, ms(base.ColdMed), MaxColdRatio)
		}
		sums = append(sums, s)
	}
	md := Markdown(base, sums)
	t.Logf("\n%s", md)
	if *report != "" {
		if err := os.WriteFile(*report, []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBaselineStartsAsAFunction builds the baseline as the runtime builds a function and starts it once:
// it answers GET /health, and the summary and the table read its median as the ratio 1.
func TestBaselineStartsAsAFunction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log strings.Builder
	bin, err := BuildBaseline(ctx, t.TempDir(), &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	env := append(os.Environ(), "OPEN_RUNTIMES_ENV=development", "OPEN_RUNTIMES_SECRET=", "OPEN_RUNTIMES_LOG_DIR="+t.TempDir())
	ss, err := Run(ctx, Spec{Name: BaselineName, Binary: bin, Env: env}, 1)
	if err != nil || len(ss) != 1 || ss[0].Cold <= 0 {
		t.Fatalf("samples %+v, %v", ss, err)
	}
	base := Summarize(BaselineName, ss)
	if r := Ratio(base, base); r != 1 {
		t.Fatalf("the baseline's ratio to itself is %v", r)
	}
	slow := base
	slow.Name, slow.ColdMed = "slow", 2*base.ColdMed
	if md := Markdown(base, []Summary{slow}); !strings.Contains(md, "| baseline | 1 |") || !strings.Contains(md, "| 2.00 |") {
		t.Fatalf("table:\n%s", md)
	}
}
