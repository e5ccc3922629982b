package main

// This file is owned by the localappwrite work (shared/localappwrite): it starts the local Appwrite stand-in
// for the dev stack. main.go calls startAppwrite after the functions are up, prints it, and stops it on exit.

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

	"appwrite-agent/shared/localappwrite"
)

// appwriteStack is the running local Appwrite stand-in of the dev stack and what was seeded in it.
type appwriteStack struct {
	run       *localappwrite.Running
	demo      *localappwrite.Demo
	stackPath string
}

// startAppwrite starts the stand-in on addr (the default is 127.0.0.1:8080, API under /v1), seeds the demo
// project (API key, database "main" with table "conversations", bucket "uploads", the functions at
// functionURLs keyed by name, "title" triggered by new conversation rows, a demo user and its OAuth token) and
// writes stackPath (.dev/stack.json). It stops when ctx ends or stop is called.
func startAppwrite(ctx context.Context, addr string, functionURLs map[string]string, stackPath string) (*appwriteStack, error) {
	logger := log.New(os.Stdout, "[appwrite] ", 0)
	run, err := localappwrite.Start(ctx, addr, localappwrite.Options{Logf: logger.Printf})
	if err != nil {
		return nil, err
	}
	demo, err := run.Server.SeedDemo(localappwrite.DemoOptions{FunctionURLs: functionURLs})
	if err != nil {
		_ = run.Shutdown(context.Background())
		return nil, fmt.Errorf("seeding the local Appwrite: %w", err)
	}
	if err := localappwrite.WriteStackJSON(stackPath, demo); err != nil {
		_ = run.Shutdown(context.Background())
		return nil, fmt.Errorf("writing %s: %w", stackPath, err)
	}
	return &appwriteStack{run: run, demo: demo, stackPath: stackPath}, nil
}

// print tells how to reach the stand-in and what was seeded.
func (a *appwriteStack) print(w io.Writer) {
	d := a.demo
	fmt.Fprintf(w, "  %-16s %s   (project %s)\n", "appwrite", d.Endpoint, d.ProjectID)
	fmt.Fprintf(w, "    API key          %s…   (every scope; full value in %s)\n", d.APIKey[:24], a.stackPath)
	fmt.Fprintf(w, "    database/table   %s / %s\n", d.DatabaseID, d.TableID)
	fmt.Fprintf(w, "    bucket           %s\n", d.BucketID)
	fmt.Fprintf(w, "    function         %s (event: new %s rows)\n", d.FunctionID, d.TableID)
	fmt.Fprintf(w, "    demo user        %s <%s>, OAuth token in %s\n", d.UserID, d.UserEmail, a.stackPath)
	fmt.Fprintf(w, "    OAuth issuer     %s   (JWKS %s)\n", d.Issuer, d.JWKSURL)
	fmt.Fprintf(w, "    admin            %s   (see docs/local-appwrite.md)\n", d.AdminURL)
}

// stop shuts the stand-in down.
func (a *appwriteStack) stop(ctx context.Context) error { return a.run.Shutdown(ctx) }
