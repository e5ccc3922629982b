// Command stage writes build/functions/<name>/ for every function: the self-contained openruntimes/handler
// module that appwrite.json points at and `appwrite push functions` uploads.
//
// Usage:
//
//	scripts/stage [-out build/functions] [-build] [name ...]
//	scripts/stage -plain [name ...]
//
// With -build it also builds each staged folder as the Go runtime does, into build/bin/<name>. With -plain it
// stages nothing and fails, naming each file, when the code a deployment would ship imports unsafe, carries
// assembly or uses sync.Pool without an exception in docs/CONVENTIONS.md, or reads the environment anywhere but
// the function's own config.go (scripts/test runs it).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"

	"appwrite-agent/scripts/internal/staging"
)

func main() {
	out := flag.String("out", "", "output folder (default <repo>/build/functions)")
	build := flag.Bool("build", false, "also build each staged function as the runtime does, into build/bin/<name>")
	var opts staging.Options
	flag.BoolVar(&opts.AllowNoSkills, "allow-no-skills", false, "stage turn even without Appwrite skills (run scripts/update-skills for a deploy)")
	flag.StringVar(&opts.Skills, "skills", "", "stage turn with the <name>/SKILL.md skills of this folder instead of functions/turn/skills")
	chatDB := flag.String("chat-database", envOr("CHAT_DATABASE_ID", staging.DefaultChatDatabase), "the chat function's database (CHAT_DATABASE_ID): title fires for new rows of its conversations table only")
	plain := flag.Bool("plain", false, "stage nothing; fail when shipped code imports unsafe, carries assembly, uses sync.Pool or reads the environment outside functions/<name>/config.go")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *plain {
		if err := checkPlain(ctx, flag.Args()); err != nil {
			fmt.Fprintln(os.Stderr, "stage:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, *out, *build, opts, *chatDB, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "stage:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, out string, build bool, opts staging.Options, chatDB string, names []string) error {
	root, err := staging.FindRoot(".")
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join(root, "build", "functions")
	}
	if len(names) == 0 {
		names = staging.Functions
		// The deploy's appwrite.json, beside the staged folders.
		raw, err := os.ReadFile(filepath.Join(root, "appwrite.json"))
		if err != nil {
			return err
		}
		staged, err := staging.StagedAppwriteJSON(raw, chatDB)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		dst := filepath.Join(filepath.Dir(out), "appwrite.json")
		if err := os.WriteFile(dst, staged, 0o644); err != nil {
			return err
		}
		fmt.Printf("wrote  %-16s -> %s (title: %s)\n", "appwrite.json", dst, staging.TitleEvent(chatDB))
	}
	for _, name := range names {
		if !slices.Contains(staging.Functions, name) {
			return fmt.Errorf("unknown function %q (known: %v)", name, staging.Functions)
		}
		dir := filepath.Join(out, name)
		if err := staging.StageWith(ctx, root, name, dir, opts); err != nil {
			return err
		}
		fmt.Printf("staged %-16s -> %s\n", name, dir)
		if build {
			bin := filepath.Join(root, "build", "bin", name)
			if err := staging.BuildServer(ctx, root, dir, filepath.Join(root, "build", "server", name), bin); err != nil {
				return err
			}
			fmt.Printf("built  %-16s -> %s\n", name, bin)
		}
	}
	return nil
}

func checkPlain(ctx context.Context, names []string) error {
	root, err := staging.FindRoot(".")
	if err != nil {
		return err
	}
	if len(names) == 0 {
		names = staging.Functions
	}
	return staging.CheckPlain(ctx, root, names)
}
