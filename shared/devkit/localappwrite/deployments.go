package localappwrite

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The Functions API that `appwrite push functions` (appwrite-cli 12.0.1, lib/commands/push.js) calls with an
// API key: GET /functions/{id} (functionsGet), PUT /functions/{id} (functionsUpdate), POST
// /functions/{id}/deployments (functionsCreateDeployment, chunked), GET /functions/{id}/deployments/{d}
// (functionsGetDeployment, polled until ready or failed) and GET /proxy/rules (proxyListRules, for the URL it
// prints). `appwrite client --endpoint` checks GET /health/version. The build itself is package builder's (build.go gives it each job).

// deployment is one uploaded deployment (Appwrite's deployments collection).
type deployment struct {
	id, projectID, functionID string
	typ                       string // "cli" (x-sdk-language: cli) or "manual"
	entrypoint, commands      string
	activate                  bool
	status                    string // waiting, processing, building, ready, failed, canceled
	buildLogs                 string
	sourceSize, buildSize     int64
	buildDuration             int
	chunksTotal               int
	received                  map[int]bool
	data                      []byte // the archive while uploading and building; dropped afterwards
	created, updated          time.Time
}

func (d *deployment) chunksUploaded() int { return len(d.received) }

// deploymentModel renders Response/Model/Deployment.php (what SDK v1.0.0 models.Deployment reads).
func deploymentModel(d *deployment) obj {
	return obj{
		{"$id", d.id}, {"$createdAt", formatTime(d.created)}, {"$updatedAt", formatTime(d.updated)},
		{"type", d.typ}, {"resourceId", d.functionID}, {"resourceType", "functions"}, {"entrypoint", d.entrypoint},
		{"sourceSize", d.sourceSize}, {"buildSize", d.buildSize}, {"totalSize", d.sourceSize + d.buildSize},
		{"buildId", d.id}, {"activate", d.activate}, {"screenshotLight", ""}, {"screenshotDark", ""},
		{"status", d.status}, {"buildLogs", d.buildLogs}, {"buildDuration", d.buildDuration},
		{"providerRepositoryName", ""}, {"providerRepositoryOwner", ""}, {"providerRepositoryUrl", ""},
		{"providerCommitHash", ""}, {"providerCommitAuthorUrl", ""}, {"providerCommitAuthor", ""},
		{"providerCommitMessage", ""}, {"providerCommitUrl", ""}, {"providerBranch", ""}, {"providerBranchUrl", ""},
		{"chunksTotal", d.chunksTotal}, {"chunksUploaded", d.chunksUploaded()},
	}
}

// maxDeploymentSize is _APP_COMPUTE_SIZE_LIMIT (30,000,000 bytes).
const maxDeploymentSize = 30000000

var contentRangeRe = regexp.MustCompile(`^bytes (\d+)-(\d+)/(\d+)$`)

// parseContentRange reads "bytes start-end/size" as utopia's Request::getContentRange* do.
func parseContentRange(v string) (start, end, size int64, ok bool) {
	m := contentRangeRe.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return 0, 0, 0, false
	}
	var err error
	if start, err = strconv.ParseInt(m[1], 10, 64); err != nil {
		return 0, 0, 0, false
	}
	if end, err = strconv.ParseInt(m[2], 10, 64); err != nil {
		return 0, 0, 0, false
	}
	if size, err = strconv.ParseInt(m[3], 10, 64); err != nil {
		return 0, 0, 0, false
	}
	return start, end, size, true
}

const deploymentEvent = "functions.[functionId].deployments.[deploymentId]."

