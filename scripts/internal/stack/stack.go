// Package stack runs the whole product on one machine: the local Appwrite stand-in (seeded with a demo
// project) and the five functions, each staged and built exactly as the Go runtime builds it and run as its
// own process on the local open-runtimes server, configured against the stand-in. scripts/dev runs it for
// people; the end-to-end tests, the demo and the load harness run it for themselves.
package stack

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"appwrite-agent/scripts/internal/staging"
	"appwrite-agent/shared/devkit/localappwrite"
)

// Options configure Start. The zero value runs on free loopback ports.
type Options struct {
	// Root is the repository root (found from the working directory when empty).
	Root string
	// Host is the address functions listen on (127.0.0.1).
	Host string
	// Ports are the functions' ports by name; a missing or zero port is a free one.
	Ports map[string]int
	// AppwriteAddr is the stand-in's listen address ("127.0.0.1:0" when empty).
	AppwriteAddr string
	// StateDir holds secrets.json, stack.json and logs (a temporary folder when empty).
	StateDir string
	// Output receives the functions' output, each line prefixed with the function's name (discarded when
	// nil).
	Output io.Writer
	// Env adds variables to one function (by name) or, under "*", to all.
	Env map[string][]string
	// Appwrite are the stand-in's options (its Logf defaults to discarding).
	Appwrite localappwrite.Options
	// SessionKey, when set, is the AGENT_API_KEY turn and title run with (scripts/dev passes the shell's);
	// otherwise they use the one made once in secrets.json.
	SessionKey string
}

// Secrets are the stack's server keys, made once per state folder (secrets.json) so a restart keeps
// opening what was sealed before.
type Secrets struct {
	SealKeys    string `json:"SEAL_KEYS"`
	WebhookKeys string `json:"APPWRITE_WEBHOOK_SECRET_KEYS"`
	SessionKey  string `json:"AGENT_API_KEY"`
	// ChatSealKeys seal the users' secrets chat stores (CHAT_SEAL_KEYS).
	ChatSealKeys string `json:"CHAT_SEAL_KEYS"`
}

// Stack is a running product.
type Stack struct {
	// Appwrite is the stand-in.
	Appwrite *localappwrite.Running
	// Demo is what was seeded (also in StateDir/stack.json).
	Demo *localappwrite.Demo
	// URLs are the functions' runtime URLs by name.
	URLs map[string]string
	// Secrets are the server keys the functions run with.
	Secrets Secrets
	// StateDir is where state files live.
	StateDir string

	opts   Options
	root   string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errc   chan error
	mu     sync.Mutex
	procs  map[string]*exec.Cmd
	// bins maps an instance (a function name, a replica's name from StartReplica, or a program's from
	// StartProgram) to what it runs.
	bins map[string]launch
	// exited is closed when a process has been waited for (its one Wait runs in startInstance).
	exited map[*exec.Cmd]chan struct{}
	// reserved release the ports the stack reserved (ReservePort), once its processes have ended.
	reserved []func()
	// caFile holds the stand-in's https certificate (SAFEHTTP_CA_FILE of every function).
	caFile string
}

