package deploy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"appwrite-agent/shared/awclient"
)

// step is one change of the run, said in the words of the Done / Not done lists.
type step struct {
	what string
	do   func(ctx context.Context) error
}

// apply makes the changes of the plan, in order: functions, domains, variables, tables, then the
// deployments and the health checks. A failure before the deployments stops the run there; a deployment that
// fails leaves the other functions' deployments going. Either way the error is an *Incomplete saying what
// was and was not done.
func (d *deployer) apply(ctx context.Context) error {
	p := d.p
	d.results = map[string]FunctionSummary{}
	var steps []step
	for _, name := range functionNames {
		fp := p.fns[name]
		switch {
		case fp.current == nil:
			steps = append(steps, step{"create function " + name, func(ctx context.Context) error {
				_, err := d.api.CreateFunction(ctx, fp.spec)
				return err
			}})
		case len(fp.changes) > 0:
			steps = append(steps, step{"update function " + name + " (" + strings.Join(fp.changes, "; ") + ")", func(ctx context.Context) error {
				_, err := d.api.UpdateFunction(ctx, fp.spec)
				return err
			}})
		}
	}
	for _, name := range functionNames {
		fp := p.fns[name]
		if fp.newRule {
			steps = append(steps, step{"create " + name + "'s domain " + fp.domain, func(ctx context.Context) error {
				_, err := d.api.CreateFunctionRule(ctx, fp.domain, name)
				return err
			}})
		}
	}
	for _, name := range functionNames {
		var keys []string
		var todo []*varStep
		for _, s := range p.vars {
			if s.fn == name && (s.action == varCreate || s.action == varUpdate) {
				keys, todo = append(keys, s.key), append(todo, s)
			}
		}
		if len(todo) > 0 {
			steps = append(steps, step{"set " + name + "'s variables " + strings.Join(keys, ", "), func(ctx context.Context) error { return d.writeVars(ctx, todo) }})
		}
	}
	for _, dp := range p.dbs {
		if dp.create {
			steps = append(steps, step{"create database " + dp.id, func(ctx context.Context) error { return d.api.CreateDatabase(ctx, dp.id, dp.name) }})
		}
		for _, tp := range dp.tables {
			cols := tp.missing
			if tp.create {
				cols = tp.table.Columns
				steps = append(steps, step{"create table " + dp.id + "/" + tp.table.ID + " (row security on, no table permission)", func(ctx context.Context) error {
					return d.api.CreateTable(ctx, dp.id, tp.table)
				}})
			}
			if len(cols) > 0 {
				var keys []string
				for _, c := range cols {
					keys = append(keys, c.Key)
				}
				steps = append(steps, step{"add the columns " + strings.Join(keys, ", ") + " to " + dp.id + "/" + tp.table.ID, func(ctx context.Context) error {
					for _, c := range cols {
						if err := d.api.CreateColumn(ctx, dp.id, tp.table.ID, c); err != nil && awclient.TypeOf(err) != "column_already_exists" {
							return err
						}
					}
					return nil
				}})
			}
		}
	}
	if slices.ContainsFunc(p.dbs, func(dp *dbPlan) bool {
		return slices.ContainsFunc(dp.tables, func(tp *tablePlan) bool { return tp.create || len(tp.missing) > 0 || len(tp.pending) > 0 })
	}) {
		steps = append(steps, step{"wait until Appwrite has made the new columns", d.waitColumns})
	}

	for i, s := range steps {
		d.logf("  %s", s.what)
		if err := s.do(ctx); err != nil {
			d.done = stepNames(steps[:i])
			d.notDone = append(stepNames(steps[i:]), d.deploySteps()...)
			for _, name := range functionNames {
				d.results[name] = FunctionSummary{URL: p.fns[name].url, Deployment: activeOf(p.fns[name]), Status: StatusNotReached}
			}
			return &Incomplete{Err: fmt.Errorf("%s: %w", s.what, err), Done: d.done, NotDone: d.notDone}
		}
	}
	d.done = stepNames(steps)
	return d.deployAll(ctx)
}

