// Command dev runs the whole product locally: the local Appwrite stand-in (127.0.0.1:8080, seeded with a demo
// project) and the five functions, staged and built exactly as the Go runtime does, each on the local
// open-runtimes server (turn 3001, title 3002, mcp-events 3003, webhook-ingress 3004, chat 3005) and
// configured against the stand-in. It writes .dev/stack.json and prints what runs where, the chat page's
// URL first. Stop it with Ctrl-C.
//
// With -model scripted the agent talks to a scripted model (scriptedllm.Demo) instead of LLM_API_KEY's:
// a complete conversation, with tokens, tool cards and Console and clarify actions, without any key.
//
// Usage:
//
// With -appwrite-only it starts only the stand-in, with an empty project and an API key with scripts/deploy's
// scopes, writes .dev/stack.json (endpoint, projectId, apiKey) and prints the scripts/deploy line to run.
//
//	scripts/dev -appwrite-only [-model scripted] [-appwrite 127.0.0.1:8080]
//	scripts/dev [-demo] [-model scripted] [-turn-port 3001] [-title-port 3002] [-mcp-events-port 3003] [-webhook-ingress-port 3004] [-chat-port 3005] [-host 127.0.0.1] [-appwrite 127.0.0.1:8080]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"appwrite-agent/scripts/internal/stack"
	"appwrite-agent/scripts/internal/staging"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/scriptedllm"
)

