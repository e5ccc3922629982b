package localruntime_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"appwrite-agent/shared/devkit/localruntime"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// echo answers with what the function saw, so tests can check how Context.Req was built.
func echo(rt openruntimes.Context) openruntimes.Response {
	rt.Log("request", rt.Req.Method, rt.Req.Path)
	return rt.Res.Json(map[string]any{
		"method":      rt.Req.Method,
		"path":        rt.Req.Path,
		"url":         rt.Req.Url,
		"scheme":      rt.Req.Scheme,
		"host":        rt.Req.Host,
		"port":        rt.Req.Port,
		"queryString": rt.Req.QueryString,
		"query":       rt.Req.Query,
		"headers":     rt.Req.Headers,
		"body":        rt.Req.BodyText(),
	})
}

type seen struct {
	Method      string            `json:"method"`
	Path        string            `json:"path"`
	URL         string            `json:"url"`
	Scheme      string            `json:"scheme"`
	Host        string            `json:"host"`
	Port        int               `json:"port"`
	QueryString string            `json:"queryString"`
	Query       map[string]string `json:"query"`
	Headers     map[string]string `json:"headers"`
	Body        string            `json:"body"`
}

func start(t *testing.T, h localruntime.Handler, opts localruntime.Options) *httptest.Server {
	t.Helper()
	if opts.LogDir == "" {
		opts.LogDir = t.TempDir()
	}
	srv := httptest.NewServer(localruntime.New(h, opts))
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return res, string(body)
}

func newReq(t *testing.T, method, url string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestHealthDoesNotCallTheFunction(t *testing.T) {
	called := false
	srv := start(t, func(rt openruntimes.Context) openruntimes.Response { called = true; return rt.Res.Text("x") }, localruntime.Options{Secret: "s"})
	res, body := do(t, newReq(t, "GET", srv.URL+"/__opr/health", nil))
	if res.StatusCode != 200 || body != "OK" || called {
		t.Fatalf("health: %d %q called=%v", res.StatusCode, body, called)
	}
}

func TestSecret(t *testing.T) {
	srv := start(t, echo, localruntime.Options{Secret: "open_runtime_secret"})
	for _, tc := range []struct {
		name, secret string
		want         int
	}{
		{"missing", "", 500},
		{"wrong", "nope", 500},
		{"prefix", "open_runtime", 500},
		{"right", "open_runtime_secret", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newReq(t, "GET", srv.URL+"/", nil)
			if tc.secret != "" {
				req.Header.Set("x-open-runtimes-secret", tc.secret)
			}
			res, body := do(t, req)
			if res.StatusCode != tc.want {
				t.Fatalf("status %d, want %d (%s)", res.StatusCode, tc.want, body)
			}
			if tc.want == 500 && body != localruntime.MsgUnauthorized {
				t.Fatalf("body %q", body)
			}
		})
	}
	t.Run("no secret configured", func(t *testing.T) {
		open := start(t, echo, localruntime.Options{})
		res, _ := do(t, newReq(t, "GET", open.URL+"/", nil))
		if res.StatusCode != 200 {
			t.Fatalf("status %d", res.StatusCode)
		}
	})
}

