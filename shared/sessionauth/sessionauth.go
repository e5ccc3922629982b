// Package sessionauth is the caller check of the agent functions (turn, title): the X-Session-API-Key
// header compared in constant time with AGENT_API_KEY. With no key configured every request is refused,
// unless unauthenticated mode is switched on explicitly (AGENT_ALLOW_UNAUTHENTICATED), for local use.
package sessionauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"
)

// Header carries the caller's key, lower-cased as the runtime gives headers.
const Header = "x-session-api-key"

// Messages of a refusal.
const (
	MsgBadKey       = "Invalid or missing X-Session-API-Key"
	MsgAuthDisabled = "AGENT_API_KEY is not configured; set it, or set AGENT_ALLOW_UNAUTHENTICATED=true to serve without a key"
)

// Refusal codes.
const (
	CodeUnauthorized      = "unauthorized"
	CodeAuthNotConfigured = "auth_not_configured"
)

// Policy is the configured check.
type Policy struct {
	// APIKey is AGENT_API_KEY.
	APIKey string
	// AllowUnauthenticated is AGENT_ALLOW_UNAUTHENTICATED: with an empty APIKey, serve without a key.
	AllowUnauthenticated bool
}

// Environment variables of the policy.
const (
	EnvAPIKey               = "AGENT_API_KEY"
	EnvAllowUnauthenticated = "AGENT_ALLOW_UNAUTHENTICATED"
)

// FromEnv reads AGENT_API_KEY and AGENT_ALLOW_UNAUTHENTICATED (1, true, yes or on) through getenv (a
// function's config.go passes the process environment's getter).
func FromEnv(getenv func(string) string) Policy {
	allow := false
	switch strings.ToLower(strings.TrimSpace(getenv(EnvAllowUnauthenticated))) {
	case "1", "true", "yes", "on":
		allow = true
	}
	return Policy{APIKey: getenv(EnvAPIKey), AllowUnauthenticated: allow}
}

// Refusal says why a request is refused (HTTP 401).
type Refusal struct {
	Code, Message string
}

// Check returns nil when headers (lower-cased keys) carry the right key, or the policy lets everyone in.
func (p Policy) Check(headers map[string]string) *Refusal {
	if p.APIKey == "" {
		if p.AllowUnauthenticated {
			return nil
		}
		return &Refusal{Code: CodeAuthNotConfigured, Message: MsgAuthDisabled}
	}
	// Hashing first makes the comparison constant-time whatever the lengths.
	got := sha256.Sum256([]byte(headers[Header]))
	want := sha256.Sum256([]byte(p.APIKey))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		return &Refusal{Code: CodeUnauthorized, Message: MsgBadKey}
	}
	return nil
}
