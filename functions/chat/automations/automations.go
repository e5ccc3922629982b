// Package automations is chat's automations (docs/chat.md "Automations"): a user's subscription to an
// event of their MCP events server (mcp-events), made and kept alive by chat as an MCP client with the
// user's OAuth tokens, whose signed deliveries come back to chat's own domain and start turns in the
// automation's conversation, for that user only, within a rate limit. The agent cannot make one: only the
// signed-in user, through chat's API.
//
// The package takes its configuration and its collaborators as arguments: the store (the rows, for one API
// key), the HTTP client for MCP servers (the SSRF-safe client: connection URLs come from users), the clock,
// and the function that starts a turn (the handler's, which knows the turn request).
package automations

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"appwrite-agent/functions/chat/store"
	"appwrite-agent/shared/stdwebhooks"
)

// Defaults of the configuration.
const (
	// DefaultTurnsPerHour is the rate limit: turns an automation may start in a clock hour.
	DefaultTurnsPerHour = 20
	// DefaultRefreshAhead is how long before a subscription's refreshBefore (and an access token's expiry)
	// a scheduled run renews it: more than the schedule's period (5 minutes in appwrite.json), so a run
	// that is late or fails leaves the next one time.
	DefaultRefreshAhead = 15 * time.Minute
	// MaxDeliveryBytes bounds a delivery's body: what webhook-ingress sends at most (docs/webhook-ingress.md).
	MaxDeliveryBytes = 256 << 10
	// DeliveryBudget bounds a delivery's handling: webhook-ingress gives an attempt 4 s.
	DeliveryBudget = 3 * time.Second
	// Tolerance is the Standard Webhooks timestamp tolerance.
	Tolerance = stdwebhooks.DefaultTolerance
)

// Config is what the automations need of chat's configuration.
type Config struct {
	// PublicURL is chat's own https base URL (CHAT_PUBLIC_URL): callbacks are PublicURL/api/events/<id>.
	PublicURL string
	// TurnsPerHour is the rate limit (CHAT_AUTOMATION_TURNS_PER_HOUR).
	TurnsPerHour int
	// TTL is the subscription time asked for (CHAT_AUTOMATION_TTL; 0 leaves it to the server).
	TTL time.Duration
	// RefreshAhead: a scheduled run renews what expires within it (CHAT_AUTOMATION_REFRESH_AHEAD).
	RefreshAhead time.Duration
	// Own is what an automation may not watch: chat's own tables and functions, in chat's project.
	Own OwnResources
}

// OwnResources are chat's own tables and functions: an automation on them would answer its own turns.
type OwnResources struct {
	ProjectID string
	// Tables maps a database id to chat's tables in it (its own, and turn's progress table).
	Tables map[string][]string
	// Functions are chat's and turn's function ids.
	Functions []string
}

// Starter starts the turn of a delivery: in a's conversation, as a's owner, with message, under turnID. It
// stores the turn's messages and creates turn's execution; on an error nothing of the turn is left.
type Starter func(ctx context.Context, a store.Automation, turnID, message string) error

// Service runs the automations of one execution of chat.
type Service struct {
	cfg     Config
	st      *store.Store
	mcpHTTP *http.Client
	now     func() time.Time
	start   Starter
	log     func(string)
}

// New returns the automations over st: mcpHTTP calls the users' MCP servers, start starts a delivery's turn,
// log receives lines for the execution's error log.
func New(cfg Config, st *store.Store, mcpHTTP *http.Client, now func() time.Time, start Starter, log func(string)) *Service {
	if cfg.TurnsPerHour <= 0 {
		cfg.TurnsPerHour = DefaultTurnsPerHour
	}
	if cfg.RefreshAhead <= 0 {
		cfg.RefreshAhead = DefaultRefreshAhead
	}
	if log == nil {
		log = func(string) {}
	}
	return &Service{cfg: cfg, st: st, mcpHTTP: mcpHTTP, now: now, start: start, log: log}
}

// ErrNotConfigured is chat without CHAT_PUBLIC_URL: no callback URL, no automation.
var ErrNotConfigured = errors.New("CHAT_PUBLIC_URL is not set: an automation's events are delivered to chat's own https domain, which chat must know")

// CallbackURL is where a's events are delivered.
func (s *Service) CallbackURL(automationID string) string {
	return s.cfg.PublicURL + "/api/events/" + automationID
}

// newSecret is a fresh whsec_ secret: 32 random bytes.
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return stdwebhooks.SecretPrefix + base64.StdEncoding.EncodeToString(b)
}
