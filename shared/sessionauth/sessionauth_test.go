package sessionauth_test

import (
	"fmt"
	"os"
	"testing"

	"appwrite-agent/shared/sessionauth"
)

func ExamplePolicy_Check() {
	p := sessionauth.Policy{APIKey: "s3cret"}
	fmt.Println(p.Check(map[string]string{"x-session-api-key": "s3cret"}) == nil)
	fmt.Println(p.Check(map[string]string{"x-session-api-key": "guess"}).Message)
	// Output:
	// true
	// Invalid or missing X-Session-API-Key
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		p    sessionauth.Policy
		key  string
		want string
	}{
		{sessionauth.Policy{APIKey: "k"}, "k", ""},
		{sessionauth.Policy{APIKey: "k"}, "", sessionauth.CodeUnauthorized},
		{sessionauth.Policy{APIKey: "k"}, "k ", sessionauth.CodeUnauthorized},
		{sessionauth.Policy{APIKey: "k"}, "kk", sessionauth.CodeUnauthorized},
		{sessionauth.Policy{}, "anything", sessionauth.CodeAuthNotConfigured},
		{sessionauth.Policy{AllowUnauthenticated: true}, "", ""},
		// A configured key wins over the unauthenticated switch.
		{sessionauth.Policy{APIKey: "k", AllowUnauthenticated: true}, "", sessionauth.CodeUnauthorized},
	} {
		r := tc.p.Check(map[string]string{sessionauth.Header: tc.key})
		got := ""
		if r != nil {
			got = r.Code
		}
		if got != tc.want {
			t.Errorf("%+v key %q: got %q, want %q", tc.p, tc.key, got, tc.want)
		}
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv("AGENT_API_KEY", "abc")
	t.Setenv("AGENT_ALLOW_UNAUTHENTICATED", "Yes")
	if p := sessionauth.FromEnv(os.Getenv); p.APIKey != "abc" || !p.AllowUnauthenticated {
		t.Fatalf("%+v", p)
	}
	t.Setenv("AGENT_ALLOW_UNAUTHENTICATED", "no")
	if p := sessionauth.FromEnv(os.Getenv); p.AllowUnauthenticated {
		t.Fatalf("%+v", p)
	}
}
