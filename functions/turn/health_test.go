package handler_test

import (
	"testing"

	handler "appwrite-agent/functions/turn"
	"appwrite-agent/shared/devkit/fnhttptest"
)

func TestHealthAndUnknownPath(t *testing.T) { fnhttptest.CheckHealthAndNotFound(t, handler.Main) }

// TestCORS: TURN_CORS_ORIGINS, through the local runtime (fnhttptest.CheckCORS).
func TestCORS(t *testing.T) {
	fnhttptest.CheckCORS(t, handler.Main, handler.EnvCORSOrigins, "/api/turn")
}
