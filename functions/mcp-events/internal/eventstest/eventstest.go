// Package eventstest is the mcp-events function's test stack, shared by the tests of its packages: the local
// Appwrite stand-in (with its OAuth issuer) seeded with two projects, a subscriber's callback receiver, a
// stand-in for webhook-ingress, and servers of the function built from an environment and served through the
// open-runtimes contract, with helpers to call them as MCP clients do.
package eventstest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/subscriptions"
	"appwrite-agent/shared/appwritesig"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/snapshot"
	"appwrite-agent/shared/devkit/testclock"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/seal"
)

// Fixed test identities.
const (
	PublicURL    = "https://mcp-events.test"
	ProjectID    = "proj1"
	OtherProject = "proj2"
	UserID       = "user-1"
	DatabaseID   = "main"
	TableID      = "support_tickets"
	BucketID     = "uploads"
	FunctionID   = "worker"
	SiteID       = "landing"
)

// AllScopes is what a fully-authorized token carries.
var AllScopes = []string{
	"project:webhooks.read", "project:webhooks.write", "project:tables.read", "project:rows.read", "project:buckets.read", "project:files.read",
	"project:users.read", "project:functions.read", "project:executions.read", "project:sites.read",
}

// profile is the stand-in profile of this pass over the package's tests: Main runs every test once against
// Appwrite Cloud's behaviour (authPassword never returned, plan limits) and once against the open-source
// server's.
var profile localappwrite.Profile

// Main runs the tests of a package that uses the stack once per stand-in profile and exits: each package's
// TestMain calls it.
func Main(m *testing.M) {
	os.Exit(localappwrite.EachProfile(m, func(p localappwrite.Profile) { profile = p }))
}

// Cloud reports whether this pass plays Appwrite Cloud.
func Cloud() bool { return profile == localappwrite.ProfileCloud }

func key32() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// NewSecret returns a fresh whsec_ secret.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// Stack is the local Appwrite stand-in, a callback receiver, an ingress capture server and the environment
// of the function.
type Stack struct {
	t *testing.T
	// LA is the stand-in, served by LASrv.
	LA    *localappwrite.Server
	LASrv *httptest.Server
	// APIKey is an API key of ProjectID (webhooks, rows, tables and executions).
	APIKey string
	// Recv is the subscriber's callback endpoint; Ingress stands in for webhook-ingress.
	Recv    *Receiver
	Ingress *Capture
	// Env is the function's environment, which a test changes before it builds a server.
	Env map[string]string
	// Clock is the stack's clock, the wall clock moved by the test: the stand-in always reads it; a server
	// reads it when built with Options{Now: st.Clock.Now}, so a test moves time on instead of sleeping.
	Clock *testclock.Clock
	// APICalls counts requests to the stand-in's project API (/v1/..., the OAuth issuer's routes aside).
	APICalls atomic.Int64
}

// NewStack is a stack with the stand-in's default options.
func NewStack(t *testing.T) *Stack {
	t.Helper()
	return NewStackWith(t, nil)
}