// createDeployment copies POST /v1/functions/{functionId}/deployments (Modules/Functions/Http/Deployments/
// Create.php): multipart `code` (a .gz file, at most _APP_COMPUTE_SIZE_LIMIT), `activate` (required; "true"
// or "1" activates), `entrypoint` and `commands` (the function's when omitted; no entrypoint at all is 404
// function_entrypoint_missing). Without content-range the file is the whole archive. With
// `content-range: bytes start-end/size` it is one chunk: a chunk ending at size-1 (or size) is the last one,
// others give chunksTotal = ceil(size/(end+1-start)) and their index start/(end+1-start)+1; x-appwrite-id
// names the deployment the chunk belongs to (the first chunk's answer gives it). Every call answers 202 with
// the deployment; when all chunks are there the deployment is "waiting" and its build is queued, and with
// activate the function's other deployments lose `activate`.
func (s *Server) createDeployment(c *call) (int, any, *APIError) {
	fn := c.pr.functions[c.r.PathValue("functionId")]
	if fn == nil {
		return 0, nil, newErr(ErrFunctionNotFound)
	}
	entrypoint, err := c.str("entrypoint", false, fn.entrypoint, 2048)
	if err != nil {
		return 0, nil, err
	}
	commands, err := c.str("commands", false, fn.commands, 8192)
	if err != nil {
		return 0, nil, err
	}
	if !c.has("activate") {
		return 0, nil, missingParam("activate")
	}
	act, err := c.str("activate", true, "", 0)
	if err != nil {
		return 0, nil, err
	}
	activate := act == "true" || act == "1"
	if entrypoint == "" {
		return 0, nil, newErr(ErrFunctionEntrypointMissing)
	}
	f, ok := c.files["code"]
	if !ok {
		return 0, nil, newErr(ErrFileEmpty, "No file sent")
	}
	if !strings.HasSuffix(strings.ToLower(f.name), ".gz") {
		return 0, nil, newErr(ErrFileTypeUnsupported)
	}

	id := ""
	chunk, chunks := 1, 1
	start, size := int64(0), int64(len(f.data))
	if cr := c.r.Header.Get("content-range"); cr != "" {
		st, end, total, ok := parseContentRange(cr)
		if !ok || end > total || st > end {
			return 0, nil, newErr(ErrInvalidContentRange)
		}
		// Ours: the chunk must hold exactly the bytes its range names (Appwrite would store a corrupt file).
		if int64(len(f.data)) != end-st+1 && !(end == total && int64(len(f.data)) == end-st) {
			return 0, nil, newErr(ErrInvalidContentRange)
		}
		if h := c.r.Header.Get("x-appwrite-id"); h != "" {
			if !validCustomID(h) {
				return 0, nil, newErr(ErrInvalidAppwriteID)
			}
			id = h
		}
		if end == total-1 || end == total {
			chunk, chunks = -1, -1
		} else {
			chunks = int(math.Ceil(float64(total) / float64(end+1-st)))
			chunk = int(st/(end+1-st)) + 1
		}
		start, size = st, total
	}
	if size <= 0 || size > maxDeploymentSize {
		return 0, nil, newErr(ErrFileInvalidSize)
	}
	if id == "" {
		id = s.uniqueID()
	}
	if start+int64(len(f.data)) > size {
		return 0, nil, newErr(ErrInvalidContentRange)
	}

	now := s.now()
	d := fn.deployments[id]
	if d != nil {
		if d.chunksUploaded() >= d.chunksTotal || int64(len(d.data)) != size {
			// Ours: the deployment is complete, or this chunk belongs to a file of another size.
			return 0, nil, newErr(ErrInvalidAppwriteID, "Deployment %s does not expect more chunks of this file.", id)
		}
		chunks = d.chunksTotal
		if chunk == -1 {
			chunk = chunks
		}
	} else {
		if chunk == -1 {
			if start != 0 {
				// The last chunk of an upload whose first chunks never arrived.
				return 0, nil, newErr(ErrInvalidContentRange)
			}
			chunk, chunks = 1, 1
		}
		d = &deployment{
			id: id, projectID: c.pr.id, functionID: fn.id, typ: "manual", entrypoint: entrypoint, commands: commands,
			activate: activate, status: "waiting", chunksTotal: chunks, received: map[int]bool{},
			data: make([]byte, size), created: now,
		}
		if c.r.Header.Get("x-sdk-language") == "cli" {
			d.typ = "cli"
		}
		fn.deployments[id] = d
		fn.deploymentOrder = append(fn.deploymentOrder, id)
	}
	copy(d.data[start:], f.data)
	d.received[chunk] = true
	d.updated = now
	if d.chunksUploaded() == d.chunksTotal {
		d.sourceSize = size
		if d.activate {
			for _, other := range fn.deployments {
				if other != d {
					other.activate = false
				}
			}
		}
		fn.latestDeploymentID = d.id
		s.startBuildLocked(d)
	}
	m := deploymentModel(d)
	c.emit(deploymentEvent+"create", m, param{"functionId", fn.id}, param{"deploymentId", d.id})
	return http.StatusAccepted, m, nil
}

