package handler

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"appwrite-agent/functions/chat/automations"
	"appwrite-agent/functions/chat/store"
	"appwrite-agent/shared/attachment"
	"appwrite-agent/shared/platform"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/seal"
)

// EnvSealKeys names chat's sealing keys (Config.Secrets).
const EnvSealKeys = "CHAT_SEAL_KEYS"

// Config is everything chat reads from its environment. This file is the only place that reads it; Main
// reads it once per process and passes it down.
type Config struct {
	// SessionKey is AGENT_API_KEY, sent to turn as X-Session-API-Key.
	SessionKey string
	// TurnFunction is CHAT_TURN_FUNCTION (default "turn").
	TurnFunction string
	// DatabaseID is CHAT_DATABASE_ID (default "chat").
	DatabaseID string
	// ProgressDatabase and ProgressTable are TURN_PROGRESS_DATABASE and TURN_PROGRESS_TABLE.
	ProgressDatabase, ProgressTable string
	// Endpoint and ProjectID are APPWRITE_FUNCTION_API_ENDPOINT and APPWRITE_FUNCTION_PROJECT_ID
	// (shared/platform).
	Endpoint, ProjectID string
	// PublicEndpoint is CHAT_PUBLIC_ENDPOINT, else Endpoint: what the browser's Web SDK uses.
	PublicEndpoint string
	// MaxAttachments and MaxAttachmentBytes are ATTACHMENTS_MAX_PER_MESSAGE and ATTACHMENTS_MAX_BYTES.
	MaxAttachments, MaxAttachmentBytes int
	// Secrets are CHAT_SEAL_KEYS (shared/seal's key list, rotated like SEAL_KEYS: prepend a new key, keep the
	// old ones while rows sealed with them remain): the keys the users' API keys and MCP tokens are sealed
	// with at rest. nil when unset or invalid (SecretsErr says why): chat then refuses to store or open a secret.
	Secrets    *seal.Keyring
	SecretsErr error
	// BuildID is APPWRITE_FUNCTION_DEPLOYMENT, "dev" when unset (platform.Env.BuildID, what /health answers).
	BuildID string
	// FunctionID is APPWRITE_FUNCTION_ID, chat's own function (an automation may not watch it).
	FunctionID string
	// Automations is the automations' configuration (docs/chat.md "Automations"): CHAT_PUBLIC_URL,
	// CHAT_AUTOMATION_TURNS_PER_HOUR, CHAT_AUTOMATION_TTL, CHAT_AUTOMATION_REFRESH_AHEAD; its Own resources are
	// completed from the rest of the configuration (OwnResources).
	Automations automations.Config
	// MCP is the SSRF policy of the calls chat makes to the users' MCP servers (their URLs come from users):
	// https and public addresses only, unless SAFEHTTP_ALLOW / SAFEHTTP_ALLOW_HTTP (tests, local development);
	// SAFEHTTP_CA_FILE adds roots. MCPErr is why it could not be read.
	MCP    safehttp.Options
	MCPErr error
	// Warnings lists environment values that were ignored.
	Warnings []string
}

// LoadConfig reads the configuration from the environment.
func LoadConfig() Config {
	pf := platform.FromEnv(os.Getenv)
	c := Config{
		SessionKey:       os.Getenv("AGENT_API_KEY"),
		TurnFunction:     envOr("CHAT_TURN_FUNCTION", "turn"),
		DatabaseID:       envOr("CHAT_DATABASE_ID", "chat"),
		ProgressDatabase: strings.TrimSpace(os.Getenv("TURN_PROGRESS_DATABASE")),
		ProgressTable:    strings.TrimSpace(os.Getenv("TURN_PROGRESS_TABLE")),
		Endpoint:         pf.Endpoint,
		ProjectID:        pf.ProjectID,
		BuildID:          pf.BuildID(),
	}
	c.PublicEndpoint = strings.TrimRight(envOr("CHAT_PUBLIC_ENDPOINT", c.Endpoint), "/")
	if c.Secrets, c.SecretsErr = seal.ParseKeyring(os.Getenv(EnvSealKeys)); c.SecretsErr != nil {
		c.SecretsErr = fmt.Errorf("%s: %w", EnvSealKeys, c.SecretsErr)
		c.Secrets = nil
		c.Warnings = append(c.Warnings, c.SecretsErr.Error()+": API keys and MCP tokens cannot be saved or used")
	}
	c.MaxAttachments = c.envInt("ATTACHMENTS_MAX_PER_MESSAGE", attachment.DefaultMaxPerMessage)
	c.MaxAttachmentBytes = c.envInt("ATTACHMENTS_MAX_BYTES", attachment.DefaultMaxBytes)
	c.FunctionID = pf.FunctionID
	c.Automations = automations.Config{
		PublicURL:    c.publicURL(os.Getenv("CHAT_PUBLIC_URL")),
		TurnsPerHour: c.envInt("CHAT_AUTOMATION_TURNS_PER_HOUR", automations.DefaultTurnsPerHour),
		TTL:          c.envDuration("CHAT_AUTOMATION_TTL", 0),
		RefreshAhead: c.envDuration("CHAT_AUTOMATION_REFRESH_AHEAD", automations.DefaultRefreshAhead),
	}
	opts, err := safehttp.FromEnv(os.Getenv, safehttp.Options{})
	c.MCP, c.MCPErr = safehttp.LazyCAFromEnv(os.Getenv, opts), err
	if err != nil {
		c.Warnings = append(c.Warnings, "SAFEHTTP_ALLOW: "+err.Error()+": automations cannot reach MCP servers")
	}
	return c
}

// OwnResources are chat's tables and functions, which no automation may watch.
func (c Config) OwnResources() automations.OwnResources {
	own := automations.OwnResources{ProjectID: c.ProjectID, Tables: map[string][]string{
		c.DatabaseID: {store.Conversations, store.Messages, store.Memories, store.Settings, store.MCPConnections, store.Automations, store.AutomationRuns},
	}, Functions: []string{c.TurnFunction}}
	if c.FunctionID != "" {
		own.Functions = append(own.Functions, c.FunctionID)
	}
	if c.ProgressDatabase != "" && c.ProgressTable != "" {
		own.Tables[c.ProgressDatabase] = append(own.Tables[c.ProgressDatabase], c.ProgressTable)
	}
	return own
}

// publicURL reads CHAT_PUBLIC_URL: chat's own domain, https, no query or fragment (a trailing slash dropped).
// An invalid value is ignored with a warning: automations then answer that it is not set.
func (c *Config) publicURL(v string) string {
	v = strings.TrimRight(strings.TrimSpace(v), "/")
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		c.Warnings = append(c.Warnings, "CHAT_PUBLIC_URL="+v+" is not an https URL of chat's domain: automations are off")
		return ""
	}
	return v
}

func (c *Config) envDuration(name string, def time.Duration) time.Duration {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		c.Warnings = append(c.Warnings, name+"="+v+" is not a positive duration; using "+def.String())
		return def
	}
	return d
}

func envOr(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}

func (c *Config) envInt(name string, def int) int {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		c.Warnings = append(c.Warnings, name+"="+v+" is not a positive integer; using "+strconv.Itoa(def))
		return def
	}
	return n
}