// NewStackWith is NewStack with the stand-in's options adjusted by opt. The stand-in-only loopback allowance
// is on: the ingress capture server listens on 127.0.0.1, which real Appwrite refuses (PublicDomain).
func NewStackWith(t *testing.T, opt func(*localappwrite.Options)) *Stack {
	t.Helper()
	st := &Stack{t: t, Clock: testclock.Wall()}
	opts := localappwrite.Options{
		Clock:                    st.Clock.Now,
		Logf:                     func(string, ...any) {},
		AllowLoopbackWebhookURLs: true,
		Profile:                  profile,
		WebhookLimit:             50, // Cloud's Start plan; the plan-limit tests set Free's
	}
	if opt != nil {
		opt(&opts)
	}
	st.LA = localappwrite.New(opts)
	st.LASrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") && !strings.HasPrefix(r.URL.Path, "/v1/oauth2/") {
			st.APICalls.Add(1)
		}
		st.LA.ServeHTTP(w, r)
	}))
	st.LA.SetBaseURL(st.LASrv.URL)
	t.Cleanup(func() { st.LASrv.Close(); _ = st.LA.Close() })

	Must(t, st.LA.SeedProject(localappwrite.ProjectSpec{ID: ProjectID, Members: []string{UserID}}))
	Must(t, st.LA.SeedProject(localappwrite.ProjectSpec{ID: OtherProject, Members: []string{"someone-else"}}))
	Must(t, st.LA.SeedDatabase(ProjectID, localappwrite.DatabaseSpec{ID: DatabaseID, Name: "Main", Tables: []localappwrite.TableSpec{{
		ID: TableID, Name: "Support tickets",
		Columns: []localappwrite.Column{{Key: "title", Type: "string", Size: 200}},
	}, {
		ID: "other", Name: "Other",
		Columns: []localappwrite.Column{{Key: "title", Type: "string", Size: 200}},
	}}}))
	Must(t, st.LA.SeedBucket(ProjectID, localappwrite.BucketSpec{ID: BucketID, Name: "Uploads"}))
	Must(t, st.LA.SeedSite(ProjectID, localappwrite.SiteSpec{ID: SiteID, Name: "Landing"}))
	Must(t, st.LA.RegisterFunction(ProjectID, localappwrite.FunctionSpec{ID: FunctionID, Name: "Worker", Fail: true}))
	var err error
	st.APIKey, err = st.LA.CreateKey(ProjectID, []string{"webhooks.read", "webhooks.write", "rows.write", "rows.read", "tables.read", "executions.write", "execution.write"})
	Must(t, err)

	st.Recv = newReceiver(t)
	st.Ingress = newCapture(t)

	caFile := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: st.Recv.Srv.Certificate().Raw})
	Must(t, os.WriteFile(caFile, pemBytes, 0o600))

	st.Env = map[string]string{
		"MCP_EVENTS_ENABLED":           "true",
		"MCP_EVENTS_PUBLIC_URL":        PublicURL,
		"MCP_EVENTS_OAUTH_ISSUER":      st.LA.Issuer(),
		"MCP_EVENTS_APPWRITE_ENDPOINT": st.LA.Endpoint(),
		"MCP_EVENTS_INGRESS_URL":       st.Ingress.Srv.URL,
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

// Must fails the test on err.
func Must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Getenv reads the function's environment (Env): what ReadConfig is given.
func (st *Stack) Getenv(k string) string { return st.Env[k] }

// Server builds one instance of the function's server from the stack's environment.
func (st *Stack) Server(o handler.Options) *handler.Server {
	st.t.Helper()
	srv, err := NewServer(st.Getenv, o)
	Must(st.t, err)
	return srv
}

// NewServer builds a server from the environment read through getenv, as FromEnv does from the process's.
func NewServer(getenv func(string) string, o handler.Options) (*handler.Server, error) {
	cfg, err := handler.ReadConfig(getenv)
	if err != nil {
		return nil, err
	}
	return handler.NewServer(cfg, o)
}

// Instance serves one server through the open-runtimes contract and returns its URL.
func (st *Stack) Instance(srv *handler.Server) string {
	ts := httptest.NewServer(localruntime.New(handler.New(srv), localruntime.Options{LogDir: st.t.TempDir()}))
	st.t.Cleanup(ts.Close)
	return ts.URL
}

// Token mints an access token for the MCP resource.
func (st *Stack) Token(sub string, scopes []string) string {
	tok, err := st.LA.MintToken(sub, PublicURL+"/mcp", scopes, time.Hour)
	Must(st.t, err)
	return tok
}

// Call sends one request to the stand-in as an API-key client of project and returns the status and the raw
// answer: the one way these tests talk to Appwrite with a key.
func (st *Stack) Call(project, key, method, path, contentType string, body io.Reader) (int, []byte) {
	st.t.Helper()
	req, err := http.NewRequest(method, st.LA.Endpoint()+path, body)
	Must(st.t, err)
	req.Header.Set("X-Appwrite-Project", project)
	req.Header.Set("X-Appwrite-Key", key)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	Must(st.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	Must(st.t, err)
	return resp.StatusCode, raw
}

// Webhooks lists the project's webhooks with the API key (both field spellings of format 1.8.0), with
// authPassword (httpPass) as the stand-in stores it: in the Cloud profile Appwrite returns it blank, and the
// tests inspect what was written.
func (st *Stack) Webhooks(project string) []map[string]any {
	st.t.Helper()
	_, raw := st.Call(project, st.APIKey, "GET", "/webhooks", "", nil)
	var out struct {
		Webhooks []map[string]any `json:"webhooks"`
	}
	Must(st.t, json.Unmarshal(raw, &out))
	for _, w := range out.Webhooks {
		id, _ := w["$id"].(string)
		if stored, ok := st.LA.StoredWebhook(project, id); ok {
			w["httpPass"] = stored.AuthPassword
		}
	}
	return out.Webhooks
}

// CreateRow creates a row in table with the API key (an Appwrite event).
func (st *Stack) CreateRow(table, title string) {
	st.t.Helper()
	body := fmt.Sprintf(`{"rowId":"unique()","data":{"title":%q}}`, title)
	if status, b := st.Call(ProjectID, st.APIKey, "POST", "/tablesdb/"+DatabaseID+"/tables/"+table+"/rows", "application/json", strings.NewReader(body)); status != http.StatusCreated {
		st.t.Fatalf("create row: %d %s", status, b)
	}
}

// Execute runs the (failing) function once with the API key.
func (st *Stack) Execute() {
	st.t.Helper()
	if status, b := st.Call(ProjectID, st.APIKey, "POST", "/functions/"+FunctionID+"/executions", "application/json", strings.NewReader(`{"body":"x"}`)); status >= 300 {
		st.t.Fatalf("execute: %d %s", status, b)
	}
}

// RPCResult is a decoded JSON-RPC answer.
type RPCResult struct {
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

// RPC posts one JSON-RPC request the way ChatGPT sends events/* (raw JSON-RPC over HTTP, bearer token).
func RPC(t *testing.T, url, token, method string, params any) RPCResult {
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
	Must(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := RPCResult{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if resp.StatusCode == http.StatusOK || strings.Contains(string(raw), `"jsonrpc"`) {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: %v: %s", method, err, raw)
		}
		out.Status, out.Header, out.Raw = resp.StatusCode, resp.Header, raw
	}
	return out
}

// SubParams are the params of an events/subscribe of event with args, delivered to url signed with secret;
// ttl, when not nil, is ttlMs.
func SubParams(event string, args map[string]any, url, secret string, ttl any) map[string]any {
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

// RowArgs are the arguments of a row event on the stack's table.
func RowArgs() map[string]any {
	return map[string]any{"project_id": ProjectID, "database_id": DatabaseID, "table_id": TableID}
}

// Receiver is the subscriber's callback endpoint: an https loopback server that verifies every request with
// the standard-webhooks library and answers the verification challenge according to its mode.
type Receiver struct {
	// Srv serves it over https (its certificate is in the stack's SAFEHTTP_CA_FILE).
	Srv *httptest.Server

	mu      sync.Mutex
	secrets []string // accepted whsec_ secrets
	mode    string   // "answer" (default), "wrong", "404", "500", "307", "hang"
	got     []Received
}

// Received is one request the receiver got.
type Received struct {
	Path           string
	SubscriptionID string
	WebhookID      string
	Body           []byte
	Verified       bool // a secret verified the signature
	Signatures     int
}

func newReceiver(t *testing.T) *Receiver {
	r := &Receiver{mode: "answer"}
	r.Srv = httptest.NewTLSServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Srv.Close)
	return r
}

// URL is the receiver's URL with path.
func (r *Receiver) URL(path string) string { return r.Srv.URL + path }

// Accept makes the receiver verify signatures with secret too.
func (r *Receiver) Accept(secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append(r.secrets, secret)
}

// SetMode sets how the receiver answers a challenge: "answer" (the default), "wrong", "404", "500", "307" (a
// redirect to an endpoint of the same receiver that would answer) or "hang".
func (r *Receiver) SetMode(m string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mode = m
}

// Received lists the requests the receiver got, in order.
func (r *Receiver) Received() []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received(nil), r.got...)
}

// serve records a request, verifies its signature and answers it according to the mode.
func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	mode, secrets := r.mode, append([]string(nil), r.secrets...)
	r.mu.Unlock()
	rec := Received{
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
		http.Redirect(w, req, r.URL("/redirected"), http.StatusTemporaryRedirect)
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

// Capture stands in for the webhook-ingress function: it records what Appwrite delivers.
type Capture struct {
	// Srv serves it: its URL is the stack's MCP_EVENTS_INGRESS_URL.
	Srv *httptest.Server
	mu  sync.Mutex
	got []*http.Request
	bod [][]byte
	// Status is what it answers (200 while 0): a test plays a failing ingress with it.
	Status atomic.Int32
}

func newCapture(t *testing.T) *Capture {
	c := &Capture{}
	c.Srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.got = append(c.got, r)
		c.bod = append(c.bod, b)
		c.mu.Unlock()
		if code := int(c.Status.Load()); code != 0 {
			w.WriteHeader(code)
			_, _ = w.Write([]byte(`{"error":"failing","message":"the test's ingress fails"}`))
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(c.Srv.Close)
	return c
}

// Requests lists the requests Appwrite delivered, and their bodies.
func (c *Capture) Requests() ([]*http.Request, [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*http.Request(nil), c.got...), append([][]byte(nil), c.bod...)
}

// AppwriteDown points the function's Appwrite endpoint (not the OAuth issuer) at a server that answers
// every call with Appwrite's 503, for the servers built from now on.
func (st *Stack) AppwriteDown() {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"message":"maintenance","code":503,"type":"general_server_error"}`))
	}))
	st.t.Cleanup(down.Close)
	st.Env["MCP_EVENTS_APPWRITE_ENDPOINT"] = down.URL + "/v1"
}

// URLOf returns a callback URL on the receiver exactly n bytes long.
func URLOf(st *Stack, n int) string {
	base := st.Recv.URL("/hooks/")
	return base + strings.Repeat("u", n-len(base))
}

// MustTime parses v, an RFC 3339 time of an answer, or fails the test.
func MustTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("refreshBefore %v: %v", v, err)
	}
	return ts
}

// Str is the string m holds under a, or else under b (the two spellings of a webhook field).
func Str(m map[string]any, a, b string) string {
	if v, ok := m[a].(string); ok && v != "" {
		return v
	}
	v, _ := m[b].(string)
	return v
}

// OpenEnvelope opens the sealed subscription of webhook wh (as the stand-in stores it) with the stack's keys.
func OpenEnvelope(t *testing.T, st *Stack, wh map[string]any) seal.Subscription {
	t.Helper()
	ring, err := seal.ParseKeyring(st.Env["SEAL_KEYS"])
	Must(t, err)
	s, err := seal.NewSealer(ring, seal.Budget{})
	Must(t, err)
	id := wh["$id"].(string)
	var events []string
	for _, e := range wh["events"].([]any) {
		events = append(events, e.(string))
	}
	f := seal.Fields{Username: Str(wh, "authUsername", "httpUser"), Password: Str(wh, "authPassword", "httpPass"), URLTail: subscriptions.URLTail(wh["url"].(string), id)}
	sub, err := s.Open(id, ProjectID, f, Targets(events)...)
	Must(t, err)
	return sub
}

// Targets are what an envelope may be bound to, read from Appwrite events as the ingress does.
func Targets(events []string) []seal.Target {
	var out []seal.Target
	for _, b := range eventcatalog.Bindings(events) {
		out = append(out, seal.Target{Event: b.Event, Args: seal.ArgsOf(b.Args)})
	}
	return out
}

// Post sends body to the MCP endpoint with the given method and extra headers and returns the status, the
// headers and the decoded JSON body (nil when the body is not JSON).
func Post(t *testing.T, method, url, tok, body string, hdr map[string]string) (int, http.Header, map[string]any, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, url+"/mcp", bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v // net/http sends req.Host, never a Host header of its own
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	Must(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		m = nil
	}
	return resp.StatusCode, resp.Header, m, raw
}

// RPCCode is the JSON-RPC error code of a decoded answer (0 without one).
func RPCCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return int(c)
}

// bearer adds the access token to every request of the official SDK's transport.
type bearer struct {
	token string
	next  http.RoundTripper
}

// RoundTrip sends r with the bearer token.
func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// Connect opens an official MCP Go SDK session on the server at url with token, at protocol version.
func Connect(t *testing.T, url, token, version string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "sdk-test", Version: "1.0.0"}, nil)
	tr := &sdk.StreamableClientTransport{
		Endpoint:             url + "/mcp",
		HTTPClient:           &http.Client{Transport: bearer{token, http.DefaultTransport}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	cs, err := client.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s: %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// RawPost posts one JSON-RPC body to the MCP endpoint with token (and, when version is set, the 2026-07-28
// headers) and returns the answer, failing the test on anything but a 200.
func RawPost(t *testing.T, url, tok, body, version string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/mcp", bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
		var head struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal([]byte(body), &head)
		req.Header.Set("Mcp-Method", head.Method)
	}
	resp, err := http.DefaultClient.Do(req)
	Must(t, err)
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, buf.Bytes())
	}
	return buf.Bytes()
}

// Golden compares the JSON-RPC answer in got (re-indented, keys sorted, request id dropped) with
// testdata/name.
func Golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var v map[string]any
	Must(t, json.Unmarshal(got, &v))
	delete(v, "id")
	pretty, err := json.MarshalIndent(v, "", "  ")
	Must(t, err)
	pretty = append(pretty, '\n')
	snapshot.Check(t, filepath.Join("testdata", name), pretty)
}

// AppwriteProxy sits between the function and the stand-in: it records every call and can act before one is
// forwarded (to play another replica). The function's endpoint points at it.
type AppwriteProxy struct {
	srv    *httptest.Server
	mu     sync.Mutex
	calls  []string
	before func(r *http.Request, body []byte)
	// failing, when set, picks the calls answered with Appwrite's 503 instead of being forwarded.
	failing func(method, path string) bool
}

// Fail makes the proxy answer the calls f picks with Appwrite's 503 (nil: forward every call again).
func (p *AppwriteProxy) Fail(f func(method, path string) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failing = f
}

// ProxyAppwrite points the function's Appwrite endpoint at a new AppwriteProxy for the servers built from
// now on; before, when not nil, runs before each call is forwarded.
func (st *Stack) ProxyAppwrite(t *testing.T, before func(r *http.Request, body []byte)) *AppwriteProxy {
	t.Helper()
	target, err := url.Parse(st.LASrv.URL)
	Must(t, err)
	p := &AppwriteProxy{before: before}
	rp := httputil.NewSingleHostReverseProxy(target)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		p.mu.Lock()
		p.calls = append(p.calls, r.Method+" "+r.URL.Path)
		fail := p.failing != nil && p.failing(r.Method, r.URL.Path)
		p.mu.Unlock()
		if fail {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"message":"maintenance","code":503,"type":"general_server_error"}`))
			return
		}
		if p.before != nil {
			p.before(r, body)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	st.Env["MCP_EVENTS_APPWRITE_ENDPOINT"] = p.srv.URL + "/v1"
	return p
}

// Calls lists the calls the function made ("METHOD /v1/path"), in order.
func (p *AppwriteProxy) Calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls)
}

