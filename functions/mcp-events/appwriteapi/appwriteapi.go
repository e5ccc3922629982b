// Package appwriteapi is the mcp-events function's access to a user's Appwrite project: the few REST calls it
// makes (read a table, bucket, function or the users list to authorize a subscription; get, list, create,
// update and delete project webhooks), made with the caller's OAuth bearer token in admin mode.
//
// Every request carries Authorization: Bearer <token>, X-Appwrite-Project and X-Appwrite-Mode: admin. That is
// Appwrite Cloud behaviour: the hosted Appwrite MCP server drives Cloud this way, while the open-source server
// reads no bearer token (app/init/resources/request.php:462-585, 1.9.6), so mcp-events needs Appwrite Cloud.
// Webhooks are read in both field spellings: response format 1.8.0 (security, httpUser, httpPass,
// signatureKey) and the current one (tls, authUsername, authPassword, secret).
//
// The subscription's webhook secret is chosen by the caller (derived from a server key), which Appwrite takes
// only from 1.9.5 on (the secret param of PR #11884); older servers silently generate their own, and every
// delivery would then fail its signature check. Two checks guard against that, each answering a *VersionError:
//
//   - The Client reads the server's version once (GET /v1/health/version) and refuses webhook writes on a
//     version older than MinVersion. A version string that does not parse (or is empty) is not refused: a
//     hosted Appwrite may report a build name rather than the release its API follows, so the next check
//     decides.
//   - Behaviour, whatever the version says: Appwrite answers a webhook create and a secret rotation with the
//     secret it stored (secret, or signatureKey in format 1.8.0: Response/Model/Webhook.php:73-77,110-111 and
//     Response/Filters/V22.php:40-41, 1.9.6; signatureKey, always generated, in 1.9.0: Webhooks/Create.php:111).
//     When that answer carries a secret other than the one sent, the server ignored the param: a created
//     webhook is deleted again, and a rotation is reported refused.
package appwriteapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"appwrite-agent/shared/appwriterest"
)

// ResponseFormat is the response format this client asks for (the Go SDK v1.0.0's).
const ResponseFormat = "1.8.0"

// maxResponseBytes bounds every Appwrite answer.
const maxResponseBytes = 4 << 20

// MinVersion is the oldest Appwrite that honours a caller-chosen webhook secret (the secret param of
// POST /v1/webhooks and PATCH /v1/webhooks/{id}/secret, Webhooks/Create.php:73 and Secret/Update.php:57 in
// 1.9.5; absent in 1.9.0, where the key is always generated).
const MinVersion = "1.9.5"

// VersionError reports an Appwrite too old for mcp-events: one that reports a version older than MinVersion,
// or one that ignored the webhook secret mcp-events chose (whatever version it reports).
type VersionError struct {
	// Endpoint is the Appwrite endpoint asked.
	Endpoint string
	// Found is the version the server reported ("" when it reported none).
	Found string
	// Need is MinVersion.
	Need string
	// IgnoredSecret says the server answered a webhook create or secret rotation with a secret other than
	// the one sent (the version check passed, or the version did not parse).
	IgnoredSecret bool
	// Leftover, when set, is why the webhook created with the ignored secret could not be deleted again.
	Leftover error
}

// Error implements error.
func (e *VersionError) Error() string {
	found := "Appwrite " + e.Found
	if e.Found == "" {
		found = "no Appwrite version"
	}
	if !e.IgnoredSecret {
		return fmt.Sprintf("appwrite: %s runs %s; mcp-events needs %s or later (older servers ignore the webhook secret, so no delivery would verify)", e.Endpoint, found, e.Need)
	}
	msg := fmt.Sprintf("appwrite: %s (reporting %s) ignored the webhook secret mcp-events sent and keeps one of its own, as Appwrite before %s does; mcp-events needs %s or later (no delivery would verify)", e.Endpoint, found, e.Need, e.Need)
	if e.Leftover != nil {
		msg += fmt.Sprintf("; deleting the webhook it created failed: %v", e.Leftover)
	}
	return msg
}

// Client calls one Appwrite endpoint. It remembers the endpoint's version once read (see RequireVersion).
type Client struct {
	endpoint string
	http     *http.Client

	// versionMu is a one-slot semaphore (a channel, so waiting honours the context) guarding version.
	versionMu   chan struct{}
	versionRead bool   // version holds the first answer
	version     string // the version read ("" when the server reported none)
}

