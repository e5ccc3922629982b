package stack

import (
	"net"
	"strconv"
	"testing"
)

// TestReservePortIsOutsideTheEphemeralRange: the port is below the range outgoing connections take their
// local ports from, and free to listen on.
func TestReservePortIsOutsideTheEphemeralRange(t *testing.T) {
	lo := ephemeralLow()
	for range 20 {
		p, unlock, err := ReservePort()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(unlock)
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

// TestReservePortNeverHandsOutAHeldPort: while a port is reserved, no other reservation gets it, however
// many are made; once released, it can be handed out again. (The stacks of one test process and of the
// parallel packages reserve through the same lock files.)
func TestReservePortNeverHandsOutAHeldPort(t *testing.T) {
	held := map[int]func(){}
	// More reservations than a stack makes, so that a pick of a held port would show.
	for range 300 {
		p, unlock, err := ReservePort()
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := held[p]; dup {
			t.Fatalf("port %d handed out twice while reserved", p)
		}
		held[p] = unlock
		if _, ok := tryLock(lockPath(p)); ok {
			t.Fatalf("port %d is reserved, yet its lock file can be taken", p)
		}
	}
	for p, unlock := range held {
		unlock()
		unlock() // a second release does nothing
		relock, ok := tryLock(lockPath(p))
		if !ok {
			t.Fatalf("port %d still locked after release", p)
		}
		relock()
	}
}
