package stdwebhooks_test

import (
	"fmt"
	"net/http"
	"time"

	"appwrite-agent/shared/stdwebhooks"
)

func Example() {
	secret, err := stdwebhooks.ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		panic(err)
	}
	body := []byte(`{"eventId":"evt_1"}`)
	sent := time.Unix(1739980800, 0)

	h := http.Header{}
	if err := stdwebhooks.SetHeaders(h, "evt_1", sent, body, secret); err != nil {
		panic(err)
	}
	fmt.Println(h.Get(stdwebhooks.HeaderSignature))

	err = stdwebhooks.Verify(h, body, sent.Add(time.Minute), stdwebhooks.DefaultTolerance, secret)
	fmt.Println("verified:", err == nil)
	err = stdwebhooks.Verify(h, body, sent.Add(time.Hour), stdwebhooks.DefaultTolerance, secret)
	fmt.Println(err)
	// Output:
	// v1,cBb2LhePW4zmRZNOHbykOXVh9d4iT4FF//U38Hmb/+k=
	// verified: true
	// stdwebhooks: message timestamp too old
}
