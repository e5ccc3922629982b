package subscriptions

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"appwrite-agent/shared/awclient"
)

// Appwrite is where the users' projects are. mcp-events calls a project with the caller's OAuth token in
// admin mode (awclient.Bearer): Appwrite Cloud behaviour, as the hosted Appwrite MCP server drives Cloud; the
// open-source server reads no bearer token, so mcp-events needs Appwrite Cloud.
//
// The subscription's webhook secret is chosen by mcp-events (derived from a server key), which Appwrite
// takes only from 1.9.5 on (the secret param of PR #11884); older servers silently generate their own, and
// every delivery would then fail its signature check. Two checks guard against that, each answering a
// *VersionError:
//
//   - Appwrite reads the server's version once (GET /v1/health/version) and refuses webhook writes on a
//     version older than MinVersion. A version string that does not parse (or is empty) is not refused: a
//     hosted Appwrite may report a build name rather than the release its API follows, so the next check
//     decides.
//   - Behaviour, whatever the version says: Appwrite answers a webhook create and a secret rotation with the
//     secret it stored (secret, or signatureKey in format 1.8.0: Response/Model/Webhook.php:73-77,110-111 and
//     Response/Filters/V22.php:40-41, 1.9.6; signatureKey, always generated, in 1.9.0: Webhooks/Create.php:111).
//     When that answer carries a secret other than the one sent, the server ignored the param: a created
//     webhook is deleted again, and a rotation is reported refused.
type Appwrite struct {
	endpoint string
	hc       *http.Client

	// versionMu is a one-slot semaphore (a channel, so waiting honours the context) guarding version.
	versionMu   chan struct{}
	versionRead bool   // version holds the first answer
	version     string // the version read ("" when the server reported none)
}

// NewAppwrite returns the projects at endpoint (ending in /v1), called over hc.
func NewAppwrite(endpoint string, hc *http.Client) *Appwrite {
	return &Appwrite{endpoint: strings.TrimRight(endpoint, "/"), hc: hc, versionMu: make(chan struct{}, 1)}
}

// Project is a user's project as the caller's token reaches it.
type Project struct {
	// Client calls the project.
	Client *awclient.Client
	// Auth is the caller's token in admin mode.
	Auth awclient.Auth
}

// Project returns project as the bearer token reaches it.
func (a *Appwrite) Project(project, token string) Project {
	return Project{Client: awclient.New(a.endpoint, project, a.hc, 0), Auth: awclient.Bearer(token)}
}

// ID returns the project id.
func (p Project) ID() string { return p.Client.Project() }

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

// Version returns the endpoint's Appwrite version ("" when the answer names none). It is read once: the
// first answer is kept for the Appwrite's life; failures are not kept, so the next call asks again.
func (a *Appwrite) Version(ctx context.Context) (string, error) {
	select {
	case a.versionMu <- struct{}{}:
	case <-ctx.Done():
		return "", &awclient.Error{Err: ctx.Err()}
	}
	defer func() { <-a.versionMu }()
	if a.versionRead {
		return a.version, nil
	}
	v, err := awclient.New(a.endpoint, "", a.hc, 0).Version(ctx)
	if err != nil {
		return "", err
	}
	a.version, a.versionRead = v, true
	return a.version, nil
}

// RequireVersion fails with a *VersionError when the endpoint reports an Appwrite version older than
// MinVersion, and with an *awclient.Error when the version cannot be read. A version that does not parse,
// or none, passes: the webhook writes then check the server's behaviour (CreateWebhook, SetWebhookSecret).
func (a *Appwrite) RequireVersion(ctx context.Context) error {
	v, err := a.Version(ctx)
	if err != nil {
		return err
	}
	if _, _, ok := parseVersion(v); ok && !AtLeast(v, MinVersion) {
		return &VersionError{Endpoint: a.endpoint, Found: v, Need: MinVersion}
	}
	return nil
}

// ignoredSecret is the *VersionError of a server that answered a webhook write with got instead of the
// secret sent; nil when got is sent or empty (an answer without a secret shows nothing). The version is the
// one already read (RequireVersion ran before the write).
func (a *Appwrite) ignoredSecret(ctx context.Context, sent, got string) *VersionError {
	if got == "" || got == sent {
		return nil
	}
	v, _ := a.Version(ctx)
	return &VersionError{Endpoint: a.endpoint, Found: v, Need: MinVersion, IgnoredSecret: true}
}

// CreateWebhook creates a webhook of p with the given id and signature secret. It fails with a
// *VersionError on an Appwrite older than MinVersion, which would ignore the secret, and on one that answers
// the create with another secret than the one sent (whatever version it reports): that webhook is deleted
// again before the error returns (VersionError.Leftover says when the delete failed).
func (a *Appwrite) CreateWebhook(ctx context.Context, p Project, id, secret string, in awclient.WebhookInput) (*awclient.Webhook, error) {
	if err := a.RequireVersion(ctx); err != nil {
		return nil, err
	}
	w, err := p.Client.CreateWebhook(ctx, p.Auth, id, secret, in)
	if err != nil {
		return nil, err
	}
	if ve := a.ignoredSecret(ctx, secret, w.Secret); ve != nil {
		// Its deliveries would be signed with a key nobody holds: it must not stay.
		if err := p.Client.DeleteWebhook(ctx, p.Auth, id); err != nil && awclient.StatusOf(err) != http.StatusNotFound {
			ve.Leftover = err
		}
		return nil, ve
	}
	return w, nil
}

// SetWebhookSecret sets the signature secret of a webhook of p. It fails with a *VersionError on an Appwrite
// older than MinVersion, and on one that answers with another secret than the one sent (the rotation did not
// take the caller's secret; the webhook keeps the server's).
func (a *Appwrite) SetWebhookSecret(ctx context.Context, p Project, id, secret string) error {
	if err := a.RequireVersion(ctx); err != nil {
		return err
	}
	w, err := p.Client.SetWebhookSecret(ctx, p.Auth, id, secret)
	if err != nil {
		return err
	}
	if ve := a.ignoredSecret(ctx, secret, w.Secret); ve != nil {
		return ve
	}
	return nil
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
