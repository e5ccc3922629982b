package localappwrite

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

type function struct {
	id, name, runtime string
	enabled           bool
	events            []string
	scopes            []string
	execute           []string
	timeout           int
	url               string
	secret            string
	fail              bool
	deploymentID      string
	created, updated  time.Time
	executions        map[string]*execution

	// Settings the Functions API updates (PUT /functions/{id}) and deployments use.
	entrypoint, commands string
	schedule             string
	// cron is the parsed schedule (nil without one) and nextRun its next occurrence, when RunScheduled
	// starts the function's scheduled execution.
	cron    *cronSchedule
	nextRun time.Time
	// buildSpec and runtimeSpec are buildSpecification and runtimeSpecification (1.9; the single
	// specification of older request formats sets both).
	buildSpec, runtimeSpec string
	logging                bool
	// vars are the function's variables (variables.go), in creation order.
	vars []*variable
	// live is the model's "live": false once a variable or a setting a build depends on changed, true again
	// when a deployment is activated by its build (Response/Model/Func.php; variables.go, build.go).
	live bool
	// seeded marks a function registered with RegisterFunction (the admin API): it plays a function made in
	// the Console, whose domain rule Appwrite made, so GET /v1/proxy/rules derives a rule for it (rules.go).
	seeded bool
	// Deployments uploaded through the API (deployments.go), in upload order; latestDeploymentID is the
	// newest complete one.
	deployments        map[string]*deployment
	deploymentOrder    []string
	latestDeploymentID string
}

type header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type execution struct {
	id, functionID, deploymentID string
	trigger, status              string
	method, path                 string
	requestHeaders               []header
	responseStatusCode           int
	responseBody                 string
	responseHeaders              []header
	logs, errors                 string
	duration                     float64
	created, updated             time.Time
	// scheduledAt and scheduled belong to a delayed execution: the request it will run with, kept until
	// RunScheduled (or the server's minute ticker) starts it.
	scheduledAt time.Time
	scheduled   *scheduledRequest
}

// scheduledRequest is what a delayed execution runs with.
type scheduledRequest struct {
	body    []byte
	headers http.Header
	userID  string
	// clientIP is the creator's address: Appwrite sets x-appwrite-client-ip when the execution is created
	// (Executions/Create.php:240-241) and stores it with the schedule's headers.
	clientIP string
}

// FunctionSpec describes a function to register. The function runs elsewhere as an HTTP server speaking the
// open-runtimes contract (shared/devkit/localruntime); URL is where the stand-in sends executions.
type FunctionSpec struct {
	// ID is the function id; Name defaults to it; Runtime defaults to "go-1.26".
	ID      string `json:"functionId"`
	Name    string `json:"name"`
	Runtime string `json:"runtime"`
	// Events trigger the function (Appwrite event patterns).
	Events []string `json:"events"`
	// Scopes are given to the dynamic key of each execution.
	Scopes []string `json:"scopes"`
	// Execute are the roles that may execute the function. Its domain serves it only when they include "any" or
	// "guests" (as Appwrite's router); nil means none, as on Appwrite.
	Execute []string `json:"execute"`
	// Timeout is in seconds (15 when 0).
	Timeout int `json:"timeout"`
	// URL is the runtime's base URL.
	URL string `json:"url"`
	// Secret is sent as x-open-runtimes-secret; random when empty.
	Secret string `json:"secret"`
	// Fail makes every execution fail (status "failed", response 500) without calling the runtime.
	Fail bool `json:"fail"`
	// Disabled registers the function disabled (never triggered by events).
	Disabled bool `json:"disabled"`
	// Entrypoint and Commands are the function's build settings ("main.go" and "" when empty); deployments
	// use them when they name none.
	Entrypoint string `json:"entrypoint"`
	Commands   string `json:"commands"`
	// Specification is the function's size ("s-1vcpu-512mb" when empty).
	Specification string `json:"specification"`
	// Variables are the function's environment variables, given to its deployments' builds and runtimes.
	Variables map[string]string `json:"variables"`
	// Schedule is a cron expression (appwrite.json's "schedule"): the function runs at each occurrence, on the
	// server's clock, as Appwrite's schedule worker runs it (RunScheduled). Empty: never.
	Schedule string `json:"schedule"`
}

