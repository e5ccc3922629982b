package ingress

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/seal"

	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/functions"
	"github.com/appwrite/sdk-for-go/models"
)

// JobPath is where delayed retry executions of the ingress arrive.
const JobPath = "/jobs/retry"

// jobPurpose binds sealed jobs to this use of the sealing keys.
const jobPurpose = "webhook-ingress/retry-job/v1"

// Job is a delivery that still has to be made. It travels sealed (encrypted and authenticated with the
// sealing keys) as the body of a delayed execution, so nothing but this function can make or read one.
// It keeps the sealed subscription as Appwrite sent it: the retry re-opens it, so an expired subscription
// stops its retries, and a refreshed one uses the secrets it had when the change happened.
type Job struct {
	WebhookID string `json:"w"`
	ProjectID string `json:"p"`
	AuthUser  string `json:"u"`
	AuthPass  string `json:"k"`
	// URLTail is the sealed part of the webhook URL ("" for none).
	URLTail string `json:"t,omitempty"`
	// Args are the arguments the envelope opened with (it is bound to them, with Event).
	Args         map[string]string `json:"g,omitempty"`
	EventID      string            `json:"e"`
	Event        string            `json:"n"`
	Body         []byte            `json:"b"`
	FirstAttempt int64             `json:"f"`
	Attempts     int               `json:"a"`
	Runs         int               `json:"r"`
}

// Scheduler creates a delayed execution of the ingress that runs job at (or after) at.
type Scheduler interface {
	Schedule(ctx context.Context, job Job, at time.Time, c Config) error
}

// scheduleMargin is added to the wait before it is rounded up to the minute. Appwrite refuses a scheduledAt
// less than 60 s ahead by its own clock when the request arrives; without a margin a retry scheduled in the
// last moments of a minute lands exactly 60 s ahead and is refused once the request took a few
// milliseconds (found by the load harness: the delivery was then abandoned).
const scheduleMargin = 30 * time.Second

// nextRun is when the next delayed run should happen: 1, 2, 4, 8 ... minutes after now, plus
// scheduleMargin, rounded up to the minute (Appwrite wants scheduledAt at least a minute ahead, with minute
// precision), while inside the retry window counted from the first attempt.
func nextRun(d *Deps, job *Job) (time.Time, bool) {
	now := d.Now()
	delay := time.Minute << min(job.Runs, 4)
	at := now.Add(delay + scheduleMargin).Truncate(time.Minute).Add(time.Minute)
	if at.After(time.Unix(job.FirstAttempt, 0).Add(d.Config.RetryWindow)) {
		return time.Time{}, false
	}
	return at, true
}

// appwriteScheduler creates the delayed execution through the Appwrite API with the function's dynamic key.
type appwriteScheduler struct {
	self   AppwriteSelf
	client *http.Client
	key    string
}

// ErrCannotSchedule means the function is not allowed to create executions of itself (no endpoint, no key).
var ErrCannotSchedule = errors.New("ingress: cannot schedule a delayed retry (needs APPWRITE_FUNCTION_API_ENDPOINT, APPWRITE_FUNCTION_ID, APPWRITE_FUNCTION_PROJECT_ID and an x-appwrite-key with executions.write)")

func (s appwriteScheduler) Schedule(ctx context.Context, job Job, at time.Time, c Config) error {
	if s.self.Endpoint == "" || s.self.FunctionID == "" || s.self.ProjectID == "" || s.key == "" {
		return ErrCannotSchedule
	}
	plain, err := json.Marshal(job)
	if err != nil {
		return err
	}
	sealed, err := c.Keyring.SealBlob(jobPurpose, plain)
	if err != nil {
		return err
	}
	// Appwrite's createExecution: body, async, path, method, headers, scheduledAt (ISO 8601, minute precision).
	aw := awclient.New(s.self.Endpoint, s.self.ProjectID, s.client, 64<<10)
	if _, err := awclient.Do(ctx, aw, awclient.Key(s.key), func(sdk client.Client) (*models.Execution, error) {
		f := functions.New(sdk)
		return f.CreateExecution(s.self.FunctionID, f.WithCreateExecutionBody(sealed), f.WithCreateExecutionAsync(true),
			f.WithCreateExecutionPath(JobPath), f.WithCreateExecutionMethod(http.MethodPost),
			f.WithCreateExecutionHeaders(map[string]string{"content-type": "text/plain"}),
			f.WithCreateExecutionScheduledAt(at.UTC().Format("2006-01-02T15:04:05.000+00:00")))
	}); err != nil {
		return fmt.Errorf("create delayed execution: %w", err)
	}
	return nil
}

// HandleJob runs one delayed retry: the job must open with the sealing keys, its subscription must still
// open and not be expired, then delivery goes on as in HandleWebhook.
func HandleJob(ctx context.Context, d Deps, r Request) Answer {
	d.fill(r.AppwriteKey)
	if r.Method != http.MethodPost {
		return d.reject(http.StatusMethodNotAllowed, "method_not_allowed", "retry jobs are POSTed; got "+r.Method)
	}
	plain, err := d.Config.Keyring.OpenBlob(jobPurpose, string(bytes.TrimSpace(r.Body)))
	var job Job
	if err != nil || json.Unmarshal(plain, &job) != nil {
		return d.reject(http.StatusUnauthorized, "bad_job", "the retry job does not open with this ingress's keys")
	}
	sub, err := d.Config.Sealer.Open(job.WebhookID, job.ProjectID, seal.Fields{Username: job.AuthUser, Password: job.AuthPass, URLTail: job.URLTail},
		seal.Target{Event: job.Event, Args: seal.ArgsOf(job.Args)})
	if err != nil {
		// The job opened with this ingress's keys, so it is genuine: its subscription not opening means a
		// sealing key was removed while retries were pending.
		d.fault(Fault{Event: job.Event, ProjectID: job.ProjectID, Outcome: "rejected", Reason: "subscription_rejected",
			Detail: "a retry job's sealed subscription no longer opens: " + err.Error()})
		return d.reject(http.StatusUnauthorized, "subscription_rejected", "the job's subscription no longer opens")
	}
	if sub.Expired(d.Now()) {
		d.Counters.Add(MetricDeliveries, "event", job.Event, "outcome", "abandoned", "reason", "expired")
		return Answer{Status: http.StatusOK, Outcome: Outcome{Status: "abandoned", EventID: job.EventID, Attempts: job.Attempts, Reason: "expired"}}
	}
	job.Runs++
	return deliver(ctx, &d, &sub, &job)
}
