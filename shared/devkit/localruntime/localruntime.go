// Package localruntime is our own implementation of the open-runtimes Go server contract: the HTTP
// server that Appwrite's executor talks to and that calls a function's handler.Main for every request.
//
// It copies the behaviour of open-runtimes' runtimes/go server (see docs/local-runtime.md):
//
//   - GET /__opr/health answers 200 "OK" without calling the function;
//   - x-open-runtimes-secret must equal the configured secret when one is set, otherwise 500
//     `Unauthorized. Provide correct "x-open-runtimes-secret" header.`;
//   - x-open-runtimes-timeout is whole seconds (missing or 0: no timeout; anything else that is not a
//     positive integer: 500 `Header "x-open-runtimes-timeout" must be an integer greater than 0.`); when it
//     elapses the function's error log gets "Execution timed out." and the answer is 500 with an empty body;
//   - x-open-runtimes-logging (enabled or empty / disabled) and x-open-runtimes-log-id choose the log
//     files <dir>/<id>_logs.log and <dir>/<id>_errors.log; the id is echoed in the x-open-runtimes-log-id
//     response header;
//   - request bodies over 20 MiB are refused with a 500 and an empty body;
//   - header keys are lower-cased with their first value kept, x-open-runtimes-* headers are dropped and the
//     JSON object of OPEN_RUNTIMES_HEADERS is merged over them;
//   - the response's header keys are lower-cased, x-open-runtimes-* removed, content-type defaults to
//     text/plain and gets "; charset=utf-8" unless it is multipart/* or already names a charset;
//   - a panic in the function is logged through the error log and answered with 500.
//
// This package imports only the standard library and types-for-go, because the staged-build proof
// (scripts/stage) copies it into the runtime's server module exactly like the real open-runtimes server.
// Native stdout/stderr capture is left out on purpose: the real server swaps the global os.Stdout per
// request, which is unsafe with concurrent requests; our functions log through Context.Log/Error only.
package localruntime

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// MaxBodyBytes is the request body cap of the open-runtimes Go server (http.MaxBytesHandler, 20 MiB).
const MaxBodyBytes = 20 * 1024 * 1024

// Messages the open-runtimes server answers with, word for word.
const (
	MsgUnauthorized   = `Unauthorized. Provide correct "x-open-runtimes-secret" header.`
	MsgBadTimeout     = `Header "x-open-runtimes-timeout" must be an integer greater than 0.`
	MsgTimedOut       = "Execution timed out."
	MsgLogSetupFailed = "could not prepare log file"
)

// Handler is the signature of a function's entry point, handler.Main.
type Handler func(openruntimes.Context) openruntimes.Response

// Options configure a runtime server. The zero value is a development server: no secret, no extra headers,
// logs under the system temp directory.
type Options struct {
	// Secret is OPEN_RUNTIMES_SECRET: when non-empty every request must carry it in x-open-runtimes-secret.
	Secret string
	// Env is OPEN_RUNTIMES_ENV; "development" makes the default log id "dev".
	Env string
	// Headers is OPEN_RUNTIMES_HEADERS, merged over the request headers the function sees.
	Headers map[string]string
	// LogDir is where <id>_logs.log and <id>_errors.log are written (the real server uses /mnt/logs).
	// Empty means os.TempDir()/open-runtimes-logs.
	LogDir string
	// MaxBodyBytes caps request bodies; 0 means MaxBodyBytes.
	MaxBodyBytes int64
	// OnLog, when set, plays the executor's part: it receives every finished execution's log id, logs and
	// errors, read from the files, and the files are then deleted, as open-runtimes' executor deletes them
	// once read (scripts/dev prints them). Without OnLog the files stay for whoever reads them.
	OnLog func(id, logs, errors string)
}

