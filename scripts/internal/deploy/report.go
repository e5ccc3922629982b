package deploy

import (
	"fmt"
	"io"
	"net/url"
	"strings"
)

// summary builds the run's summary (with dryRun, what the run would do).
func (d *deployer) summary(dryRun bool) *Summary {
	p := d.p
	s := &Summary{Functions: map[string]FunctionSummary{}, ChatURL: p.fns["chat"].url + "/", ManualSteps: d.manualSteps(),
		Uploaded: d.uploaded}
	for _, name := range functionNames {
		fp := p.fns[name]
		if dryRun || d.results == nil {
			st := StatusUpToDate
			if fp.upload {
				st = StatusWillDeploy
			}
			s.Functions[name] = FunctionSummary{URL: fp.url, Deployment: activeOf(fp), Status: st}
		} else {
			s.Functions[name] = d.results[name]
		}
	}
	s.Changes = d.changeCount()
	if d.loopback {
		s.Notes = append(s.Notes, "The endpoint is on this machine, so deploy sets the local allowances on every function, as the local stack does: SAFEHTTP_ALLOW="+localAllow+" and SAFEHTTP_ALLOW_HTTP="+localAllowHTTP+" (a model, MCP server or receiver on loopback, plain http). It never sets them for any other endpoint, and no flag does.")
	}
	if !d.cloud {
		n := "mcp-events needs Appwrite Cloud: it acts in the user's project with the user's OAuth access token, which only Appwrite Cloud accepts (the open-source server reads no bearer token). On this server turn, title, chat and webhook-ingress work; mcp-events answers, but cannot make subscriptions."
		if d.loopback {
			n += " (The local Appwrite stand-in of scripts/dev plays Appwrite Cloud there.)"
		}
		s.Notes = append(s.Notes, n)
	}
	s.Notes = append(s.Notes, d.notes...)
	return s
}

// changeCount is the number of changes the plan makes.
func (d *deployer) changeCount() int {
	n := 0
	for _, fp := range d.p.fns {
		if fp.current == nil || len(fp.changes) > 0 {
			n++
		}
		if fp.newRule {
			n++
		}
		if fp.upload {
			n++
		}
	}
	for _, s := range d.p.vars {
		if s.action == varCreate || s.action == varUpdate {
			n++
		}
	}
	for _, dp := range d.p.dbs {
		if dp.create {
			n++
		}
		for _, tp := range dp.tables {
			if tp.create || len(tp.missing) > 0 {
				n++
			}
		}
	}
	return n
}

// manualSteps are what an API key cannot do, word for word, with the Console page to open.
func (d *deployer) manualSteps() []string {
	chat := d.p.fns["chat"].url
	u, _ := url.Parse(chat)
	return []string{
		fmt.Sprintf("Add a Web platform for the chat page (an API key cannot create platforms, and without one Appwrite refuses the page's sign-in and Realtime from %s): open %s, choose Add platform → Web, and enter the hostname %s.",
			origin(chat), d.consoleURL("overview/platforms"), u.Hostname()),
	}
}