// Count is how many times the function made call ("METHOD /v1/path").
func (p *AppwriteProxy) Count(call string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.calls {
		if c == call {
			n++
		}
	}
	return n
}

// APIKeyCall calls the stand-in with the stack's API key (as another tool or replica would).
func (st *Stack) APIKeyCall(method, path string, body any) (int, map[string]any) {
	st.t.Helper()
	b, _ := json.Marshal(body)
	status, raw := st.Call(ProjectID, st.APIKey, method, path, "application/json", bytes.NewReader(b))
	out := map[string]any{}
	_ = json.Unmarshal(raw, &out)
	return status, out
}

// LastDeliveryVerifies creates a watched row and reports whether Appwrite's signature on the delivery to the
// ingress verifies with the secret mcp-events derives for the webhook.
func (st *Stack) LastDeliveryVerifies(id string) bool {
	st.t.Helper()
	st.CreateRow(TableID, "check the signature")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	Must(st.t, st.LA.Flush(ctx))
	reqs, bodies := st.Ingress.Requests()
	if len(reqs) == 0 {
		st.t.Fatal("no delivery reached the ingress")
	}
	req, body := reqs[len(reqs)-1], bodies[len(bodies)-1]
	keys, err := appwritesig.ParseKeys(st.Env["APPWRITE_WEBHOOK_SECRET_KEYS"])
	Must(st.t, err)
	return req.Header.Get("X-Appwrite-Webhook-Id") == id &&
		keys.Verify(id, st.Ingress.Srv.URL+"/appwrite/webhooks/"+id, body, req.Header.Get("X-Appwrite-Webhook-Signature"))
}