// OptionsFromEnv reads OPEN_RUNTIMES_SECRET, OPEN_RUNTIMES_ENV, OPEN_RUNTIMES_HEADERS, and two settings of
// ours: OPEN_RUNTIMES_LOG_DIR (default /mnt/logs when it exists) and OPEN_RUNTIMES_ECHO_LOGS ("true" prints
// each execution's logs and errors to stdout, for scripts/dev).
func OptionsFromEnv() (Options, error) {
	opts := Options{
		Secret: os.Getenv("OPEN_RUNTIMES_SECRET"),
		Env:    os.Getenv("OPEN_RUNTIMES_ENV"),
		LogDir: os.Getenv("OPEN_RUNTIMES_LOG_DIR"),
	}
	if opts.LogDir == "" {
		if st, err := os.Stat("/mnt/logs"); err == nil && st.IsDir() {
			opts.LogDir = "/mnt/logs"
		}
	}
	if os.Getenv("OPEN_RUNTIMES_ECHO_LOGS") == "true" {
		opts.OnLog = EchoLogs(os.Stdout)
	}
	if raw := strings.TrimSpace(os.Getenv("OPEN_RUNTIMES_HEADERS")); raw != "" {
		if err := json.Unmarshal([]byte(raw), &opts.Headers); err != nil {
			return Options{}, fmt.Errorf("OPEN_RUNTIMES_HEADERS must be a JSON object of strings: %w", err)
		}
	}
	return opts, nil
}

// EchoLogs returns an OnLog that writes each execution's log lines to w, prefixed with the log id and
// "log" or "error".
func EchoLogs(w io.Writer) func(id, logs, errs string) {
	var mu sync.Mutex
	return func(id, logs, errs string) {
		mu.Lock()
		defer mu.Unlock()
		for _, part := range [2][2]string{{"log", logs}, {"error", errs}} {
			kind, text := part[0], part[1]
			for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
				if line != "" {
					fmt.Fprintf(w, "%s %s: %s\n", id, kind, line)
				}
			}
		}
	}
}

// New returns the runtime server around main.
func New(main Handler, opts Options) http.Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = MaxBodyBytes
	}
	if opts.LogDir == "" {
		opts.LogDir = filepath.Join(os.TempDir(), "open-runtimes-logs")
	}
	return &server{main: main, opts: opts}
}

type server struct {
	main    Handler
	opts    Options
	mkdirMu sync.Mutex
	madeDir bool
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/__opr/health" {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("OK"))
		return
	}
	if s.opts.Secret != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("x-open-runtimes-secret")), []byte(s.opts.Secret)) != 1 {
		writePlain(w, http.StatusInternalServerError, MsgUnauthorized)
		return
	}
	timeout := time.Duration(0)
	if raw := r.Header.Get("x-open-runtimes-timeout"); raw != "" {
		secs, err := strconv.Atoi(raw)
		if err != nil || secs < 0 {
			writePlain(w, http.StatusInternalServerError, MsgBadTimeout)
			return
		}
		timeout = time.Duration(secs) * time.Second
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}

	logger, logID, err := s.newLogger(r.Header.Get("x-open-runtimes-logging"), r.Header.Get("x-open-runtimes-log-id"))
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	ctx := openruntimes.NewContext(logger)
	ctx.Req = s.request(r, body)

	done := make(chan openruntimes.Response, 1)
	// The function runs in its own goroutine so that the timeout can answer without it, as the real server
	// does: the handler is not cancelled and may keep running after the 500 (documented open-runtimes
	// behaviour); the buffered channel lets it finish without blocking.
	go func() {
		var res openruntimes.Response
		defer func() {
			if p := recover(); p != nil {
				ctx.Error(fmt.Sprintf("%v", p))
				res = openruntimes.Response{StatusCode: http.StatusInternalServerError}
			}
			done <- res
		}()
		res = s.main(ctx)
	}()

	var res openruntimes.Response
	timedOut := false
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		select {
		case res = <-done:
			timer.Stop()
		case <-timer.C:
			timedOut = true
			ctx.Error(MsgTimedOut)
		}
	} else {
		res = <-done
	}
	s.finishLogs(&logger, logID)

	if logID != "" {
		w.Header().Set("x-open-runtimes-log-id", logID)
	}
	if timedOut {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	writeResponse(w, res)
}