func TestTimeoutHeader(t *testing.T) {
	// A request with x-hold runs until the test ends: only the runtime's timeout can answer it. Others
	// answer at once.
	release := make(chan struct{})
	slow := func(rt openruntimes.Context) openruntimes.Response {
		if rt.Req.Headers["x-hold"] != "" {
			<-release
		}
		return rt.Res.Text("late")
	}
	logDir := t.TempDir()
	srv := start(t, slow, localruntime.Options{LogDir: logDir})
	t.Cleanup(func() { close(release) })
	for _, bad := range []string{"abc", "1.5", "-1", "1e3"} {
		req := newReq(t, "GET", srv.URL+"/", nil)
		req.Header.Set("x-open-runtimes-timeout", bad)
		res, body := do(t, req)
		if res.StatusCode != 500 || body != localruntime.MsgBadTimeout {
			t.Fatalf("timeout %q: %d %q", bad, res.StatusCode, body)
		}
	}

	req := newReq(t, "GET", srv.URL+"/", nil)
	req.Header.Set("x-open-runtimes-timeout", "1")
	req.Header.Set("x-open-runtimes-log-id", "slow1")
	req.Header.Set("x-hold", "1")
	res, body := do(t, req)
	if res.StatusCode != 500 || body != "" {
		t.Fatalf("exceeded: %d %q", res.StatusCode, body)
	}
	if got := res.Header.Get("x-open-runtimes-log-id"); got != "slow1" {
		t.Fatalf("log id header %q", got)
	}
	errs, err := os.ReadFile(filepath.Join(logDir, "slow1_errors.log"))
	if err != nil || !strings.Contains(string(errs), localruntime.MsgTimedOut) {
		t.Fatalf("error log %q, %v", errs, err)
	}

	for _, ok := range []string{"0", "5"} {
		req := newReq(t, "GET", srv.URL+"/", nil)
		req.Header.Set("x-open-runtimes-timeout", ok)
		res, body := do(t, req)
		if res.StatusCode != 200 || body != "late" {
			t.Fatalf("timeout %q: %d %q", ok, res.StatusCode, body)
		}
	}
}

// logTwice logs one line to each stream.
func logTwice(rt openruntimes.Context) openruntimes.Response {
	rt.Log("hello", "world")
	rt.Error("bad thing")
	return rt.Res.Text("ok")
}

// TestOnLogPlaysTheExecutor: with OnLog set, each execution's logs reach it and its two files are deleted,
// as the executor deletes them once read; the log directory does not grow.
func TestOnLogPlaysTheExecutor(t *testing.T) {
	logDir := t.TempDir()
	var mu sync.Mutex
	var got []string
	srv := start(t, logTwice, localruntime.Options{LogDir: logDir, OnLog: func(id, logs, errs string) {
		mu.Lock()
		got = append(got, id+"|"+logs+"|"+errs)
		mu.Unlock()
	}})
	for _, id := range []string{"abc", "def", ""} {
		req := newReq(t, "GET", srv.URL+"/", nil)
		req.Header.Set("x-open-runtimes-logging", "enabled")
		if id != "" {
			req.Header.Set("x-open-runtimes-log-id", id)
		}
		res, body := do(t, req)
		if res.StatusCode != 200 || body != "ok" {
			t.Fatalf("log id %q: %d %q", id, res.StatusCode, body)
		}
		if id == "" {
			id = res.Header.Get("x-open-runtimes-log-id")
		}
		mu.Lock()
		last := got[len(got)-1]
		mu.Unlock()
		if want := id + "|hello world\n|bad thing\n"; last != want {
			t.Fatalf("OnLog got %q, want %q", last, want)
		}
	}
	if left, err := os.ReadDir(logDir); err != nil || len(left) != 0 {
		t.Fatalf("log files left after OnLog read them: %v %v", left, err)
	}
}

func TestLogging(t *testing.T) {
	logDir := t.TempDir()
	srv := start(t, logTwice, localruntime.Options{LogDir: logDir})

	req := newReq(t, "GET", srv.URL+"/", nil)
	req.Header.Set("x-open-runtimes-logging", "enabled")
	req.Header.Set("x-open-runtimes-log-id", "abc")
	res, _ := do(t, req)
	if res.Header.Get("x-open-runtimes-log-id") != "abc" {
		t.Fatalf("log id not echoed: %v", res.Header)
	}
	logs, _ := os.ReadFile(filepath.Join(logDir, "abc_logs.log"))
	errs, _ := os.ReadFile(filepath.Join(logDir, "abc_errors.log"))
	if string(logs) != "hello world\n" || string(errs) != "bad thing\n" {
		t.Fatalf("logs %q errors %q", logs, errs)
	}

	// No log id: a random one is made and echoed.
	res, _ = do(t, newReq(t, "GET", srv.URL+"/", nil))
	id := res.Header.Get("x-open-runtimes-log-id")
	if id == "" {
		t.Fatal("no generated log id")
	}
	if _, err := os.Stat(filepath.Join(logDir, id+"_logs.log")); err != nil {
		t.Fatalf("generated log file: %v", err)
	}

	// Disabled: no files, no header.
	before, _ := os.ReadDir(logDir)
	req = newReq(t, "GET", srv.URL+"/", nil)
	req.Header.Set("x-open-runtimes-logging", "disabled")
	res, body := do(t, req)
	after, _ := os.ReadDir(logDir)
	if res.StatusCode != 200 || body != "ok" || res.Header.Get("x-open-runtimes-log-id") != "" || len(after) != len(before) {
		t.Fatalf("disabled logging: %d %q %v files %d->%d", res.StatusCode, body, res.Header, len(before), len(after))
	}

	// A log id that would escape the log folder is refused.
	req = newReq(t, "GET", srv.URL+"/", nil)
	req.Header.Set("x-open-runtimes-log-id", "../escape")
	res, _ = do(t, req)
	if res.StatusCode != 500 {
		t.Fatalf("path log id: %d", res.StatusCode)
	}
}

