// Package handler is the chat function: it serves the chat page (embedded, see page.go) and its API under
// /api/ (api.go), the proxy between a signed-in Appwrite user and the turn function: it verifies the user's
// JWT on every call, keeps conversations, memories, agent settings and MCP connections in TablesDB
// (package store), starts turns as async executions with a Realtime progress sink, and stores each finished
// turn from its progress rows (package turns). docs/chat.md is its contract.
package handler

import (
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"appwrite-agent/functions/chat/automations"
	"appwrite-agent/shared/fnhttp"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// config is the function's only process-wide value: its configuration, read once per process (a deployment's
// environment never changes while it runs). Tests build their own Config and call serve.
var config = sync.OnceValue(LoadConfig)

// Main is the entry point the open-runtimes Go server calls for every request: serve over the configuration
// read once per process, passed down.
func Main(rt openruntimes.Context) openruntimes.Response {
	cfg := config()
	for _, w := range cfg.Warnings {
		rt.Error("config: " + w)
	}
	return serve(rt, cfg, builtSite(), time.Now)
}

func serve(rt openruntimes.Context, cfg Config, site fs.FS, now func() time.Time) openruntimes.Response {
	req := rt.Req
	switch {
	case automations.IsScheduled(req.Method, req.Headers):
		return scheduled(rt, cfg, now)
	case req.Path == "/health" && req.Method == http.MethodGet:
		return fnhttp.Health(rt, cfg.BuildID)
	case req.Path == "/api" || strings.HasPrefix(req.Path, "/api/"):
		return api(rt, cfg, now)
	case req.Path == ClientMetadataPath && (req.Method == http.MethodGet || req.Method == http.MethodHead):
		return clientMetadata(rt)
	case req.Method == http.MethodGet || req.Method == http.MethodHead:
		return page(rt, cfg, site)
	default:
		return fnhttp.Error(rt, http.StatusMethodNotAllowed, "method_not_allowed", req.Method+" "+req.Path+" is not allowed: the page answers GET and HEAD, the API is under /api/")
	}
}
