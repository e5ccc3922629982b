package handler_test

import (
	"testing"
	"time"

	handler "appwrite-agent/functions/webhook-ingress"
	"appwrite-agent/shared/devkit/fnhttptest"
	"appwrite-agent/shared/devkit/localruntime"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

func TestHealthAndUnknownPath(t *testing.T) { fnhttptest.CheckHealthAndNotFound(t, handler.Main) }

// envEntry is handler.FromEnv(now) built again at every request, so that a test can change the environment
// with t.Setenv between requests; Main builds it once per process.
func envEntry(now func() time.Time) localruntime.Handler {
	return func(rt openruntimes.Context) openruntimes.Response { return handler.FromEnv(now)(rt) }
}
