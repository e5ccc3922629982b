// Package deploy installs and upgrades the product in an Appwrite project with an API key (scripts/deploy):
// it checks the server, the project and the key's scopes before changing anything, creates or updates the
// five functions with the settings of the staged appwrite.json, gives each its function domain, sets every
// function's variables so that those that must agree do (generating the server keys once), creates the
// chat's database and tables and turn's progress table, uploads only the functions whose staged code or
// configuration changed since their active deployment, waits for the builds, and checks each function's
// /health on its domain. docs/deploy.md describes each step.
package deploy

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"appwrite-agent/scripts/internal/skills"
	"appwrite-agent/scripts/internal/staging"
	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/loopback"
)

// Options are one run's inputs. Endpoint, Project and Key are required.
type Options struct {
	// Endpoint is the Appwrite API endpoint, ending in /v1 (APPWRITE_ENDPOINT).
	Endpoint string
	// Project is the project id (APPWRITE_PROJECT_ID).
	Project string
	// Key is the API key (APPWRITE_API_KEY).
	Key string
	// LLMModel and LLMBaseURL set LLM_MODEL and LLM_BASE_URL of turn and title when not empty (-llm-model,
	// -llm-base-url); LLMAPIKey sets LLM_API_KEY, from the environment only.
	LLMModel, LLMBaseURL, LLMAPIKey string
	// FunctionsDomain is the server's _APP_DOMAIN_FUNCTIONS, under which missing function domains are made
	// (-functions-domain); empty: Appwrite Cloud's <region>.appwrite.run, functions.localhost for a loopback
	// endpoint (Appwrite's own .env), else the parent domain of an existing function domain of the project.
	FunctionsDomain string
	// ChatDatabase is CHAT_DATABASE_ID (-chat-database, default "chat"): chat's tables, turn's progress table,
	// and the table whose new rows start title.
	ChatDatabase string
	// Skills and AllowNoSkills are scripts/stage's -skills and -allow-no-skills for turn. Without either, and
	// with no skill installed in <Root>/functions/turn/skills, deploy installs them first (InstallSkills).
	Skills        string
	AllowNoSkills bool
	// InstallSkills installs Appwrite's agent skills into dir, saying what it did on log (skills.Install of
	// the latest appwrite/agent-skills release, with GITHUB_TOKEN from Getenv, when nil). Only the default
	// staging (Stage nil) needs it.
	InstallSkills func(ctx context.Context, dir string, log io.Writer) error
	// DryRun prints the plan and stops before any change.
	DryRun bool
	// RotateKeys prepends a new key to SEAL_KEYS, APPWRITE_WEBHOOK_SECRET_KEYS and CHAT_SEAL_KEYS.
	RotateKeys bool
	// Root is the repository root (found from the working directory when empty).
	Root string
	// StateDir keeps the server keys deploy generated, per project (mode 0600; default <Root>/.deploy).
	StateDir string
	// Log receives the progress lines, one whole line per Write (os.Stderr when nil).
	Log io.Writer
	// HTTPClient calls the API and the functions' domains (a client that dials localhost names on loopback,
	// loopback.Client, when nil).
	HTTPClient *http.Client
	// Stage writes function name's deployable folder into dir (staging.StageWith with Skills and AllowNoSkills
	// when nil, after the skills are installed when none is). Tests wrap it.
	Stage func(ctx context.Context, root, name, dir string) error
	// stagesProduct is whether Stage is the default: the product's staging, which embeds turn's skills.
	stagesProduct bool
	// Random is the source of generated keys and deployment ids (crypto/rand when nil).
	Random io.Reader
	// Getenv reads the current value of a server key to rotate when this machine has no copy of it
	// (os.Getenv when nil).
	Getenv func(string) string
	// PollInterval is how often a build's status is read (2 s when zero); BuildTimeout bounds one build
	// (Appwrite's 900 s build limit when zero); HealthTimeout bounds the wait for each function's /health (2
	// minutes when zero).
	PollInterval, BuildTimeout, HealthTimeout time.Duration
}

// Function names, in the order deploy handles them.
var functionNames = staging.Functions

