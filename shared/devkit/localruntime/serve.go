package localruntime

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// StartedLine is what the open-runtimes server prints once it listens; Appwrite's start script waits for it.
const StartedLine = "HTTP server successfully started!"

// Serve runs the runtime server for main on addr until ctx ends, then shuts down gracefully (in-flight
// requests get up to 5 s). It prints StartedLine to stdout once the listener is open.
func Serve(ctx context.Context, addr string, main Handler, opts Options) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ServeListener(ctx, ln, main, opts)
}

// ServeListener is Serve on an open listener.
func ServeListener(ctx context.Context, ln net.Listener, main Handler, opts Options) error {
	srv := &http.Server{
		Handler:           New(main, opts),
		ReadHeaderTimeout: 30 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintln(os.Stdout, StartedLine)
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
}

// Main is the body of a runtime server binary: it reads the OPEN_RUNTIMES_* environment, listens on
// -listen (default OPEN_RUNTIMES_LISTEN, else :3000 like the real image) and serves main until SIGINT or
// SIGTERM. Errors are printed to stderr and end the process with status 1.
func Main(main Handler) {
	listen := os.Getenv("OPEN_RUNTIMES_LISTEN")
	if listen == "" {
		listen = ":3000"
	}
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	addr := fs.String("listen", listen, "address to listen on")
	_ = fs.Parse(os.Args[1:])
	opts, err := OptionsFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Serve(ctx, *addr, main, opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