// RegisterFunction creates or replaces a function.
func (s *Server) RegisterFunction(projectID string, spec FunctionSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr, err := s.seedProjectLocked(projectID, "function", spec.ID)
	if err != nil {
		return err
	}
	for _, e := range spec.Events {
		if !validEvent(e) {
			return fmt.Errorf("localappwrite: invalid event %q", e)
		}
	}
	now := s.now()
	if !validCron(spec.Schedule, now) {
		return fmt.Errorf("localappwrite: invalid schedule %q: %v", spec.Schedule, errCron)
	}
	fn := pr.functions[spec.ID]
	if fn == nil {
		fn = &function{id: spec.ID, created: now, executions: map[string]*execution{}, deploymentID: s.uniqueID(),
			deployments: map[string]*deployment{}}
		pr.functions[spec.ID] = fn
	}
	fn.seeded, fn.live = true, true
	fn.entrypoint = orDefault(spec.Entrypoint, "main.go")
	fn.commands = spec.Commands
	fn.buildSpec = orDefault(spec.Specification, defaultSpecification)
	fn.runtimeSpec = fn.buildSpec
	fn.logging = true
	fn.vars = nil
	keys := make([]string, 0, len(spec.Variables))
	for k := range spec.Variables {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fn.vars = append(fn.vars, &variable{id: s.uniqueID(), key: k, value: spec.Variables[k], created: now, updated: now})
	}
	fn.name = orDefault(spec.Name, spec.ID)
	fn.runtime = orDefault(spec.Runtime, "go-1.26")
	fn.enabled = !spec.Disabled
	fn.events = slices.Clone(spec.Events)
	fn.scopes = slices.Clone(spec.Scopes)
	fn.execute = slices.Clone(spec.Execute)
	fn.timeout = spec.Timeout
	if fn.timeout <= 0 {
		fn.timeout = 15
	}
	fn.url = strings.TrimRight(spec.URL, "/")
	fn.secret = spec.Secret
	if fn.secret == "" {
		fn.secret = fmt.Sprintf("%x", randomBytes(16))
	}
	fn.fail = spec.Fail
	fn.setScheduleLocked(spec.Schedule, now)
	fn.updated = now
	return nil
}

// setScheduleLocked sets the function's cron schedule (a valid one, or "") and its next run after now, as
// Appwrite's schedule-functions task computes it when it loads a changed schedule.
func (fn *function) setScheduleLocked(schedule string, now time.Time) {
	if schedule == fn.schedule && (fn.cron != nil) == (schedule != "") {
		return // unchanged: the next run stays
	}
	fn.schedule, fn.cron, fn.nextRun = schedule, nil, time.Time{}
	if c, err := parseCron(schedule); schedule != "" && err == nil {
		fn.cron, fn.nextRun = c, c.next(now)
	}
}

// SetFunctionURL points a registered function at a runtime URL.
func (s *Server) SetFunctionURL(projectID, functionID, url string) error {
	return s.withFunction(projectID, functionID, func(fn *function) { fn.url = strings.TrimRight(url, "/") })
}

// SetFunctionFailing makes every execution of the function fail (or stops doing so).
func (s *Server) SetFunctionFailing(projectID, functionID string, fail bool) error {
	return s.withFunction(projectID, functionID, func(fn *function) { fn.fail = fail })
}

func (s *Server) withFunction(projectID, functionID string, f func(*function)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.projects[projectID]
	if pr == nil {
		return fmt.Errorf("localappwrite: no project %q", projectID)
	}
	fn := pr.functions[functionID]
	if fn == nil {
		return fmt.Errorf("localappwrite: no function %q", functionID)
	}
	f(fn)
	return nil
}

