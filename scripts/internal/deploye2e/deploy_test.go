package deploye2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/deploy"
	"appwrite-agent/scripts/internal/staging"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/scriptedllm"
	"appwrite-agent/shared/devkit/webhookreceiver"
	"appwrite-agent/shared/eventsclient"
	"appwrite-agent/shared/loopback"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/functions"
	"github.com/appwrite/sdk-for-go/id"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

const project = "shop"

// reply is the scripted model: the router answers at once (FINISH), a call without tools is a title.
func reply(req scriptedllm.Request, _ int) scriptedllm.Reply {
	if req.JSON()["response_format"] != nil {
		return scriptedllm.Reply{JSON: `{"next":"FINISH","reason":"small talk","final_answer":"Hello from the deployed turn."}`}
	}
	return scriptedllm.Reply{Content: "Deployed Chat"}
}

// world is the stand-in the product is deployed to, and the peers the deployed functions talk to.
type world struct {
	t     *testing.T
	run   *localappwrite.Running
	key   string
	model *scriptedllm.Server
	rcv   *webhookreceiver.Receiver
	sec   string
	hc    *http.Client
	log   bytes.Buffer
	root  string
	// changed names the functions the stage below changes (a comment added to their main.go).
	mu      sync.Mutex
	changed map[string]bool
}

func (w *world) aw() *localappwrite.Server { return w.run.Server }

// options are a deploy of the product to the world's project with key.
func (w *world) options(key string) deploy.Options {
	return deploy.Options{
		Endpoint: w.aw().Endpoint(), Project: project, Key: key, Root: w.root, StateDir: filepath.Join(w.t.TempDir(), "state"),
		LLMAPIKey: "scripted", LLMModel: "gpt-4o-mini", LLMBaseURL: w.model.BaseURL(),
		Skills: filepath.Join(w.root, "functions", "turn", "testdata", "skills"), Log: &w.log,
		PollInterval: 100 * time.Millisecond, HealthTimeout: 2 * time.Minute, BuildTimeout: 10 * time.Minute,
		Stage: w.stage,
	}
}

// stage stages a function as scripts/stage does (turn with the fixture skills), and changes the functions
// of w.changed.
func (w *world) stage(ctx context.Context, root, name, dir string) error {
	if err := staging.StageWith(ctx, root, name, dir, staging.Options{Skills: filepath.Join(root, "functions", "turn", "testdata", "skills")}); err != nil {
		return err
	}
	w.mu.Lock()
	change := w.changed[name]
	w.mu.Unlock()
	if !change {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, "main.go"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString("\n// changed by TestDeployFromAnEmptyProject\n")
	return err
}

func (w *world) flush() {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.aw().Flush(ctx); err != nil {
		w.t.Fatal(err)
	}
}

// call sends a JSON request and decodes a JSON answer into out.
func (w *world) call(method, url string, header map[string]string, in, out any) (int, string, http.Header) {
	w.t.Helper()
	var rd io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := w.hc.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(body, out); err != nil {
			w.t.Fatalf("%s %s: %d %s", method, url, res.StatusCode, body)
		}
	}
	return res.StatusCode, string(body), res.Header
}

