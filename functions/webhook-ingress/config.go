package handler

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"appwrite-agent/functions/webhook-ingress/ingress"
	"appwrite-agent/shared/appwritesig"
	"appwrite-agent/shared/faultreport"
	"appwrite-agent/shared/platform"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/seal"
)

// Config is everything webhook-ingress reads from its environment (docs/webhook-ingress.md lists each
// variable). This file is the only place that reads it; the function reads it once per process (see
// fromEnv) and passes it down.
type Config struct {
	// Platform is what Appwrite sets for every function (shared/platform): the project and function the
	// delayed retries are executions of, the deployment /health and the fault reports name.
	Platform platform.Env
	// Ingress is the ingress's own configuration: the keys (SEAL_KEYS, APPWRITE_WEBHOOK_SECRET_KEYS), the
	// public URL (MCP_EVENTS_INGRESS_URL), the subscriber client's SSRF policy (SAFEHTTP_ALLOW,
	// SAFEHTTP_ALLOW_HTTP, SAFEHTTP_CA_FILE) and the delivery policy (INGRESS_MAX_ATTEMPTS, INGRESS_BUDGET_MS,
	// INGRESS_RETRY_WINDOW_MINUTES).
	Ingress ingress.Config
	// Faults is where server faults are reported (SENTRY_DSN, SENTRY_ENVIRONMENT).
	Faults faultreport.Options
}

// LoadConfig reads the configuration from the environment. A missing or weak key is an error, never a silent
// default; every problem found is in the error, and what could be read is in the Config.
func LoadConfig() (Config, error) {
	getenv := os.Getenv // the process environment, read here only
	c := Config{Platform: platform.FromEnv(getenv)}
	c.Faults = faultreport.OptionsFromEnv(getenv, "webhook-ingress", c.Platform.BuildID())
	in := &c.Ingress
	var errs []error
	var err error
	if in.Keyring, err = seal.LoadKeyring(getenv); err != nil {
		errs = append(errs, err)
	} else if in.Sealer, err = seal.NewSealer(in.Keyring, seal.DefaultBudget()); err != nil {
		errs = append(errs, err)
	}
	if in.SigKeys, err = appwritesig.LoadKeys(getenv); err != nil {
		errs = append(errs, err)
	}
	in.PublicURL = strings.TrimRight(getenv(ingress.EnvPublicURL), "/")
	if u, err := url.Parse(in.PublicURL); in.PublicURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, fmt.Errorf("%s must be the ingress's public URL, such as https://ingress.example.com (got %q)", ingress.EnvPublicURL, in.PublicURL))
	} else if strings.Contains(in.PublicURL, "%") {
		// Appwrite 1.9.6 and earlier sign rawurldecode(url) + body, later versions the stored url
		// (Workers/Webhooks.php:104,115 in 1.9.6): with a "%" the signature would not verify on one of them.
		errs = append(errs, fmt.Errorf("%s must not hold a %% (Appwrite's signature covers such a URL differently across versions); got %q", ingress.EnvPublicURL, in.PublicURL))
	}
	if in.HTTP, err = safehttp.FromEnv(getenv, safehttp.Options{}); err != nil {
		errs = append(errs, err)
	} else if in.HTTP, err = safehttp.CAFromEnv(getenv, in.HTTP); err != nil {
		errs = append(errs, err)
	}
	in.Policy = ingress.DefaultPolicy()
	if v, ok, err := envInt(ingress.EnvMaxAttempts, 1, 10); err != nil {
		errs = append(errs, err)
	} else if ok {
		in.Policy.MaxAttempts = v
	}
	if v, ok, err := envInt(ingress.EnvBudgetMS, ingress.MinBudgetMS, ingress.MaxBudgetMS); err != nil {
		errs = append(errs, err)
	} else if ok {
		in.Policy.Budget = time.Duration(v) * time.Millisecond
		if in.Policy.AttemptTimeout > in.Policy.Budget {
			in.Policy.AttemptTimeout = in.Policy.Budget
		}
	}
	// Every attempt runs under its own deadline (Policy.AttemptTimeout, never past the budget), so the
	// client's timeouts are one attempt's: with its header timeout no shorter than its total one, the
	// transport starts no header timer that the attempt's deadline would always beat. Only a subscriber's
	// status matters (its answer is not used), so gzip is not asked for.
	if in.Policy.AttemptTimeout > 0 {
		in.HTTP.TotalTimeout, in.HTTP.HeaderTimeout = in.Policy.AttemptTimeout, in.Policy.AttemptTimeout
	}
	in.HTTP.DisableCompression = true
	in.RetryWindow = 15 * time.Minute
	if v, ok, err := envInt(ingress.EnvRetryWindowMinutes, 0, 60); err != nil {
		errs = append(errs, err)
	} else if ok {
		in.RetryWindow = time.Duration(v) * time.Minute
	}
	in.Appwrite = ingress.AppwriteSelf{Endpoint: c.Platform.Endpoint, ProjectID: c.Platform.ProjectID, FunctionID: c.Platform.FunctionID}
	return c, errors.Join(errs...)
}

// envInt reads the integer variable name, from min to max; ok is false when it is unset.
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