func stepNames(steps []step) []string {
	out := make([]string, 0, len(steps))
	for _, s := range steps {
		out = append(out, s.what)
	}
	return out
}

func activeOf(fp *fnPlan) string {
	if fp.current == nil {
		return ""
	}
	return fp.current.DeploymentId
}

// deploySteps are the deployment steps of the plan, as the Not done list says them.
func (d *deployer) deploySteps() []string {
	var out []string
	for _, name := range functionNames {
		if fp := d.p.fns[name]; fp.upload {
			out = append(out, "deploy "+name+" ("+fp.why+")")
		}
	}
	return append(out, "check every function's /health on its domain")
}

// writeVars creates or updates the variables of todo (one function's), keeping this machine's record of the
// secrets it writes.
func (d *deployer) writeVars(ctx context.Context, todo []*varStep) error {
	st := d.p.st
	for _, s := range todo {
		rec := st.Secrets[s.key]
		if s.secret {
			// The record first: a run that stops after the write still has the value.
			if rec == nil || rec.SHA256 != sha256Hex(s.value) {
				rec = &stateSecret{SHA256: sha256Hex(s.value), Stored: map[string]string{}}
				if s.key != varLLMKey {
					rec.Value = s.value
				}
				for fn, updated := range s.holders {
					rec.Stored[fn] = updated
				}
				st.Secrets[s.key] = rec
				if err := d.saveState(st); err != nil {
					return fmt.Errorf("keep %s on this machine: %w", s.key, err)
				}
			}
		}
		var updated string
		if s.action == varCreate {
			v, err := d.api.CreateVariable(ctx, s.fn, s.key, s.value, s.secret)
			if err != nil {
				return err
			}
			updated = v.UpdatedAt
		} else {
			v, err := d.api.UpdateVariable(ctx, s.fn, s.id, s.key, s.value)
			if err != nil {
				return err
			}
			updated = v.UpdatedAt
		}
		if s.secret {
			rec.Stored[s.fn] = updated
			if err := d.saveState(st); err != nil {
				return fmt.Errorf("keep %s on this machine: %w", s.key, err)
			}
		}
	}
	return nil
}

// waitColumns waits until every column of the planned tables is available (Appwrite's database worker makes
// them: "processing", then "available").
func (d *deployer) waitColumns(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, d.opts.HealthTimeout)
	defer cancel()
	for {
		pending := ""
		for _, dp := range d.p.dbs {
			for _, tp := range dp.tables {
				info, err := d.api.Table(ctx, dp.id, tp.table.ID)
				if err != nil {
					return err
				}
				for _, c := range tp.table.Columns {
					switch st := info.Columns[c.Key]; st {
					case "available":
					case "failed", "stuck":
						return fmt.Errorf("the column %s/%s.%s is %s in Appwrite: delete it in the Console and run deploy again", dp.id, tp.table.ID, c.Key, st)
					default:
						pending = dp.id + "/" + tp.table.ID + "." + c.Key
					}
				}
			}
		}
		if pending == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the column %s is not available yet: %w", pending, ctx.Err())
		case <-time.After(d.opts.PollInterval):
		}
	}
}

// deployResult is one function's deployment outcome.
type deployResult struct {
	id     string
	err    error
	status string // the deployment's last status
}