// Start stages and builds the functions (cached by Go's build cache), starts the stand-in and the
// functions, and waits until every function answers GET /health. Stop ends everything.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	root := opts.Root
	if root == "" {
		r, err := staging.FindRoot(".")
		if err != nil {
			return nil, err
		}
		root = r
	}
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	if opts.AppwriteAddr == "" {
		opts.AppwriteAddr = "127.0.0.1:0"
	}
	if opts.Output == nil {
		opts.Output = io.Discard
	}
	opts.Output = &lockedWriter{w: opts.Output}
	if opts.Appwrite.Logf == nil {
		opts.Appwrite.Logf = func(string, ...any) {}
	}
	stateDir := opts.StateDir
	if stateDir == "" {
		d, err := os.MkdirTemp("", "appwrite-agent-stack-")
		if err != nil {
			return nil, err
		}
		stateDir = d
	}
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return nil, err
	}

	// The ports Start picks stay reserved until Stop (or until Start fails).
	var reserved []func()
	started := false
	defer func() {
		if !started {
			release(reserved)
		}
	}()
	urls := map[string]string{}
	for _, name := range staging.Functions {
		port := opts.Ports[name]
		if port == 0 {
			p, unlock, err := ReservePort()
			if err != nil {
				return nil, err
			}
			reserved = append(reserved, unlock)
			port = p
		}
		urls[name] = "http://" + net.JoinHostPort(opts.Host, strconv.Itoa(port))
	}

	warn := opts.Output // where the functions' output goes, so tests that discard it are not noisy
	if warn == nil {
		warn = io.Discard
	}
	if err := Build(ctx, root, warn); err != nil {
		return nil, err
	}

	ctx, cancel := context.WithCancel(ctx)
	s := &Stack{URLs: urls, StateDir: stateDir, opts: opts, root: root, ctx: ctx, cancel: cancel, errc: make(chan error, 8), procs: map[string]*exec.Cmd{}, bins: map[string]launch{}, exited: map[*exec.Cmd]chan struct{}{},
		reserved: reserved}
	started = true // from here on, s.Stop releases the ports
	// The stack runs every function on loopback, so webhooks point at loopback URLs: the stand-in-only allowance
	// (real Appwrite refuses them with 400: PublicDomain) is the one place the dev stack turns on.
	awOpts := opts.Appwrite
	awOpts.AllowLoopbackWebhookURLs = true
	// Function domains over https too, as Appwrite serves them: chat's is its automations' events callback,
	// and mcp-events takes https callbacks only. The functions trust its certificate (SAFEHTTP_CA_FILE).
	awOpts.HTTPS = true
	run, err := localappwrite.Start(ctx, opts.AppwriteAddr, awOpts)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("local Appwrite on %s: %w", opts.AppwriteAddr, err)
	}
	s.Appwrite = run
	s.caFile = filepath.Join(stateDir, "appwrite-ca.pem")
	if err := os.WriteFile(s.caFile, run.CertPEM, 0o600); err != nil {
		s.Stop()
		return nil, err
	}
	rawJSON, err := os.ReadFile(filepath.Join(root, "appwrite.json"))
	if err != nil {
		s.Stop()
		return nil, err
	}
	schedules, err := staging.Schedules(rawJSON)
	if err != nil {
		s.Stop()
		return nil, err
	}
	if s.Demo, err = run.Server.SeedDemo(localappwrite.DemoOptions{FunctionURLs: urls, Schedules: schedules}); err != nil {
		s.Stop()
		return nil, fmt.Errorf("seeding the local Appwrite: %w", err)
	}
	if err := localappwrite.WriteStackJSON(filepath.Join(stateDir, "stack.json"), s.Demo); err != nil {
		s.Stop()
		return nil, err
	}
	if s.Secrets, err = loadSecrets(filepath.Join(stateDir, "secrets.json")); err != nil {
		s.Stop()
		return nil, err
	}
	if opts.SessionKey != "" {
		s.Secrets.SessionKey = opts.SessionKey
	}
	for _, name := range staging.Functions {
		if err := s.startFunction(name); err != nil {
			s.Stop()
			return nil, err
		}
	}
	for _, name := range staging.Functions {
		if err := WaitHealthy(ctx, urls[name]+"/health", 30*time.Second); err != nil {
			s.Stop()
			return nil, fmt.Errorf("%s did not become healthy: %w", name, err)
		}
	}
	// A function that exited while the others started (a port someone else took, a bad configuration) is
	// a failed start, not a stack with a hole in it.
	select {
	case err := <-s.errc:
		s.Stop()
		return nil, err
	default:
	}
	return s, nil
}

// Build stages every function into root/build/functions and builds it as the runtime does into
// root/build/bin. Concurrent builds (parallel test packages) take turns. The functions are staged side by
// side, then built one after the other: the go command spreads one build over every core, and five at once
// on an empty build cache each compile the standard library and the modules again; a build of sources
// built before is a copy (shared/devkit/runtimebuild's cache), which is what makes a stack per test cheap.
// turn is staged with the installed skills, and with a warning to warn when there are none (only turn writes
// to warn).
func Build(ctx context.Context, root string, warn io.Writer) error {
	unlock, err := lockBuild(root)
	if err != nil {
		return err
	}
	defer unlock()
	errs := make([]error, len(staging.Functions))
	var wg sync.WaitGroup
	for i, name := range staging.Functions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A local stack runs with whatever skills are installed, and warns when there are none: it is
			// not a deploy.
			errs[i] = staging.StageWith(ctx, root, name, filepath.Join(root, "build", "functions", name), staging.Options{AllowNoSkills: true, Warn: warn})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, name := range staging.Functions {
		staged := filepath.Join(root, "build", "functions", name)
		if err := staging.BuildServer(ctx, root, staged, filepath.Join(root, "build", "server", name), filepath.Join(root, "build", "bin", name)); err != nil {
			return err
		}
	}
	return nil
}