// functionModel renders Response/Model/Func.php (1.9.6). A function registered with RegisterFunction with a
// URL and never deployed through the API reports its registration as a ready deployment. legacy (a request
// format below 1.9.0) adds "specification", as response filter V21 does (Response/Filters/V21.php:85-90).
func functionModel(fn *function, legacy bool) obj {
	activeID, depCreated := "", ""
	if d := fn.deployments[fn.deploymentID]; d != nil {
		activeID, depCreated = d.id, formatTime(d.created)
	} else if fn.seeded {
		activeID, depCreated = fn.deploymentID, formatTime(fn.created)
	}
	latestID, latestCreated, latestStatus := "", "", ""
	if d := fn.deployments[fn.latestDeploymentID]; d != nil {
		latestID, latestCreated, latestStatus = d.id, formatTime(d.created), d.status
	} else if fn.seeded {
		latestID, latestCreated, latestStatus = activeID, depCreated, "ready"
	}
	vars := []obj{}
	for _, v := range fn.vars {
		vars = append(vars, variableModel(fn, v))
	}
	m := obj{
		{"$id", fn.id}, {"$createdAt", formatTime(fn.created)}, {"$updatedAt", formatTime(fn.updated)},
		{"execute", nonNil(fn.execute)}, {"name", fn.name}, {"enabled", fn.enabled}, {"live", fn.live},
		{"logging", fn.logging}, {"runtime", fn.runtime}, {"deploymentRetention", 0}, {"deploymentId", activeID},
		{"deploymentCreatedAt", depCreated}, {"latestDeploymentId", latestID},
		{"latestDeploymentCreatedAt", latestCreated}, {"latestDeploymentStatus", latestStatus},
		{"scopes", nonNil(fn.scopes)}, {"vars", vars}, {"events", nonNil(fn.events)}, {"schedule", fn.schedule},
		{"timeout", fn.timeout}, {"entrypoint", fn.entrypoint}, {"commands", fn.commands}, {"version", "v5"},
		{"installationId", ""}, {"providerRepositoryId", ""}, {"providerBranch", ""},
		{"providerRootDirectory", ""}, {"providerSilentMode", false}, {"providerBranches", []string{}},
		{"providerPaths", []string{}}, {"buildSpecification", fn.buildSpec}, {"runtimeSpecification", fn.runtimeSpec},
	}
	if legacy {
		m = append(m, kv{"specification", fn.buildSpec})
	}
	return m
}

// executionModel renders Response/Model/Execution.php; functionId (SDK v1.0.0) and resourceId/resourceType
// (newer Appwrite) are both present.
func executionModel(ex *execution) obj {
	return obj{
		{"$id", ex.id}, {"$createdAt", formatTime(ex.created)}, {"$updatedAt", formatTime(ex.updated)},
		{"$permissions", []string{}}, {"functionId", ex.functionID}, {"resourceId", ex.functionID},
		{"resourceType", "functions"}, {"deploymentId", ex.deploymentID}, {"trigger", ex.trigger},
		{"status", ex.status}, {"requestMethod", ex.method}, {"requestPath", ex.path},
		{"requestHeaders", nonNilHeaders(ex.requestHeaders)}, {"responseStatusCode", ex.responseStatusCode},
		{"responseBody", ex.responseBody}, {"responseHeaders", nonNilHeaders(ex.responseHeaders)},
		{"logs", ex.logs}, {"errors", ex.errors}, {"duration", ex.duration}, {"scheduledAt", formatOptionalTime(ex.scheduledAt)},
	}
}

func nonNilHeaders(h []header) []header {
	if h == nil {
		return []header{}
	}
	return h
}

func (s *Server) getFunction(c *call) (int, any, *APIError) {
	fn := c.pr.functions[c.r.PathValue("functionId")]
	if fn == nil {
		return 0, nil, newErr(ErrFunctionNotFound)
	}
	return http.StatusOK, functionModel(fn, c.legacyBefore(1, 9, 0)), nil
}

func (s *Server) getExecution(c *call) (int, any, *APIError) {
	fn := c.pr.functions[c.r.PathValue("functionId")]
	if fn == nil {
		return 0, nil, newErr(ErrFunctionNotFound)
	}
	ex := fn.executions[c.r.PathValue("executionId")]
	if ex == nil {
		return 0, nil, newErr(ErrExecutionNotFound)
	}
	return http.StatusOK, executionModel(ex), nil
}

