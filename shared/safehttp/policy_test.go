package safehttp_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"appwrite-agent/shared/safehttp"
)

// countingResolver records every lookup: CheckDestination must refuse local names before any.
type countingResolver struct{ n atomic.Int32 }

func (c *countingResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	c.n.Add(1)
	return nil, &net.DNSError{Err: "no such host", IsNotFound: true}
}

// TestCheckDestinationRefusesLocalNamesWithoutDNS: localhost and its dotted and suffixed forms, mDNS,
// home.arpa, internal and single-label names are refused up front, with no DNS query.
func TestCheckDestinationRefusesLocalNamesWithoutDNS(t *testing.T) {
	res := &countingResolver{}
	opts := safehttp.Options{Resolver: res}
	for _, u := range []string{
		"https://localhost/", "https://localhost./", "https://LOCALHOST./x", "https://api.localhost/",
		"https://api.localhost./", "https://printer.local/", "https://router.home.arpa/", "https://db.internal./",
		"https://box.localdomain/", "https://metadata/", "https://metadata./computeMetadata", "https://intranet:8443/",
	} {
		err := safehttp.CheckDestination(context.Background(), u, opts)
		var b *safehttp.BlockedError
		if !errors.As(err, &b) || b.Why == "" {
			t.Errorf("%s: %v, want a refusal with a reason", u, err)
		}
	}
	if n := res.n.Load(); n != 0 {
		t.Fatalf("%d DNS queries for local names", n)
	}
	for _, h := range []string{"example.com", "hooks.example.com.", "127.0.0.1", "[::1]", "localhost.example.com"} {
		if why := safehttp.LocalNameReason(h); why != "" {
			t.Errorf("%s: %s", h, why)
		}
	}
}