// FunctionEnv is one function's configuration against the stand-in.
func (s *Stack) FunctionEnv(name string) []string {
	d := s.Demo
	env := []string{
		"APPWRITE_FUNCTION_API_ENDPOINT=" + d.Endpoint,
		"APPWRITE_FUNCTION_PROJECT_ID=" + d.ProjectID,
		"APPWRITE_FUNCTION_ID=" + name,
		"APPWRITE_FUNCTION_NAME=" + name,
		"APPWRITE_FUNCTION_RUNTIME_NAME=Go",
		"APPWRITE_FUNCTION_RUNTIME_VERSION=1.26",
		// Local receivers and models live on loopback; production keeps the strict default.
		"SAFEHTTP_ALLOW=127.0.0.0/8,::1/128",
		// The stand-in's https certificate (function domains over https: chat's events callback). A test that
		// needs its own roots sets the variable again under "*" (the later value wins).
		"SAFEHTTP_CA_FILE=" + s.caFile,
	}
	events := []string{
		"SEAL_KEYS=" + s.Secrets.SealKeys,
		"APPWRITE_WEBHOOK_SECRET_KEYS=" + s.Secrets.WebhookKeys,
		// Appwrite delivers to the ingress through its function domain, which adds the dynamic key the
		// ingress needs to schedule delayed retries.
		"MCP_EVENTS_INGRESS_URL=" + d.Domains["webhook-ingress"],
	}
	switch name {
	case "turn":
		env = append(env, "AGENT_API_KEY="+s.Secrets.SessionKey, "TURN_PROGRESS_DATABASE="+d.DatabaseID,
			"TURN_PROGRESS_TABLE="+d.ProgressTableID)
	case "title":
		env = append(env, "AGENT_API_KEY="+s.Secrets.SessionKey, "TITLE_DATABASE_ID="+d.DatabaseID, "TITLE_TABLE_ID="+d.TableID)
	case "chat":
		// chat keeps its tables in the demo database, whose conversations table is the one title is
		// triggered by; it creates what is missing on first use.
		env = append(env, "AGENT_API_KEY="+s.Secrets.SessionKey, "CHAT_SEAL_KEYS="+s.Secrets.ChatSealKeys, "CHAT_DATABASE_ID="+d.DatabaseID,
			"TURN_PROGRESS_DATABASE="+d.DatabaseID, "TURN_PROGRESS_TABLE="+d.ProgressTableID,
			// Automations: events come back to chat's https domain; the local mcp-events is plain http.
			"CHAT_PUBLIC_URL="+s.Appwrite.SecureDomainURL("chat"), "SAFEHTTP_ALLOW_HTTP=true")
	case "mcp-events":
		env = append(env, events...)
		env = append(env,
			"MCP_EVENTS_ENABLED=true",
			"MCP_EVENTS_PUBLIC_URL="+s.URLs["mcp-events"],
			"MCP_EVENTS_OAUTH_ISSUER="+d.Issuer,
			"MCP_EVENTS_OAUTH_JWKS_URL="+d.JWKSURL,
			"MCP_EVENTS_APPWRITE_ENDPOINT="+d.Endpoint,
			// The chat page connects mcp-events from the browser (its OAuth discovery): its origin, the
			// stand-in's, where function domains are served, is the one browser origin allowed.
			"MCP_EVENTS_ALLOWED_ORIGINS="+origin(d.Domains["chat"]),
		)
	case "webhook-ingress":
		env = append(env, events...)
	}
	env = append(env, s.opts.Env["*"]...)
	return append(env, s.opts.Env[name]...)
}

