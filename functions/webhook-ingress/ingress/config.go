package ingress

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"appwrite-agent/shared/appwritesig"
	"appwrite-agent/shared/eventdelivery"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/seal"
)

// Environment variables the ingress reads (besides seal.EnvKeys, appwritesig.EnvKeys and the safehttp
// allowlist variables).
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

// Config is the ingress configuration. LoadConfig reads it from the environment; the function does so
// once per process (functions/webhook-ingress/main.go).
type Config struct {
	Sealer      *seal.Sealer
	Keyring     *seal.Keyring
	SigKeys     *appwritesig.Keys
	PublicURL   string
	HTTP        safehttp.Options
	Policy      eventdelivery.Policy
	RetryWindow time.Duration
	// Appwrite lets the ingress schedule delayed executions of itself; empty Endpoint means it cannot.
	Appwrite AppwriteSelf
}

// AppwriteSelf is what the ingress needs to create delayed executions of itself.
type AppwriteSelf struct {
	Endpoint, ProjectID, FunctionID string
}

// LoadConfig reads the configuration. A missing or weak key is an error, never a silent default.
func LoadConfig() (Config, error) {
	var c Config
	var errs []error
	var err error
	if c.Keyring, err = seal.LoadKeyring(); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", seal.EnvKeys, err))
	} else if c.Sealer, err = seal.NewSealer(c.Keyring, seal.DefaultBudget()); err != nil {
		errs = append(errs, err)
	}
	if c.SigKeys, err = appwritesig.LoadKeys(); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", appwritesig.EnvKeys, err))
	}
	c.PublicURL = strings.TrimRight(os.Getenv(EnvPublicURL), "/")
	if u, err := url.Parse(c.PublicURL); c.PublicURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, fmt.Errorf("%s must be the ingress's public URL, such as https://ingress.example.com (got %q)", EnvPublicURL, c.PublicURL))
	} else if strings.Contains(c.PublicURL, "%") {
		// Appwrite 1.9.6 and earlier sign rawurldecode(url) + body, later versions the stored url
		// (Workers/Webhooks.php:104,115 in 1.9.6): with a "%" the signature would not verify on one of them.
		errs = append(errs, fmt.Errorf("%s must not hold a %% (Appwrite's signature covers such a URL differently across versions); got %q", EnvPublicURL, c.PublicURL))
	}
	if c.HTTP, err = safehttp.FromEnv(safehttp.Options{}); err != nil {
		errs = append(errs, err)
	} else if c.HTTP, err = safehttp.CAFromEnv(c.HTTP); err != nil {
		errs = append(errs, err)
	}
	c.Policy = eventdelivery.DefaultPolicy()
	if v, ok, err := envInt(EnvMaxAttempts, 1, 10); err != nil {
		errs = append(errs, err)
	} else if ok {
		c.Policy.MaxAttempts = v
	}
	if v, ok, err := envInt(EnvBudgetMS, MinBudgetMS, MaxBudgetMS); err != nil {
		errs = append(errs, err)
	} else if ok {
		c.Policy.Budget = time.Duration(v) * time.Millisecond
		if c.Policy.AttemptTimeout > c.Policy.Budget {
			c.Policy.AttemptTimeout = c.Policy.Budget
		}
	}
	// Every attempt runs under its own deadline (Policy.AttemptTimeout, never past the budget), so the
	// client's timeouts are one attempt's: with its header timeout no shorter than its total one, the
	// transport starts no header timer that the attempt's deadline would always beat. Only a subscriber's
	// status matters (its answer is not used), so gzip is not asked for.
	if c.Policy.AttemptTimeout > 0 {
		c.HTTP.TotalTimeout, c.HTTP.HeaderTimeout = c.Policy.AttemptTimeout, c.Policy.AttemptTimeout
	}
	c.HTTP.DisableCompression = true
	c.RetryWindow = 15 * time.Minute
	if v, ok, err := envInt(EnvRetryWindowMinutes, 0, 60); err != nil {
		errs = append(errs, err)
	} else if ok {
		c.RetryWindow = time.Duration(v) * time.Minute
	}
	c.Appwrite = AppwriteSelf{
		Endpoint:   strings.TrimRight(os.Getenv("APPWRITE_FUNCTION_API_ENDPOINT"), "/"),
		ProjectID:  os.Getenv("APPWRITE_FUNCTION_PROJECT_ID"),
		FunctionID: os.Getenv("APPWRITE_FUNCTION_ID"),
	}
	return c, errors.Join(errs...)
}

func envInt(name string, min, max int) (int, bool, error) {
	raw := strings.TrimSpace(os.Getenv(name))
	if raw == "" {
		return 0, false, nil
	}
	v, err := strconv.Atoi(raw)
	if err != nil || v < min || v > max {
		return 0, false, fmt.Errorf("%s must be an integer from %d to %d (got %q)", name, min, max, raw)
	}
	return v, true, nil
}