// New returns a client for endpoint (ending in /v1) over hc (http.DefaultClient when nil).
func New(endpoint string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{endpoint: strings.TrimRight(endpoint, "/"), http: hc, versionMu: make(chan struct{}, 1)}
}

// Version returns the endpoint's Appwrite version (GET /v1/health/version, a public route: Health/Version/
// Get.php in 1.9.6); "" when the answer names none. It is read once per Client: the first answer is kept for
// the Client's life; failures are not kept, so the next call asks again.
func (c *Client) Version(ctx context.Context) (string, error) {
	select {
	case c.versionMu <- struct{}{}:
	case <-ctx.Done():
		return "", &appwriterest.Error{Err: ctx.Err()}
	}
	defer func() { <-c.versionMu }()
	if c.versionRead {
		return c.version, nil
	}
	var out struct {
		Version string `json:"version"`
	}
	if err := c.call(ctx, http.MethodGet, "/health/version", nil, nil, nil, &out); err != nil {
		return "", err
	}
	c.version, c.versionRead = strings.TrimSpace(out.Version), true
	return c.version, nil
}

// RequireVersion fails with a *VersionError when the endpoint reports an Appwrite version older than
// MinVersion, and with an *appwriterest.Error when the version cannot be read. A version that does not parse, or none,
// passes: the webhook writes then check the server's behaviour (CreateWebhook, SetWebhookSecret).
func (c *Client) RequireVersion(ctx context.Context) error {
	v, err := c.Version(ctx)
	if err != nil {
		return err
	}
	if _, _, ok := parseVersion(v); ok && !AtLeast(v, MinVersion) {
		return &VersionError{Endpoint: c.endpoint, Found: v, Need: MinVersion}
	}
	return nil
}

// ignoredSecret is the *VersionError of a server that answered a webhook write with got instead of the
// secret sent; nil when got is sent or empty (an answer without a secret shows nothing). The version is the
// one already read (RequireVersion ran before the write).
func (c *Client) ignoredSecret(ctx context.Context, sent, got string) *VersionError {
	if got == "" || got == sent {
		return nil
	}
	v, _ := c.Version(ctx)
	return &VersionError{Endpoint: c.endpoint, Found: v, Need: MinVersion, IgnoredSecret: true}
}

// AtLeast reports whether version v (major.minor.patch, an optional "-suffix" such as "-rc.1" ranks below the
// release) is at least min. A version that does not parse is never at least anything.
func AtLeast(v, min string) bool {
	a, aPre, ok1 := parseVersion(v)
	b, bPre, ok2 := parseVersion(min)
	if !ok1 || !ok2 {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return !aPre || bPre
}

func parseVersion(v string) (parts [3]int, pre, ok bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		pre = v[i] == '-'
		v = v[:i]
	}
	fs := strings.Split(v, ".")
	if len(fs) == 0 || len(fs) > 3 {
		return parts, false, false
	}
	for i, f := range fs {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return parts, false, false
		}
		parts[i] = n
	}
	return parts, pre, true
}

// Project is a Client bound to a project and a caller's token.
type Project struct {
	c       *Client
	project string
	token   string
}

// Project binds the client to project, calling with the bearer token.
func (c *Client) Project(project, token string) *Project {
	return &Project{c: c, project: project, token: token}
}

// ID returns the project id.
func (p *Project) ID() string { return p.project }

func (p *Project) do(ctx context.Context, method, path string, query url.Values, body any, out any) error {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+p.token)
	h.Set("X-Appwrite-Project", p.project)
	// Admin mode with an OAuth bearer is Appwrite Cloud behaviour (see the package comment).
	h.Set("X-Appwrite-Mode", "admin")
	return p.c.call(ctx, method, path, query, h, body, out)
}

func (c *Client) call(ctx context.Context, method, path string, query url.Values, h http.Header, body any, out any) error {
	u := c.endpoint + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("X-Appwrite-Response-Format", ResponseFormat)
	h.Set("X-SDK-Name", "mcp-events")
	return appwriterest.Do(ctx, c.http, appwriterest.Request{Method: method, URL: u, Header: h, Body: body, MaxAnswer: maxResponseBytes}, out)
}

func seg(s string) string { return url.PathEscape(s) }

// GetTable reads a TablesDB table.
func (p *Project) GetTable(ctx context.Context, databaseID, tableID string) error {
	return p.do(ctx, http.MethodGet, "/tablesdb/"+seg(databaseID)+"/tables/"+seg(tableID), nil, nil, nil)
}

