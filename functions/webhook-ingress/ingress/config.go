package ingress

import (
	"time"

	"appwrite-agent/shared/appwritesig"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/seal"
)

// Environment variables of the ingress (besides seal.EnvKeys, appwritesig.EnvKeys and the safehttp
// allowlist variables), read by the function's config.go.
const (
	// EnvPublicURL is the ingress's public base URL; Appwrite signs the stored webhook URL, which is this
	// plus /appwrite/webhooks/{id}. mcp-events must be configured with the same value.
	EnvPublicURL = "MCP_EVENTS_INGRESS_URL"
	// EnvMaxAttempts bounds the POSTs of one execution (default 4).
	EnvMaxAttempts = "INGRESS_MAX_ATTEMPTS"
	// EnvBudgetMS bounds the delivery time of one execution in milliseconds, MinBudgetMS to MaxBudgetMS
	// (default 9000).
	EnvBudgetMS = "INGRESS_BUDGET_MS"
	// EnvRetryWindowMinutes is how long delayed retries may go on after the first attempt (default 15).
	EnvRetryWindowMinutes = "INGRESS_RETRY_WINDOW_MINUTES"
)

// ExecutionTimeout bounds one execution (its context's deadline): Appwrite's webhook worker waits 15 s for
// an answer, synchronous executions 30 s. An execution waits twice: for the delivery, whose budget (at most
// MaxBudgetMS) bounds it with a deadline per attempt, and for the scheduling of the delayed retry, which gets
// what is left of the execution (at least ScheduleReserve).
const ExecutionTimeout = 12 * time.Second

// ScheduleReserve is the part of an execution that delivery never uses: after the last failed attempt the
// execution still creates the delayed retry (jobs.go) and answers.
const ScheduleReserve = 2 * time.Second

// Bounds of INGRESS_BUDGET_MS: the delivery budget plus ScheduleReserve fits in ExecutionTimeout.
const (
	MinBudgetMS = 100
	MaxBudgetMS = int((ExecutionTimeout - ScheduleReserve) / time.Millisecond)
)

// Config is the ingress configuration. The function's config.go reads it from the environment, once per
// process, and passes it down (Deps.Config).
type Config struct {
	Sealer      *seal.Sealer
	Keyring     *seal.Keyring
	SigKeys     *appwritesig.Keys
	PublicURL   string
	HTTP        safehttp.Options
	Policy      Policy
	RetryWindow time.Duration
	// Appwrite lets the ingress schedule delayed executions of itself; empty Endpoint means it cannot.
	Appwrite AppwriteSelf
}

// AppwriteSelf is what the ingress needs to create delayed executions of itself.
type AppwriteSelf struct {
	Endpoint, ProjectID, FunctionID string
}
