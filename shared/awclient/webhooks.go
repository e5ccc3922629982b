package awclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The project webhooks API (/v1/webhooks), which the Go SDK v1.0.0 does not have, and the server's version
// (/v1/health/version). Webhooks are read in both field spellings: response format 1.8.0 (security,
// httpUser, httpPass, signatureKey; Response/Filters/V22.php in 1.9.6) and the current one (tls,
// authUsername, authPassword, secret); writes send both.

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

// WebhookInput is what CreateWebhook and UpdateWebhook send.
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
func (c *Client) GetWebhook(ctx context.Context, auth Auth, id string) (*Webhook, error) {
	var w Webhook
	if err := c.Call(ctx, auth, Request{Method: http.MethodGet, Path: Path("webhooks", id)}, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// ListWebhooks lists the project's webhooks whose id starts with prefix (all of them, page by page, at most
// 10 pages of 100).
func (c *Client) ListWebhooks(ctx context.Context, auth Auth, prefix string) ([]Webhook, error) {
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
		if err := c.Call(ctx, auth, Request{Method: http.MethodGet, Path: Path("webhooks"), Query: q}, &res); err != nil {
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
func (c *Client) CountWebhooks(ctx context.Context, auth Auth) (int, error) {
	q := url.Values{"queries[]": {`{"method":"limit","values":[1]}`}}
	var res struct {
		Total int `json:"total"`
	}
	if err := c.Call(ctx, auth, Request{Method: http.MethodGet, Path: Path("webhooks"), Query: q}, &res); err != nil {
		return 0, err
	}
	return res.Total, nil
}

// CreateWebhook creates a webhook with the given id and signature secret (the secret param of
// POST /v1/webhooks, taken from Appwrite 1.9.5 on: older servers generate their own, which the answer shows).
func (c *Client) CreateWebhook(ctx context.Context, auth Auth, id, secret string, in WebhookInput) (*Webhook, error) {
	params := in.params()
	params["webhookId"] = id
	params["secret"] = secret
	var w Webhook
	if err := c.Call(ctx, auth, Request{Method: http.MethodPost, Path: Path("webhooks"), Body: params}, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// UpdateWebhook replaces a webhook's fields (enabled again, so failed-delivery counters reset).
func (c *Client) UpdateWebhook(ctx context.Context, auth Auth, id string, in WebhookInput) (*Webhook, error) {
	var w Webhook
	if err := c.Call(ctx, auth, Request{Method: http.MethodPut, Path: Path("webhooks", id), Body: in.params()}, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// SetWebhookSecret sets a webhook's signature secret: PATCH /v1/webhooks/{id}/secret, Appwrite's only route for
// it (Webhooks/Secret/Update.php:32-33; any other method is 404 general_route_not_found). Only "secret" is
// declared there. The answer is the webhook with the secret the server kept.
func (c *Client) SetWebhookSecret(ctx context.Context, auth Auth, id, secret string) (*Webhook, error) {
	var w Webhook
	if err := c.Call(ctx, auth, Request{Method: http.MethodPatch, Path: Path("webhooks", id, "secret"), Body: map[string]any{"secret": secret}}, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// DeleteWebhook deletes a webhook.
func (c *Client) DeleteWebhook(ctx context.Context, auth Auth, id string) error {
	return c.Call(ctx, auth, Request{Method: http.MethodDelete, Path: Path("webhooks", id)}, nil)
}

// Version returns the endpoint's Appwrite version (GET /v1/health/version, a public route: Health/Version/
// Get.php in 1.9.6); "" when the answer names none.
func (c *Client) Version(ctx context.Context) (string, error) {
	var out struct {
		Version string `json:"version"`
	}
	if err := c.Call(ctx, Auth{}, Request{Method: http.MethodGet, Path: Path("health", "version")}, &out); err != nil {
		return "", err
	}
	return strings.TrimSpace(out.Version), nil
}
