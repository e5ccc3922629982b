// Command dev runs the whole product locally: it starts the local Appwrite stand-in (127.0.0.1:8080, seeded
// with a demo project), stages and builds the four functions exactly as the Go runtime does, starts each on
// the local open-runtimes server (turn 3001, title 3002, mcp-events 3003, webhook-ingress 3004) configured
// against the stand-in, writes .dev/stack.json and prints what runs where. Stop it with Ctrl-C.
//
// Usage:
//
//	scripts/dev [-turn-port 3001] [-title-port 3002] [-mcp-events-port 3003] [-webhook-ingress-port 3004] [-host 127.0.0.1] [-appwrite 127.0.0.1:8080]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"appwrite-agent/scripts/internal/staging"
)

// function is one function process of the dev stack.
type function struct {
	name string
	port int
	url  string
}

func main() {
	host := flag.String("host", "127.0.0.1", "address the functions listen on")
	ports := map[string]*int{
		"turn":            flag.Int("turn-port", 3001, "port of the turn function"),
		"title":           flag.Int("title-port", 3002, "port of the title function"),
		"mcp-events":      flag.Int("mcp-events-port", 3003, "port of the mcp-events function"),
		"webhook-ingress": flag.Int("webhook-ingress-port", 3004, "port of the webhook-ingress function"),
	}
	appwriteAddr := flag.String("appwrite", "127.0.0.1:8080", "address of the local Appwrite stand-in (API under /v1)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *host, ports, *appwriteAddr); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, host string, ports map[string]*int, appwriteAddr string) error {
	root, err := staging.FindRoot(".")
	if err != nil {
		return err
	}
	devDir := filepath.Join(root, ".dev")
	if err := os.MkdirAll(devDir, 0o755); err != nil {
		return err
	}

	var fns []function
	for _, name := range staging.Functions {
		fns = append(fns, function{name: name, port: *ports[name], url: fmt.Sprintf("http://%s:%d", host, *ports[name])})
	}

	urls := map[string]string{}
	for _, fn := range fns {
		urls[fn.name] = fn.url
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	appwrite, err := startAppwrite(ctx, appwriteAddr, urls, filepath.Join(devDir, "stack.json"))
	if err != nil {
		return fmt.Errorf("local Appwrite on %s: %w", appwriteAddr, err)
	}
	defer func() {
		stopCtx, stopCancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer stopCancel()
		_ = appwrite.stop(stopCtx)
	}()
	secrets, err := devSecrets(filepath.Join(devDir, "secrets.json"))
	if err != nil {
		return err
	}
	env := functionEnv(appwrite.demo, secrets, urls)

	fmt.Println("staging and building the functions as the Go runtime does (cached after the first run)...")
	for _, fn := range fns {
		staged := filepath.Join(root, "build", "functions", fn.name)
		if err := staging.Stage(ctx, root, fn.name, staged); err != nil {
			return err
		}
		if err := staging.BuildServer(ctx, root, staged, filepath.Join(root, "build", "server", fn.name), filepath.Join(root, "build", "bin", fn.name)); err != nil {
			return err
		}
	}

	var wg sync.WaitGroup
	errc := make(chan error, len(fns))
	for _, fn := range fns {
		cmd := exec.CommandContext(ctx, filepath.Join(root, "build", "bin", fn.name), "-listen", fmt.Sprintf("%s:%d", host, fn.port))
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 6 * time.Second
		cmd.Env = append(os.Environ(),
			"OPEN_RUNTIMES_ENV=development",
			"OPEN_RUNTIMES_SECRET=",
			"OPEN_RUNTIMES_ECHO_LOGS=true",
			"OPEN_RUNTIMES_LOG_DIR="+filepath.Join(devDir, "logs", fn.name),
			"APPWRITE_FUNCTION_ID="+fn.name,
			"APPWRITE_FUNCTION_NAME="+fn.name,
			"APPWRITE_FUNCTION_RUNTIME_NAME=Go",
			"APPWRITE_FUNCTION_RUNTIME_VERSION=1.26",
		)
		cmd.Env = append(cmd.Env, env[fn.name]...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start %s: %w", fn.name, err)
		}
		wg.Add(2)
		go func() { defer wg.Done(); prefix(fn.name, out) }()
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil && ctx.Err() == nil {
				errc <- fmt.Errorf("%s exited: %w", fn.name, err)
			}
		}()
	}
	// Stop the other functions when one fails, and wait for every process and log copier before returning.
	defer wg.Wait()
	defer cancel()

	for _, fn := range fns {
		if err := waitHealthy(ctx, fn.url+"/health"); err != nil {
			if ctx.Err() != nil {
				return nil // stopped while starting
			}
			return fmt.Errorf("%s did not become healthy: %w", fn.name, err)
		}
	}
	fmt.Println()
	fmt.Println("running (Ctrl-C stops everything):")
	for _, fn := range fns {
		fmt.Printf("  %-16s %s   (GET %s/health)\n", fn.name, fn.url, fn.url)
	}
	appwrite.print(os.Stdout)
	fmt.Printf("  %-16s X-Session-API-Key for turn and title: AGENT_API_KEY in %s\n", "session key", filepath.Join(devDir, "secrets.json"))
	fmt.Println()

	select {
	case <-ctx.Done():
		fmt.Println("\nstopping...")
		return nil
	case err := <-errc:
		return err
	}
}

// prefix copies a process's output line by line, tagged with its name.
func prefix(name string, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fmt.Printf("[%s] %s\n", name, sc.Text())
	}
}

// waitHealthy polls url until it answers 200 or 30 s pass.
func waitHealthy(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
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
