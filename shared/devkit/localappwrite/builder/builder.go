// Package builder is the local Appwrite stand-in's builds worker and executor: it builds an uploaded
// deployment the way the open-runtimes Go image does (package runtimebuild: unpack, the commands, a server
// module that replaces openruntimes/handler with the upload, go build), and runs the runtime server of each
// function's active deployment on a loopback port. The stand-in (package localappwrite) keeps the
// deployments and their statuses; a Builder tells it what happens through the Reporter of each build.
package builder

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
	"strings"
	"sync"
	"time"

	"appwrite-agent/shared/devkit/localruntime"
	"appwrite-agent/shared/devkit/runtimebuild"
)

// Builder builds deployments and runs the runtime process of each function's active deployment. Its
// goroutines and processes end in Close.
type Builder struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	sem    chan struct{} // bounds concurrent builds

	mu     sync.Mutex
	root   string              // temp folder of every deployment's files (created on first use)
	procs  map[string]*Runtime // by Job.Function: the active deployment's process
	closed bool
}

// Job is one fully uploaded deployment to build.
type Job struct {
	// Function names the function the deployment belongs to (the stand-in uses project + "/" + function): a
	// started runtime replaces the one the function ran.
	Function string
	// Dir is the deployment's folder under the Builder's root, as path elements (project, function,
	// deployment).
	Dir []string
	// Archive is the uploaded tar.gz.
	Archive []byte
	// Commands is the build commands (bash -c), none when empty.
	Commands string
	// Env is the environment of the build and of the runtime (the function's variables and Appwrite's).
	Env []string
	// Secret is the runtime's OPEN_RUNTIMES_SECRET.
	Secret string
	// Activate starts the runtime once the build is done and makes it the function's.
	Activate bool
}

// Reporter is told what happens to one build; its methods are called from the build's goroutine, in order.
type Reporter interface {
	// Status records a status (processing, building, ready, failed) with the build's logs so far; final
	// marks the last one, took the build's duration.
	Status(status, logs string, final bool, took time.Duration)
	// Built records the size of the built binary.
	Built(size int64)
	// Activate is the last call of a build that started its runtime at url: the deployment is ready and,
	// when it is still the one to activate, becomes the function's active deployment in the same step. It
	// reports whether it did; false stops the runtime.
	Activate(url, logs string, took time.Duration) bool
}

// Runtime is a running runtime server (the built binary) of one deployment.
type Runtime struct {
	url  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited and its output is drained
	out  *lockedBuffer
}

// URL is where the runtime server listens (http://127.0.0.1:port).
func (p *Runtime) URL() string { return p.url }

// Done is closed once the process has exited.
func (p *Runtime) Done() <-chan struct{} { return p.done }

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

// New returns a Builder that runs at most concurrency builds at once; more wait in "processing".
func New(concurrency int) *Builder {
	ctx, cancel := context.WithCancel(context.Background())
	return &Builder{ctx: ctx, cancel: cancel, sem: make(chan struct{}, concurrency), procs: map[string]*Runtime{}}
}

// Runtime returns the running runtime of function, or nil.
func (b *Builder) Runtime(function string) *Runtime {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.procs[function]
}

// Root is the folder of every deployment's files ("" before the first build).
func (b *Builder) Root() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.root
}

// dir returns (creating it on first use) the folder of one deployment.
func (b *Builder) dir(parts ...string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return "", errors.New("the local Appwrite stand-in is closed")
	}
	if b.root == "" {
		root, err := os.MkdirTemp("", "localappwrite-deployments-")
		if err != nil {
			return "", err
		}
		b.root = root
	}
	p := filepath.Join(append([]string{b.root}, parts...)...)
	return p, os.MkdirAll(p, 0o755)
}

// Close stops builds (their commands are killed), kills every runtime process, waits for all of it and
// removes the deployments' files. Start refuses new builds from then on.
func (b *Builder) Close() {
	b.mu.Lock()
	b.closed = true
	procs := make([]*Runtime, 0, len(b.procs))
	for _, p := range b.procs {
		procs = append(procs, p)
	}
	b.procs = map[string]*Runtime{}
	root := b.root
	b.mu.Unlock()
	b.cancel()
	for _, p := range procs {
		p.stop()
	}
	b.wg.Wait()
	if root != "" {
		_ = os.RemoveAll(root)
	}
}

// stop kills the process and waits until it is gone.
func (p *Runtime) stop() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
	}
	<-p.done
}

// Start queues the build of job (Appwrite's builds worker, here a goroutine owned by the Builder) and
// reports to r as it goes. It is false, and nothing is reported, once the Builder is closed.
func (b *Builder) Start(job Job, r Reporter) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.wg.Add(1) // under b.mu, so never after Close has started waiting
	// The build goroutine belongs to the Builder: Close cancels its context and waits for it.
	go func() {
		defer b.wg.Done()
		b.run(job, r)
	}()
	return true
}

// run builds one deployment: processing (waiting for a build slot, unpacking), building (commands and go
// build), then for an activated deployment the runtime server is started and handed to the Reporter; the
// deployment ends ready or failed with the build's output in its logs.
func (b *Builder) run(job Job, r Reporter) {
	logs := &lockedBuffer{max: maxBuildLogs}
	begin := time.Now()
	took := func() time.Duration { return time.Since(begin) }
	fail := func(err error) {
		fmt.Fprintf(logs, "\n%v\n", err)
		r.Status("failed", logs.String(), true, took())
	}

	select {
	case b.sem <- struct{}{}:
	case <-b.ctx.Done():
		//lint:ignore ST1005 a line of the deployment's build log, which a person reads
		fail(errors.New("Build canceled: the local Appwrite stand-in is closing."))
		return
	}
	defer func() { <-b.sem }()
	r.Status("processing", logs.String(), false, 0)
	dir, err := b.dir(job.Dir...)
	if err != nil {
		fail(err)
		return
	}
	fmt.Fprintf(logs, "Preparing for build ...\n")
	r.Status("building", logs.String(), false, 0)
	bin, err := runtimebuild.Build(b.ctx, bytes.NewReader(job.Archive), job.Commands, dir, job.Env, logs)
	if err != nil {
		fail(err)
		return
	}
	if st, err := os.Stat(bin); err == nil {
		r.Built(st.Size())
	}
	fmt.Fprintf(logs, "Build finished.\n")
	if !job.Activate {
		r.Status("ready", logs.String(), true, took())
		return
	}
	proc, err := b.startRuntime(bin, dir, job.Secret, job.Env)
	if err != nil {
		fail(err)
		return
	}
	fmt.Fprintf(logs, "Runtime listening on %s.\n", proc.url)
	active := r.Activate(proc.url, logs.String(), took())

	b.mu.Lock()
	var old *Runtime
	if b.closed || !active {
		old = proc
	} else {
		old = b.procs[job.Function]
		b.procs[job.Function] = proc
	}
	b.mu.Unlock()
	if old != nil {
		old.stop()
	}
}

// startRuntime runs the built server on a free loopback port (OPEN_RUNTIMES_LISTEN) with the function's
// secret and environment, and waits for localruntime.StartedLine on its stdout.
func (b *Builder) startRuntime(bin, dir, secret string, env []string) (*Runtime, error) {
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
	cmd := exec.CommandContext(b.ctx, bin)
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
	p := &Runtime{url: "http://" + addr, cmd: cmd, done: make(chan struct{}), out: out}
	started := make(chan struct{})
	b.wg.Add(1)
	// Reads the runtime's stdout until the process exits, then reaps it (owned by the Builder).
	go func() {
		defer b.wg.Done()
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
	case <-b.ctx.Done():
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
