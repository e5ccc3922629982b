package stack

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePortIsOutsideTheEphemeralRange: the port is below the range outgoing connections take their local
// ports from, and free to listen on.
func TestFreePortIsOutsideTheEphemeralRange(t *testing.T) {
	lo := ephemeralLow()
	for range 20 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if lo > minFixedPort+1000 && (p < minFixedPort || p >= lo) {
			t.Fatalf("port %d, want one in [%d, %d) (ephemeral range from %d)", p, minFixedPort, lo, lo)
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d is not free: %v", p, err)
		}
		ln.Close()
	}
}
