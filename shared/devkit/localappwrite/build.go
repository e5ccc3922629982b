package localappwrite

import (
	"slices"
	"strings"
	"time"

	"appwrite-agent/shared/devkit/localappwrite/builder"
)

// The stand-in's side of a deployment's build (package builder runs it): the job it is given, and what it
// reports, recorded on the deployment and fanned out as Appwrite's builds worker does.

// startBuildLocked queues the build of a fully uploaded deployment. Called with s.mu held.
func (s *Server) startBuildLocked(dep *deployment) {
	pr := s.projects[dep.projectID]
	fn := pr.functions[dep.functionID]
	env := s.functionEnvLocked(pr, fn, dep.id)
	env = append(env, "OPEN_RUNTIMES_ENTRYPOINT="+dep.entrypoint)
	job := builder.Job{Function: dep.projectID + "/" + dep.functionID, Dir: []string{dep.projectID, dep.functionID, dep.id},
		Archive: dep.data, Commands: dep.commands, Env: env, Secret: fn.secret, Activate: dep.activate}
	if !s.deploy.Start(job, buildReport{s: s, pid: dep.projectID, fid: dep.functionID, did: dep.id, secret: fn.secret}) {
		dep.status = "failed"
		dep.buildLogs = "Build canceled: the local Appwrite stand-in is closed."
		dep.data = nil
	}
}

// buildReport records one build's progress on its deployment (builder.Reporter).
type buildReport struct {
	s             *Server
	pid, fid, did string
	secret        string // the runtime's OPEN_RUNTIMES_SECRET, which executions then send
}

// setLocked records a status; a final one drops the archive and sets the duration. Called with s.mu held.
func (b buildReport) setLocked(dep *deployment, status, logs string, final bool, took time.Duration) {
	dep.status = status
	dep.buildLogs = logs
	dep.updated = b.s.now()
	if final {
		dep.buildDuration = int(took.Round(time.Second) / time.Second)
		dep.data = nil
	}
}

// updated fans a status change out to the project's webhooks and event-triggered functions as
// functions.[functionId].deployments.[deploymentId].update with the Deployment model
// (Modules/Functions/Workers/Jobs.php dispatchUpdate, HEAD 0cefd06).
func (b buildReport) updated(m obj) {
	if m != nil {
		b.s.dispatch(pendingEvent{project: b.pid, pattern: deploymentEvent + "update", payload: m,
			params: []param{{"functionId", b.fid}, {"deploymentId", b.did}}})
	}
}

func (b buildReport) Status(status, logs string, final bool, took time.Duration) {
	s := b.s
	s.mu.Lock()
	var m obj
	if dep := s.deploymentLocked(b.pid, b.fid, b.did); dep != nil {
		b.setLocked(dep, status, logs, final, took)
		m = deploymentModel(dep)
	}
	s.mu.Unlock()
	b.updated(m)
}

func (b buildReport) Built(size int64) {
	s := b.s
	s.mu.Lock()
	if dep := s.deploymentLocked(b.pid, b.fid, b.did); dep != nil {
		dep.buildSize = size
	}
	s.mu.Unlock()
}

// Activate makes the deployment ready and, when it is still to be activated, the function's active one in
// the same step: from then on executions and the domain reach the runtime at url.
func (b buildReport) Activate(url, logs string, took time.Duration) bool {
	s := b.s
	s.mu.Lock()
	dep := s.deploymentLocked(b.pid, b.fid, b.did)
	fn := s.projects[b.pid].functions[b.fid]
	stillActive := dep != nil && dep.activate
	if stillActive {
		fn.deploymentID = b.did
		fn.live = true // Workers/Builds.php:969-977 (1.9.6): the activation stores live true
		fn.url = url
		fn.secret = b.secret
		fn.updated = s.now()
	}
	var m obj
	if dep != nil {
		b.setLocked(dep, "ready", logs, true, took)
		m = deploymentModel(dep)
	}
	s.mu.Unlock()
	b.updated(m)
	return stillActive
}

func (s *Server) deploymentLocked(pid, fid, did string) *deployment {
	pr := s.projects[pid]
	if pr == nil || pr.functions[fid] == nil {
		return nil
	}
	return pr.functions[fid].deployments[did]
}

// functionEnvLocked is the environment of a function's build and runtime (Appwrite 1.9 `Executions/Create.php`,
// `Workers/Functions.php`; docs/local-appwrite.md): Options.RuntimeEnv (stand-in only), its variables, then
// Appwrite's APPWRITE_FUNCTION_* variables, which win.
func (s *Server) functionEnvLocked(pr *project, fn *function, deploymentID string) []string {
	vars := slices.Clone(fn.vars)
	slices.SortFunc(vars, func(a, b *variable) int { return strings.Compare(a.key, b.key) })
	env := make([]string, 0, len(vars)+len(s.opts.RuntimeEnv)+12)
	env = append(env, s.opts.RuntimeEnv...)
	for _, v := range vars {
		env = append(env, v.key+"="+v.value)
	}
	cpus, memory := "1", "512"
	switch fn.runtimeSpec {
	case "s-0.5vcpu-512mb":
		cpus = "0.5"
	case "s-1vcpu-1gb":
		memory = "1024"
	}
	version := strings.TrimPrefix(fn.runtime, "go-")
	return append(env,
		"APPWRITE_FUNCTION_API_ENDPOINT="+s.endpointLocked(),
		"APPWRITE_FUNCTION_ID="+fn.id,
		"APPWRITE_FUNCTION_NAME="+fn.name,
		"APPWRITE_FUNCTION_DEPLOYMENT="+deploymentID,
		"APPWRITE_FUNCTION_PROJECT_ID="+pr.id,
		"APPWRITE_FUNCTION_RUNTIME_NAME=Go",
		"APPWRITE_FUNCTION_RUNTIME_VERSION="+version,
		"APPWRITE_FUNCTION_CPUS="+cpus,
		"APPWRITE_FUNCTION_MEMORY="+memory,
		"APPWRITE_VERSION="+s.opts.Version,
		"APPWRITE_REGION=default",
		"APPWRITE_DEPLOYMENT_TYPE=manual",
	)
}
