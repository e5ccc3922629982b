package handler_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/mcpserver"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/testclock"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Fixed test identities.
const (
	publicURL = "https://mcp-events.test"
	projectID = "proj1"
	otherProj = "proj2"
	userID    = "user-1"
	dbID      = "main"
	tableID   = "support_tickets"
	bucketID  = "uploads"
	fnID      = "worker"
	siteID    = "landing"
)

// allScopes is what a fully-authorized token carries.
var allScopes = []string{
	"project:webhooks.read", "project:webhooks.write", "project:tables.read", "project:rows.read", "project:buckets.read", "project:files.read",
	"project:users.read", "project:functions.read", "project:executions.read", "project:sites.read",
}

// profile is the stand-in profile of this pass over the package's tests: TestMain runs every test once
// against Appwrite Cloud's behaviour (authPassword never returned, plan limits) and once against the
// open-source server's.
var profile localappwrite.Profile

// cloud reports whether this pass plays Appwrite Cloud.
func cloud() bool { return profile == localappwrite.ProfileCloud }

func TestMain(m *testing.M) {
	os.Exit(localappwrite.EachProfile(m, func(p localappwrite.Profile) { profile = p }))
}

func key32() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// newSecret returns a fresh whsec_ secret.
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// stack is the local Appwrite stand-in, a callback receiver, an ingress capture server and the environment
// of the function.
type stack struct {
	t       *testing.T
	la      *localappwrite.Server
	laSrv   *httptest.Server
	apiKey  string
	recv    *receiver
	ingress *capture
	env     map[string]string
	// clock is the stack's clock, the wall clock moved by the test: the stand-in always reads it; a server
	// reads it when built with Options{Now: st.clock.Now}, so a test moves time on instead of sleeping.
	clock *testclock.Clock
	// apiCalls counts requests to the stand-in's project API (/v1/..., the OAuth issuer's routes aside).
	apiCalls atomic.Int64
}

func newStack(t *testing.T) *stack {
	t.Helper()
	return newStackWith(t, nil)
}

// newStackWith is newStack with the stand-in's options adjusted by opt. The stand-in-only loopback allowance
// is on: the ingress capture server listens on 127.0.0.1, which real Appwrite refuses (PublicDomain).
func newStackWith(t *testing.T, opt func(*localappwrite.Options)) *stack {
	t.Helper()
	st := &stack{t: t, clock: testclock.Wall()}
	opts := localappwrite.Options{
		Clock:                    st.clock.Now,
		Logf:                     func(string, ...any) {},
		AllowLoopbackWebhookURLs: true,
		Profile:                  profile,
		WebhookLimit:             50, // Cloud's Start plan; the plan-limit tests set Free's
	}
	if opt != nil {
		opt(&opts)
	}
	st.la = localappwrite.New(opts)
	st.laSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") && !strings.HasPrefix(r.URL.Path, "/v1/oauth2/") {
			st.apiCalls.Add(1)
		}
		st.la.ServeHTTP(w, r)
	}))
	st.la.SetBaseURL(st.laSrv.URL)
	t.Cleanup(func() { st.laSrv.Close(); _ = st.la.Close() })

	must(t, st.la.SeedProject(localappwrite.ProjectSpec{ID: projectID, Members: []string{userID}}))
	must(t, st.la.SeedProject(localappwrite.ProjectSpec{ID: otherProj, Members: []string{"someone-else"}}))
	must(t, st.la.SeedDatabase(projectID, localappwrite.DatabaseSpec{ID: dbID, Name: "Main", Tables: []localappwrite.TableSpec{{
		ID: tableID, Name: "Support tickets",
		Columns: []localappwrite.Column{{Key: "title", Type: "string", Size: 200}},
	}, {
		ID: "other", Name: "Other",
		Columns: []localappwrite.Column{{Key: "title", Type: "string", Size: 200}},
	}}}))
	must(t, st.la.SeedBucket(projectID, localappwrite.BucketSpec{ID: bucketID, Name: "Uploads"}))
	must(t, st.la.SeedSite(projectID, localappwrite.SiteSpec{ID: siteID, Name: "Landing"}))
	must(t, st.la.RegisterFunction(projectID, localappwrite.FunctionSpec{ID: fnID, Name: "Worker", Fail: true}))
	var err error
	st.apiKey, err = st.la.CreateKey(projectID, []string{"webhooks.read", "webhooks.write", "rows.write", "rows.read", "tables.read", "executions.write", "execution.write"})
	must(t, err)

	st.recv = newReceiver(t)
	st.ingress = newCapture(t)

	caFile := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: st.recv.srv.Certificate().Raw})
	must(t, os.WriteFile(caFile, pemBytes, 0o600))

	st.env = map[string]string{
		"MCP_EVENTS_ENABLED":           "true",
		"MCP_EVENTS_PUBLIC_URL":        publicURL,
		"MCP_EVENTS_OAUTH_ISSUER":      st.la.Issuer(),
		"MCP_EVENTS_APPWRITE_ENDPOINT": st.la.Endpoint(),
		"MCP_EVENTS_INGRESS_URL":       st.ingress.srv.URL,
		"SAFEHTTP_CA_FILE":             caFile,
		"MCP_EVENTS_CHALLENGE_TIMEOUT": "30s", // generous: only the test of a hanging callback waits for it (with its own 1s)
		"SAFEHTTP_ALLOW":               "127.0.0.1/32",
		"SEAL_KEYS":                    "k1:" + key32(),
		"APPWRITE_WEBHOOK_SECRET_KEYS": "w1:" + key32(),
		"MCP_EVENTS_TTL_DEFAULT":       "1h",
		"MCP_EVENTS_TTL_MIN":           "5m",
		"MCP_EVENTS_TTL_MAX":           "24h",
		"MCP_EVENTS_ROTATION_GRACE":    "10m",
	}
	return st
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (st *stack) getenv(k string) string { return st.env[k] }

