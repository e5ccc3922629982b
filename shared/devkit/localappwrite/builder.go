package localappwrite

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/runtimebuild"
)

// deployer builds deployments and runs the runtime process of each function's active deployment. It belongs
// to the Server: its goroutines and processes end in close (called by Server.Close).
type deployer struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	sem    chan struct{} // bounds concurrent builds

	mu     sync.Mutex
	root   string                  // temp folder of every deployment's files (created on first use)
	procs  map[string]*runtimeProc // by project + "/" + function: the active deployment's process
	closed bool
}

// runtimeProc is a running runtime server (the built binary) of one deployment.
type runtimeProc struct {
	url  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited and its output is drained
	out  *lockedBuffer
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers and readers, capped at max bytes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// maxBuildLogs caps a deployment's buildLogs (Appwrite keeps the tail of long logs; here the head).
const maxBuildLogs = 1 << 20

// runtimeStartTimeout is how long a runtime server gets to print localruntime.StartedLine.
const runtimeStartTimeout = 30 * time.Second

func newDeployer(concurrency int) *deployer {
	ctx, cancel := context.WithCancel(context.Background())
	return &deployer{ctx: ctx, cancel: cancel, sem: make(chan struct{}, concurrency), procs: map[string]*runtimeProc{}}
}

// dir returns (creating it on first use) the folder of one deployment.
func (d *deployer) dir(parts ...string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return "", errors.New("the local Appwrite stand-in is closed")
	}
	if d.root == "" {
		root, err := os.MkdirTemp("", "localappwrite-deployments-")
		if err != nil {
			return "", err
		}
		d.root = root
	}
	p := filepath.Join(append([]string{d.root}, parts...)...)
	return p, os.MkdirAll(p, 0o755)
}

// close stops builds (their commands are killed), kills every runtime process, waits for all of it and
// removes the deployments' files.
func (d *deployer) close() {
	d.mu.Lock()
	d.closed = true
	procs := make([]*runtimeProc, 0, len(d.procs))
	for _, p := range d.procs {
		procs = append(procs, p)
	}
	d.procs = map[string]*runtimeProc{}
	root := d.root
	d.mu.Unlock()
	d.cancel()
	for _, p := range procs {
		p.stop()
	}
	d.wg.Wait()
	if root != "" {
		_ = os.RemoveAll(root)
	}
}

// stop kills the process and waits until it is gone.
func (p *runtimeProc) stop() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
	}
	<-p.done
}

// startBuildLocked queues the build of a fully uploaded deployment (Appwrite's builds worker, here a
// goroutine owned by the Server's deployer). Called with s.mu held.
func (s *Server) startBuildLocked(dep *deployment) {
	archive := dep.data
	pr := s.projects[dep.projectID]
	fn := pr.functions[dep.functionID]
	env := s.functionEnvLocked(pr, fn, dep.id)
	env = append(env, "OPEN_RUNTIMES_ENTRYPOINT="+dep.entrypoint)
	commands, activate := dep.commands, dep.activate
	pid, fid, did := dep.projectID, dep.functionID, dep.id
	secret := fn.secret
	d := s.deploy
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		dep.status = "failed"
		dep.buildLogs = "Build canceled: the local Appwrite stand-in is closed."
		dep.data = nil
		return
	}
	d.wg.Add(1) // under d.mu, so never after close has started waiting
	// The build goroutine belongs to the deployer: close cancels its context and waits for it.
	go func() {
		defer d.wg.Done()
		s.runBuild(pid, fid, did, archive, commands, activate, secret, env)
	}()
}

