package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// waitHealthy calls GET <url>/health until it answers 200 {"status":"ok","build_id":<deployment>} (every
// function answers its deployment id there: fnhttp.BuildID, APPWRITE_FUNCTION_DEPLOYMENT), or HealthTimeout
// passes: a new deployment's runtime starts on its first request, and a new domain may take a moment.
func (d *deployer) waitHealthy(ctx context.Context, base, deployment string) error {
	ctx, cancel := context.WithTimeout(ctx, d.opts.HealthTimeout)
	defer cancel()
	var last error
	for {
		last = d.health(ctx, base, deployment)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no healthy answer within %s: %w", d.opts.HealthTimeout, last)
		case <-time.After(d.opts.PollInterval):
		}
	}
}

// health is one GET <base>/health.
func (d *deployer) health(ctx context.Context, base, deployment string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
	if err != nil {
		return err
	}
	res, err := d.opts.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var h struct {
		Status  string `json:"status"`
		BuildID string `json:"build_id"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &h) != nil || h.Status != "ok" {
		return fmt.Errorf("GET %s/health answered %d %.200s", base, res.StatusCode, body)
	}
	if deployment != "" && h.BuildID != deployment {
		return fmt.Errorf("GET %s/health answers build %q, not the active deployment %s", base, h.BuildID, deployment)
	}
	return nil
}
