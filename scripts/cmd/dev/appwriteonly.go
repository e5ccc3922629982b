package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"appwrite-agent/scripts/internal/deploy"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/scriptedllm"
)

// appwriteOnlyProject is the empty project of -appwrite-only.
const appwriteOnlyProject = "deploy"

// appwriteOnlyStack is .dev/stack.json of -appwrite-only: what scripts/deploy needs to deploy to the stand-in.
type appwriteOnlyStack struct {
	Endpoint  string `json:"endpoint"`
	ProjectID string `json:"projectId"`
	APIKey    string `json:"apiKey"`
	// Issuer is the OAuth issuer MCP clients sign in at (the demo user, demo@example.com / demo-password).
	Issuer string `json:"issuer"`
	// AdminURL is the stand-in's admin API (docs/local-appwrite.md).
	AdminURL string `json:"adminUrl"`
}

// runAppwriteOnly starts only the Appwrite stand-in at addr, with an empty project (no functions) and an API
// key with deploy's scopes, writes stack.json into devDir and prints the scripts/deploy line to run against it
// (with scripted, the scripted demo model's settings in it), then waits until ctx ends.
func runAppwriteOnly(ctx context.Context, out io.Writer, addr, devDir string, aw localappwrite.Options, scripted bool) error {
	// The deployed webhook-ingress is on a loopback function domain (<id>.functions.localhost): the
	// stand-in-only allowance lets webhooks point at it, as the dev stack does.
	aw.AllowLoopbackWebhookURLs = true
	if aw.Logf == nil {
		aw.Logf = func(string, ...any) {}
	}
	run, err := localappwrite.Start(ctx, addr, aw)
	if err != nil {
		return fmt.Errorf("local Appwrite on %s: %w", addr, err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = run.Shutdown(sctx)
	}()
	key, err := run.Server.SeedEmptyProject(appwriteOnlyProject, "Deploy", deploy.Scopes())
	if err != nil {
		return err
	}
	st := appwriteOnlyStack{Endpoint: run.Server.Endpoint(), ProjectID: appwriteOnlyProject, APIKey: key,
		Issuer: run.Server.Issuer(), AdminURL: run.URL + localappwrite.AdminPrefix}
	path := filepath.Join(devDir, "stack.json")
	if err := localappwrite.WriteStackJSON(path, st); err != nil {
		return err
	}
	env, flags := "", ""
	if scripted {
		model := scriptedllm.New()
		model.SetHandler(scriptedllm.Demo())
		defer model.Close()
		env = "LLM_API_KEY=scripted "
		flags = " -llm-model gpt-4o-mini -llm-base-url " + model.BaseURL()
		fmt.Fprintf(out, "model: scripted demo model at %s (no key needed)\n", model.BaseURL())
	}
	fmt.Fprintf(out, "\n  appwrite         %s   (empty project %q; plays %s; functions domains *.%s)\n", st.Endpoint, appwriteOnlyProject, profileLine(run.Server), run.Server.FunctionsDomain())
	fmt.Fprintf(out, "    API key          scopes %s (in %s)\n", strings.Join(deploy.Scopes(), ", "), path)
	fmt.Fprintf(out, "    MCP sign-in      %s / %s at %s\n", localappwrite.DemoUserEmail, localappwrite.DemoUserPassword, st.Issuer)
	fmt.Fprintf(out, "    admin            %s   (see docs/local-appwrite.md)\n", st.AdminURL)
	fmt.Fprintf(out, "\ndeploy to it with:\n\n  %sscripts/deploy -endpoint %s -project %s -key %s%s\n\n", env, st.Endpoint, appwriteOnlyProject, key, flags)
	fmt.Fprintln(out, "running (Ctrl-C stops the stand-in and everything deployed to it)")
	<-ctx.Done()
	fmt.Fprintln(out, "\nstopping...")
	return nil
}