// origin is the scheme://host[:port] of rawURL.
func origin(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// launch is what one instance runs: a runtime server binary and the configuration added to the runtime's.
type launch struct {
	bin, health string // health is the path that answers 200 once the instance is up
	env         []string
}

func (s *Stack) function(name string) launch {
	return launch{bin: s.BinaryPath(name), health: "/health", env: s.FunctionEnv(name)}
}

func (s *Stack) startFunction(name string) error { return s.startInstance(name, s.function(name)) }

// StartProgram starts a runtime server binary that is not one of the product's functions (the load
// harness's plain relay, built with runtimebuild.BuildServer) exactly as the functions run: the same local
// open-runtimes settings, on a free port, with env as its only configuration (the stack's "*" variables
// included). It waits until the runtime answers GET /__opr/health and returns the program's URL; PID, Restart
// and Stop's clean-up know inst from then on.
func (s *Stack) StartProgram(inst, bin string, env []string) (string, error) {
	l := launch{bin: bin, health: "/__opr/health", env: append(slices.Clone(s.opts.Env["*"]), env...)}
	if _, err := s.startNew(l, func() (string, error) {
		if s.URLs[inst] != "" {
			return "", fmt.Errorf("stack: instance %q is already running", inst)
		}
		return inst, nil
	}); err != nil {
		return "", err
	}
	return s.url(inst), nil
}

// StartReplica starts one more process of function name (another replica, on a free port, with exactly the
// function's configuration) and waits until it answers GET /health. It returns the replica's instance name
// (name + "#" + a number), which URLs, PID, Restart and Stop's clean-up know from then on.
func (s *Stack) StartReplica(name string) (string, error) {
	if !slices.Contains(staging.Functions, name) {
		return "", fmt.Errorf("stack: no function %q", name)
	}
	return s.startNew(s.function(name), func() (string, error) {
		n := 2
		for s.URLs[name+"#"+strconv.Itoa(n)] != "" {
			n++
		}
		return name + "#" + strconv.Itoa(n), nil
	})
}

// startNew starts l as a new instance on a free port and waits until it answers l.health. name picks the
// instance's name, under the stack's lock, so that no two starts take the same one.
func (s *Stack) startNew(l launch, name func() (string, error)) (string, error) {
	port, unlock, err := ReservePort()
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.reserved = append(s.reserved, unlock)
	inst, err := name()
	if err != nil {
		s.mu.Unlock()
		return "", err
	}
	s.URLs[inst] = "http://" + net.JoinHostPort(s.opts.Host, strconv.Itoa(port))
	s.mu.Unlock()
	if err := s.startInstance(inst, l); err != nil {
		return "", err
	}
	return inst, WaitHealthy(s.ctx, s.url(inst)+l.health, 30*time.Second)
}

// BinaryPath is where Build put function name's runtime server binary.
func (s *Stack) BinaryPath(name string) string { return filepath.Join(s.root, "build", "bin", name) }

func (s *Stack) url(inst string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.URLs[inst]
}

func (s *Stack) startInstance(inst string, l launch) error {
	u := s.url(inst)
	cmd := exec.CommandContext(s.ctx, l.bin, "-listen", u[len("http://"):])
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 6 * time.Second
	cmd.Env = append(os.Environ(),
		"OPEN_RUNTIMES_ENV=development",
		"OPEN_RUNTIMES_SECRET=",
		"OPEN_RUNTIMES_ECHO_LOGS=true",
		"OPEN_RUNTIMES_LOG_DIR="+filepath.Join(s.StateDir, "logs", strings.ReplaceAll(inst, "#", "-")),
	)
	cmd.Env = append(cmd.Env, l.env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", inst, err)
	}
	exited := make(chan struct{})
	s.mu.Lock()
	s.procs[inst] = cmd
	s.bins[inst] = l
	s.exited[cmd] = exited
	s.mu.Unlock()
	s.wg.Add(2)
	go func() { defer s.wg.Done(); prefix(s.opts.Output, inst, out) }()
	go func() {
		defer s.wg.Done()
		err := cmd.Wait()
		close(exited)
		s.mu.Lock()
		current := s.procs[inst] == cmd
		delete(s.exited, cmd)
		s.mu.Unlock()
		if current && s.ctx.Err() == nil {
			select {
			case s.errc <- fmt.Errorf("%s exited: %v", inst, err):
			default:
			}
		}
	}()
	return nil
}

// Restart stops one function's process (or a replica's, by the name StartReplica gave) and starts a new one
// with the same configuration (a replica restart: nothing but the process is lost).
func (s *Stack) Restart(name string) error {
	s.mu.Lock()
	old := s.procs[name]
	delete(s.procs, name)
	l, ok := s.bins[name]
	done := s.exited[old]
	s.mu.Unlock()
	if !ok {
		l = s.function(name)
	}
	if old != nil && done != nil {
		// The process's own goroutine waits for it (a second Wait would block until the timeout).
		_ = old.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(6 * time.Second):
			_ = old.Process.Kill()
			<-done
		}
	}
	if err := s.startInstance(name, l); err != nil {
		return err
	}
	return WaitHealthy(s.ctx, s.url(name)+l.health, 30*time.Second)
}

