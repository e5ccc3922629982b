package awclient_test

import (
	"encoding/json"
	"testing"

	"appwrite-agent/shared/awclient"
)

func TestWebhookBothSpellings(t *testing.T) {
	for _, body := range []string{
		`{"$id":"w","tls":true,"authUsername":"u","authPassword":"p","secret":"s","events":["a"],"enabled":false}`,
		`{"$id":"w","security":true,"httpUser":"u","httpPass":"p","signatureKey":"s","events":["a"],"enabled":false}`,
	} {
		var w awclient.Webhook
		if err := json.Unmarshal([]byte(body), &w); err != nil {
			t.Fatal(err)
		}
		if w.ID != "w" || !w.TLS || w.AuthUsername != "u" || w.AuthPassword != "p" || w.Secret != "s" || w.Enabled {
			t.Fatalf("%s: %+v", body, w)
		}
	}
}
