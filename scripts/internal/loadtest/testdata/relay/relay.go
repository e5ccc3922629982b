// Package handler is the load harness's plain two-hop relay deployed as a function: built by
// runtimebuild.BuildServer and run by the stack exactly as the ingress is (its own processes, the local
// open-runtimes server, the same executor headers and log files), it forwards each request body to
// RELAY_TARGET over TLS (roots from RELAY_CA_FILE) and answers {"status":"relayed"}. It verifies, opens,
// matches, projects and signs nothing: it is what any function that passes Appwrite's webhook on costs,
// the baseline the ingress is compared with (docs/benchmarks.md, "Ingress end to end").
package handler

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// target is where the relay forwards to.
type target struct {
	url    string
	client *http.Client
}

// relay is the configuration, read once per process (the runtime calls Main for every request).
var relay = sync.OnceValues(func() (target, error) {
	roots := x509.NewCertPool()
	pem, err := os.ReadFile(os.Getenv("RELAY_CA_FILE"))
	if err != nil {
		return target{}, err
	}
	roots.AppendCertsFromPEM(pem)
	// The ingress's pool size (shared/safehttp): 16 idle connections per subscriber host.
	return target{url: os.Getenv("RELAY_TARGET"), client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots}, MaxIdleConns: 64, MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second,
	}}}, nil
})

// Main forwards one request body to the subscriber (the stack knows the relay is up from the runtime's own
// /__opr/health).
func Main(rt openruntimes.Context) openruntimes.Response {
	t, err := relay()
	if err != nil {
		return rt.Res.Text("relay: "+err.Error(), rt.Res.WithStatusCode(http.StatusInternalServerError))
	}
	res, err := t.client.Post(t.url, "application/json", bytes.NewReader(rt.Req.BodyBinary()))
	if err != nil {
		return rt.Res.Text("relay: "+err.Error(), rt.Res.WithStatusCode(http.StatusBadGateway))
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return rt.Res.Text(`{"status":"relayed"}`, rt.Res.WithHeaders(map[string]string{"content-type": "application/json"}))
}
