package loopback_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"appwrite-agent/shared/loopback"
)

func TestIsLocalhostName(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LocalHost.": true, "abc.functions.localhost": true, "x.localhost.": true,
		"localhost.example.com": false, "notlocalhost": false, "127.0.0.1": false, "": false, "example.com": false,
	} {
		if got := loopback.IsLocalhostName(host); got != want {
			t.Errorf("IsLocalhostName(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestClientReachesLocalhostNames: a request to <name>.localhost:<port> reaches the server listening on
// 127.0.0.1:<port>, with the name in its Host header (what a server routing by host name reads).
func TestClientReachesLocalhostNames(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.Host) }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	res, err := loopback.Client(10 * time.Second).Get("http://abc.functions.localhost:" + u.Port() + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if string(body) != "abc.functions.localhost:"+u.Port() {
		t.Fatalf("Host %q", body)
	}
}