// runRequest is everything a runtime call needs, captured under the lock.
type runRequest struct {
	projectID, functionID string
	url, secret           string
	fail                  bool
	timeout               time.Duration
	method, path          string
	body                  []byte
	headers               http.Header
}

type runResult struct {
	status   int
	body     string
	headers  []header
	errors   string
	duration float64
	timedOut bool
}

const executionEvent = "functions.[functionId].executions.[executionId]."

var allowedMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"}

// createExecution copies POST /v1/functions/{id}/executions (Modules/Functions/Http/Executions/Create.php,
// 1.9.6), in Appwrite's order: the declared params (body Text(10485760, 0), async Boolean, path Text(2048),
// method WhiteList, headers an object or a JSON string, scheduledAt Nullable Text(100)), then scheduledAt
// without async (general_bad_request), then scheduledAt itself (:139-148), then the Headers validator
// (:150-158), and only then the function lookup (:160-167). Sync executions are limited to 30 s
// (function_synchronous_timeout, 408); async ones answer 202 with status "waiting".
func (s *Server) createExecution(c *call) (int, any, *APIError) {
	body, err := c.str("body", false, "", 10485760)
	if err != nil {
		return 0, nil, err
	}
	async, err := c.boolean("async", false)
	if err != nil {
		return 0, nil, err
	}
	path, err := c.str("path", false, "/", 2048)
	if err != nil {
		return 0, nil, err
	}
	method, err := c.str("method", false, "POST", 0)
	if err != nil {
		return 0, nil, err
	}
	if !slices.Contains(allowedMethods, method) {
		return 0, nil, invalidParam("method", "Value must be one of (GET, POST, PUT, PATCH, DELETE, OPTIONS, HEAD)")
	}
	hdrs, herr := c.executionHeaders()
	if herr != nil {
		return 0, nil, herr
	}
	scheduledAt, err := c.str("scheduledAt", false, "", 100)
	if err != nil {
		return 0, nil, err
	}
	scheduled := c.has("scheduledAt")
	if scheduled && !async {
		return 0, nil, newErr(ErrGeneralBadRequest, "Scheduled executions must run asynchronously. Set scheduledAt to a future date, or set async to true.")
	}
	var at time.Time
	if scheduled {
		var ok bool
		if at, ok = s.validSchedule(scheduledAt); !ok {
			return 0, nil, newErr(ErrGeneralBadRequest, "Execution schedule must be a valid date, and at least 1 minute from now")
		}
	}
	reqHeaders, herr := validExecutionHeaders(hdrs)
	if herr != nil {
		return 0, nil, herr
	}
	fn := c.pr.functions[c.r.PathValue("functionId")]
	if fn == nil {
		return 0, nil, newErr(ErrFunctionNotFound)
	}
	if scheduled {
		return s.scheduleExecution(c, fn, at, method, path, []byte(body), reqHeaders)
	}

	ex := s.newExecutionLocked(fn, "http", method, path, reqHeaders)
	timeout := time.Duration(fn.timeout) * time.Second
	if limit := s.syncLimitLocked(); !async && timeout > limit {
		timeout = limit
	}
	rr, kerr := s.runRequestLocked(c.pr, fn, ex, timeout, []byte(body), reqHeaders)
	if kerr != nil {
		return 0, nil, newErr(ErrGeneralServerError, "%s", kerr.Error())
	}
	rr.headers.Set("x-appwrite-trigger", "http")
	rr.headers.Set("x-appwrite-user-id", c.who.userID)
	rr.headers.Set("x-appwrite-client-ip", clientIP(c.r))
	params := []param{{"functionId", fn.id}, {"executionId", ex.id}}

	if async {
		ex.status = "waiting"
		m := executionModel(ex)
		c.emit(executionEvent+"create", m, params...)
		pid, uid := c.pr.id, c.who.userID
		s.q.enqueue(func(ctx context.Context) {
			res := s.callRuntime(ctx, rr)
			s.finishExecution(pid, fn.id, ex.id, res, false, uid)
		})
		return http.StatusAccepted, m, nil
	}

	// The runtime call happens after the lock is released (the function may call back into the API).
	pid, uid := c.pr.id, c.who.userID
	c.after = func(c *call) (int, any, *APIError) {
		res := s.callRuntime(c.r.Context(), rr)
		if res.timedOut {
			s.finishExecution(pid, fn.id, ex.id, res, true, "")
			return 0, nil, newErr(ErrFunctionSyncTimeout)
		}
		m := s.finishExecution(pid, fn.id, ex.id, res, true, "")
		c.pending = append(c.pending, pendingEvent{project: pid, pattern: executionEvent + "create", params: params, payload: m, userID: uid})
		return http.StatusCreated, m, nil
	}
	return 0, nil, nil
}

