package loadtest

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var (
	load   = flag.Bool("load", false, "run the full load test (10,000 changes; scripts/load)")
	report = flag.String("report", "", "write the full run's report (Markdown) to this file")
	output = flag.String("output", "", "write the functions' output to this file")
)

func run(t *testing.T, cfg Config) *Report {
	t.Helper()
	cfg.Logf = t.Logf
	if *output != "" {
		f, err := os.Create(*output)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cfg.Output = f
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep.Markdown())
	if err := rep.Check(); err != nil {
		t.Error(err)
	}
	return rep
}

// TestLoadSmall is the CI-sized run of the harness: the same invariants with 20 subscriptions, 500 changes and
// one ingress restart.
func TestLoadSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	if *load {
		t.Skip("the full run is TestLoad")
	}
	run(t, Small())
}

// TestLoad is the full run (go test ./scripts/internal/loadtest -run TestLoad -load).
func TestLoad(t *testing.T) {
	if !*load {
		t.Skip("needs -load")
	}
	start := time.Now()
	rep := run(t, Full())
	t.Logf("whole run: %v", time.Since(start).Round(time.Second))
	if *report != "" {
		if err := os.MkdirAll(filepath.Dir(*report), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*report, []byte(rep.Markdown()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