// deployAll uploads the functions that need it, waits for their builds with a line per status change,
// checks that each new deployment is active, then checks every function's /health on its domain.
func (d *deployer) deployAll(ctx context.Context) error {
	p := d.p
	results := map[string]*deployResult{}
	var todo []string
	for _, name := range functionNames {
		if p.fns[name].upload {
			todo = append(todo, name)
		}
	}
	if len(todo) == 0 {
		d.logf("  every function's active deployment was built from its staged code and configuration: nothing to upload")
	}
	for _, name := range todo {
		fp := p.fns[name]
		id, err := newDeploymentID(fp.archive.SHA256, d.opts.Random)
		if err != nil {
			return err
		}
		d.logf("  %-16s uploading %s (%d files, %s; %s)", name, id, fp.archive.Files, sizeOf(len(fp.archive.Data)), fp.why)
		r := &deployResult{id: id}
		results[name] = r
		if _, r.err = d.api.Upload(ctx, name, id, fp.archive.Data); r.err == nil {
			d.uploaded = append(d.uploaded, name)
		}
	}
	var wg sync.WaitGroup
	for _, name := range todo {
		r := results[name]
		if r.err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.status, r.err = d.waitBuild(ctx, name, r.id)
		}()
	}
	wg.Wait()
	for _, name := range todo {
		r := results[name]
		if r.err != nil {
			continue
		}
		f, err := d.api.Function(ctx, name)
		switch {
		case err != nil:
			r.err = err
		case f.DeploymentId != r.id:
			r.err = fmt.Errorf("deployment %s of %s is ready, but Appwrite did not activate it: the active deployment is %q (another deployment started after it?)", r.id, name, f.DeploymentId)
		}
	}

	// Health of every function whose deployment is in place.
	active := map[string]string{}
	for _, name := range functionNames {
		if r := results[name]; r != nil {
			if r.err == nil {
				active[name] = r.id
			}
		} else {
			active[name] = activeOf(p.fns[name])
		}
	}
	health := map[string]error{}
	var mu sync.Mutex
	for name, id := range active {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := d.waitHealthy(ctx, p.fns[name].url, id)
			mu.Lock()
			health[name] = err
			mu.Unlock()
		}()
	}
	wg.Wait()

	var errs []error
	for _, name := range functionNames {
		fp := p.fns[name]
		r := results[name]
		res := FunctionSummary{URL: fp.url, Deployment: active[name], Status: StatusUpToDate}
		switch {
		case r != nil && r.err != nil:
			res.Status, res.Deployment = StatusFailed, activeOf(fp)
			errs = append(errs, fmt.Errorf("%s: %w", name, r.err))
			d.notDone = append(d.notDone, "deploy "+name+" ("+fp.why+"): "+r.err.Error())
		case health[name] != nil:
			res.Status = StatusFailed
			errs = append(errs, fmt.Errorf("%s: %w", name, health[name]))
			if r != nil {
				d.done = append(d.done, "deploy "+name+" (deployment "+r.id+")")
			}
			d.notDone = append(d.notDone, name+" answers GET /health on "+fp.url+": "+health[name].Error())
		default:
			if r != nil {
				res.Status = StatusDeployed
				d.done = append(d.done, "deploy "+name+" (deployment "+r.id+")")
			}
			d.done = append(d.done, name+" answers GET /health on "+fp.url)
		}
		d.results[name] = res
	}
	if len(errs) > 0 {
		return &Incomplete{Err: errors.Join(errs...), Done: d.done, NotDone: d.notDone}
	}
	return nil
}

// waitBuild polls a deployment until it is ready or failed, logging each status change.
func (d *deployer) waitBuild(ctx context.Context, name, id string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, d.opts.BuildTimeout)
	defer cancel()
	start := time.Now()
	last := ""
	for {
		dep, err := d.api.Deployment(ctx, name, id)
		if err != nil {
			return last, err
		}
		if dep.Status != last {
			last = dep.Status
			d.logf("  %-16s %s (%s)", name, last, time.Since(start).Round(time.Second))
		}
		switch dep.Status {
		case "ready":
			return last, nil
		case "failed", "canceled":
			return last, fmt.Errorf("the build of deployment %s %s:\n%s", id, dep.Status, tail(dep.BuildLogs, 20))
		}
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("deployment %s was still %s after %s: %w", id, last, d.opts.BuildTimeout, ctx.Err())
		case <-time.After(d.opts.PollInterval):
		}
	}
}

// tail is the last n lines of s, indented.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

func sizeOf(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (n+1023)/1024)
}
