// Package netfault plays the network faults a test server answers with, for the scripted peers of the tests
// and the load harness (scriptedllm, the load harness's subscribers).
package netfault

import (
	"net"
	"net/http"
)

// Reset ends the request's connection with a TCP RST (SO_LINGER 0) before a byte of the answer is written:
// what a client sees when a load balancer or a crashed peer drops it. Over TLS the RST is sent on the
// underlying TCP connection. When the connection cannot be taken over, the handler aborts instead
// (http.ErrAbortHandler), which closes it without an answer.
func Reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	tcp, _ := conn.(*net.TCPConn)
	if nc, ok := conn.(interface{ NetConn() net.Conn }); ok { // a *tls.Conn: reset under it, with no close_notify
		tcp, _ = nc.NetConn().(*net.TCPConn)
	}
	if tcp == nil {
		_ = conn.Close()
		return
	}
	_ = tcp.SetLinger(0)
	_ = tcp.Close()
}