func clientIP(r *http.Request) string {
	host := r.RemoteAddr
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	return strings.Trim(host, "[]")
}

func (s *Server) newExecutionLocked(fn *function, trigger, method, path string, reqHeaders http.Header) *execution {
	now := s.now()
	ex := &execution{
		id: s.uniqueID(), functionID: fn.id, deploymentID: fn.deploymentID, trigger: trigger, status: "processing",
		method: method, path: path, created: now, updated: now,
	}
	// Stored request headers: Appwrite keeps an allow-list (content-type, agent, content-length, host).
	for _, k := range []string{"content-type", "agent", "content-length", "host"} {
		if v := reqHeaders.Get(k); v != "" {
			ex.requestHeaders = append(ex.requestHeaders, header{k, v})
		}
	}
	fn.executions[ex.id] = ex
	return ex
}

// runRequestLocked prepares the executor's request (open-runtimes/executor executeV5 + Appwrite's headers,
// open-runtimes `runtimes/go/versions/latest/src/main.go`; docs/local-runtime.md, docs/local-appwrite.md): x-open-runtimes-secret/-timeout/-logging/-log-id, Basic opr:<secret>,
// x-appwrite-key (a dynamic key with the function's scopes, valid for timeout + 60 s), execution id and the
// geo headers.
func (s *Server) runRequestLocked(pr *project, fn *function, ex *execution, timeout time.Duration, body []byte, user http.Header) (runRequest, error) {
	key, err := s.DynamicKey(pr.id, fn.scopes, time.Duration(fn.timeout)*time.Second+60*time.Second)
	if err != nil {
		return runRequest{}, err
	}
	h := user.Clone()
	secs := int(timeout / time.Second)
	if secs < 1 {
		secs = 1
	}
	h.Set("x-open-runtimes-secret", fn.secret)
	h.Set("x-open-runtimes-timeout", strconv.Itoa(secs))
	h.Set("x-open-runtimes-logging", "enabled")
	h.Set("x-open-runtimes-log-id", ex.id)
	if h.Get("authorization") == "" {
		h.Set("authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("opr:"+fn.secret)))
	}
	h.Set("x-appwrite-key", key)
	h.Set("x-appwrite-execution-id", ex.id)
	h.Set("x-appwrite-user-jwt", "")
	h.Set("x-appwrite-country-code", "")
	h.Set("x-appwrite-continent-code", "")
	h.Set("x-appwrite-continent-eu", "false")
	return runRequest{
		projectID: pr.id, functionID: fn.id, url: fn.url, secret: fn.secret, fail: fn.fail, timeout: timeout,
		method: ex.method, path: ex.path, body: body, headers: h,
	}, nil
}

// queueEventExecutionLocked queues an event-triggered execution (Workers/Functions.php): POST "/", body = the
// event payload JSON, x-appwrite-trigger: event, x-appwrite-event: the first (fully concrete) event,
// x-appwrite-user-id: the acting user, user-agent Appwrite/<version>.
func (s *Server) queueEventExecutionLocked(pr *project, fn *function, events []string, payload []byte, userID string) {
	h := http.Header{}
	h.Set("content-type", "application/json")
	h.Set("user-agent", "Appwrite/"+s.opts.Version)
	ex := s.newExecutionLocked(fn, "event", http.MethodPost, "/", h)
	ex.status = "waiting"
	rr, err := s.runRequestLocked(pr, fn, ex, time.Duration(fn.timeout)*time.Second, payload, h)
	if err != nil {
		s.opts.Logf("localappwrite: event execution: %v", err)
		return
	}
	rr.headers.Set("x-appwrite-trigger", "event")
	rr.headers.Set("x-appwrite-event", events[0])
	rr.headers.Set("x-appwrite-user-id", userID)
	pid, fid, eid := pr.id, fn.id, ex.id
	s.q.enqueue(func(ctx context.Context) {
		res := s.callRuntime(ctx, rr)
		s.finishExecution(pid, fid, eid, res, false, userID)
	})
}

// callRuntime sends the execution to the runtime. A function marked failing, or without a URL, fails
// without a call; a status >= 500 fails the execution (Appwrite: failed when the function returns >= 500).
func (s *Server) callRuntime(ctx context.Context, rr runRequest) runResult {
	start := s.now()
	done := func(r runResult) runResult {
		r.duration = s.now().Sub(start).Seconds()
		return r
	}
	if rr.fail {
		return done(runResult{status: 500, errors: "Execution failed (forced by the local Appwrite stand-in)."})
	}
	if rr.url == "" {
		return done(runResult{status: 500, errors: "The function has no runtime URL registered with the local Appwrite stand-in."})
	}
	ctx, cancel := context.WithTimeout(ctx, rr.timeout+5*time.Second) // the executor's curl timeout is timeout+5
	defer cancel()
	path := rr.path
	if !strings.HasPrefix(path, "/") {
		// Appwrite takes any Text(2048) path; the executor's request needs a leading slash.
		path = "/" + path
	}
	req, err := http.NewRequestWithContext(ctx, rr.method, rr.url+path, strings.NewReader(string(rr.body)))
	if err != nil {
		return done(runResult{status: 500, errors: err.Error()})
	}
	req.Header = rr.headers
	resp, err := s.opts.FunctionClient.Do(req)
	if err != nil {
		r := runResult{status: 500, errors: "Runtime request failed: " + err.Error()}
		if errors.Is(err, context.DeadlineExceeded) {
			r.timedOut, r.errors = true, "Execution timed out."
		}
		return done(r)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 22<<20))
	r := runResult{status: resp.StatusCode, body: string(b)}
	for k, vs := range resp.Header {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-open-runtimes-") {
			continue
		}
		r.headers = append(r.headers, header{lk, vs[0]})
	}
	slices.SortFunc(r.headers, func(a, b header) int { return strings.Compare(a.Name, b.Name) })
	return done(r)
}