// printPlan writes the plan of a dry run.
func (d *deployer) printPlan() {
	p := d.p
	w := d.log
	fmt.Fprintf(w, "\nPlan for project %s at %s (dry run: nothing was changed)\n", d.opts.Project, d.opts.Endpoint)
	fmt.Fprintln(w, "Functions:")
	for _, name := range functionNames {
		fp := p.fns[name]
		switch {
		case fp.current == nil:
			scopes := strings.Join(fp.spec.Scopes, " ")
			if scopes == "" {
				scopes = "none"
			}
			fmt.Fprintf(w, "  %-16s create (%s, timeout %d s, scopes %s)\n", name, fp.spec.Runtime, fp.spec.Timeout, scopes)
		case len(fp.changes) > 0:
			fmt.Fprintf(w, "  %-16s update: %s\n", name, strings.Join(fp.changes, "; "))
		default:
			fmt.Fprintf(w, "  %-16s unchanged\n", name)
		}
	}
	fmt.Fprintln(w, "Domains:")
	for _, name := range functionNames {
		fp := p.fns[name]
		verb := "unchanged"
		if fp.newRule {
			verb = "create"
		}
		fmt.Fprintf(w, "  %-16s %-9s %s\n", name, verb, fp.url)
	}
	fmt.Fprintln(w, "Variables:")
	for _, name := range functionNames {
		first := true
		for _, s := range p.vars {
			if s.fn != name {
				continue
			}
			label := ""
			if first {
				label, first = name, false
			}
			desc := s.key
			switch {
			case s.secret:
				desc += " (secret)"
			case s.readable:
				desc += " = " + s.value
			}
			verb := map[string]string{varCreate: "create", varUpdate: "update", varKeep: "keep", varSame: "unchanged"}[s.action]
			if s.why != "" {
				verb += ": " + s.why
			}
			fmt.Fprintf(w, "  %-16s %s  [%s]\n", label, desc, verb)
		}
	}
	fmt.Fprintln(w, "Tables:")
	for _, dp := range p.dbs {
		if dp.create {
			fmt.Fprintf(w, "  %-30s create database\n", dp.id)
		}
		for _, tp := range dp.tables {
			id := dp.id + "/" + tp.table.ID
			switch {
			case tp.create:
				fmt.Fprintf(w, "  %-30s create (row security on, no table permission; %d columns)\n", id, len(tp.table.Columns))
			case len(tp.missing) > 0:
				var keys []string
				for _, c := range tp.missing {
					keys = append(keys, c.Key)
				}
				fmt.Fprintf(w, "  %-30s add the columns %s\n", id, strings.Join(keys, ", "))
			default:
				fmt.Fprintf(w, "  %-30s unchanged\n", id)
			}
		}
	}
	fmt.Fprintln(w, "Deployments:")
	for _, name := range functionNames {
		fp := p.fns[name]
		if fp.upload {
			fmt.Fprintf(w, "  %-16s upload (%d files, %s): %s\n", name, fp.archive.Files, sizeOf(len(fp.archive.Data)), fp.why)
		} else {
			fmt.Fprintf(w, "  %-16s up to date (deployment %s)\n", name, fp.current.DeploymentId)
		}
	}
}

// WriteText writes the summary for a person: each function's URL, deployment and status, the chat page, the
// manual steps and the notes.
func (s *Summary) WriteText(w io.Writer, dryRun bool) {
	fmt.Fprintln(w)
	for _, name := range functionNames {
		f := s.Functions[name]
		dep := f.Deployment
		if dep == "" {
			dep = "(none yet)"
		}
		fmt.Fprintf(w, "  %-16s %-48s deployment %-36s %s\n", name, f.URL, dep, f.Status)
	}
	fmt.Fprintf(w, "\nOpen the chat page: %s\n", s.ChatURL)
	if len(s.ManualSteps) > 0 {
		fmt.Fprintln(w, "\nWhat the API key cannot do (do it once in the Console):")
		for i, m := range s.ManualSteps {
			fmt.Fprintf(w, "  %d. %s\n", i+1, m)
		}
	}
	if len(s.Notes) > 0 {
		fmt.Fprintln(w, "\nNotes:")
		for _, n := range s.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	switch {
	case dryRun && s.Changes == 0:
		fmt.Fprintln(w, "\nUp to date: a run would change nothing and upload nothing.")
	case dryRun:
		fmt.Fprintf(w, "\nDry run: %d changes planned, nothing was changed.\n", s.Changes)
	case s.Changes == 0:
		fmt.Fprintln(w, "\nUp to date: nothing was uploaded or changed.")
	default:
		fmt.Fprintf(w, "\nDone: %d changes, %d functions uploaded.\n", s.Changes, len(s.Uploaded))
	}
}
