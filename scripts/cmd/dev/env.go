package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"appwrite-agent/shared/localappwrite"
)

// secrets are the dev stack's server keys, made once and kept in .dev/secrets.json (git-ignored) so a
// restart of the functions keeps opening what they sealed before.
type secrets struct {
	SealKeys    string `json:"SEAL_KEYS"`
	WebhookKeys string `json:"APPWRITE_WEBHOOK_SECRET_KEYS"`
	SessionKey  string `json:"AGENT_API_KEY"`
}

func devSecrets(path string) (secrets, error) {
	var s secrets
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &s); err != nil {
			return s, fmt.Errorf("%s: %w (delete it to make new keys)", path, err)
		}
		return s, nil
	case !errors.Is(err, fs.ErrNotExist):
		return s, err
	}
	s = secrets{SealKeys: "dev1:" + randomB64(32), WebhookKeys: "dev1:" + randomB64(32), SessionKey: "dev-" + randomB64(18)}
	data, _ = json.MarshalIndent(s, "", "  ")
	return s, os.WriteFile(path, data, 0o600)
}

func randomB64(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// functionEnv is each function's configuration against the local stand-in. Variables already set in the
// environment of scripts/dev (an LLM key, say) reach every function too.
func functionEnv(d *localappwrite.Demo, s secrets, urls map[string]string) map[string][]string {
	common := []string{
		"APPWRITE_FUNCTION_API_ENDPOINT=" + d.Endpoint,
		"APPWRITE_FUNCTION_PROJECT_ID=" + d.ProjectID,
		// Local receivers and models live on loopback; production keeps the strict default.
		"SAFEHTTP_ALLOW=127.0.0.0/8,::1/128",
	}
	agent := []string{"AGENT_API_KEY=" + s.SessionKey}
	events := []string{
		"SEAL_KEYS=" + s.SealKeys,
		"APPWRITE_WEBHOOK_SECRET_KEYS=" + s.WebhookKeys,
		// Appwrite delivers to the ingress through its function domain, which adds the dynamic key the
		// ingress needs to schedule delayed retries.
		"MCP_EVENTS_INGRESS_URL=" + d.Domains["webhook-ingress"],
	}
	return map[string][]string{
		"turn":  append(append([]string{}, common...), agent...),
		"title": append(append(append([]string{}, common...), agent...), "TITLE_DATABASE_ID="+d.DatabaseID, "TITLE_TABLE_ID="+d.TableID),
		"mcp-events": append(append(append([]string{}, common...), events...),
			"MCP_EVENTS_ENABLED=true",
			"MCP_EVENTS_PUBLIC_URL="+urls["mcp-events"],
			"MCP_EVENTS_OAUTH_ISSUER="+d.Issuer,
			"MCP_EVENTS_OAUTH_JWKS_URL="+d.JWKSURL,
			"MCP_EVENTS_OAUTH_AUDIENCE="+urls["mcp-events"],
			"MCP_EVENTS_APPWRITE_ENDPOINT="+d.Endpoint,
		),
		"webhook-ingress": append(append([]string{}, common...), events...),
	}
}
