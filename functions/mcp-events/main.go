// Package handler is the mcp-events function: an MCP server that subscribes MCP clients to Appwrite project events.
//
// Main routes GET /health itself and hands the MCP endpoint ("/" and "/mcp") and the OAuth
// protected-resource metadata to mcpserver. The open-runtimes contract gives the function one
// openruntimes.Context per request and takes one buffered openruntimes.Response back, so the request is turned
// into an *http.Request and the answer recorded (the MCP SDK answers JSON, never SSE, in this setup).
package handler

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"appwrite-agent/functions/mcp-events/mcpserver"
	"appwrite-agent/shared/faultreport"
	"appwrite-agent/shared/fnhttp"
	"appwrite-agent/shared/platform"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// requestBudget bounds one execution, below the 30 s synchronous limit of function domains.
const requestBudget = 28 * time.Second

// FromEnv builds the function's entry point from the environment as it is now: the server (with its JWKS
// cache) or, when the configuration does not work, an entry point that answers the MCP paths with a JSON 503;
// the problem is reported to the fault reporter once, here.
func FromEnv() func(openruntimes.Context) openruntimes.Response {
	srv, err := load()
	return func(rt openruntimes.Context) openruntimes.Response {
		return route(rt, func() (*mcpserver.Server, error) { return srv, err })
	}
}

func load() (*mcpserver.Server, error) {
	faults, err := faultreport.New(faultreport.OptionsFromEnv(os.Getenv, "mcp-events", platform.FromEnv(os.Getenv).BuildID()))
	if err != nil {
		return nil, err
	}
	srv, err := mcpserver.New(os.Getenv, mcpserver.Options{Faults: faults})
	if err != nil {
		faults.Report(faultreport.Fault{Operation: "configuration", Outcome: "misconfigured", Reason: "not_configured", Detail: err.Error()})
	}
	return srv, err
}

// loaded is the function's only process-wide value: its server, built from the environment once per process
// (a deployment's environment never changes while it runs), on the first request that needs it: /health
// answers without it. It is a cache, never a store: a new process rebuilds it and loses nothing.
var loaded = sync.OnceValues(load)

// Main is the entry point the open-runtimes Go server calls for every request.
func Main(rt openruntimes.Context) openruntimes.Response { return route(rt, loaded) }

// New returns an entry point bound to srv instead of the process server: tests run several instances side
// by side with it.
func New(srv *mcpserver.Server) func(openruntimes.Context) openruntimes.Response {
	return func(rt openruntimes.Context) openruntimes.Response {
		return route(rt, func() (*mcpserver.Server, error) { return srv, nil })
	}
}

// route answers GET /health itself and hands the paths mcpserver handles to the server.
func route(rt openruntimes.Context, server func() (*mcpserver.Server, error)) openruntimes.Response {
	if rt.Req.Method == "GET" && rt.Req.Path == "/health" {
		return fnhttp.Health(rt, platform.FromEnv(os.Getenv).BuildID())
	}
	if !mcpserver.Handles(rt.Req.Path) {
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
func Serve(srv *mcpserver.Server, rt openruntimes.Context) (resp openruntimes.Response) {
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
	ctx = mcpserver.WithLog(ctx, func(line string) { rt.Log(line) })
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
	w := mcpserver.NewRecorder()
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