// GetBucket reads a Storage bucket.
func (p *Project) GetBucket(ctx context.Context, bucketID string) error {
	return p.do(ctx, http.MethodGet, "/storage/buckets/"+seg(bucketID), nil, nil, nil)
}

// GetFunction reads a function.
func (p *Project) GetFunction(ctx context.Context, functionID string) error {
	return p.do(ctx, http.MethodGet, "/functions/"+seg(functionID), nil, nil, nil)
}

// GetSite reads a site (the authorization read of the site events).
func (p *Project) GetSite(ctx context.Context, siteID string) error {
	return p.do(ctx, http.MethodGet, "/sites/"+seg(siteID), nil, nil, nil)
}

// ListUsers lists at most one user: enough to prove the caller may read the project's users.
func (p *Project) ListUsers(ctx context.Context) error {
	q := url.Values{"queries[]": {`{"method":"limit","values":[1]}`}}
	return p.do(ctx, http.MethodGet, "/users", q, nil, nil)
}

// Webhook is a project webhook.
type Webhook struct {
	ID           string
	Name         string
	URL          string
	Events       []string
	Enabled      bool
	TLS          bool
	AuthUsername string
	AuthPassword string
	// Secret is only filled on creation and secret rotation; get, list and update answer "".
	Secret string
	// Attempts is Appwrite's count of consecutive failed deliveries (a success resets it; at
	// _APP_WEBHOOK_MAX_FAILED_ATTEMPTS, 10 by default, the worker sets enabled to false; an update with
	// enabled true resets it).
	Attempts int
	// Logs is what Appwrite's worker wrote at the most recent failed delivery (kept after later successes):
	// "URL: …\nMethod: POST\n" then "Status code: <n>\nBody: …" or "CURL Error: …" ("Client Error: …" after
	// 1.9.6).
	Logs string
}