// Summary is what a run did (or, with DryRun, would do). Its JSON is what -json prints.
type Summary struct {
	// Functions are the five functions by name.
	Functions map[string]FunctionSummary `json:"functions"`
	// ChatURL is the chat page to open.
	ChatURL string `json:"chat_url"`
	// ManualSteps are what the API key cannot do, word for word.
	ManualSteps []string `json:"manual_steps"`
	// Uploaded names the functions whose code was uploaded, in order.
	Uploaded []string `json:"-"`
	// Changes counts the changes made (or planned); 0 is "up to date".
	Changes int `json:"-"`
	// Notes are said once at the end (the loopback allowances, mcp-events and self-hosted servers, ...).
	Notes []string `json:"-"`
}

// FunctionSummary is one function's line of the summary.
type FunctionSummary struct {
	// URL is the function's domain URL.
	URL string `json:"url"`
	// Deployment is the active deployment's id ("" before the first).
	Deployment string `json:"deployment"`
	// Status is "deployed" (a new deployment became active), "up to date", "failed" (its step failed),
	// "not reached" (a failure before it), or with DryRun "will deploy" / "up to date".
	Status string `json:"status"`
}

// Status values of FunctionSummary.
const (
	StatusDeployed   = "deployed"
	StatusUpToDate   = "up to date"
	StatusFailed     = "failed"
	StatusNotReached = "not reached"
	StatusWillDeploy = "will deploy"
)

// Refusal is an error found before anything was changed: a bad input, a server, project or key deploy cannot
// work with, or a configuration it will not overwrite. Nothing was changed.
type Refusal struct {
	// Reason says what is wrong and what to do.
	Reason string
}

// Error says what is wrong, what to do, and that nothing was changed.
func (r *Refusal) Error() string { return r.Reason + "\nNothing was changed." }

func refuse(format string, args ...any) error { return &Refusal{Reason: fmt.Sprintf(format, args...)} }

// Incomplete is a failure halfway: Done lists what was done, NotDone what was not. Running deploy again
// finishes the job.
type Incomplete struct {
	// Err is the failure.
	Err error
	// Done and NotDone are the steps, in order.
	Done, NotDone []string
}

// Error says what failed, then what was done and what was not.
func (e *Incomplete) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "stopped halfway: %v\n", e.Err)
	b.WriteString("Done:\n")
	if len(e.Done) == 0 {
		b.WriteString("  (nothing)\n")
	}
	for _, s := range e.Done {
		b.WriteString("  ✓ " + s + "\n")
	}
	b.WriteString("Not done:\n")
	for _, s := range e.NotDone {
		b.WriteString("  · " + s + "\n")
	}
	b.WriteString("Run the same command again to finish: what is done is kept and found up to date.")
	return b.String()
}

// Unwrap returns the failure.
func (e *Incomplete) Unwrap() error { return e.Err }

// Run deploys as opts says and returns the summary: on success, with a Refusal (nothing changed), and with
// an Incomplete failure (what was and was not done).
func Run(ctx context.Context, opts Options) (*Summary, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	d := &deployer{opts: opts, log: opts.Log, api: newAppwriteAPI(opts.Endpoint, opts.Project, opts.Key, opts.HTTPClient)}
	if err := d.preflight(ctx); err != nil {
		return nil, err
	}
	if err := d.stage(ctx); err != nil {
		return nil, err
	}
	defer os.RemoveAll(d.stageDir)
	if err := d.plan(ctx); err != nil {
		return nil, err
	}
	if opts.DryRun {
		d.printPlan()
		return d.summary(true), nil
	}
	err := d.apply(ctx)
	s := d.summary(false)
	return s, err
}

