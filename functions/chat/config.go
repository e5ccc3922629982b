package handler

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"appwrite-agent/shared/attachment"
	"appwrite-agent/shared/platform"
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
	return c
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
