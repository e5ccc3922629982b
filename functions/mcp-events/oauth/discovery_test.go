package oauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"appwrite-agent/functions/mcp-events/oauth"
	"appwrite-agent/shared/devkit/testclock"
)

func TestPublishedScopes(t *testing.T) {
	r := oauth.Resource{PublicURL: "https://x.test", Issuer: "https://as.test",
		Scopes: []string{"project:webhooks.read", "project:rows.read", "project:executions.read"},
		Needs:  [][]string{{"project:webhooks.read"}, {"project:rows.read", "project:documents.read"}, {"project:executions.read", "project:execution.read"}}}
	if got := strings.Join(r.Metadata("/mcp").ScopesSupported, " "); got != "project:webhooks.read project:rows.read project:executions.read" {
		t.Fatalf("unpublished: %s", got)
	}
	// The server publishes documents.read but not rows.read, and nothing for executions: the challenge asks for
	// what it publishes, and the first alternative where it publishes none.
	p := r.Published([]string{"openid", "project:webhooks.read", "project:documents.read"})
	if got := strings.Join(p.Metadata("/").ScopesSupported, " "); got != "openid project:webhooks.read project:documents.read" {
		t.Fatalf("scopes_supported: %s", got)
	}
	if got := p.NoCredentials("/"); !strings.Contains(got, `scope="project:webhooks.read project:documents.read project:executions.read"`) {
		t.Fatalf("401: %s", got)
	}
	if got := p.InsufficientScope("/mcp", []string{"project:rows.read"}, "d"); !strings.Contains(got, `scope="project:documents.read"`) {
		t.Fatalf("step-up: %s", got)
	}
	if r.Published(nil).NoCredentials("/") != r.NoCredentials("/") {
		t.Fatal("an empty published list changed the resource")
	}
}

// TestDiscoveryCaches: one fetch serves for the maximum age; a failure is retried only after the minimum
// refresh interval, and nothing is published meanwhile.
func TestDiscoveryCaches(t *testing.T) {
	var fetches atomic.Int32
	var fail atomic.Bool
	fail.Store(true)
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		if r.URL.Path != "/v1/oauth2/console"+oauth.DiscoveryPath {
			http.NotFound(w, r)
			return
		}
		if fail.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"issuer":"x","scopes_supported":["project:all","project:rows.read"]}`))
	}))
	defer as.Close()
	clk := testclock.New(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	d := oauth.NewDiscovery(as.URL+"/v1/oauth2/console", as.Client(), clk.Now)
	ctx := context.Background()
	if got := d.Scopes(ctx); got != nil || fetches.Load() != 1 {
		t.Fatalf("failing server: %v after %d fetches", got, fetches.Load())
	}
	fail.Store(false)
	if got := d.Scopes(ctx); got != nil || fetches.Load() != 1 {
		t.Fatalf("retried before the minimum interval: %v after %d fetches", got, fetches.Load())
	}
	clk.Advance(oauth.DefaultMinRefresh)
	if got := strings.Join(d.Scopes(ctx), " "); got != "project:all project:rows.read" || fetches.Load() != 2 {
		t.Fatalf("after recovery: %q after %d fetches", got, fetches.Load())
	}
	clk.Advance(oauth.DefaultMaxAge - time.Second)
	d.Scopes(ctx)
	if fetches.Load() != 2 {
		t.Fatalf("refetched while fresh: %d", fetches.Load())
	}
	clk.Advance(time.Second)
	if got := strings.Join(d.Scopes(ctx), " "); got != "project:all project:rows.read" || fetches.Load() != 3 {
		t.Fatalf("after the maximum age: %q after %d fetches", got, fetches.Load())
	}
}
