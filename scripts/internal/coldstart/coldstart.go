// Package coldstart measures each staged function binary the way the runtime starts it: from process start
// to the first answer of GET /health (cold start), its resident memory at idle, and after one typical
// request. Cold start is read as a ratio to a baseline, a minimal handler built and started the same way
// (BuildBaseline), because absolute milliseconds differ fivefold between machines. The measurement is a test
// behind a flag (scripts/load); the figures go into docs/benchmarks.md.
package coldstart

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"appwrite-agent/scripts/internal/stack"
	"appwrite-agent/shared/devkit/runtimebuild"
)

// BaselineName names the baseline in summaries.
const BaselineName = "baseline"

// MaxColdRatio is the most a function's median cold start may be of the baseline's, measured in one run.
const MaxColdRatio = 1.5

// baselineMain is the baseline's whole handler: what every function answers on GET /health, and nothing
// else.
const baselineMain = `// Package handler is the cold-start baseline: a function that answers GET /health and nothing more.
package handler

import "github.com/open-runtimes/types-for-go/v4/openruntimes"

// Main answers every request with {"status":"ok"}.
func Main(rt openruntimes.Context) openruntimes.Response {
	return rt.Res.Json(map[string]any{"status": "ok"})
}
`

// BuildBaseline writes the baseline handler module under dir and builds it as the runtime builds a
// function (runtimebuild.BuildServer, the build scripts/stage -build uses), returning the binary's path.
func BuildBaseline(ctx context.Context, dir string, out io.Writer) (string, error) {
	handler := filepath.Join(dir, "handler")
	if err := os.MkdirAll(handler, 0o755); err != nil {
		return "", err
	}
	mod := "module " + runtimebuild.HandlerModule + "\n\ngo " + runtimebuild.GoDirective +
		"\n\nrequire github.com/open-runtimes/types-for-go/v4 " + runtimebuild.TypesForGoVersion + "\n"
	if err := os.WriteFile(filepath.Join(handler, "go.mod"), []byte(mod), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(handler, "main.go"), []byte(baselineMain), 0o644); err != nil {
		return "", err
	}
	tidy := exec.CommandContext(ctx, "go", "mod", "tidy")
	tidy.Dir = handler
	tidy.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	tidy.Stdout, tidy.Stderr = out, out
	if err := tidy.Run(); err != nil {
		return "", fmt.Errorf("go mod tidy in %s: %w", handler, err)
	}
	bin := filepath.Join(dir, "bin", BaselineName)
	if err := runtimebuild.BuildServer(ctx, handler, filepath.Join(dir, "server"), bin, nil, out); err != nil {
		return "", err
	}
	return bin, nil
}

// Sample is one start of a function.
type Sample struct {
	// Cold is process start to the first 200 from GET /health.
	Cold time.Duration
	// Idle is the memory a second after that; After the memory after the typical request.
	Idle, After stack.Mem
	// Err is the typical request's failure, if any.
	Err error
}

// Spec is how to start and exercise one function.
type Spec struct {
	// Name is the function; Binary its runtime server; Env its whole environment.
	Name, Binary string
	Env          []string
	// Typical sends one typical request to the instance at base URL.
	Typical func(ctx context.Context, base string) error
}

// Run starts spec's binary runs times, one after another, and measures each start.
func Run(ctx context.Context, spec Spec, runs int) ([]Sample, error) {
	var out []Sample
	for range runs {
		s, err := once(ctx, spec)
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}

func once(ctx context.Context, spec Spec) (Sample, error) {
	var s Sample
	port, release, err := stack.ReservePort()
	if err != nil {
		return s, err
	}
	defer release() // after the process has stopped (deferred below, so run first)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, spec.Binary, "-listen", addr)
	cmd.Env = spec.Env
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	// A fresh connection per poll, as a runtime's first request would make.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return s, err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	for {
		res, err := client.Get("http://" + addr + "/health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				s.Cold = time.Since(start)
				break
			}
		}
		if ctx.Err() != nil {
			return s, fmt.Errorf("%s: no /health answer: %v", spec.Name, err)
		}
		time.Sleep(500 * time.Microsecond)
	}
	time.Sleep(time.Second)
	s.Idle = stack.ReadMem(cmd.Process.Pid)
	if spec.Typical != nil {
		s.Err = spec.Typical(ctx, "http://"+addr)
		time.Sleep(200 * time.Millisecond)
		s.After = stack.ReadMem(cmd.Process.Pid)
	}
	return s, nil
}

// Summary is the medians (and extremes) of a function's samples.
type Summary struct {
	Name                    string
	Runs                    int
	ColdMin, ColdMed, Cold9 time.Duration // fastest, median, slowest
	IdleRSS, AfterRSS, HWM  int64         // medians, kB
	Errors                  []string
}

// Summarize reduces samples to a Summary.
func Summarize(name string, ss []Sample) Summary {
	sum := Summary{Name: name, Runs: len(ss)}
	if len(ss) == 0 {
		return sum
	}
	var cold []time.Duration
	var idle, after, hwm []int64
	for _, s := range ss {
		cold = append(cold, s.Cold)
		idle = append(idle, s.Idle.RSS)
		after = append(after, s.After.RSS)
		hwm = append(hwm, s.After.HWM)
		if s.Err != nil && len(sum.Errors) < 3 {
			sum.Errors = append(sum.Errors, s.Err.Error())
		}
	}
	slices.Sort(cold)
	sum.ColdMin, sum.ColdMed, sum.Cold9 = cold[0], cold[len(cold)/2], cold[len(cold)-1]
	med := func(v []int64) int64 { slices.Sort(v); return v[len(v)/2] }
	sum.IdleRSS, sum.AfterRSS, sum.HWM = med(idle), med(after), med(hwm)
	return sum
}

// Ratio is s's median cold start over base's.
func Ratio(s, base Summary) float64 {
	if base.ColdMed <= 0 {
		return 0
	}
	return float64(s.ColdMed) / float64(base.ColdMed)
}

// Markdown renders summaries as a table, each median cold start also as a ratio to base's.
func Markdown(base Summary, sums []Summary) string {
	var b strings.Builder
	b.WriteString("| function | runs | cold start min / median / max | median / baseline's | idle VmRSS | VmRSS after a typical request | VmHWM after it |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range append([]Summary{base}, sums...) {
		fmt.Fprintf(&b, "| %s | %d | %.1f / %.1f / %.1f ms | %.2f | %.1f MB | %.1f MB | %.1f MB |\n", s.Name, s.Runs,
			ms(s.ColdMin), ms(s.ColdMed), ms(s.Cold9), Ratio(s, base), mb(s.IdleRSS), mb(s.AfterRSS), mb(s.HWM))
	}
	return b.String()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mb(kb int64) float64        { return float64(kb) / 1024 }