// defaults checks opts and fills what was left empty.
func (o *Options) defaults() error {
	o.Endpoint = strings.TrimRight(strings.TrimSpace(o.Endpoint), "/")
	o.Project = strings.TrimSpace(o.Project)
	o.Key = strings.TrimSpace(o.Key)
	var missing []string
	if o.Endpoint == "" {
		missing = append(missing, "the endpoint (-endpoint or APPWRITE_ENDPOINT)")
	}
	if o.Project == "" {
		missing = append(missing, "the project id (-project or APPWRITE_PROJECT_ID)")
	}
	if o.Key == "" {
		missing = append(missing, "an API key (-key or APPWRITE_API_KEY)")
	}
	if len(missing) > 0 {
		return refuse("deploy needs %s.", strings.Join(missing, ", "))
	}
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return refuse("-endpoint %q is not an http(s) URL such as https://fra.cloud.appwrite.io/v1.", o.Endpoint)
	}
	if !strings.HasSuffix(u.Path, "/v1") {
		return refuse("-endpoint %q does not end in /v1: Appwrite's API endpoint is its base URL with /v1, such as https://fra.cloud.appwrite.io/v1.", o.Endpoint)
	}
	if !awclient.ValidID(o.Project) {
		return refuse("-project %q is not an Appwrite project id (at most 36 of a-z, A-Z, 0-9, '.', '-', '_', not starting with a special character).", o.Project)
	}
	if o.ChatDatabase == "" {
		o.ChatDatabase = staging.DefaultChatDatabase
	}
	if !awclient.ValidID(o.ChatDatabase) {
		return refuse("-chat-database %q is not an Appwrite id.", o.ChatDatabase)
	}
	if o.FunctionsDomain != "" && !validHostname(o.FunctionsDomain) {
		return refuse("-functions-domain %q is not a domain name such as fra.appwrite.run (no scheme, no port).", o.FunctionsDomain)
	}
	if o.LLMBaseURL != "" {
		if lu, err := url.Parse(o.LLMBaseURL); err != nil || (lu.Scheme != "https" && lu.Scheme != "http") || lu.Host == "" {
			return refuse("-llm-base-url %q is not an http(s) URL.", o.LLMBaseURL)
		}
	}
	if o.Root == "" {
		r, err := staging.FindRoot(".")
		if err != nil {
			return err
		}
		o.Root = r
	}
	if o.StateDir == "" {
		o.StateDir = filepath.Join(o.Root, ".deploy")
	}
	if o.Log == nil {
		o.Log = os.Stderr
	}
	if o.HTTPClient == nil {
		o.HTTPClient = loopback.Client(2 * time.Minute)
	}
	if o.Stage == nil {
		o.stagesProduct = true
		so := staging.Options{Skills: o.Skills, AllowNoSkills: o.AllowNoSkills, Warn: o.Log}
		o.Stage = func(ctx context.Context, root, name, dir string) error {
			return staging.StageWith(ctx, root, name, dir, so)
		}
	}
	if o.Random == nil {
		o.Random = rand.Reader
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.InstallSkills == nil {
		getenv := o.Getenv
		o.InstallSkills = func(ctx context.Context, dir string, log io.Writer) error {
			return skills.Install(ctx, skills.Options{Out: dir, Token: getenv("GITHUB_TOKEN")}, log)
		}
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 2 * time.Second
	}
	if o.BuildTimeout <= 0 {
		o.BuildTimeout = 15 * time.Minute
	}
	if o.HealthTimeout <= 0 {
		o.HealthTimeout = 2 * time.Minute
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// validHostname is a host name of letters, digits and inner hyphens, with at least two labels.
func validHostname(h string) bool {
	labels := strings.Split(h, ".")
	if len(labels) < 2 || len(h) > 253 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || !isAlnum(l[0]) || !isAlnum(l[len(l)-1]) {
			return false
		}
		for i := 0; i < len(l); i++ {
			if !isAlnum(l[i]) && l[i] != '-' {
				return false
			}
		}
	}
	return true
}

// deployer is one run.
type deployer struct {
	opts  Options
	log   io.Writer
	logMu sync.Mutex
	api   *appwriteAPI

	// set by preflight
	version  string
	loopback bool   // the endpoint is on this machine: the local allowances are set
	cloud    bool   // Appwrite Cloud
	region   string // Cloud's region ("fra"), "default" for a self-hosted server

	// set by stage
	stageDir string
	specs    map[string]functionSpec
	archives map[string]archive

	// set by plan
	p *plan

	// set by apply
	done, notDone []string
	results       map[string]FunctionSummary
	uploaded      []string
	notes         []string
}

// logf writes one progress line; the build watchers write from their goroutines, so lines are written whole,
// one at a time.
func (d *deployer) logf(format string, args ...any) {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	fmt.Fprintf(d.log, format+"\n", args...)
}

// endpointURL is the parsed endpoint.
func (d *deployer) endpointURL() *url.URL {
	u, _ := url.Parse(d.opts.Endpoint)
	return u
}

// isLoopbackHost reports whether host names this machine: localhost, a name under .localhost, 127.0.0.0/8
// or ::1.
func isLoopbackHost(host string) bool {
	if loopback.IsLocalhostName(host) {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// parseVersion reads the leading major.minor.patch of an Appwrite version ("1.9.6", "1.9.6-rc.1",
// "2.0.0"); ok is false for anything else (a hosted build name).
func parseVersion(v string) (p [3]int, ok bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	if i := strings.IndexAny(v, "-+ "); i >= 0 {
		v = v[:i]
	}
	fs := strings.Split(v, ".")
	if len(fs) != 3 {
		return p, false
	}
	for i, f := range fs {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return p, false
		}
		p[i] = n
	}
	return p, true
}

// minVersion is the oldest Appwrite the events work on (docs/deploy.md "Appwrite version").
var minVersion = [3]int{1, 9, 5}

func versionBefore(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// ensureSkills installs Appwrite's agent skills, which turn embeds, when none is installed and the options
// name no other folder and do not allow a turn without them: a first deploy needs no scripts/update-skills.
func (d *deployer) ensureSkills(ctx context.Context) error {
	if !d.opts.stagesProduct || d.opts.Skills != "" || d.opts.AllowNoSkills {
		return nil
	}
	dir := filepath.Join(d.opts.Root, "functions", "turn", "skills")
	if found, err := filepath.Glob(filepath.Join(dir, "*", "SKILL.md")); err != nil || len(found) > 0 {
		return err
	}
	d.logf("installing Appwrite's agent skills, which turn embeds, into %s (scripts/update-skills updates them)...", dir)
	if err := d.opts.InstallSkills(ctx, dir, d.log); err != nil {
		return &Refusal{Reason: fmt.Sprintf("no Appwrite skills are installed in %s, and installing them failed: %v. "+
			"Run scripts/update-skills where GitHub is reachable (GITHUB_TOKEN lifts its rate limit), or deploy turn "+
			"without them with -allow-no-skills (the agent then answers from the docs).", dir, err)}
	}
	return nil
}

// stage writes every function's deployable folder into a temporary folder under <Root>/build, packs each
// and reads the staged appwrite.json's settings.
func (d *deployer) stage(ctx context.Context) error {
	raw, err := os.ReadFile(filepath.Join(d.opts.Root, "appwrite.json"))
	if err != nil {
		return err
	}
	staged, err := staging.StagedAppwriteJSON(raw, d.opts.ChatDatabase)
	if err != nil {
		return err
	}
	if d.specs, err = readSpecs(staged, functionNames); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(d.opts.Root, "build"), 0o755); err != nil {
		return err
	}
	if d.stageDir, err = os.MkdirTemp(filepath.Join(d.opts.Root, "build"), "deploy-"); err != nil {
		return err
	}
	if err := d.ensureSkills(ctx); err != nil {
		return err
	}
	d.logf("staging the functions as Appwrite builds them...")
	d.archives = map[string]archive{}
	type result struct {
		name string
		a    archive
		err  error
	}
	results := make(chan result, len(functionNames))
	for _, name := range functionNames {
		go func() {
			dir := filepath.Join(d.stageDir, name)
			if err := d.opts.Stage(ctx, d.opts.Root, name, dir); err != nil {
				results <- result{name: name, err: err}
				return
			}
			a, err := pack(dir)
			results <- result{name: name, a: a, err: err}
		}()
	}
	var errs []error
	for range functionNames {
		r := <-results
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		d.archives[r.name] = r.a
	}
	if err := errors.Join(errs...); err != nil {
		os.RemoveAll(d.stageDir)
		return &Refusal{Reason: "staging failed: " + err.Error()}
	}
	return nil
}
