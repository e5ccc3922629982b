// Command update-skills installs the Appwrite agent skills of the current appwrite/agent-skills release
// into functions/turn/skills/<name>/SKILL.md (plus the repository's LICENSE), where the turn function
// embeds them at build time (scripts/internal/skills). scripts/deploy runs it itself when no skill is
// installed; run it to update them.
//
// Usage:
//
//	scripts/update-skills [-ref TAG] [-out functions/turn/skills] [-repo appwrite/agent-skills] [-base-url https://api.github.com]
//
// GITHUB_TOKEN, when set, is sent to the API to lift its rate limit.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"appwrite-agent/scripts/internal/skills"
	"appwrite-agent/scripts/internal/staging"
)

func main() {
	var o skills.Options
	flag.StringVar(&o.Out, "out", "", "skills folder (default <repo>/functions/turn/skills)")
	flag.StringVar(&o.Repo, "repo", skills.DefaultRepo, "GitHub repository owner/name")
	flag.StringVar(&o.Ref, "ref", "", "tag, branch or commit (default: the latest release)")
	flag.StringVar(&o.BaseURL, "base-url", skills.DefaultBaseURL, "GitHub API base URL (tests point it at a local server)")
	flag.DurationVar(&o.Timeout, "timeout", 0, "overall time limit (default 2m)")
	flag.Parse()
	o.Token = os.Getenv("GITHUB_TOKEN")
	if o.Out == "" {
		root, err := staging.FindRoot(".")
		if err != nil {
			fmt.Fprintln(os.Stderr, "update-skills:", err)
			os.Exit(1)
		}
		o.Out = filepath.Join(root, "functions", "turn", "skills")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := skills.Install(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "update-skills:", err)
		os.Exit(1)
	}
}