// finishExecution stores the result and, for async/event executions, dispatches the execution's update event.
// Stored (async) executions keep only content-type and content-length response headers.
func (s *Server) finishExecution(projectID, functionID, executionID string, res runResult, sync bool, userID string) obj {
	s.mu.Lock()
	pr := s.projects[projectID]
	var ex *execution
	if pr != nil && pr.functions[functionID] != nil {
		ex = pr.functions[functionID].executions[executionID]
	}
	if ex == nil {
		s.mu.Unlock()
		return nil
	}
	ex.responseStatusCode = res.status
	ex.responseBody = res.body
	ex.errors = res.errors
	ex.duration = res.duration
	ex.updated = s.now()
	ex.responseHeaders = nil
	for _, h := range res.headers {
		if sync || h.Name == "content-type" || h.Name == "content-length" {
			ex.responseHeaders = append(ex.responseHeaders, h)
		}
	}
	if res.status >= 500 || res.timedOut {
		ex.status = "failed"
	} else {
		ex.status = "completed"
	}
	if !sync {
		// Stored executions do not keep the response body.
		ex.responseBody = ""
	}
	m := executionModel(ex)
	s.mu.Unlock()
	if !sync {
		s.dispatch(pendingEvent{project: projectID, pattern: executionEvent + "update", payload: m, userID: userID,
			params: []param{{"functionId", functionID}, {"executionId", executionID}}})
	}
	return m
}

// validSchedule copies the scheduledAt check (Executions/Create.php:143-148): utopia-php/database's
// DatetimeValidator with requireDateInFuture, PRECISION_MINUTES and a 60 s offset: a date strictly more than
// 60 s ahead, whose seconds and milliseconds are 0, with a year of at most 9999.
func (s *Server) validSchedule(raw string) (time.Time, bool) {
	at, err := parseISOTime(raw)
	if err != nil || at.Year() > 9999 || at.Second() != 0 || at.Nanosecond() != 0 {
		return time.Time{}, false
	}
	return at, at.After(s.now().Add(60 * time.Second))
}