// getDeployment copies GET /v1/functions/{functionId}/deployments/{deploymentId}.
func (s *Server) getDeployment(c *call) (int, any, *APIError) {
	fn := c.pr.functions[c.r.PathValue("functionId")]
	if fn == nil {
		return 0, nil, newErr(ErrFunctionNotFound)
	}
	d := fn.deployments[c.r.PathValue("deploymentId")]
	if d == nil {
		return 0, nil, newErr(ErrDeploymentNotFound)
	}
	return http.StatusOK, deploymentModel(d), nil
}

// listDeployments copies GET /v1/functions/{functionId}/deployments (newest first; no queries).
func (s *Server) listDeployments(c *call) (int, any, *APIError) {
	fn := c.pr.functions[c.r.PathValue("functionId")]
	if fn == nil {
		return 0, nil, newErr(ErrFunctionNotFound)
	}
	out := []obj{}
	for _, id := range slices.Backward(fn.deploymentOrder) {
		out = append(out, deploymentModel(fn.deployments[id]))
	}
	return http.StatusOK, obj{{"total", len(out)}, {"deployments", out}}, nil
}

var specifications = []string{"s-0.5vcpu-512mb", "s-1vcpu-512mb", "s-1vcpu-1gb", "s-2vcpu-2gb", "s-2vcpu-4gb",
	"s-4vcpu-4gb", "s-4vcpu-8gb", "s-8vcpu-4gb", "s-8vcpu-8gb"}

// defaultSpecification is a function's specification when none is given (APP_COMPUTE_SPECIFICATION_DEFAULT).
const defaultSpecification = "s-1vcpu-512mb"

// specification reads one Specification param (app/config/specifications.php).
func (c *call) specification(name, def string) (string, *APIError) {
	spec, err := c.str(name, false, def, 0)
	if err != nil {
		return "", err
	}
	if !slices.Contains(specifications, spec) {
		return "", invalidParam(name, "Specification must be one of: "+strings.Join(specifications, ", "))
	}
	return spec, nil
}

