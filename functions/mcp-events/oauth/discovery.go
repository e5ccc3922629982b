package oauth

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"appwrite-agent/shared/safehttp"
)

// DiscoveryPath is where an issuer publishes its metadata (OpenID Connect Discovery 1.0 §4; Appwrite Cloud's
// authorization server serves it at <endpoint>/oauth2/<project>/.well-known/openid-configuration, which is
// where appwrite/mcp reads scopes_supported: src/mcp_server_appwrite/auth.py supported_scopes).
const DiscoveryPath = "/.well-known/openid-configuration"

// maxDiscoveryBytes bounds the discovery document.
const maxDiscoveryBytes = 1 << 20

// Discovery reads the scopes_supported an authorization server publishes in its discovery document. A
// successful read is kept for DefaultMaxAge; a failed one is retried at most once per DefaultMinRefresh, and
// until then the server's own scope names serve. It is safe for concurrent use; no lock is held while a
// fetch runs (concurrent callers that find one running use what is cached).
type Discovery struct {
	url     string
	client  *http.Client
	now     func() time.Time
	timeout time.Duration

	mu          sync.Mutex
	scopes      []string
	fetchedAt   time.Time
	attemptedAt time.Time
}

// NewDiscovery returns a Discovery of issuer's metadata fetched with client (http.DefaultClient when nil) on
// the clock now (time.Now when nil).
func NewDiscovery(issuer string, client *http.Client, now func() time.Time) *Discovery {
	if client == nil {
		client = http.DefaultClient
	}
	if now == nil {
		now = time.Now
	}
	return &Discovery{url: issuer + DiscoveryPath, client: client, now: now, timeout: 5 * time.Second}
}

// Scopes returns the scopes_supported the issuer publishes, or nil when it publishes none or could not be
// read (the caller then advertises its own names).
func (d *Discovery) Scopes(ctx context.Context) []string {
	now := d.now()
	d.mu.Lock()
	fresh := !d.fetchedAt.IsZero() && now.Sub(d.fetchedAt) < DefaultMaxAge
	mayFetch := d.attemptedAt.IsZero() || now.Sub(d.attemptedAt) >= DefaultMinRefresh
	cached := d.scopes
	if fresh || !mayFetch {
		d.mu.Unlock()
		return cached
	}
	d.attemptedAt = now
	d.mu.Unlock()

	scopes, err := d.fetch(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		return d.scopes
	}
	d.scopes, d.fetchedAt = scopes, d.now()
	return scopes
}

func (d *Discovery) fetch(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	var doc struct {
		ScopesSupported []string `json:"scopes_supported"`
	}
	if err := safehttp.GetJSON(ctx, d.client, d.url, maxDiscoveryBytes, &doc); err != nil {
		return nil, fmt.Errorf("oauth: discovery: %w", err)
	}
	return slices.DeleteFunc(doc.ScopesSupported, func(s string) bool { return s == "" }), nil
}

// Published returns r advertising what the authorization server publishes: published becomes
// scopes_supported, and every scope the challenges ask for is the first alternative of its requirement
// (r.Needs) that published lists (the first alternative when none is). Without a published list, r is
// returned unchanged.
func (r Resource) Published(published []string) Resource {
	if len(published) == 0 {
		return r
	}
	r.Supported = slices.Clone(published)
	r.Scopes = slices.Compact(r.pickAll(r.Scopes, published))
	return r
}

// pickAll is pick of each of scopes.
func (r Resource) pickAll(scopes, published []string) []string {
	out := make([]string, 0, len(scopes))
	for _, s := range scopes {
		out = append(out, r.pick(s, published))
	}
	return out
}

// pick returns the alternative of scope's requirement that published lists: scope itself when it is listed
// or belongs to no requirement, else the first listed alternative, else scope.
func (r Resource) pick(scope string, published []string) string {
	if len(published) == 0 || slices.Contains(published, scope) {
		return scope
	}
	for _, group := range r.Needs {
		if !slices.Contains(group, scope) {
			continue
		}
		for _, alt := range group {
			if slices.Contains(published, alt) {
				return alt
			}
		}
	}
	return scope
}