func main() {
	host := flag.String("host", "127.0.0.1", "address the functions listen on")
	ports := map[string]*int{
		"turn":            flag.Int("turn-port", 3001, "port of the turn function"),
		"title":           flag.Int("title-port", 3002, "port of the title function"),
		"mcp-events":      flag.Int("mcp-events-port", 3003, "port of the mcp-events function"),
		"webhook-ingress": flag.Int("webhook-ingress-port", 3004, "port of the webhook-ingress function"),
		"chat":            flag.Int("chat-port", 3005, "port of the chat function"),
	}
	model := flag.String("model", "", `"scripted" runs turn and title against a scripted demo model (no key needed); empty uses LLM_API_KEY, LLM_MODEL and LLM_BASE_URL from the shell`)
	appwriteAddr := flag.String("appwrite", "127.0.0.1:8080", "address of the local Appwrite stand-in (API under /v1)")
	profile := flag.String("appwrite-profile", "cloud", "what the stand-in plays: cloud (Appwrite Cloud: authPassword never returned, per-project webhook limit) or oss (open-source Appwrite 1.9.6)")
	webhookLimit := flag.Int("webhook-limit", 0, "webhooks per project in the cloud profile: 0 is the Free plan's 2, 50 Start, -1 unlimited (Pro, Scale)")
	demo := flag.Bool("demo", false, "subscribe a local signed-webhook receiver to tablesdb.row.created through mcp-events, create a row, print the delivered event, and exit")
	appwriteOnly := flag.Bool("appwrite-only", false, "start only the Appwrite stand-in, with an empty project and an API key with scripts/deploy's scopes; write .dev/stack.json and print the scripts/deploy line to run against it")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p := map[string]int{}
	for name, v := range ports {
		p[name] = *v
	}
	if *model != "" && *model != "scripted" {
		fmt.Fprintf(os.Stderr, "dev: -model %q: the only model is \"scripted\" (or none, for LLM_API_KEY's)\n", *model)
		os.Exit(2)
	}
	prof, err := localappwrite.ParseProfile(*profile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(2)
	}
	aw := localappwrite.Options{Profile: prof, WebhookLimit: *webhookLimit}
	if *appwriteOnly {
		root, err := staging.FindRoot(".")
		if err == nil {
			err = runAppwriteOnly(ctx, os.Stdout, *appwriteAddr, filepath.Join(root, ".dev"), aw, *model == "scripted")
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "dev:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, os.Stdout, *host, p, *appwriteAddr, aw, *demo, *model == "scripted"); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, host string, ports map[string]int, appwriteAddr string, aw localappwrite.Options, demo, scripted bool) error {
	root, err := staging.FindRoot(".")
	if err != nil {
		return err
	}
	devDir := filepath.Join(root, ".dev")
	// Like LLM_API_KEY, a session key set in the shell is used as is; otherwise the one in .dev/secrets.json.
	opts := stack.Options{Root: root, Host: host, Ports: ports, AppwriteAddr: appwriteAddr, StateDir: devDir, Output: out,
		SessionKey: strings.TrimSpace(os.Getenv("AGENT_API_KEY")), Appwrite: aw}
	opts.Env = map[string][]string{}
	if scripted {
		model := scriptedllm.New()
		model.SetHandler(scriptedllm.Demo())
		defer model.Close()
		llm := []string{"LLM_API_KEY=scripted", "LLM_MODEL=gpt-4o-mini", "LLM_BASE_URL=" + model.BaseURL()}
		opts.Env["turn"], opts.Env["title"] = llm, llm
		fmt.Fprintf(out, "model: scripted demo model at %s (no key needed)\n", model.BaseURL())
	}
	var rcv *demoReceiver
	if demo {
		if rcv, err = newDemoReceiver(devDir); err != nil {
			return err
		}
		defer rcv.Close()
		// The functions' own output goes to a file: the demo prints the story.
		logFile, err := os.Create(filepath.Join(devDir, "demo.log"))
		if err != nil {
			return err
		}
		defer logFile.Close()
		opts.Output = logFile
		opts.Env["*"] = []string{"SAFEHTTP_CA_FILE=" + rcv.caFile}
	}
	fmt.Fprintln(out, "staging and building the functions as the Go runtime does (cached after the first run)...")
	st, err := stack.Start(ctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting
		}
		return err
	}
	defer st.Stop()
	printStack(out, st, scripted)
	if demo {
		return runDemo(ctx, out, st, rcv)
	}
	fmt.Fprintln(out, "running (Ctrl-C stops everything)")
	select {
	case <-ctx.Done():
		fmt.Fprintln(out, "\nstopping...")
		return nil
	case err := <-st.Failed():
		return err
	}
}

// profileLine says what the stand-in plays (-appwrite-profile, -webhook-limit).
func profileLine(s *localappwrite.Server) string {
	if s.Profile() != localappwrite.ProfileCloud {
		return "open-source Appwrite"
	}
	if n := s.WebhookLimit(); n >= 0 {
		return fmt.Sprintf("Appwrite Cloud, %d webhooks per project", n)
	}
	return "Appwrite Cloud, unlimited webhooks"
}

func printStack(w io.Writer, st *stack.Stack, scripted bool) {
	d := st.Demo
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  chat page        %s/   sign in as %s / %s\n", d.Domains["chat"], d.UserEmail, localappwrite.DemoUserPassword)
	switch {
	case scripted:
		fmt.Fprintf(w, "  %-16s scripted demo model (try: \"show my databases\", \"ask me something\", \"remember I like short answers\")\n", "model")
	case strings.TrimSpace(os.Getenv("LLM_API_KEY")) != "":
		fmt.Fprintf(w, "  %-16s LLM_API_KEY from your shell (LLM_MODEL %q)\n", "model", os.Getenv("LLM_MODEL"))
	default:
		fmt.Fprintf(w, "  %-16s none: set LLM_API_KEY, or run scripts/dev -model scripted\n", "model")
	}
	for _, name := range staging.Functions {
		fmt.Fprintf(w, "  %-16s %s   (GET %s/health; domain %s)\n", name, st.URLs[name], st.URLs[name], d.Domains[name])
	}
	fmt.Fprintf(w, "  %-16s %s   (project %s; plays %s)\n", "appwrite", d.Endpoint, d.ProjectID, profileLine(st.Appwrite.Server))
	fmt.Fprintf(w, "    API key          %s…   (every scope; full value in %s)\n", d.APIKey[:min(24, len(d.APIKey))], filepath.Join(st.StateDir, "stack.json"))
	fmt.Fprintf(w, "    database/table   %s / %s\n", d.DatabaseID, d.TableID)
	fmt.Fprintf(w, "    progress table   %s / %s   (turn's Realtime sink; the demo user's session is in %s)\n", d.DatabaseID, d.ProgressTableID, filepath.Join(st.StateDir, "stack.json"))
	fmt.Fprintf(w, "    tickets table    %s / %s   (events to try: scripts/dev -demo subscribes to its new rows)\n", d.DatabaseID, d.TicketsTableID)
	fmt.Fprintf(w, "    bucket           %s\n", d.BucketID)
	fmt.Fprintf(w, "    function         %s (event: new %s rows)\n", d.FunctionID, d.TableID)
	fmt.Fprintf(w, "    demo user        %s <%s>, OAuth token in %s\n", d.UserID, d.UserEmail, filepath.Join(st.StateDir, "stack.json"))
	fmt.Fprintf(w, "    OAuth issuer     %s   (JWKS %s)\n", d.Issuer, d.JWKSURL)
	fmt.Fprintf(w, "    connect a client MCP server URL %s/mcp; sign in as %s / %s (docs/events.md, \"Connect a client\")\n", st.URLs["mcp-events"], d.UserEmail, localappwrite.DemoUserPassword)
	fmt.Fprintf(w, "    automations      chat's events callback %s/api/events/<id> (https; certificate in %s); chat runs every 5 minutes (docs/chat.md, \"Automations\")\n",
		st.Appwrite.SecureDomainURL("chat"), filepath.Join(st.StateDir, "appwrite-ca.pem"))
	fmt.Fprintf(w, "    admin            %s   (see docs/local-appwrite.md)\n", d.AdminURL)
	if strings.TrimSpace(os.Getenv("AGENT_API_KEY")) != "" {
		fmt.Fprintf(w, "  %-16s X-Session-API-Key for turn and title (chat sends it): AGENT_API_KEY from your shell\n", "session key")
	} else {
		fmt.Fprintf(w, "  %-16s X-Session-API-Key for turn and title (chat sends it): AGENT_API_KEY in %s\n", "session key", filepath.Join(st.StateDir, "secrets.json"))
	}
	fmt.Fprintln(w)
}
