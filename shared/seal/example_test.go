package seal_test

import (
	"fmt"
	"time"

	"appwrite-agent/shared/seal"
)

func Example() {
	// At startup (normally seal.LoadKeyring() reading SEAL_KEYS): the first
	// key is primary; older keys stay listed so old envelopes still open.
	ring, err := seal.ParseKeyring("k2:q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=,k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	if err != nil {
		panic(err) // refuse to start
	}
	s, err := seal.NewSealer(ring, seal.DefaultBudget())
	if err != nil {
		panic(err)
	}

	sub := seal.Subscription{
		CallbackURL: "https://proxy.example.com/hooks/client123",
		Secret:      []byte("0123456789abcdef01234567"),
		Event:       "row.created",
		Args:        map[string]string{"database_id": "main", "table_id": "orders"},
		ProjectID:   "project1",
		Expiry:      time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	user, pass, err := s.Seal("sub_a3f1c8e2b0d49f7e", sub) // -> webhook authUsername, authPassword
	if err != nil {
		panic(err)
	}
	fmt.Println(len(user) <= seal.DefaultUsernameBudget, len(pass) <= seal.DefaultPasswordBudget)

	// The ingress: webhook id from the path, project from Appwrite's header.
	got, err := s.Open("sub_a3f1c8e2b0d49f7e", "project1", user, pass)
	fmt.Println(got.CallbackURL, got.Event, got.Args["table_id"], err)

	_, err = s.Open("sub_other", "project1", user, pass) // copied onto another webhook
	fmt.Println(err)
	// Output:
	// true true
	// https://proxy.example.com/hooks/client123 row.created orders <nil>
	// seal: cannot open envelope: authentication failed
}
