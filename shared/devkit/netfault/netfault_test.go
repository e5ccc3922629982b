package netfault

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
)

// TestResetSendsRST: a client sees its connection reset (ECONNRESET, not a clean close), over plain HTTP and
// over TLS.
func TestResetSendsRST(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { Reset(w) })
	for name, srv := range map[string]*httptest.Server{"http": httptest.NewServer(h), "https": httptest.NewTLSServer(h)} {
		t.Run(name, func(t *testing.T) {
			defer srv.Close()
			res, err := srv.Client().Get(srv.URL)
			if err == nil {
				res.Body.Close()
				t.Fatalf("answered %d", res.StatusCode)
			}
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("not a reset: %v", err)
			}
		})
	}
}
