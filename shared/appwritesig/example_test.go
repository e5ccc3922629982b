package appwritesig_test

import (
	"fmt"

	"appwrite-agent/shared/appwritesig"
)

func Example() {
	// At startup: keys from the environment (here inline), primary first.
	keys, err := appwritesig.ParseKeys("k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	if err != nil {
		panic(err) // refuse to start
	}

	// mcp-events: the secret to store in the Appwrite webhook.
	secret, _ := keys.Secret("sub_1")
	fmt.Println(secret)

	// webhook-ingress: verify a delivery with nothing stored.
	url := "https://ingress.example.com/appwrite/webhooks/sub_1"
	body := []byte(`{"$id":"row1"}`)
	sig := appwritesig.Sign(secret, url, body) // what Appwrite sends
	fmt.Println(keys.Verify("sub_1", url, body, sig))
	fmt.Println(keys.Verify("sub_2", url, body, sig))
	// Output:
	// I19_ggV1hgVZEmB_Mo56qITFC_3uqiapeUPpYceLFWk
	// true
	// false
}
