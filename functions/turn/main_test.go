package handler_test

import (
	"testing"

	handler "appwrite-agent/functions/turn"
	"appwrite-agent/shared/devkit/fnhttptest"
	"appwrite-agent/shared/devkit/localruntime"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

func TestHealthAndUnknownPath(t *testing.T) { fnhttptest.CheckHealthAndNotFound(t, handler.Main) }

// TestCORS: TURN_CORS_ORIGINS, through the local runtime (fnhttptest.CheckCORS).
func TestCORS(t *testing.T) {
	fnhttptest.CheckCORS(t, func() localruntime.Handler { return envMain }, handler.EnvCORSOrigins, "/api/turn")
}

// envMain is Main with the configuration read at every request (handler.New(handler.LoadConfig())), so that
// a test can change it with t.Setenv between requests; Main reads it once per process.
func envMain(rt openruntimes.Context) openruntimes.Response {
	return handler.New(handler.LoadConfig())(rt)
}
