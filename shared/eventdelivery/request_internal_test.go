package eventdelivery

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestNewRequestIsNewRequestWithContext: newRequest's request sends what http.NewRequestWithContext's with a
// bytes.Reader sends (method, Host, Content-Length, body), its GetBody gives the body again, as often as
// asked (HTTP/2 replays a refused request with it), and headers and body go out in one write.
func TestNewRequestIsNewRequestWithContext(t *testing.T) {
	type seen struct {
		host, method string
		length       int64
		body         string
	}
	got := make(chan seen, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Host, r.Method, r.ContentLength, string(b)}
	}))
	defer srv.Close()
	for _, body := range [][]byte{nil, []byte(`{"eventId":"evt_1"}`), bytes.Repeat([]byte("x"), 70000)} {
		want, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/hook", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req, err := newRequest(context.Background(), srv.URL+"/hook", body)
		if err != nil {
			t.Fatal(err)
		}
		if req.ContentLength != want.ContentLength || (req.GetBody == nil) != (want.GetBody == nil) {
			t.Fatalf("%d bytes: ContentLength %d, GetBody %v; NewRequestWithContext %d, %v", len(body), req.ContentLength, req.GetBody != nil, want.ContentLength, want.GetBody != nil)
		}
		for i := 0; i < 2; i++ {
			again, err := req.GetBody()
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := io.ReadAll(again); !bytes.Equal(b, body) {
				t.Fatalf("GetBody %d gave %d bytes of %d", i, len(b), len(body))
			}
		}
		var seenReq [2]seen
		for i, r := range []*http.Request{want, req} {
			writes := 0
			tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				return &countingConn{Conn: c, writes: &writes}, err
			}}
			res, err := (&http.Client{Transport: tr}).Do(r)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			tr.CloseIdleConnections()
			seenReq[i] = <-got
			if len(body) < 4000 && writes != 1 {
				t.Fatalf("%d bytes: the request took %d writes, want 1 (headers and body together)", len(body), writes)
			}
		}
		if seenReq[0] != seenReq[1] {
			t.Fatalf("%d bytes: the server saw %+v, for NewRequestWithContext %+v", len(body), seenReq[1], seenReq[0])
		}
	}
}

// countingConn counts the writes to a connection.
type countingConn struct {
	net.Conn
	writes *int
}

func (c *countingConn) Write(p []byte) (int, error) {
	*c.writes++
	return c.Conn.Write(p)
}