// server builds one instance of the function's server from the stack's environment.
func (st *stack) server(o mcpserver.Options) *mcpserver.Server {
	st.t.Helper()
	srv, err := mcpserver.New(st.getenv, o)
	must(st.t, err)
	return srv
}

// instance serves one server through the open-runtimes contract and returns its URL.
func (st *stack) instance(srv *mcpserver.Server) string {
	ts := httptest.NewServer(localruntime.New(handler.New(srv), localruntime.Options{LogDir: st.t.TempDir()}))
	st.t.Cleanup(ts.Close)
	return ts.URL
}

// token mints an access token for the MCP resource.
func (st *stack) token(sub string, scopes []string) string {
	tok, err := st.la.MintToken(sub, publicURL+"/mcp", scopes, time.Hour)
	must(st.t, err)
	return tok
}

// call sends one request to the stand-in as an API-key client of project and returns the status and the raw
// answer: the one way these tests talk to Appwrite with a key.
func (st *stack) call(project, key, method, path, contentType string, body io.Reader) (int, []byte) {
	st.t.Helper()
	req, err := http.NewRequest(method, st.la.Endpoint()+path, body)
	must(st.t, err)
	req.Header.Set("X-Appwrite-Project", project)
	req.Header.Set("X-Appwrite-Key", key)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	must(st.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	must(st.t, err)
	return resp.StatusCode, raw
}

// webhooks lists the project's webhooks with the API key (both field spellings of format 1.8.0), with
// authPassword (httpPass) as the stand-in stores it: in the Cloud profile Appwrite returns it blank, and the
// tests inspect what was written.
func (st *stack) webhooks(project string) []map[string]any {
	st.t.Helper()
	_, raw := st.call(project, st.apiKey, "GET", "/webhooks", "", nil)
	var out struct {
		Webhooks []map[string]any `json:"webhooks"`
	}
	must(st.t, json.Unmarshal(raw, &out))
	for _, w := range out.Webhooks {
		id, _ := w["$id"].(string)
		if stored, ok := st.la.StoredWebhook(project, id); ok {
			w["httpPass"] = stored.AuthPassword
		}
	}
	return out.Webhooks
}

// createRow creates a row in table with the API key (an Appwrite event).
func (st *stack) createRow(table, title string) {
	st.t.Helper()
	body := fmt.Sprintf(`{"rowId":"unique()","data":{"title":%q}}`, title)
	if status, b := st.call(projectID, st.apiKey, "POST", "/tablesdb/"+dbID+"/tables/"+table+"/rows", "application/json", strings.NewReader(body)); status != http.StatusCreated {
		st.t.Fatalf("create row: %d %s", status, b)
	}
}

// execute runs the (failing) function once with the API key.
func (st *stack) execute() {
	st.t.Helper()
	if status, b := st.call(projectID, st.apiKey, "POST", "/functions/"+fnID+"/executions", "application/json", strings.NewReader(`{"body":"x"}`)); status >= 300 {
		st.t.Fatalf("execute: %d %s", status, b)
	}
}

// rpcResult is a decoded JSON-RPC answer.
type rpcResult struct {
	Status int
	Header http.Header
	ID     json.RawMessage `json:"id"`
	Result map[string]any  `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
	Raw []byte
}

var rpcID atomic.Int64

// rpc posts one JSON-RPC request the way ChatGPT sends events/* (raw JSON-RPC over HTTP, bearer token).
func rpc(t *testing.T, url, token, method string, params any) rpcResult {
	t.Helper()
	id := rpcID.Add(1)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := rpcResult{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if resp.StatusCode == http.StatusOK || strings.Contains(string(raw), `"jsonrpc"`) {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: %v: %s", method, err, raw)
		}
		out.Status, out.Header, out.Raw = resp.StatusCode, resp.Header, raw
	}
	return out
}

func subParams(event string, args map[string]any, url, secret string, ttl any) map[string]any {
	p := map[string]any{
		"name": event, "arguments": args,
		"delivery": map[string]any{"mode": "webhook", "url": url, "secret": secret},
		"cursor":   nil,
	}
	if ttl != nil {
		p["ttlMs"] = ttl
	}
	return p
}

func rowArgs() map[string]any {
	return map[string]any{"project_id": projectID, "database_id": dbID, "table_id": tableID}
}

// receiver is the subscriber's callback endpoint: an https loopback server that verifies every request with
// the standard-webhooks library and answers the verification challenge according to its mode.
type receiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	secrets []string // accepted whsec_ secrets
	mode    string   // "answer" (default), "wrong", "404", "500", "307", "hang"
	got     []received
}

type received struct {
	Path           string
	SubscriptionID string
	WebhookID      string
	Body           []byte
	Verified       bool // a secret verified the signature
	Signatures     int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{mode: "answer"}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) url(path string) string { return r.srv.URL + path }

func (r *receiver) accept(secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append(r.secrets, secret)
}

func (r *receiver) setMode(m string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mode = m
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	mode, secrets := r.mode, append([]string(nil), r.secrets...)
	r.mu.Unlock()
	rec := received{
		Path: req.URL.Path, SubscriptionID: req.Header.Get("X-MCP-Subscription-Id"),
		WebhookID: req.Header.Get("webhook-id"), Body: body,
		Signatures: len(strings.Fields(req.Header.Get("webhook-signature"))),
	}
	for _, s := range secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err == nil && wh.Verify(body, req.Header) == nil {
			rec.Verified = true
			break
		}
	}
	r.mu.Lock()
	r.got = append(r.got, rec)
	r.mu.Unlock()
	switch mode {
	case "hang":
		// Never answers: only the caller giving up ends the request, and it is dropped unanswered (an
		// answer after a timer could race the caller's own deadline).
		<-req.Context().Done()
		panic(http.ErrAbortHandler)
	case "404":
		http.Error(w, "no", http.StatusNotFound)
		return
	case "500":
		http.Error(w, "boom", http.StatusInternalServerError)
		return
	case "307":
		// Points at an endpoint of the same receiver that would answer the challenge.
		http.Redirect(w, req, r.url("/redirected"), http.StatusTemporaryRedirect)
		return
	}
	var ch struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
	}
	_ = json.Unmarshal(body, &ch)
	if !rec.Verified {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if mode == "wrong" {
		ch.Challenge = "not-the-challenge"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"challenge": ch.Challenge})
}

// capture stands in for the webhook-ingress function: it records what Appwrite delivers.
type capture struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []*http.Request
	bod [][]byte
	// status is what it answers (200 while 0): a test plays a failing ingress with it.
	status atomic.Int32
}

func newCapture(t *testing.T) *capture {
	c := &capture{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.got = append(c.got, r)
		c.bod = append(c.bod, b)
		c.mu.Unlock()
		if code := int(c.status.Load()); code != 0 {
			w.WriteHeader(code)
			_, _ = w.Write([]byte(`{"error":"failing","message":"the test's ingress fails"}`))
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *capture) requests() ([]*http.Request, [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*http.Request(nil), c.got...), append([][]byte(nil), c.bod...)
}

// handlerNew is handler.New, named for readability in tests that build their own runtime.
var handlerNew = handler.New

// appwriteDown points the function's Appwrite endpoint (not the OAuth issuer) at a server that answers
// every call with Appwrite's 503, for the servers built from now on.
func (st *stack) appwriteDown() {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"message":"maintenance","code":503,"type":"general_server_error"}`))
	}))
	st.t.Cleanup(down.Close)
	st.env["MCP_EVENTS_APPWRITE_ENDPOINT"] = down.URL + "/v1"
}