// UnmarshalJSON accepts both response formats.
func (w *Webhook) UnmarshalJSON(b []byte) error {
	var raw struct {
		ID           string   `json:"$id"`
		Name         string   `json:"name"`
		URL          string   `json:"url"`
		Events       []string `json:"events"`
		Enabled      *bool    `json:"enabled"`
		TLS          *bool    `json:"tls"`
		Security     *bool    `json:"security"`
		AuthUsername *string  `json:"authUsername"`
		HTTPUser     *string  `json:"httpUser"`
		AuthPassword *string  `json:"authPassword"`
		HTTPPass     *string  `json:"httpPass"`
		Secret       *string  `json:"secret"`
		SignatureKey *string  `json:"signatureKey"`
		Attempts     int      `json:"attempts"`
		Logs         string   `json:"logs"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*w = Webhook{ID: raw.ID, Name: raw.Name, URL: raw.URL, Events: raw.Events, Enabled: raw.Enabled == nil || *raw.Enabled,
		Attempts: raw.Attempts, Logs: raw.Logs}
	w.TLS = pickBool(raw.TLS, raw.Security)
	w.AuthUsername = pickStr(raw.AuthUsername, raw.HTTPUser)
	w.AuthPassword = pickStr(raw.AuthPassword, raw.HTTPPass)
	w.Secret = pickStr(raw.Secret, raw.SignatureKey)
	return nil
}

func pickBool(a, b *bool) bool {
	if a != nil {
		return *a
	}
	return b != nil && *b
}

func pickStr(a, b *string) string {
	if a != nil && *a != "" {
		return *a
	}
	if b != nil {
		return *b
	}
	return ""
}

// WebhookInput is what Create and Update send.
type WebhookInput struct {
	Name         string
	URL          string
	Events       []string
	TLS          bool
	AuthUsername string
	AuthPassword string
}

func (in WebhookInput) params() map[string]any {
	return map[string]any{
		"name": in.Name, "url": in.URL, "events": in.Events, "enabled": true,
		// Both spellings: format 1.8.0 servers read security/httpUser/httpPass, newer ones tls/auth*.
		"tls": in.TLS, "security": in.TLS,
		"authUsername": in.AuthUsername, "httpUser": in.AuthUsername,
		"authPassword": in.AuthPassword, "httpPass": in.AuthPassword,
	}
}

// GetWebhook reads a webhook.
func (p *Project) GetWebhook(ctx context.Context, id string) (*Webhook, error) {
	var w Webhook
	if err := p.do(ctx, http.MethodGet, "/webhooks/"+seg(id), nil, nil, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// ListWebhooks lists the project's webhooks whose id starts with prefix (all of them, page by page, at most
// maxPages pages of 100).
func (p *Project) ListWebhooks(ctx context.Context, prefix string) ([]Webhook, error) {
	const pageSize, maxPages = 100, 10
	var out []Webhook
	for page := 0; page < maxPages; page++ {
		q := url.Values{"queries[]": {
			fmt.Sprintf(`{"method":"limit","values":[%d]}`, pageSize),
			fmt.Sprintf(`{"method":"offset","values":[%d]}`, page*pageSize),
		}}
		if prefix != "" {
			b, _ := json.Marshal(map[string]any{"method": "startsWith", "attribute": "$id", "values": []string{prefix}})
			q["queries[]"] = append(q["queries[]"], string(b))
		}
		var res struct {
			Total    int       `json:"total"`
			Webhooks []Webhook `json:"webhooks"`
		}
		if err := p.do(ctx, http.MethodGet, "/webhooks", q, nil, &res); err != nil {
			return nil, err
		}
		for _, w := range res.Webhooks {
			if strings.HasPrefix(w.ID, prefix) {
				out = append(out, w)
			}
		}
		if len(res.Webhooks) < pageSize {
			break
		}
	}
	return out, nil
}

// CountWebhooks returns how many webhooks the project has (the list's total).
func (p *Project) CountWebhooks(ctx context.Context) (int, error) {
	q := url.Values{"queries[]": {`{"method":"limit","values":[1]}`}}
	var res struct {
		Total int `json:"total"`
	}
	if err := p.do(ctx, http.MethodGet, "/webhooks", q, nil, &res); err != nil {
		return 0, err
	}
	return res.Total, nil
}

// CreateWebhook creates a webhook with the given id and signature secret. It fails with a *VersionError on an
// Appwrite older than MinVersion, which would ignore the secret, and on one that answers the create with
// another secret than the one sent (whatever version it reports): that webhook is deleted again before the
// error returns (VersionError.Leftover says when the delete failed).
func (p *Project) CreateWebhook(ctx context.Context, id, secret string, in WebhookInput) (*Webhook, error) {
	if err := p.c.RequireVersion(ctx); err != nil {
		return nil, err
	}
	params := in.params()
	params["webhookId"] = id
	params["secret"] = secret
	var w Webhook
	if err := p.do(ctx, http.MethodPost, "/webhooks", nil, params, &w); err != nil {
		return nil, err
	}
	if ve := p.c.ignoredSecret(ctx, secret, w.Secret); ve != nil {
		// Its deliveries would be signed with a key nobody holds: it must not stay.
		if err := p.DeleteWebhook(ctx, id); err != nil && appwriterest.StatusOf(err) != http.StatusNotFound {
			ve.Leftover = err
		}
		return nil, ve
	}
	return &w, nil
}

// UpdateWebhook replaces a webhook's fields (enabled again, so failed-delivery counters reset).
func (p *Project) UpdateWebhook(ctx context.Context, id string, in WebhookInput) (*Webhook, error) {
	var w Webhook
	if err := p.do(ctx, http.MethodPut, "/webhooks/"+seg(id), nil, in.params(), &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// SetWebhookSecret sets a webhook's signature secret: PATCH /v1/webhooks/{id}/secret, Appwrite's only route for
// it (Webhooks/Secret/Update.php:32-33; any other method is 404 general_route_not_found). Only "secret" is
// declared there. It fails with a *VersionError on an Appwrite older than MinVersion, and on one that
// answers with another secret than the one sent (the rotation did not take the caller's secret; the webhook
// keeps the server's).
func (p *Project) SetWebhookSecret(ctx context.Context, id, secret string) error {
	if err := p.c.RequireVersion(ctx); err != nil {
		return err
	}
	var w Webhook
	if err := p.do(ctx, http.MethodPatch, "/webhooks/"+seg(id)+"/secret", nil, map[string]any{"secret": secret}, &w); err != nil {
		return err
	}
	if ve := p.c.ignoredSecret(ctx, secret, w.Secret); ve != nil {
		return ve
	}
	return nil
}

// DeleteWebhook deletes a webhook.
func (p *Project) DeleteWebhook(ctx context.Context, id string) error {
	return p.do(ctx, http.MethodDelete, "/webhooks/"+seg(id), nil, nil, nil)
}