// headersDescription is Functions/Validator/Headers.php getDescription (maxKeys 100, maxSize 16384).
const headersDescription = `Invalid headers: Alphanumeric characters or hyphens only, cannot start with "x-appwrite", maximum 100 keys, and total size 16384.`

// executionHeaders reads the headers param: AnyOf([Assoc, Text(65535)]), a JSON string being decoded after
// (Executions/Create.php:89,150-152).
func (c *call) executionHeaders() (map[string]any, *APIError) {
	v, ok := c.params["headers"]
	if !ok || v == nil {
		return nil, nil
	}
	switch t := v.(type) {
	case map[string]any:
		return t, nil
	case []any:
		if len(t) == 0 {
			return nil, nil
		}
	case string:
		if len([]rune(t)) > 65535 {
			break
		}
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(t))
		dec.UseNumber()
		if dec.Decode(&m) != nil {
			return nil, headersError() // json_decode gives null, which the Headers validator refuses unless empty
		}
		return m, nil
	}
	return nil, invalidParam("headers", "Value must be a valid object.")
}

// headersError is what Appwrite answers for headers its validator refuses: it throws
// new Exception($validator->getDescription(), 400) (Executions/Create.php:156-158, unchanged at HEAD), so the
// description becomes the error *type*, the status is 400, and the message is null (no errors.php entry).
func headersError() *APIError {
	return &APIError{Code: 400, Type: headersDescription, nullMessage: true}
}

// validExecutionHeaders copies Functions/Validator/Headers.php: at most 100 keys; keys non-empty, alphanumeric
// first and last character, alphanumeric or "-" between, not starting with "x-appwrite-" (case-sensitive, as
// str_starts_with); the running total of key and value lengths below 16384.
func validExecutionHeaders(hdrs map[string]any) (http.Header, *APIError) {
	out := http.Header{}
	if len(hdrs) == 0 {
		return out, nil
	}
	if len(hdrs) > 100 {
		return nil, headersError()
	}
	alnum := func(b byte) bool { return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
	size := 0
	keys := make([]string, 0, len(hdrs))
	for k := range hdrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var val string
		switch v := hdrs[k].(type) {
		case string:
			val = v
		case json.Number:
			val = v.String()
		case bool:
			if v {
				val = "1"
			}
		default:
			return nil, headersError()
		}
		n := len(k)
		if n == 0 {
			return nil, headersError()
		}
		if size += n + len(val); size >= 16384 {
			return nil, headersError()
		}
		if !alnum(k[0]) || !alnum(k[n-1]) {
			return nil, headersError()
		}
		for i := 1; i < n-1; i++ {
			if !alnum(k[i]) && k[i] != '-' {
				return nil, headersError()
			}
		}
		if strings.HasPrefix(k, "x-appwrite-") {
			return nil, headersError()
		}
		out.Set(k, val)
	}
	return out, nil
}

// scheduleExecution queues a delayed execution, answered 202 with status "scheduled"; Appwrite's schedule
// worker starts it at that minute. Here the server's ticker starts due executions (see RunScheduled), with a
// dynamic key made when it runs.
func (s *Server) scheduleExecution(c *call, fn *function, at time.Time, method, path string, body []byte, h http.Header) (int, any, *APIError) {
	ex := s.newExecutionLocked(fn, "schedule", method, path, h)
	ex.status = "scheduled"
	ex.scheduledAt = at.UTC()
	ex.scheduled = &scheduledRequest{body: body, headers: h.Clone(), userID: c.who.userID, clientIP: clientIP(c.r)}
	m := executionModel(ex)
	c.emit(executionEvent+"create", m, param{"functionId", fn.id}, param{"executionId", ex.id})
	return http.StatusAccepted, m, nil
}

func parseISOTime(raw string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000-07:00", "2006-01-02T15:04:05-07:00", "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, raw); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not an ISO 8601 date: %q", raw)
}

func formatOptionalTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return formatTime(t)
}

