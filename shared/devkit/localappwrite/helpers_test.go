package localappwrite

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/client"
)

const testProject = "proj1"

var testKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

// fixture is a stand-in served by an httptest server with one project and an all-scopes key.
type fixture struct {
	s   *Server
	ts  *httptest.Server
	key string
}

// newFixture builds a fixture with the stand-in-only loopback allowance on, since most tests deliver to
// loopback recorders; newStrictFixture builds one with Appwrite's defaults.
func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	opts.AllowLoopbackWebhookURLs = true
	return newStrictFixture(t, opts)
}

func newStrictFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	if opts.SigningKey == nil {
		opts.SigningKey = testKey()
	}
	s := New(opts)
	ts := httptest.NewServer(s)
	s.SetBaseURL(ts.URL)
	t.Cleanup(func() {
		ts.Close()
		_ = s.Close()
	})
	if err := s.SeedProject(ProjectSpec{ID: testProject, Members: []string{"user-1"}}); err != nil {
		t.Fatal(err)
	}
	key, err := s.CreateKey(testProject, projectScopes)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{s: s, ts: ts, key: key}
}

// sdk returns an Appwrite SDK v1.0.0 client for the fixture's project and the given key.
func (f *fixture) sdk(key string) client.Client {
	return appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(f.ts.URL+"/v1"), appwrite.WithProject(testProject), appwrite.WithKey(key))
}

func (f *fixture) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.s.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
}

// appwriteErr unpacks an SDK error into status and Appwrite type, checking the body shape.
func appwriteErr(t *testing.T, err error) (int, string) {
	t.Helper()
	var ae *client.AppwriteError
	if !errors.As(err, &ae) {
		t.Fatalf("want *client.AppwriteError, got %T %v", err, err)
	}
	var body map[string]any
	if e := json.Unmarshal([]byte(ae.GetResponse()), &body); e != nil {
		t.Fatalf("error body is not JSON: %q", ae.GetResponse())
	}
	for _, k := range []string{"message", "code", "type", "version"} {
		if _, ok := body[k]; !ok {
			t.Fatalf("error body %s lacks %q", ae.GetResponse(), k)
		}
	}
	if int(body["code"].(float64)) != ae.GetStatusCode() {
		t.Fatalf("code %v != status %d", body["code"], ae.GetStatusCode())
	}
	return ae.GetStatusCode(), body["type"].(string)
}

func wantErr(t *testing.T, err error, status int, typ string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %d %s, got success", status, typ)
	}
	gotStatus, gotType := appwriteErr(t, err)
	if gotStatus != status || gotType != typ {
		t.Fatalf("want %d %s, got %d %s (%v)", status, typ, gotStatus, gotType, err)
	}
}

// recorded is one request a recorder server received.
type recorded struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// recorder is an httptest server that records requests and answers with a settable status.
type recorder struct {
	ts     *httptest.Server
	mu     sync.Mutex
	reqs   []recorded
	status int
	reply  func(w http.ResponseWriter, r *http.Request, body []byte)
}

func newRecorder(t *testing.T) *recorder {
	rec := &recorder{status: http.StatusOK}
	rec.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, recorded{r.Method, r.URL.RequestURI(), r.Header.Clone(), b})
		status, reply := rec.status, rec.reply
		rec.mu.Unlock()
		if reply != nil {
			reply(w, r, b)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(rec.ts.Close)
	return rec
}

func (r *recorder) setStatus(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = code
}

func (r *recorder) all() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

// call is client.Call with a JSON body, decoding the JSON result.
func callJSON(t *testing.T, c client.Client, method, path string, params map[string]any) (map[string]any, error) {
	t.Helper()
	resp, err := c.Call(method, path, map[string]any{"content-type": "application/json"}, params)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if s, ok := resp.Result.(string); ok && s != "" {
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			t.Fatalf("decoding %q: %v", s, err)
		}
	}
	return out, nil
}

// wantAPIError checks status, type and the exact message of an Appwrite error.
func wantAPIError(t *testing.T, err error, status int, typ, message string) {
	t.Helper()
	wantErr(t, err, status, typ)
	var ae *client.AppwriteError
	if !errors.As(err, &ae) {
		return
	}
	var body struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal([]byte(ae.GetResponse()), &body)
	if body.Message != message {
		t.Errorf("message:\n got %q\nwant %q", body.Message, message)
	}
}

// webhookSecretForTest reads a webhook's stored secret.
func (s *Server) webhookSecretForTest(t *testing.T, id string) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	wh := s.projects[testProject].webhooks[id]
	if wh == nil {
		t.Fatalf("no webhook %s", id)
	}
	return wh.secret
}

// appwriteType returns the type of an Appwrite SDK error, or "".
func appwriteType(err error) string {
	var ae *client.AppwriteError
	if !errors.As(err, &ae) {
		return ""
	}
	var body struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal([]byte(ae.GetResponse()), &body)
	return body.Type
}

// sdkTimeout bounds the tests' Appwrite SDK calls: the SDK's 10 s default was exceeded on a loaded machine (load
// average 33) by calls that carry megabytes or run a function. A safety net, not a measure.
const sdkTimeout = 2 * time.Minute

const routeNotFound = "Route not found. Please ensure the endpoint is configured correctly and that the API route is valid for this SDK version. Refer to the API docs for more details."

// rawCall sends a request with a JSON body and the fixture's key, returning status and decoded body.
func (f *fixture) rawCall(t *testing.T, method, path string, body any, header map[string]string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, f.ts.URL+"/v1"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Appwrite-Project", testProject)
	req.Header.Set("X-Appwrite-Key", f.key)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]any{}
	data, _ := io.ReadAll(resp.Body)
	if len(data) > 0 {
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("%s %s: body %q is not JSON", method, path, data)
		}
	}
	return resp.StatusCode, out
}

var hex128 = regexp.MustCompile(`^[0-9a-f]{128}$`)
