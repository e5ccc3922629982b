package seal_test

import (
	"fmt"
	"time"

	"appwrite-agent/shared/seal"
)

func Example() {
	// At startup (normally seal.LoadKeyring(os.Getenv) in the function's config.go, reading SEAL_KEYS): the
	// first key is primary; older keys stay listed so old envelopes still open.
	ring, err := seal.ParseKeyring("k2:q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=,k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	if err != nil {
		panic(err) // refuse to start
	}
	webhookURL := "https://6745a1b2c3d4e5f60718.fra.appwrite.run/appwrite/webhooks/sub_a3f1c8e2b0d49f7e"
	budget := seal.DefaultBudget()
	budget.URL = seal.URLBudget(webhookURL)
	s, err := seal.NewSealer(ring, budget)
	if err != nil {
		panic(err)
	}

	sub := seal.Subscription{
		CallbackURL: "https://proxy.example.com/hooks/client123",
		Secret:      []byte("0123456789abcdef01234567"),
		Event:       "row.created",
		Args:        seal.ArgsOf(map[string]string{"database_id": "main", "table_id": "orders"}), // canonical order
		ProjectID:   "project1",
		Expiry:      time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	f, err := s.Seal("sub_a3f1c8e2b0d49f7e", sub) // -> authUsername, authPassword, and webhookURL + "/" + f.URLTail when not empty
	if err != nil {
		panic(err)
	}
	fmt.Println(len(f.Username) <= budget.Username, len(f.Password) <= budget.Password, f.URLTail == "")

	// The ingress: webhook id from the path, project from Appwrite's header, the event and the ids it
	// names from X-Appwrite-Webhook-Events.
	target := seal.Target{Event: "row.created", Args: seal.Args{{Name: "database_id", Value: "main"}, {Name: "table_id", Value: "orders"}}}
	got, err := s.Open("sub_a3f1c8e2b0d49f7e", "project1", f, target)
	fmt.Println(got.CallbackURL, got.Event, tableID(got.Args), err)

	_, err = s.Open("sub_other", "project1", f, target) // copied onto another webhook
	fmt.Println(err)
	target.Args = seal.ArgsOf(map[string]string{"database_id": "main", "table_id": "invoices"})
	_, err = s.Open("sub_a3f1c8e2b0d49f7e", "project1", f, target) // a delivery for another table
	fmt.Println(err)
	// Output:
	// true true true
	// https://proxy.example.com/hooks/client123 row.created orders <nil>
	// seal: cannot open envelope: authentication failed
	// seal: cannot open envelope: authentication failed
}

func tableID(a seal.Args) string {
	v, _ := a.Get("table_id")
	return v
}
