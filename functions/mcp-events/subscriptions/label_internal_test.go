package subscriptions

import (
	"strings"
	"testing"
	"time"

	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/seal"
)

// TestLabel: the label fits Appwrite's 128-character name with the longest event name, is printable ASCII,
// reads back what was written, and its MACs verify only for the principal, project, arguments and URL they
// were made for; an edited label does not verify.
func TestLabel(t *testing.T) {
	sealer := testSealer(t)
	svc := &Service{o: Options{Sealer: sealer}}
	longest := ""
	for _, e := range eventcatalog.All() {
		if len(e.Name) > len(longest) {
			longest = e.Name
		}
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	args := map[string]string{"database_id": strings.Repeat("d", 36), "table_id": strings.Repeat("t", 36)}
	sub := seal.Subscription{CallbackURL: "https://hooks.example/cb", Secret: make([]byte, 32), PrevSecret: make([]byte, 24),
		PrevSecretUntil: now.Add(10 * time.Minute), Event: longest, Args: seal.ArgsOf(args), ProjectID: "p1",
		Expiry: now.Add(time.Hour), VerifiedAt: now.Add(-time.Minute)}
	const id = "mcpev_0123456789abcdef0123456789abcd"
	name := svc.labelFor(id, "alice", sub).String()
	if len(name) > MaxLabel {
		t.Fatalf("%d characters: %s", len(name), name)
	}
	for _, r := range name {
		if r < 0x20 || r > 0x7e {
			t.Fatalf("not printable ASCII: %q", name)
		}
	}
	if !strings.HasPrefix(name, "MCP events | "+longest+" | until 2026-12-01T10:00:00Z | ") {
		t.Fatalf("label: %s", name)
	}
	l, ok := parseLabel(name)
	if !ok || l.Event != longest || !l.Expiry.Equal(sub.Expiry) || !l.VerifiedAt.Equal(sub.VerifiedAt) || !l.PrevUntil.Equal(sub.PrevSecretUntil) {
		t.Fatalf("parsed %+v from %s", l, name)
	}
	if !svc.ownedBy(l, id, "p1", "alice", args) || !svc.provesURL(l, id, "p1", "alice", sub.CallbackURL, args) {
		t.Fatal("the label does not verify for its own subscription")
	}
	other := map[string]string{"database_id": "x", "table_id": args["table_id"]}
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"another principal", svc.ownedBy(l, id, "p1", "mallory", args) || svc.provesURL(l, id, "p1", "mallory", sub.CallbackURL, args)},
		{"another project", svc.ownedBy(l, id, "p2", "alice", args)},
		{"another webhook", svc.ownedBy(l, "mcpev_x"+id[7:], "p1", "alice", args)},
		{"other arguments", svc.ownedBy(l, id, "p1", "alice", other)},
		{"another URL", svc.provesURL(l, id, "p1", "alice", sub.CallbackURL+"x", args)},
	} {
		if c.ok {
			t.Errorf("%s: verified", c.name)
		}
	}
	// A member who edits the expiry (to keep an expired subscription, or to have it cleaned up) breaks the MAC.
	edited := strings.Replace(name, "until 2026-12-01T10:00:00Z", "until 2027-12-01T10:00:00Z", 1)
	if el, ok := parseLabel(edited); !ok || svc.ownedBy(el, id, "p1", "alice", args) || svc.provesURL(el, id, "p1", "alice", sub.CallbackURL, args) {
		t.Fatalf("an edited label verified (parsed %v)", ok)
	}
	for _, bad := range []string{"", "MCP events: tablesdb.row.created on d/t -> hooks.example", "MCP events | x | until 2026-12-01T10:00:00Z | AAAA",
		"MCP events | x | until yesterday | " + strings.SplitN(name, " | ", 4)[3], "Other | x | until 2026-12-01T10:00:00Z | " + strings.SplitN(name, " | ", 4)[3]} {
		if _, ok := parseLabel(bad); ok {
			t.Errorf("parsed %q", bad)
		}
	}
	// A fingerprint tells the same secret from another.
	if string(svc.fingerprint(id, sub.Secret)) != string(l.Fingerprint) || string(svc.fingerprint(id, make([]byte, 33))) == string(l.Fingerprint) {
		t.Fatal("fingerprint")
	}
}