// RunScheduled starts every delayed execution due at or before until, and one scheduled execution of each
// function whose cron schedule has an occurrence due by until and by the server's clock (the server's ticker
// calls it each second with the current time; tests call it with a later time to start delayed executions
// without waiting, or after moving the clock to run a schedule), and returns how many it started. They run on
// the queue: Flush waits for them.
//
// A function's schedule runs as Appwrite's schedule-functions task and functions worker run it
// (Tasks/ScheduleFunctions.php, Workers/Functions.php 1.9.6): one execution per occurrence, none for
// occurrences missed meanwhile (the next run is computed from until), POST "/" with no body and no request
// headers, trigger "schedule", no user (x-appwrite-user-id and x-appwrite-user-jwt empty) and the function's
// dynamic key. Unlike a delayed execution made through the Executions API (also trigger "schedule"), it
// carries no x-appwrite-client-ip: the API sets that header when the execution is created
// (Executions/Create.php:240-241) and the worker keeps it.
func (s *Server) RunScheduled(until time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, pr := range s.projects {
		for _, fn := range pr.functions {
			// A schedule runs by the server's clock: until may lie far ahead (to start every delayed execution
			// at once) without running a schedule whose time has not come.
			if due := earliest(until, s.now()); fn.cron != nil && !fn.nextRun.IsZero() && !fn.nextRun.After(due) {
				fn.nextRun = fn.cron.next(due)
				if s.startScheduleLocked(pr, fn) {
					n++
				}
			}
			for _, ex := range fn.executions {
				if ex.scheduled == nil || ex.scheduledAt.After(until) {
					continue
				}
				req := ex.scheduled
				ex.scheduled = nil
				ex.status = "processing"
				rr, err := s.runRequestLocked(pr, fn, ex, time.Duration(fn.timeout)*time.Second, req.body, req.headers)
				if err != nil {
					s.opts.Logf("localappwrite: scheduled execution %s: %v", ex.id, err)
					continue
				}
				rr.headers.Set("x-appwrite-trigger", "schedule")
				rr.headers.Set("x-appwrite-user-id", req.userID)
				rr.headers.Set("x-appwrite-client-ip", req.clientIP)
				pid, fid, eid, uid := pr.id, fn.id, ex.id, req.userID
				s.q.enqueue(func(ctx context.Context) {
					res := s.callRuntime(ctx, rr)
					s.finishExecution(pid, fid, eid, res, false, uid)
				})
				n++
			}
		}
	}
	return n
}

// startScheduleLocked queues one scheduled execution of fn (see RunScheduled) and reports whether it did.
func (s *Server) startScheduleLocked(pr *project, fn *function) bool {
	ex := s.newExecutionLocked(fn, "schedule", http.MethodPost, "/", http.Header{})
	ex.status = "waiting"
	rr, err := s.runRequestLocked(pr, fn, ex, time.Duration(fn.timeout)*time.Second, nil, http.Header{})
	if err != nil {
		s.opts.Logf("localappwrite: schedule of function %s: %v", fn.id, err)
		return false
	}
	rr.headers.Set("x-appwrite-trigger", "schedule")
	rr.headers.Set("x-appwrite-event", "")
	rr.headers.Set("x-appwrite-user-id", "")
	pid, fid, eid := pr.id, fn.id, ex.id
	s.q.enqueue(func(ctx context.Context) {
		res := s.callRuntime(ctx, rr)
		s.finishExecution(pid, fid, eid, res, false, "")
	})
	return true
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// ExecutionSummary is what tests read of an execution.
type ExecutionSummary struct {
	// ID, Trigger ("http", "event", "schedule") and Status ("waiting", "processing", "completed", "failed")
	// are the execution's.
	ID, Trigger, Status string
}

// Executions lists the executions of a function (any order).
func (s *Server) Executions(projectID, functionID string) []ExecutionSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.projects[projectID]
	if pr == nil || pr.functions[functionID] == nil {
		return nil
	}
	var out []ExecutionSummary
	for _, ex := range pr.functions[functionID].executions {
		out = append(out, ExecutionSummary{ID: ex.id, Trigger: ex.trigger, Status: ex.status})
	}
	return out
}
