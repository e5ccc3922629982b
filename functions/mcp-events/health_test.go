package handler_test

import (
	"testing"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/shared/devkit/fnhttptest"
)

func TestHealthAndUnknownPath(t *testing.T) { fnhttptest.CheckHealthAndNotFound(t, handler.Main) }
