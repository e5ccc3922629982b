package ingress

import (
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

// TestEventIDIsStable: the eventId of a delivery is SHA-256("appwrite-webhook" 0 id 0 SHA-256(body)), its
// first 16 bytes in hex after "evt_" (the values below come from Python's hashlib): subscribers deduplicate
// on it, so it never changes between releases.
func TestEventIDIsStable(t *testing.T) {
	for _, c := range []struct{ id, body, want string }{
		{"sub-rows-1", "{}", "evt_2d833a02702b95a9da220a1ff2e03e85"},
		{"", "", "evt_bc8b5145aba72f21bd0a828ca420a909"},
	} {
		if got := EventID(c.id, []byte(c.body)); got != c.want {
			t.Errorf("EventID(%q, %q) = %s, want %s", c.id, c.body, got, c.want)
		}
	}
	if EventID("a", []byte("x")) == EventID("a", []byte("y")) || EventID("a", []byte("x")) == EventID("b", []byte("x")) {
		t.Fatal("two deliveries share an eventId")
	}
}
