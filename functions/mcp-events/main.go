// Package handler is the mcp-events function: an MCP server that subscribes MCP clients to Appwrite project events.
//
// Main routes GET /health itself and hands the MCP endpoint ("/" and "/mcp") and the OAuth
// protected-resource metadata to the Server (server.go). The open-runtimes contract gives the function one
// openruntimes.Context per request and takes one buffered openruntimes.Response back, so the request is turned
// into an *http.Request and the answer recorded (the MCP SDK answers JSON, never SSE, in this setup).
//
// The files: main.go (this contract), config.go (the environment, read once), server.go (the MCP endpoint:
// origin, OAuth, the SDK), transport.go (the JSON-RPC and Streamable HTTP rules applied here), events.go
// (events/list, events/subscribe, events/unsubscribe). The domain is in sub-packages: oauth (the resource
// server), subscriptions (a subscription is an Appwrite webhook), tools (the read-only tools), mcperr (the
// events extension's errors).
package handler

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"appwrite-agent/shared/faultreport"
	"appwrite-agent/shared/fnhttp"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// requestBudget bounds one execution, below the 30 s synchronous limit of function domains.
const requestBudget = 28 * time.Second

// FromEnv builds the function's entry point from the environment as it is now (LoadConfig). Its server (with
// the JWKS cache) is built on the first request to an MCP path (/health answers without it); when the
// configuration does not work, those paths are answered with a JSON 503 and the problem is reported to the
// fault reporter once, then.
func FromEnv() func(openruntimes.Context) openruntimes.Response {
	cfg, err := LoadConfig()
	server := sync.OnceValues(func() (*Server, error) { return build(cfg, err) })
	return func(rt openruntimes.Context) openruntimes.Response {
		return route(rt, cfg.Platform.BuildID(), server)
	}
}

// build builds the server of cfg, whose reading failed with err (nil when it did not), with its fault
// reporter, and reports a configuration that does not work.
func build(cfg Config, err error) (*Server, error) {
	faults, ferr := faultreport.New(cfg.Faults)
	if ferr != nil {
		return nil, ferr
	}
	var srv *Server
	if err == nil {
		srv, err = NewServer(cfg, Options{Faults: faults})
	}
	if err != nil {
		faults.Report(faultreport.Fault{Operation: "configuration", Outcome: "misconfigured", Reason: "not_configured", Detail: err.Error()})
	}
	return srv, err
}

// fromEnv is the function's only process-wide value: its entry point over the configuration, read once per
// process (a deployment's environment never changes while it runs). The server it builds on the first MCP
// request is a cache, never a store: a new process rebuilds it and loses nothing.
var fromEnv = sync.OnceValue(FromEnv)

// Main is the entry point the open-runtimes Go server calls for every request.
func Main(rt openruntimes.Context) openruntimes.Response { return fromEnv()(rt) }

// New returns an entry point bound to srv instead of the process server: tests run several instances side
// by side with it.
func New(srv *Server) func(openruntimes.Context) openruntimes.Response {
	return func(rt openruntimes.Context) openruntimes.Response {
		return route(rt, srv.cfg.Platform.BuildID(), func() (*Server, error) { return srv, nil })
	}
}

// route answers GET /health itself (with the running deployment's buildID) and hands the paths the server
// handles to it.
func route(rt openruntimes.Context, buildID string, server func() (*Server, error)) openruntimes.Response {
	if rt.Req.Method == "GET" && rt.Req.Path == "/health" {
		return fnhttp.Health(rt, buildID)
	}
	if !handles(rt.Req.Path) {
		return fnhttp.NotFound(rt)
	}
	srv, err := server()
	if err != nil {
		rt.Error("mcp-events configuration: " + err.Error())
		return fnhttp.Error(rt, http.StatusServiceUnavailable, "misconfigured",
			"the mcp-events function is not configured; see its logs")
	}
	return Serve(srv, rt)
}

// Serve runs one request through srv and returns its buffered answer. A panic is reported as a server
// fault and answered with a JSON 500; reports have left before the answer does.
func Serve(srv *Server, rt openruntimes.Context) (resp openruntimes.Response) {
	ctx, cancel := context.WithTimeout(context.Background(), requestBudget)
	defer cancel()
	defer srv.Faults().Flush()
	defer func() {
		if v := recover(); v != nil {
			rt.Error(fmt.Sprintf("mcp-events: panic serving %s %s: %v", rt.Req.Method, rt.Req.Path, v))
			srv.Faults().Report(faultreport.Fault{Operation: rt.Req.Method + " " + rt.Req.Path, Outcome: "panic",
				Reason: "panic", Detail: fmt.Sprint(v)})
			resp = fnhttp.Error(rt, http.StatusInternalServerError, "internal", "internal error; see the function's logs")
		}
	}()
	ctx = withLog(ctx, func(line string) { rt.Log(line) })
	req := rt.Req
	u := &url.URL{Path: req.Path, RawQuery: req.QueryString}
	r, err := http.NewRequestWithContext(ctx, req.Method, u.String(), bytes.NewReader(req.BodyBinary()))
	if err != nil {
		return fnhttp.Error(rt, http.StatusBadRequest, "invalid_request", "unparsable request")
	}
	for k, v := range req.Headers {
		r.Header.Set(k, v)
	}
	// The Host header keeps the port (req.Host is the name alone): the Origin check compares host and port.
	r.Host = req.Host
	if h := req.Headers["host"]; h != "" {
		r.Host = h
	}
	w := NewRecorder()
	srv.ServeHTTP(w, r)
	headers := map[string]string{}
	for k, vs := range w.Header() {
		if len(vs) > 0 {
			headers[strings.ToLower(k)] = vs[0]
		}
	}
	body := w.Body()
	if w.Status() >= 400 && len(body) == 0 {
		// An empty error body would be replaced by an HTML page on function domains.
		return fnhttp.Error(rt, w.Status(), "error", http.StatusText(w.Status()))
	}
	return openruntimes.Response{Body: body, StatusCode: w.Status(), Headers: headers}
}

// Recorder is the function's one buffering http.ResponseWriter: it keeps the whole answer (status,
// headers, body), as the open-runtimes contract takes one buffered response; the SDK's JSON answers are
// recorded the same way before this package completes them.
type Recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

// NewRecorder returns an empty Recorder whose status is 200 until WriteHeader or Write says otherwise.
func NewRecorder() *Recorder { return &Recorder{header: http.Header{}, status: http.StatusOK} }

// Header implements http.ResponseWriter.
func (r *Recorder) Header() http.Header { return r.header }

// WriteHeader implements http.ResponseWriter; only the first status counts.
func (r *Recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
}

// Write implements http.ResponseWriter.
func (r *Recorder) Write(p []byte) (int, error) {
	r.wrote = true
	return r.body.Write(p)
}

// Status is the recorded status code.
func (r *Recorder) Status() int { return r.status }

// Body is the recorded body.
func (r *Recorder) Body() []byte { return r.body.Bytes() }