// request builds Context.Req the way the open-runtimes server does.
func (s *server) request(r *http.Request, body []byte) openruntimes.ContextRequest {
	headers := map[string]string{}
	for key, values := range r.Header {
		k := strings.ToLower(key)
		if strings.HasPrefix(k, "x-open-runtimes-") || len(values) == 0 {
			continue
		}
		headers[k] = values[0]
	}
	if r.Host != "" {
		headers["host"] = r.Host
	}
	for k, v := range s.opts.Headers {
		headers[strings.ToLower(k)] = v
	}
	if ct, ok := headers["content-type"]; ok {
		headers["content-type"] = strings.ToLower(ct)
	}

	scheme := headers["x-forwarded-proto"]
	if scheme == "" {
		scheme = "http"
	}
	host, port := r.Host, 0
	if i := strings.LastIndex(host, ":"); i >= 0 && !strings.HasSuffix(host, "]") {
		if p, err := strconv.Atoi(host[i+1:]); err == nil {
			host, port = host[:i], p
		}
	}
	if port == 0 {
		port = 80
		if scheme == "https" {
			port = 443
		}
	}
	query := map[string]string{}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			query[k] = v[0]
		}
	}
	url := scheme + "://" + host
	if (scheme == "http" && port != 80) || (scheme == "https" && port != 443) {
		url += ":" + strconv.Itoa(port)
	}
	url += r.URL.Path
	if r.URL.RawQuery != "" {
		url += "?" + r.URL.RawQuery
	}

	req := openruntimes.ContextRequest{
		Headers:     headers,
		Method:      r.Method,
		Url:         url,
		Path:        r.URL.Path,
		Port:        port,
		Scheme:      scheme,
		Host:        host,
		QueryString: r.URL.RawQuery,
		Query:       query,
	}
	req.SetBodyBinary(body)
	return req
}

func (s *server) newLogger(status, id string) (openruntimes.Logger, string, error) {
	if status != "" && status != "enabled" {
		return openruntimes.Logger{}, "", nil
	}
	if id == "" {
		if s.opts.Env == "development" {
			id = "dev"
		} else {
			id = randomID()
		}
	}
	if strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return openruntimes.Logger{}, "", errors.New("log id must not contain path separators")
	}
	s.mkdirMu.Lock()
	if !s.madeDir {
		if err := os.MkdirAll(s.opts.LogDir, 0o755); err != nil {
			s.mkdirMu.Unlock()
			return openruntimes.Logger{}, "", err
		}
		s.madeDir = true
	}
	s.mkdirMu.Unlock()
	logs, err := os.OpenFile(filepath.Join(s.opts.LogDir, id+"_logs.log"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return openruntimes.Logger{}, "", errors.New(MsgLogSetupFailed)
	}
	errs, err := os.OpenFile(filepath.Join(s.opts.LogDir, id+"_errors.log"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		logs.Close()
		return openruntimes.Logger{}, "", errors.New(MsgLogSetupFailed)
	}
	return openruntimes.Logger{Enabled: true, Id: id, StreamLogs: logs, StreamErrors: errs}, id, nil
}

// finishLogs closes the log files and, when OnLog is set, hands their content over and deletes them, as the
// executor does after reading them (open-runtimes/executor src/Executor/Runner/Docker.php, "Extract logs and
// errors from file": read, then $logDevice->delete). Without the delete a busy function's log directory
// gains two files per execution, and every later create and open searches a directory of tens of thousands.
func (s *server) finishLogs(l *openruntimes.Logger, id string) {
	if !l.Enabled {
		return
	}
	l.End()
	if s.opts.OnLog == nil {
		return
	}
	logsPath, errsPath := filepath.Join(s.opts.LogDir, id+"_logs.log"), filepath.Join(s.opts.LogDir, id+"_errors.log")
	logs, _ := os.ReadFile(logsPath)
	errs, _ := os.ReadFile(errsPath)
	_ = os.Remove(logsPath)
	_ = os.Remove(errsPath)
	s.opts.OnLog(id, string(logs), string(errs))
}

func writeResponse(w http.ResponseWriter, res openruntimes.Response) {
	contentType := ""
	for k, v := range res.Headers {
		k = strings.ToLower(k)
		if strings.HasPrefix(k, "x-open-runtimes-") {
			continue
		}
		if k == "content-type" {
			contentType = v
			continue
		}
		w.Header().Set(k, v)
	}
	if contentType == "" {
		contentType = "text/plain"
	}
	lower := strings.ToLower(contentType)
	if !strings.HasPrefix(lower, "multipart/") && !strings.Contains(lower, "charset=") {
		contentType += "; charset=utf-8"
	}
	w.Header().Set("content-type", contentType)
	status := res.StatusCode
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.Copy(w, bytes.NewReader(res.Body))
}

func writePlain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("content-type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg))
}

// randomID is a 20-hex-character id (ident.Unique's, written out: this package imports only the standard
// library and types-for-go).
func randomID() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
