package stack

import (
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ReservePort returns a loopback port for a process about to be started to listen on, reserved for the
// caller until release is called (or the calling process ends).
//
// The port is free now, and no other caller of ReservePort, in this process or in another (go test runs
// packages as parallel processes, each starting stacks), is handed it while it is reserved: each port has a
// lock file in the temporary folder, held with flock(2) by its reserver. Without the reservation two stacks
// could pick the same port between the check and their child's bind; the child that lost exited, while the
// winner, another function, answered its health check and then its requests (CI saw mcp-events' URL answer
// turn's "no route for POST /mcp").
//
// The port is chosen below the kernel's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range): a port the
// kernel hands out for port 0 may be taken, between this check and the child's bind, by the local end of any
// outgoing connection, and the load harness and the parallel test packages make thousands of them.
// Listeners that ask for port 0 get ephemeral ports, so they cannot take it either. Where the range cannot
// be read or leaves no room below it, the kernel picks.
func ReservePort() (port int, release func(), err error) {
	dir := filepath.Dir(lockPath(0))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, nil, fmt.Errorf("reserving a port: %w", err)
	}
	try := func(p int) (func(), bool) {
		unlock, ok := tryLock(lockPath(p))
		if !ok {
			return nil, false
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			unlock()
			return nil, false
		}
		ln.Close()
		return unlock, true
	}
	if lo := ephemeralLow(); lo > minFixedPort+1000 {
		for range 200 {
			p := minFixedPort + mrand.IntN(lo-minFixedPort)
			if unlock, ok := try(p); ok {
				return p, unlock, nil
			}
		}
	}
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, nil, fmt.Errorf("reserving a port: %w", err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if unlock, ok := try(p); ok {
			return p, unlock, nil
		}
	}
	return 0, nil, fmt.Errorf("reserving a port: no free port found (lock files in %s)", dir)
}

// lockPath is port's lock file, shared by every process of this machine that reserves ports.
func lockPath(port int) string {
	return filepath.Join(os.TempDir(), "appwrite-agent-ports", strconv.Itoa(port))
}

// minFixedPort is the lowest port ReservePort picks: above the well-known and most registered services'.
const minFixedPort = 20000

// ephemeralLow is the first port of the kernel's ephemeral range (0 when it cannot be read).
func ephemeralLow() int {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	fs := strings.Fields(string(raw))
	if len(fs) != 2 {
		return 0
	}
	lo, _ := strconv.Atoi(fs[0])
	return lo
}
