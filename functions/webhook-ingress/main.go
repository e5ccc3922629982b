// Package handler is the webhook-ingress function: it receives Appwrite's webhooks and delivers signed, projected events.
package handler

import (
	"appwrite-agent/shared/fnhttp"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// Main is the entry point the open-runtimes Go server calls for every request.
func Main(Context openruntimes.Context) openruntimes.Response {
	switch {
	case Context.Req.Method == "GET" && Context.Req.Path == "/health":
		return fnhttp.Health(Context)
	default:
		return fnhttp.NotFound(Context)
	}
}
