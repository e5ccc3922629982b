package ingress

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"appwrite-agent/shared/eventcatalog"
)

func TestParsePath(t *testing.T) {
	for path, want := range map[string][2]string{
		"/appwrite/webhooks/mcpev_1":          {"mcpev_1", ""},
		"/appwrite/webhooks/mcpev_1/AbC-_09z": {"mcpev_1", "AbC-_09z"},
	} {
		id, tail, ok := ParsePath(path)
		if !ok || id != want[0] || tail != want[1] {
			t.Errorf("%s: %q %q %v", path, id, tail, ok)
		}
	}
	for _, bad := range []string{"/appwrite/webhooks/", "/appwrite/webhooks/mcpev_1/", "/appwrite/webhooks/mcpev_1/a/b",
		"/appwrite/webhooks/mcpev_1/%41", "/appwrite/webhooks/mcpev_1/a=", "/appwrite/webhooks/-x", "/other/mcpev_1",
		"/appwrite/webhooks/mcpev_1/" + strings.Repeat("A", 5000)} {
		if _, _, ok := ParsePath(bad); ok {
			t.Errorf("%s accepted", bad)
		}
	}
}

// FuzzParsePath: a path that parses is exactly the prefix, an Appwrite id and, when present, "/" and a
// non-empty base64url part.
func FuzzParsePath(f *testing.F) {
	f.Add("/appwrite/webhooks/mcpev_0123456789abcdef0123456789abcd/IWsxQUFB-_")
	f.Add("/appwrite/webhooks/x")
	f.Add("/appwrite/webhooks/x/%2F")
	f.Fuzz(func(t *testing.T, path string) {
		id, tail, ok := ParsePath(path)
		if !ok {
			return
		}
		rebuilt := WebhookPathPrefix + id
		if tail != "" {
			rebuilt += "/" + tail
		}
		if rebuilt != path || !eventcatalog.ValidID(id) || strings.ContainsAny(tail, "%/?#=+") {
			t.Fatalf("%q parsed as %q, %q", path, id, tail)
		}
	})
}

// TestEventIDAsBefore: EventID is the hash it always was (streamed through a sha256 hash before it was
// built on the stack), for ids of every length, short and over the stack buffer.
func TestEventIDAsBefore(t *testing.T) {
	old := func(webhookID string, body []byte) string {
		bodyHash := sha256.Sum256(body)
		h := sha256.New()
		h.Write([]byte("appwrite-webhook\x00" + webhookID + "\x00"))
		h.Write(bodyHash[:])
		return "evt_" + hex.EncodeToString(h.Sum(nil)[:16])
	}
	for _, id := range []string{"", "a", "sub-rows-1", strings.Repeat("x", 36), strings.Repeat("y", 300)} {
		for _, body := range []string{"", "{}", strings.Repeat("b", 5000)} {
			if got, want := EventID(id, []byte(body)), old(id, []byte(body)); got != want {
				t.Fatalf("EventID(%q, %d bytes) = %s, before %s", id, len(body), got, want)
			}
		}
	}
}