// functionSettings reads the params create and update share (Modules/Functions/Http/Functions/Create.php:82-117,
// Update.php:75-105, 1.9.6), in their order: name (required, at most 128), runtime (create: required; one of
// the runtime catalog, runtimes.go; update: optional, empty keeps the function's), execute (at most 100 roles),
// events (at most 100, each a valid event and none a functions.* event), schedule (cron: Task/Validator/Cron.php;
// run as Appwrite's schedule-functions task runs it, cron.go and RunScheduled), timeout
// (1-900), enabled, logging, entrypoint (update: empty keeps the function's), commands, scopes, the VCS params
// (accepted and ignored), buildSpecification and runtimeSpecification (one of app/config/specifications.php).
// A request in a format below 1.9.0 may send the single "specification" of 1.8, which request filter V21 turns
// into both (Request/Filters/V21.php:113-116); in a newer format it is an undeclared param and dropped.
// Omitted optional params take their defaults, as Appwrite's update does. fn is only written when every param
// is valid. It reports whether a setting a build depends on changed (name, entrypoint, commands, runtime:
// Update.php:244-253, which then stores live false).
func (s *Server) functionSettings(c *call, fn *function, create bool) (rebuild bool, _ *APIError) {
	if c.legacyBefore(1, 9, 0) && c.has("specification") {
		c.params["buildSpecification"], c.params["runtimeSpecification"] = c.params["specification"], c.params["specification"]
	}
	name, err := c.str("name", true, "", 128)
	if err != nil {
		return false, err
	}
	runtime, err := c.str("runtime", create, "", 128)
	if err != nil {
		return false, err
	}
	if (create || runtime != "") && !slices.Contains(knownRuntimes(), runtime) {
		return false, invalidParam("runtime", runtimeDescription())
	}
	if runtime == "" {
		runtime = fn.runtime
	}
	execute, _, err := c.strArray("execute", false, 100, "Value must a valid array no longer than 100 items and Value must be a valid string and at least 1 chars and no longer than 2048 chars")
	if err != nil {
		return false, err
	}
	events, _, err := c.strArray("events", false, 100, "Value must a valid array no longer than 100 items and Event is not valid.")
	if err != nil {
		return false, err
	}
	for _, e := range events {
		// FunctionEvent (Event/Validator/FunctionEvent.php, 1.9.6): no function may be triggered by a
		// functions.* event; ArrayList's description then carries the element validator's message.
		if strings.HasPrefix(e, "functions.") {
			return false, invalidParam("events", "Value must a valid array no longer than 100 items and Triggering a function on a function event is not allowed.")
		}
		if !validEvent(e) {
			return false, invalidParam("events", "Value must a valid array no longer than 100 items and Event is not valid.")
		}
	}
	schedule, err := c.str("schedule", false, "", 0)
	if err != nil {
		return false, err
	}
	if !validCron(schedule, s.now()) {
		return false, invalidParam("schedule", errCron.Error())
	}
	timeout, err := c.integer("timeout", 15)
	if err != nil {
		return false, err
	}
	if timeout < 1 || timeout > 900 {
		return false, invalidParam("timeout", "Value must be a valid range between 1 and 900")
	}
	enabled, err := c.boolean("enabled", true)
	if err != nil {
		return false, err
	}
	logging, err := c.boolean("logging", true)
	if err != nil {
		return false, err
	}
	entrypoint, err := c.str("entrypoint", false, "", 1028)
	if err != nil {
		return false, err
	}
	if entrypoint == "" && !create {
		entrypoint = fn.entrypoint
	}
	commands, err := c.str("commands", false, "", 8192)
	if err != nil {
		return false, err
	}
	scopes, _, err := c.strArray("scopes", false, 0, "Value must a valid array and Value must be one of ("+strings.Join(sortedScopes(), ", ")+")")
	if err != nil {
		return false, err
	}
	for _, sc := range scopes {
		if !slices.Contains(projectScopes, sc) {
			return false, invalidParam("scopes", "Value must a valid array and Value must be one of ("+strings.Join(sortedScopes(), ", ")+")")
		}
	}
	buildSpec, err := c.specification("buildSpecification", defaultSpecification)
	if err != nil {
		return false, err
	}
	runtimeSpec, err := c.specification("runtimeSpecification", defaultSpecification)
	if err != nil {
		return false, err
	}
	rebuild = fn.name != name || fn.entrypoint != entrypoint || fn.commands != commands || fn.runtime != runtime
	fn.name, fn.runtime, fn.execute, fn.events = name, runtime, execute, events
	fn.setScheduleLocked(schedule, s.now())
	fn.timeout, fn.enabled, fn.logging = timeout, enabled, logging
	fn.entrypoint, fn.commands, fn.scopes = entrypoint, commands, scopes
	fn.buildSpec, fn.runtimeSpec = buildSpec, runtimeSpec
	fn.updated = s.now()
	return rebuild, nil
}