// PID is the process id of a function (or a replica, by the name StartReplica gave), for memory
// measurements.
func (s *Stack) PID(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.procs[name]; c != nil && c.Process != nil {
		return c.Process.Pid
	}
	return 0
}

// Done is closed when the stack stops; Err then says why a function exited, if one did.
func (s *Stack) Done() <-chan struct{} { return s.ctx.Done() }

// Failed returns a channel that receives an error when a function exits on its own.
func (s *Stack) Failed() <-chan error { return s.errc }

// Stop ends the functions and the stand-in and waits for them.
func (s *Stack) Stop() {
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	release(s.reserved)
	s.reserved = nil
	s.mu.Unlock()
	if s.Appwrite != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Appwrite.Shutdown(ctx)
	}
}

// release calls each of the functions ReservePort returned.
func release(ports []func()) {
	for _, unlock := range ports {
		unlock()
	}
}

func loadSecrets(path string) (Secrets, error) {
	var s Secrets
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &s); err != nil {
			return s, fmt.Errorf("%s: %w (delete it to make new keys)", path, err)
		}
		if s.ChatSealKeys != "" {
			return s, nil
		}
		s.ChatSealKeys = "dev1:" + randomB64(32) // a state folder from before chat sealed its secrets
	case !errors.Is(err, fs.ErrNotExist):
		return s, err
	default:
		s = Secrets{SealKeys: "dev1:" + randomB64(32), WebhookKeys: "dev1:" + randomB64(32), SessionKey: "dev-" + randomB64(18),
			ChatSealKeys: "dev1:" + randomB64(32)}
	}
	data, _ = json.MarshalIndent(s, "", "  ")
	return s, os.WriteFile(path, data, 0o600)
}

func randomB64(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// lockedWriter serialises the functions' output lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// prefix copies a process's output line by line, tagged with its name.
func prefix(w io.Writer, name string, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fmt.Fprintf(w, "[%s] %s\n", name, sc.Text())
	}
}

// WaitHealthy polls url until it answers 200, ctx ends or timeout passes.
func WaitHealthy(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", res.StatusCode)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last: %v)", url, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Mem is a process's resident memory from /proc/<pid>/status, in kB.
type Mem struct {
	// RSS is VmRSS (now), HWM is VmHWM (the peak).
	RSS, HWM int64
}

// ReadCPU reads the CPU time (user plus system) a process has used so far, from /proc/<pid>/stat, in the
// kernel's clock ticks of 10 ms (zero when it cannot, e.g. not on Linux).
func ReadCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces; utime and stime are the 12th and
	// 13th fields after it.
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return 0
	}
	fs := strings.Fields(string(raw[i+1:]))
	if len(fs) < 13 {
		return 0
	}
	user, _ := strconv.ParseInt(fs[11], 10, 64)
	sys, _ := strconv.ParseInt(fs[12], 10, 64)
	return time.Duration(user+sys) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// ReadMem reads a process's VmRSS and VmHWM (zero when it cannot, e.g. not on Linux).
func ReadMem(pid int) Mem {
	var m Mem
	if pid <= 0 {
		return m
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			m.RSS = n
		case "VmHWM":
			m.HWM = n
		}
	}
	return m
}
