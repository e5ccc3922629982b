package subscriptions_test

import (
	"testing"

	"appwrite-agent/functions/mcp-events/subscriptions"
)

// TestLastErrorOf: the logs Appwrite's webhook worker writes at a failed delivery (Workers/Webhooks.php
// 1.9.6:168-178, HEAD 0cefd06:182-192) map to the SEP-3415 lastError categories, never to the logs' text.
func TestLastErrorOf(t *testing.T) {
	const head = "URL: https://ingress.example/appwrite/webhooks/mcpev_1\nMethod: POST\n"
	for _, c := range []struct{ logs, want string }{
		{head + "Status code: 404\nBody: \n{\"message\":\"not found\"}\n", "http_4xx"},
		{head + "Status code: 400\nBody: \nStatus code: 500\n", "http_4xx"}, // the body never counts
		{head + "Status code: 503\nBody: \n\n", "http_5xx"},
		{head + "CURL Error: Operation timed out after 15001 milliseconds with 0 bytes received\nEvents: users.1.create\n", "timeout"},
		{head + "CURL Error: Connection timed out after 15000 milliseconds\nEvents: users.1.create\n", "timeout"},
		{head + "CURL Error: Failed to connect to ingress.example port 443 after 2 ms: Couldn't connect to server\nEvents: x\n", "connection_refused"},
		{head + "CURL Error: Could not resolve host: ingress.example\nEvents: x\n", "connection_refused"},
		{head + "CURL Error: SSL certificate problem: unable to get local issuer certificate\nEvents: x\n", "tls_error"},
		{head + "Client Error: SSL: no alternative certificate subject name matches target host name 'ingress.example'\nEvents: x\n", "tls_error"},
		{head + "Client Error: Operation timed out after 15000 milliseconds with 0 bytes received\nEvents: x\n", "timeout"},
		{head + "Client Error: Maximum response size exceeded\nEvents: x\n", "connection_refused"},
		{"", "connection_refused"},
	} {
		if got := subscriptions.LastErrorOf(c.logs); got != c.want {
			t.Errorf("LastErrorOf(%q) = %q, want %q", c.logs, got, c.want)
		}
	}
}