// APICall sends one request to the stand-in with an API key and decodes the JSON answer.
func (st *Stack) APICall(key, method, path, contentType string, body io.Reader) map[string]any {
	st.t.Helper()
	status, raw := st.Call(ProjectID, key, method, path, contentType, body)
	if status >= 300 {
		st.t.Fatalf("%s %s: %d %s", method, path, status, raw)
	}
	var m map[string]any
	Must(st.t, json.Unmarshal(raw, &m))
	return m
}

// ToolWorld holds the ids of what SeedToolWorld creates: a row, a file, a user and a failed execution.
type ToolWorld struct {
	RowID, FileID, UserID, ExecutionID string
}

// SeedToolWorld creates what the tools read in the stack's project.
func SeedToolWorld(t *testing.T, st *Stack) ToolWorld {
	key, err := st.LA.CreateKey(ProjectID, []string{"rows.write", "files.write", "users.write", "executions.write"})
	Must(t, err)
	var w ToolWorld
	row := st.APICall(key, "POST", "/tablesdb/"+DatabaseID+"/tables/"+TableID+"/rows", "application/json",
		strings.NewReader(`{"rowId":"ticket-1","data":{"title":"printer on fire"}}`))
	w.RowID, _ = row["$id"].(string)

	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("fileId", "report-1")
	fw, _ := mw.CreateFormFile("file", "report.txt")
	_, _ = fw.Write([]byte("quarterly numbers"))
	_ = mw.Close()
	file := st.APICall(key, "POST", "/storage/buckets/"+BucketID+"/files", mw.FormDataContentType(), &buf)
	w.FileID, _ = file["$id"].(string)

	user := st.APICall(key, "POST", "/users", "application/json",
		strings.NewReader(`{"userId":"customer-1","email":"c1@example.com","password":"correct-horse-battery","name":"Customer One"}`))
	w.UserID, _ = user["$id"].(string)

	ex := st.APICall(key, "POST", "/functions/"+FunctionID+"/executions", "application/json", strings.NewReader(`{"body":"x"}`))
	w.ExecutionID, _ = ex["$id"].(string)
	if w.RowID == "" || w.FileID == "" || w.UserID == "" || w.ExecutionID == "" {
		t.Fatalf("seed: %+v", w)
	}
	return w
}

// CallTool calls tool name with args through the SDK session, failing the test on a protocol error.
func CallTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// Structured is a tool result's structured content, failing the test without one.
func Structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", ToolText(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	Must(t, json.Unmarshal(b, &m))
	return m
}

// ToolText is the text of a tool result's first content.
func ToolText(res *sdk.CallToolResult) string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

// Challenges counts the verification envelopes the receiver got.
func Challenges(r *Receiver) int {
	n := 0
	for _, got := range r.Received() {
		if strings.HasPrefix(got.WebhookID, "msg_verification_") {
			n++
		}
	}
	return n
}