func TestDevelopmentLogID(t *testing.T) {
	srv := start(t, echo, localruntime.Options{Env: "development"})
	res, _ := do(t, newReq(t, "GET", srv.URL+"/", nil))
	if res.Header.Get("x-open-runtimes-log-id") != "dev" {
		t.Fatalf("log id %q", res.Header.Get("x-open-runtimes-log-id"))
	}
}

func TestBodyCap(t *testing.T) {
	srv := start(t, func(rt openruntimes.Context) openruntimes.Response {
		return rt.Res.Text(string(rune('0' + len(rt.Req.BodyBinary())%10)))
	}, localruntime.Options{})
	at := bytes.Repeat([]byte("a"), localruntime.MaxBodyBytes)
	res, _ := do(t, newReq(t, "POST", srv.URL+"/", bytes.NewReader(at)))
	if res.StatusCode != 200 {
		t.Fatalf("20 MiB body: %d", res.StatusCode)
	}
	over := append(at, 'b')
	res, body := do(t, newReq(t, "POST", srv.URL+"/", bytes.NewReader(over)))
	if res.StatusCode != 500 || body != "" {
		t.Fatalf("20 MiB + 1 body: %d %q", res.StatusCode, body)
	}
}

func TestRequestShape(t *testing.T) {
	srv := start(t, echo, localruntime.Options{Headers: map[string]string{"x-appwrite-trigger": "http", "X-Appwrite-Key": "dynamic_k"}})
	req := newReq(t, "PUT", srv.URL+"/a/b?x=1&x=2&y=%20z", strings.NewReader(`{"hi":1}`))
	req.Header.Add("X-Custom", "first")
	req.Header.Add("X-Custom", "second")
	req.Header.Set("Content-Type", "Application/JSON")
	req.Header.Set("x-open-runtimes-secret", "hidden")
	req.Header.Set("x-appwrite-trigger", "spoofed")
	req.Header.Set("x-forwarded-proto", "https")
	res, body := do(t, req)
	if res.StatusCode != 200 {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	var s seen
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	hostname, port, _ := strings.Cut(host, ":")
	checks := map[string][2]string{
		"method":       {s.Method, "PUT"},
		"path":         {s.Path, "/a/b"},
		"scheme":       {s.Scheme, "https"},
		"host":         {s.Host, hostname},
		"queryString":  {s.QueryString, "x=1&x=2&y=%20z"},
		"query x":      {s.Query["x"], "1"},
		"query y":      {s.Query["y"], " z"},
		"x-custom":     {s.Headers["x-custom"], "first"},
		"content-type": {s.Headers["content-type"], "application/json"},
		"trigger":      {s.Headers["x-appwrite-trigger"], "http"},
		"key":          {s.Headers["x-appwrite-key"], "dynamic_k"},
		"secret gone":  {s.Headers["x-open-runtimes-secret"], ""},
		"body":         {s.Body, `{"hi":1}`},
		"url":          {s.URL, "https://" + host + "/a/b?x=1&x=2&y=%20z"},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}
	if want := port; want != "" && s.Port == 0 {
		t.Errorf("port = %d", s.Port)
	}
	for k := range s.Headers {
		if k != strings.ToLower(k) {
			t.Errorf("header key %q not lower-cased", k)
		}
	}
}

func TestResponseNormalisation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		res     openruntimes.Response
		status  int
		ct      string
		hasOpr  bool
		headerK string
	}{
		{"zero status, no type", openruntimes.Response{Body: []byte("x")}, 200, "text/plain; charset=utf-8", false, ""},
		{"json", openruntimes.Response{StatusCode: 201, Headers: map[string]string{"content-type": "application/json"}}, 201, "application/json; charset=utf-8", false, ""},
		{"charset kept", openruntimes.Response{StatusCode: 200, Headers: map[string]string{"Content-Type": "text/html; charset=latin1"}}, 200, "text/html; charset=latin1", false, ""},
		{"multipart", openruntimes.Response{StatusCode: 200, Headers: map[string]string{"content-type": "multipart/form-data; boundary=x"}}, 200, "multipart/form-data; boundary=x", false, ""},
		{"opr header removed", openruntimes.Response{StatusCode: 418, Headers: map[string]string{"X-Open-Runtimes-Log-Id": "forged", "X-Mine": "v"}}, 418, "text/plain; charset=utf-8", false, "x-mine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res0 := tc.res
			srv := start(t, func(openruntimes.Context) openruntimes.Response { return res0 }, localruntime.Options{})
			req := newReq(t, "GET", srv.URL+"/", nil)
			req.Header.Set("x-open-runtimes-logging", "disabled")
			res, _ := do(t, req)
			if res.StatusCode != tc.status || res.Header.Get("content-type") != tc.ct {
				t.Fatalf("got %d %q", res.StatusCode, res.Header.Get("content-type"))
			}
			if res.Header.Get("x-open-runtimes-log-id") != "" {
				t.Fatalf("function could set x-open-runtimes-log-id")
			}
			if tc.headerK != "" && res.Header.Get(tc.headerK) == "" {
				t.Fatalf("header %s missing", tc.headerK)
			}
		})
	}
}

