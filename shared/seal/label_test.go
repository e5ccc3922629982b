package seal_test

import (
	"bytes"
	"testing"

	"appwrite-agent/shared/seal"
)

func TestLabelMAC(t *testing.T) {
	k1 := "k1:" + "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	k2 := "k2:" + "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8="
	old, err := seal.ParseKeyring(k1)
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := seal.ParseKeyring(k2 + "," + k1)
	if err != nil {
		t.Fatal(err)
	}
	mac := old.LabelMAC(8, "owner", "mcpev_1", "p1")
	if len(mac) != 8 || !old.LabelMACValid(mac, "owner", "mcpev_1", "p1") {
		t.Fatalf("own MAC refused: %x", mac)
	}
	// An older key still verifies after a rotation; new MACs use the new key.
	if !rotated.LabelMACValid(mac, "owner", "mcpev_1", "p1") {
		t.Fatal("a MAC of the old key is refused after the rotation")
	}
	if bytes.Equal(rotated.LabelMAC(8, "owner", "mcpev_1", "p1"), mac) || old.LabelMACValid(rotated.LabelMAC(8, "owner", "mcpev_1", "p1"), "owner", "mcpev_1", "p1") {
		t.Fatal("the rotated ring does not use its new primary key")
	}
	// Parts are length-prefixed: moving a boundary changes the MAC.
	for _, parts := range [][]string{{"owner", "mcpev_1", "p"}, {"owner", "mcpev_1p1"}, {"owner", "mcpev_", "1", "p1"}, {"owner", "mcpev_1", "p1", ""}} {
		if old.LabelMACValid(mac, parts...) {
			t.Fatalf("MAC accepted for %q", parts)
		}
	}
	if old.LabelMACValid(nil) || old.LabelMACValid(make([]byte, 33), "x") {
		t.Fatal("an empty or oversize MAC was accepted")
	}
}
