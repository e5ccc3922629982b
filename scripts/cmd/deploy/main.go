// Command deploy installs the product in an Appwrite project, or upgrades it in place, with an API key:
// the five functions with their settings, domains and variables, the chat's tables and turn's progress table,
// and a deployment of each function whose staged code or configuration changed (docs/deploy.md).
//
// Usage:
//
//	scripts/deploy -endpoint https://fra.cloud.appwrite.io/v1 -project <id> -key <api key> [-llm-model m] [-llm-base-url u]
//	               [-functions-domain d] [-chat-database chat] [-dry-run] [-json] [-rotate-keys]
//
// -endpoint, -project and -key default to APPWRITE_ENDPOINT, APPWRITE_PROJECT_ID and APPWRITE_API_KEY;
// LLM_API_KEY comes from the environment only. Progress goes to stderr, the summary to stdout (with -json,
// one JSON object). The exit status is 0 when everything is deployed and healthy, 1 when deploy stopped
// halfway (it says what was and was not done; run it again to finish), 2 when it refused before changing
// anything.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"appwrite-agent/scripts/internal/deploy"
)

func main() {
	var o deploy.Options
	flag.StringVar(&o.Endpoint, "endpoint", os.Getenv("APPWRITE_ENDPOINT"), "Appwrite API endpoint, ending in /v1 (APPWRITE_ENDPOINT)")
	flag.StringVar(&o.Project, "project", os.Getenv("APPWRITE_PROJECT_ID"), "project id (APPWRITE_PROJECT_ID)")
	flag.StringVar(&o.Key, "key", os.Getenv("APPWRITE_API_KEY"), "API key with deploy's scopes (APPWRITE_API_KEY)")
	flag.StringVar(&o.LLMModel, "llm-model", "", "LLM_MODEL of turn and title (kept as it is when empty)")
	flag.StringVar(&o.LLMBaseURL, "llm-base-url", "", "LLM_BASE_URL of turn and title, an OpenAI-compatible endpoint (kept as it is when empty)")
	flag.StringVar(&o.FunctionsDomain, "functions-domain", "", "the server's _APP_DOMAIN_FUNCTIONS, for new function domains (default: <region>.appwrite.run on Appwrite Cloud, functions.localhost on this machine)")
	flag.StringVar(&o.ChatDatabase, "chat-database", envOr("CHAT_DATABASE_ID", "chat"), "the chat's database (CHAT_DATABASE_ID): its tables, turn's progress table, and the conversations table that starts title")
	flag.StringVar(&o.Skills, "skills", "", "stage turn with the skills of this folder instead of functions/turn/skills")
	flag.BoolVar(&o.AllowNoSkills, "allow-no-skills", false, "deploy turn without Appwrite skills (run scripts/update-skills instead)")
	flag.BoolVar(&o.DryRun, "dry-run", false, "print the whole plan (created, changed, unchanged) and stop before any change")
	asJSON := flag.Bool("json", false, `print the summary as one JSON object: {"functions": {"<name>": {"url", "deployment", "status"}}, "chat_url", "manual_steps": [...]}`)
	flag.BoolVar(&o.RotateKeys, "rotate-keys", false, "prepend a new key to SEAL_KEYS, APPWRITE_WEBHOOK_SECRET_KEYS and CHAT_SEAL_KEYS, keeping the old ones (docs/security.md)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "deploy: unexpected arguments %q (flags only; see scripts/deploy -h)\n", flag.Args())
		os.Exit(2)
	}
	o.LLMAPIKey = os.Getenv("LLM_API_KEY")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := deploy.Run(ctx, o)
	if sum != nil {
		if *asJSON {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			_ = enc.Encode(sum)
		} else {
			sum.WriteText(os.Stdout, o.DryRun)
		}
	}
	var refusal *deploy.Refusal
	switch {
	case errors.As(err, &refusal):
		fmt.Fprintln(os.Stderr, "deploy:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "deploy:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
