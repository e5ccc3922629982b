package subscriptions

import (
	"crypto/rand"
	"encoding/base64"
	"testing"
	"time"

	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/seal"
)

func testSealer(t *testing.T) *seal.Sealer {
	t.Helper()
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	ring, err := seal.ParseKeyring("k1:" + base64.StdEncoding.EncodeToString(k))
	if err != nil {
		t.Fatal(err)
	}
	s, err := seal.NewSealer(ring, seal.DefaultBudget())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestVerifiedSibling: only a live, enabled webhook of the same principal, project and URL that records a
// verification is a proof, whether its envelope is read back (the open-source server returns authPassword)
// or only its label (Appwrite Cloud never returns authPassword).
func TestVerifiedSibling(t *testing.T) {
	for _, blank := range []bool{false, true} {
		t.Run(map[bool]string{false: "envelope", true: "label"}[blank], func(t *testing.T) { testVerifiedSibling(t, blank) })
	}
}

func testVerifiedSibling(t *testing.T, blankPassword bool) {
	sealer := testSealer(t)
	svc := &Service{o: Options{Sealer: sealer}}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	verifiedAt := now.Add(-time.Hour)
	const url, project = "https://hooks.example/cb", "p1"
	secret := make([]byte, 32)
	hook := func(t *testing.T, principal, project, url string, expiry, verified time.Time, enabled bool) awclient.Webhook {
		t.Helper()
		args := map[string]string{"project_id": project}
		id := ID(principal, url, eventcatalog.UserCreated, args)
		sub := seal.Subscription{
			CallbackURL: url, Secret: secret, Event: eventcatalog.UserCreated,
			ProjectID: project, Expiry: expiry, VerifiedAt: verified,
		}
		f, err := sealer.Seal(id, sub)
		if err != nil {
			t.Fatal(err)
		}
		if blankPassword {
			f.Password = ""
		}
		ev, _ := eventcatalog.Lookup(eventcatalog.UserCreated)
		return awclient.Webhook{ID: id, Enabled: enabled, AuthUsername: f.Username, AuthPassword: f.Password, URL: "https://ingress.example" + WebhookPath + id,
			Events: ev.AppwriteEvents(nil), Name: svc.labelFor(id, principal, sub).String()}
	}
	ev, _ := eventcatalog.Lookup(eventcatalog.RowCreated)
	args := map[string]string{"project_id": project, "database_id": "d", "table_id": "t"}
	pr := &prepared{event: ev, args: args, project: project, url: url, id: ID("alice", url, ev.Name, args)}
	live := now.Add(time.Hour)
	for _, c := range []struct {
		name string
		hook awclient.Webhook
		ok   bool
	}{
		{"live proof", hook(t, "alice", project, url, live, verifiedAt, true), true},
		{"another principal", hook(t, "mallory", project, url, live, verifiedAt, true), false},
		{"another URL", hook(t, "alice", project, url+"2", live, verifiedAt, true), false},
		{"another project", hook(t, "alice", "p2", url, live, verifiedAt, true), false},
		{"expired", hook(t, "alice", project, url, now, verifiedAt, true), false},
		{"never verified", hook(t, "alice", project, url, live, time.Time{}, true), false},
		{"disabled by Appwrite", hook(t, "alice", project, url, live, verifiedAt, false), false},
	} {
		at, from, ok := svc.verifiedSibling([]awclient.Webhook{c.hook}, "alice", pr, now)
		if ok != c.ok || (ok && (!at.Equal(verifiedAt) || from != c.hook.ID)) {
			t.Errorf("%s: ok=%v at=%v from=%s", c.name, ok, at, from)
		}
	}
	// The subscription's own webhook is not its own sibling.
	self := hook(t, "alice", project, url, live, verifiedAt, true)
	self.ID = pr.id
	if _, _, ok := svc.verifiedSibling([]awclient.Webhook{self}, "alice", pr, now); ok {
		t.Error("the subscription's own id counted as a sibling")
	}
}