// runBuild builds one deployment: processing (waiting for a build slot, unpacking), building (commands and
// go build), then for an activated deployment the runtime server is started and the function switched to
// it; the deployment ends ready or failed with the build's output in buildLogs.
func (s *Server) runBuild(pid, fid, did string, archive []byte, commands string, activate bool, secret string, env []string) {
	d := s.deploy
	logs := &lockedBuffer{max: maxBuildLogs}
	begin := time.Now()
	setLocked := func(dep *deployment, status string, final bool) {
		dep.status = status
		dep.buildLogs = logs.String()
		dep.updated = s.now()
		if final {
			dep.buildDuration = int(time.Since(begin).Round(time.Second) / time.Second)
			dep.data = nil
		}
	}
	// Every status change is fanned out to the project's webhooks and event-triggered functions as
	// functions.[functionId].deployments.[deploymentId].update with the Deployment model
	// (Modules/Functions/Workers/Jobs.php dispatchUpdate, HEAD 0cefd06).
	updated := func(m obj) {
		s.dispatch(pendingEvent{project: pid, pattern: deploymentEvent + "update", payload: m,
			params: []param{{"functionId", fid}, {"deploymentId", did}}})
	}
	set := func(status string, final bool) {
		s.mu.Lock()
		var m obj
		if dep := s.deploymentLocked(pid, fid, did); dep != nil {
			setLocked(dep, status, final)
			m = deploymentModel(dep)
		}
		s.mu.Unlock()
		if m != nil {
			updated(m)
		}
	}
	fail := func(err error) {
		fmt.Fprintf(logs, "\n%v\n", err)
		set("failed", true)
	}

	select {
	case d.sem <- struct{}{}:
	case <-d.ctx.Done():
		//lint:ignore ST1005 a line of the deployment's build log, which a person reads
		fail(errors.New("Build canceled: the local Appwrite stand-in is closing."))
		return
	}
	defer func() { <-d.sem }()
	set("processing", false)
	dir, err := d.dir(pid, fid, did)
	if err != nil {
		fail(err)
		return
	}
	fmt.Fprintf(logs, "Preparing for build ...\n")
	set("building", false)
	bin, err := runtimebuild.Build(d.ctx, bytes.NewReader(archive), commands, dir, env, logs)
	if err != nil {
		fail(err)
		return
	}
	if st, err := os.Stat(bin); err == nil {
		s.mu.Lock()
		if dep := s.deploymentLocked(pid, fid, did); dep != nil {
			dep.buildSize = st.Size()
		}
		s.mu.Unlock()
	}
	fmt.Fprintf(logs, "Build finished.\n")
	if !activate {
		set("ready", true)
		return
	}
	proc, err := d.startRuntime(bin, dir, secret, env)
	if err != nil {
		fail(err)
		return
	}
	fmt.Fprintf(logs, "Runtime listening on %s.\n", proc.url)

	// Ready and active in one step: from now on executions and the domain reach this deployment.
	s.mu.Lock()
	dep := s.deploymentLocked(pid, fid, did)
	fn := s.projects[pid].functions[fid]
	stillActive := dep != nil && dep.activate
	if stillActive {
		fn.deploymentID = did
		fn.url = proc.url
		fn.secret = secret
		fn.updated = s.now()
	}
	var m obj
	if dep != nil {
		setLocked(dep, "ready", true)
		m = deploymentModel(dep)
	}
	s.mu.Unlock()
	if m != nil {
		updated(m)
	}

	key := pid + "/" + fid
	d.mu.Lock()
	var old *runtimeProc
	if d.closed || !stillActive {
		old = proc
	} else {
		old = d.procs[key]
		d.procs[key] = proc
	}
	d.mu.Unlock()
	if old != nil {
		old.stop()
	}
}

func (s *Server) deploymentLocked(pid, fid, did string) *deployment {
	pr := s.projects[pid]
	if pr == nil || pr.functions[fid] == nil {
		return nil
	}
	return pr.functions[fid].deployments[did]
}

// startRuntime runs the built server on a free loopback port (OPEN_RUNTIMES_LISTEN) with the function's
// secret and environment, and waits for localruntime.StartedLine on its stdout.
func (d *deployer) startRuntime(bin, dir, secret string, env []string) (*runtimeProc, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	logDir := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(d.ctx, bin)
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = append(runtimeBaseEnv(), env...)
	cmd.Env = append(cmd.Env, "OPEN_RUNTIMES_SECRET="+secret, "OPEN_RUNTIMES_LISTEN="+addr, "OPEN_RUNTIMES_LOG_DIR="+logDir)
	out := &lockedBuffer{max: 64 << 10}
	cmd.Stderr = out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start runtime: %w", err)
	}
	p := &runtimeProc{url: "http://" + addr, cmd: cmd, done: make(chan struct{}), out: out}
	started := make(chan struct{})
	d.wg.Add(1)
	// Reads the runtime's stdout until the process exits, then reaps it (owned by the deployer).
	go func() {
		defer d.wg.Done()
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(out, line)
			if strings.Contains(line, localruntime.StartedLine) {
				once.Do(func() { close(started) })
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
	}()
	timer := time.NewTimer(runtimeStartTimeout)
	defer timer.Stop()
	select {
	case <-started:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("the runtime exited before it started: %s", strings.TrimSpace(out.String()))
	case <-timer.C:
		p.stop()
		return nil, fmt.Errorf("the runtime did not print %q within %s", localruntime.StartedLine, runtimeStartTimeout)
	case <-d.ctx.Done():
		p.stop()
		//lint:ignore ST1005 a line of the deployment's build log, which a person reads
		return nil, errors.New("Build canceled: the local Appwrite stand-in is closing.")
	}
}

// runtimeBaseEnv is what a runtime process inherits from the host: PATH, HOME and TMPDIR only (Appwrite's
// containers see only their own variables).
func runtimeBaseEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// functionEnvLocked is the environment of a function's build and runtime (Appwrite 1.9 `Executions/Create.php`, `Workers/Functions.php`; docs/local-appwrite.md): its
// variables, then Appwrite's APPWRITE_FUNCTION_* variables, which win.
func (s *Server) functionEnvLocked(pr *project, fn *function, deploymentID string) []string {
	keys := make([]string, 0, len(fn.variables))
	for k := range fn.variables {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env := make([]string, 0, len(keys)+12)
	for _, k := range keys {
		env = append(env, k+"="+fn.variables[k])
	}
	cpus, memory := "1", "512"
	switch fn.specification {
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
