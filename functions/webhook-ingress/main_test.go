package handler_test

import (
	"testing"

	handler "appwrite-agent/functions/webhook-ingress"
	"appwrite-agent/shared/devkit/fnhttptest"
)

func TestHealthAndUnknownPath(t *testing.T) { fnhttptest.CheckHealthAndNotFound(t, handler.Main) }