// createFunction copies POST /v1/functions (Modules/Functions/Http/Functions/Create.php, 1.9.6): functionId
// (custom id or unique()), then the shared settings; a runtime _APP_FUNCTIONS_RUNTIMES does not list
// (Options.FunctionsRuntimes) is 404 function_runtime_unsupported `Runtime "<id>" is not supported` (:209-213),
// a taken id 409 function_already_exists (:265-266). The function is live, has no deployment, and no domain
// rule: a request format of 1.7.0 or later makes none (:316-395), so a domain is the caller's to create through
// POST /v1/proxy/rules/function (rules.go).
func (s *Server) createFunction(c *call) (int, any, *APIError) {
	id, err := c.customID("functionId")
	if err != nil {
		return 0, nil, err
	}
	now := s.now()
	fn := &function{id: id, created: now, executions: map[string]*execution{}, deployments: map[string]*deployment{},
		secret: fmt.Sprintf("%x", randomBytes(16)), live: true}
	if _, err := s.functionSettings(c, fn, true); err != nil {
		return 0, nil, err
	}
	if !s.runtimeOffered(fn.runtime) {
		return 0, nil, newErr(ErrFunctionRuntimeUnsupported, "Runtime \"%s\" is not supported", fn.runtime)
	}
	if c.pr.functions[id] != nil {
		return 0, nil, newErr(ErrFunctionAlreadyExists)
	}
	c.pr.functions[id] = fn
	m := functionModel(fn, c.legacyBefore(1, 9, 0))
	c.emit("functions.[functionId].create", m, param{"functionId", id})
	return http.StatusCreated, m, nil
}

// updateFunction copies PUT /v1/functions/{functionId} (Modules/Functions/Http/Functions/Update.php, 1.9.6):
// "live" becomes false when the name, entrypoint, commands or runtime change and true otherwise
// (:244-253, :285), whatever it was before.
func (s *Server) updateFunction(c *call) (int, any, *APIError) {
	fn := c.pr.functions[c.r.PathValue("functionId")]
	if fn == nil {
		return 0, nil, newErr(ErrFunctionNotFound)
	}
	next := *fn
	rebuild, err := s.functionSettings(c, &next, false)
	if err != nil {
		return 0, nil, err
	}
	next.live = !rebuild
	*fn = next
	m := functionModel(fn, c.legacyBefore(1, 9, 0))
	c.emit("functions.[functionId].update", m, param{"functionId", fn.id})
	return http.StatusOK, m, nil
}

// serveHealthVersion answers GET /v1/health/version (no authentication), which `appwrite client --endpoint`
// checks.
func (s *Server) serveHealthVersion(w http.ResponseWriter, _ *http.Request) {
	v := s.opts.Version
	if s.opts.ReportedVersion != "" {
		v = s.opts.ReportedVersion
	}
	writeJSON(w, http.StatusOK, map[string]any{"version": v})
}

// DeploymentStatus returns a deployment's status and build logs (for tests and tools).
func (s *Server) DeploymentStatus(projectID, functionID, deploymentID string) (status, buildLogs string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.projects[projectID]
	if pr == nil {
		return "", "", fmt.Errorf("localappwrite: no project %q", projectID)
	}
	fn := pr.functions[functionID]
	if fn == nil {
		return "", "", fmt.Errorf("localappwrite: no function %q", functionID)
	}
	d := fn.deployments[deploymentID]
	if d == nil {
		return "", "", fmt.Errorf("localappwrite: no deployment %q", deploymentID)
	}
	return d.status, d.buildLogs, nil
}

// ActiveDeployment returns the id of the function's active deployment ("" while none was built here).
func (s *Server) ActiveDeployment(projectID, functionID string) (string, error) {
	var id string
	err := s.withFunction(projectID, functionID, func(fn *function) {
		if fn.deployments[fn.deploymentID] != nil {
			id = fn.deploymentID
		}
	})
	return id, err
}

// WaitDeployment waits until the deployment is ready or failed (or ctx ends) and returns its final status.
func (s *Server) WaitDeployment(ctx context.Context, projectID, functionID, deploymentID string) (string, error) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		st, _, err := s.DeploymentStatus(projectID, functionID, deploymentID)
		if err != nil {
			return "", err
		}
		if st == "ready" || st == "failed" || st == "canceled" {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-t.C:
		}
	}
}