// TestDeployFromAnEmptyProject deploys the product with scripts/deploy's code to an empty stand-in project,
// with an API key only, and uses it there:
//   - a key without functions.write is refused before any change, naming the scope;
//   - -dry-run changes nothing;
//   - the first run leaves all five functions healthy on their function domains;
//   - on the chat domain a new user signs up and gets a turn answered (a scripted model);
//   - mcp-events subscribes a receiver, and a row change is delivered through webhook-ingress and verified;
//   - a second run is up to date and uploads nothing;
//   - after one function changes, only it is redeployed.
func TestDeployFromAnEmptyProject(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: deploys and builds the five functions")
	}
	root, err := staging.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	w := &world{t: t, root: root, sec: "whsec_" + base64.StdEncoding.EncodeToString(raw), hc: loopback.Client(2 * time.Minute), changed: map[string]bool{}}
	w.rcv = webhookreceiver.New(w.sec)
	t.Cleanup(w.rcv.Close)
	ca := filepath.Join(t.TempDir(), "receiver.pem")
	if err := os.WriteFile(ca, w.rcv.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	w.model = scriptedllm.New()
	t.Cleanup(w.model.Close)
	w.model.SetHandler(reply)
	// The stand-in plays Appwrite Cloud (mcp-events needs it); its runtimes trust the receiver's certificate,
	// as a real runtime trusts a real one.
	w.run, err = localappwrite.Start(context.Background(), "127.0.0.1:0", localappwrite.Options{Profile: localappwrite.ProfileCloud,
		WebhookLimit: 50, AllowLoopbackWebhookURLs: true, Builds: 5, RuntimeEnv: []string{"SSL_CERT_FILE=" + ca},
		Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = w.run.Shutdown(ctx)
	})
	if w.key, err = w.aw().SeedEmptyProject(project, "Shop", deploy.Scopes()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("deploy's output:\n%s", w.log.String())
		}
	})
	ctx := context.Background()
	fns := functions.New(appwrite.NewClient(appwrite.WithEndpoint(w.aw().Endpoint()), appwrite.WithProject(project), appwrite.WithKey(w.key), appwrite.WithTimeout(time.Minute)))
	noFunctions := func(when string) {
		t.Helper()
		for _, name := range staging.Functions {
			if _, err := fns.Get(name); err == nil {
				t.Fatalf("%s: function %s exists", when, name)
			}
		}
	}

	// A key without functions.write: refused before any change, naming the scope and what it is for.
	var scopes []string
	for _, s := range deploy.Scopes() {
		if s != "functions.write" {
			scopes = append(scopes, s)
		}
	}
	weak, err := w.aw().CreateKey(project, scopes)
	if err != nil {
		t.Fatal(err)
	}
	_, err = deploy.Run(ctx, w.options(weak))
	var refusal *deploy.Refusal
	if !errors.As(err, &refusal) || !strings.Contains(err.Error(), "the API key lacks 1 of the scopes deploy needs:\n  functions.write  to create and update the functions") {
		t.Fatalf("a key without functions.write: %v", err)
	}
	noFunctions("after the refused run")

	// -dry-run: the plan, and nothing changed.
	o := w.options(w.key)
	o.DryRun = true
	dry, err := deploy.Run(ctx, o)
	if err != nil || dry.Functions["chat"].Status != deploy.StatusWillDeploy {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	noFunctions("after the dry run")

	// The first run.
	o.DryRun = false
	start := time.Now()
	first, err := deploy.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first deploy of five functions: %s", time.Since(start).Round(time.Millisecond))
	for _, name := range staging.Functions {
		f := first.Functions[name]
		var h struct {
			Status  string `json:"status"`
			BuildID string `json:"build_id"`
		}
		if f.Status != deploy.StatusDeployed {
			t.Fatalf("%s: %+v", name, f)
		}
		if code, body, _ := w.call("GET", f.URL+"/health", nil, nil, &h); code != 200 || h.Status != "ok" || h.BuildID != f.Deployment {
			t.Fatalf("%s /health on %s: %d %s", name, f.URL, code, body)
		}
	}
	chatURL := strings.TrimSuffix(first.ChatURL, "/")
	if code, body, hdr := w.call("GET", first.ChatURL, nil, nil, nil); code != 200 && code != 503 || !strings.Contains(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("the chat page: %d %.200s", code, body)
	}

	// On the chat domain, a new user signs up, signs in as the Web SDK does (the page's origin is the chat
	// domain), and gets a turn answered by the deployed turn through the scripted model.
	api := w.aw().Endpoint()
	page := map[string]string{"X-Appwrite-Project": project, "Origin": chatURL}
	if code, body, _ := w.call("POST", api+"/account", page, map[string]string{"userId": "unique()", "email": "new@example.com", "password": "new-user-password", "name": "New"}, nil); code != 201 {
		t.Fatalf("sign-up: %d %s", code, body)
	}
	code, body, hdr := w.call("POST", api+"/account/sessions/email", page, map[string]string{"email": "new@example.com", "password": "new-user-password"}, nil)
	if code != 201 {
		t.Fatalf("sign-in: %d %s", code, body)
	}
	var jwt struct{ JWT string }
	if code, body, _ := w.call("POST", api+"/account/jwts", map[string]string{"X-Appwrite-Project": project, "X-Fallback-Cookies": hdr.Get("X-Fallback-Cookies")}, map[string]any{}, &jwt); code != 201 || jwt.JWT == "" {
		t.Fatalf("JWT: %d %s", code, body)
	}
	bearer := map[string]string{"Authorization": "Bearer " + jwt.JWT}
	var started struct {
		Conversation struct{ ID string }
		Turn         struct{ ID, Status string }
	}
	if code, body, _ := w.call("POST", chatURL+"/api/turns", bearer, map[string]any{"message": "hello from a new user"}, &started); code != 202 || started.Turn.Status != "running" {
		t.Fatalf("a turn: %d %s", code, body)
	}
	w.flush() // the async turn, and the title it starts
	var conv struct {
		Conversation struct{ Title string }
		Messages     []struct{ Role, Content, Status string }
	}
	if code, body, _ := w.call("GET", chatURL+"/api/conversations/"+started.Conversation.ID, bearer, nil, &conv); code != 200 || len(conv.Messages) != 2 ||
		conv.Messages[1].Status != "done" || conv.Messages[1].Content != "Hello from the deployed turn." {
		t.Fatalf("the answered turn: %d %s", code, body)
	}

	// mcp-events subscribes the receiver (which answers the signed challenge); a row change is delivered by
	// Appwrite's webhook worker to webhook-ingress on its domain, and from there, signed, to the receiver.
	mcpURL := first.Functions["mcp-events"].URL
	tok, err := w.aw().MintToken(localappwrite.DemoUserID, mcpURL, localappwrite.CloudScopes("webhooks.read", "webhooks.write", "tables.read", "rows.read"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	mcp := &eventsclient.Client{Endpoint: mcpURL + "/mcp", Token: tok, HTTP: w.hc}
	args := map[string]string{"project_id": project, "database_id": "chat", "table_id": "memories"}
	sub, err := mcp.Subscribe(ctx, "tablesdb.row.created", args, w.rcv.URL(), w.sec, 0)
	if err != nil {
		t.Fatalf("events/subscribe: %v", err)
	}
	rowsKey, err := w.aw().CreateKey(project, []string{"rows.write"}) // the user's app writing a row
	if err != nil {
		t.Fatal(err)
	}
	db := tablesdb.New(appwrite.NewClient(appwrite.WithEndpoint(api), appwrite.WithProject(project), appwrite.WithKey(rowsKey), appwrite.WithTimeout(time.Minute)))
	row, err := db.CreateRow("chat", "memories", id.Unique(), map[string]any{"user_id": "u1", "key": "lang"})
	if err != nil {
		t.Fatal(err)
	}
	w.flush()
	evs := w.rcv.Events()
	if len(evs) != 1 {
		t.Fatalf("%d events delivered, %d requests", len(evs), len(w.rcv.Deliveries()))
	}
	occ, err := evs[0].Event()
	if err != nil || !evs[0].Verified || occ.Name != "tablesdb.row.created" || occ.Data["row_id"] != row.Id || evs[0].Header.Get("X-MCP-Subscription-Id") != sub.ID {
		t.Fatalf("the delivered event: %+v %+v %v", evs[0], occ, err)
	}

	// A second run: up to date, nothing uploaded.
	second, err := deploy.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Uploaded) != 0 || second.Changes != 0 {
		t.Fatalf("second run uploaded %v (%d changes)", second.Uploaded, second.Changes)
	}
	for name, f := range second.Functions {
		if f.Status != deploy.StatusUpToDate || f.Deployment != first.Functions[name].Deployment {
			t.Fatalf("second run: %s %+v", name, f)
		}
	}

	// One function changes: only it is redeployed; the others keep their deployments.
	w.mu.Lock()
	w.changed["title"] = true
	w.mu.Unlock()
	third, err := deploy.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(third.Uploaded, []string{"title"}) || third.Functions["title"].Status != deploy.StatusDeployed ||
		third.Functions["title"].Deployment == first.Functions["title"].Deployment || third.Functions["turn"].Deployment != first.Functions["turn"].Deployment {
		t.Fatalf("after changing title: %v %+v", third.Uploaded, third.Functions)
	}
}