func TestPanicBecomes500(t *testing.T) {
	logDir := t.TempDir()
	srv := start(t, func(openruntimes.Context) openruntimes.Response { panic("kaboom") }, localruntime.Options{LogDir: logDir})
	req := newReq(t, "GET", srv.URL+"/", nil)
	req.Header.Set("x-open-runtimes-log-id", "p1")
	res, _ := do(t, req)
	if res.StatusCode != 500 {
		t.Fatalf("status %d", res.StatusCode)
	}
	errs, _ := os.ReadFile(filepath.Join(logDir, "p1_errors.log"))
	if !strings.Contains(string(errs), "kaboom") {
		t.Fatalf("panic not logged: %q", errs)
	}
	// The server survives.
	res, _ = do(t, newReq(t, "GET", srv.URL+"/__opr/health", nil))
	if res.StatusCode != 200 {
		t.Fatal("server died after panic")
	}
}

func TestOptionsFromEnv(t *testing.T) {
	t.Setenv("OPEN_RUNTIMES_SECRET", "s3")
	t.Setenv("OPEN_RUNTIMES_ENV", "development")
	t.Setenv("OPEN_RUNTIMES_HEADERS", `{"x-appwrite-trigger":"http"}`)
	t.Setenv("OPEN_RUNTIMES_LOG_DIR", "/tmp/x")
	opts, err := localruntime.OptionsFromEnv()
	if err != nil || opts.Secret != "s3" || opts.Env != "development" || opts.Headers["x-appwrite-trigger"] != "http" || opts.LogDir != "/tmp/x" {
		t.Fatalf("%+v %v", opts, err)
	}
	t.Setenv("OPEN_RUNTIMES_HEADERS", `["not","an","object"]`)
	if _, err := localruntime.OptionsFromEnv(); err == nil || !strings.Contains(err.Error(), "OPEN_RUNTIMES_HEADERS") {
		t.Fatalf("bad headers accepted: %v", err)
	}
}
