package safehttp_test

import (
	"errors"
	"fmt"
	"time"

	"appwrite-agent/shared/safehttp"
)

func Example() {
	opts := safehttp.Options{
		ConnectTimeout:   3 * time.Second,
		HeaderTimeout:    4 * time.Second,
		TotalTimeout:     5 * time.Second,
		MaxResponseBytes: 64 << 10,
	}
	// Validate a callback URL before storing it (no network access here;
	// CheckDestination also resolves it).
	for _, u := range []string{
		"https://proxy.example.com/hooks/client123",
		"http://proxy.example.com/hooks",
		"https://169.254.169.254/latest/meta-data/",
		"https://0x7f000001/",
		"https://[::ffff:127.0.0.1]/",
	} {
		err := safehttp.CheckURL(u, opts)
		fmt.Println(errors.Is(err, safehttp.ErrBlocked), err)
	}

	// Deliver with the client (not run here):
	//   client := safehttp.NewClient(opts)
	//   resp, err := client.Do(req)
	//   reason := safehttp.Classify(err, resp) // "timeout", "http_5xx", ...
	//   lastError := reason.MCP()

	// Output:
	// false <nil>
	// true safehttp: destination "proxy.example.com" not allowed: scheme "http" not allowed
	// true safehttp: destination "169.254.169.254" not allowed: 169.254.169.254 is link-local
	// true safehttp: destination "0x7f000001" not allowed: non-canonical IPv4 notation
	// true safehttp: destination "::ffff:127.0.0.1" not allowed: ::ffff:127.0.0.1 is loopback
}
