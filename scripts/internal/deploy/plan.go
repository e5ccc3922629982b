package deploy

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"

	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/tables"

	"github.com/appwrite/sdk-for-go/models"
)

// plan is what a run will do, read from the project before any change.
type plan struct {
	fns  map[string]*fnPlan
	vars []*varStep
	dbs  []*dbPlan
	st   *localState
	// functionsDomain is the domain new function domains are made under ("" when none is needed or known).
	functionsDomain string
}

// fnPlan is one function's part of the plan.
type fnPlan struct {
	name    string
	spec    functionSpec
	current *models.Function // nil: deploy creates it
	changes []string         // settings that differ (an update when not empty)
	domain  string           // the function's domain: an existing rule's, or the one deploy creates
	newRule bool
	url     string
	archive archive
	// upload is set when a new deployment is needed; why says what changed.
	upload bool
	why    string
}

// dbPlan is one database and the tables deploy keeps in it.
type dbPlan struct {
	id, name string
	create   bool
	tables   []*tablePlan
}

// tablePlan is one table: created, or its missing columns added.
type tablePlan struct {
	table   tables.Table
	create  bool
	missing []tables.Column // columns to add to an existing table
	pending []string        // columns Appwrite has not made available yet
}

// plan reads the project and plans the run. Nothing is changed.
func (d *deployer) plan(ctx context.Context) error {
	p := &plan{fns: map[string]*fnPlan{}}
	d.p = p
	st, err := d.loadState()
	if err != nil {
		return refuse("reading this machine's copy of the project's secrets: %v", err)
	}
	p.st = st
	rules := map[string][]proxyRule{}
	existing := map[string][]models.Variable{}
	for _, name := range functionNames {
		fp := &fnPlan{name: name, spec: d.specs[name], archive: d.archives[name]}
		p.fns[name] = fp
		f, err := d.api.Function(ctx, name)
		switch {
		case awclient.TypeOf(err) == "function_not_found":
		case err != nil:
			return refuse("reading the project failed: %v", err)
		default:
			fp.current = f
			fp.changes = fp.spec.changes(f)
			if rules[name], err = d.api.Rules(ctx, name); err != nil {
				return refuse("reading the project failed: %v", err)
			}
			if existing[name], err = d.api.Variables(ctx, name); err != nil {
				return refuse("reading the project failed: %v", err)
			}
		}
	}

	// Domains: the function's existing rule, or a new one under the server's functions domain.
	p.functionsDomain = d.functionsDomain(rules)
	for _, name := range functionNames {
		fp := p.fns[name]
		if r, ok := pickRule(rules[name], p.functionsDomain); ok {
			fp.domain = r.Domain
		} else {
			if p.functionsDomain == "" {
				return refuse("%s has no domain, and deploy cannot tell under which domain this server makes function domains (its _APP_DOMAIN_FUNCTIONS, which an API key cannot read). Run deploy with -functions-domain <that domain> (for example functions.example.com).", name)
			}
			sub, err := randomLabel(d.opts.Random)
			if err != nil {
				return err
			}
			fp.domain, fp.newRule = sub+"."+p.functionsDomain, true
		}
		fp.url = d.domainURL(fp.domain)
	}
	urls := functionURLs{}
	for name, fp := range p.fns {
		urls[name] = fp.url
	}

	// Variables.
	if p.vars, err = d.planVars(existing, urls, tables.DefaultProgressTable, st); err != nil {
		return err
	}
	if err := d.checkAgreement(p.vars, urls); err != nil {
		return err
	}
	if !d.loopback {
		for _, name := range functionNames {
			for _, v := range existing[name] {
				if strings.HasPrefix(v.Key, "SAFEHTTP_") {
					d.note(fmt.Sprintf("%s has %s, which opens the SSRF-safe client to private addresses, plain http or extra roots (for tests and local development): delete it in production (%s).",
						name, v.Key, d.consoleURL("functions/function-"+name+"/settings")))
				}
			}
		}
	}

	// Tables: the chat's database and tables, and turn's progress table where turn and chat look for it.
	chatDB, _, _ := effective(p.vars, "chat", "CHAT_DATABASE_ID")
	progDB, _, _ := effective(p.vars, "turn", "TURN_PROGRESS_DATABASE")
	progTable, _, _ := effective(p.vars, "turn", "TURN_PROGRESS_TABLE")
	want := map[string][]tables.Table{chatDB: tables.Chat()}
	want[progDB] = append(want[progDB], tables.Progress(progTable))
	for _, db := range []string{chatDB, progDB} {
		if slices.ContainsFunc(p.dbs, func(x *dbPlan) bool { return x.id == db }) {
			continue
		}
		dp, err := d.planDatabase(ctx, db, want[db])
		if err != nil {
			return err
		}
		p.dbs = append(p.dbs, dp)
	}

	// Deployments: a function is redeployed when its staged code is not what its active deployment was built
	// from, or when its configuration changed since (Appwrite's "live" is false, or this run changes a
	// variable or a setting a build depends on).
	for _, name := range functionNames {
		fp := p.fns[name]
		var changedVars []string
		for _, s := range p.vars {
			if s.fn == name && (s.action == varCreate || s.action == varUpdate) {
				changedVars = append(changedVars, s.key)
			}
		}
		rebuild := slices.ContainsFunc(fp.changes, func(c string) bool {
			return strings.HasPrefix(c, "name:") || strings.HasPrefix(c, "entrypoint:") || strings.HasPrefix(c, "commands:") || strings.HasPrefix(c, "runtime:")
		})
		switch {
		case fp.current == nil:
			fp.upload, fp.why = true, "new function"
		case fp.current.DeploymentId == "":
			fp.upload, fp.why = true, "no deployment yet"
		case !builtFrom(fp.current.DeploymentId, fp.archive.SHA256):
			fp.upload, fp.why = true, "code changed since deployment "+fp.current.DeploymentId
		case len(changedVars) > 0:
			fp.upload, fp.why = true, "variables changed: "+strings.Join(changedVars, ", ")
		case rebuild:
			fp.upload, fp.why = true, "settings a build depends on changed"
		case !fp.current.Live:
			fp.upload, fp.why = true, "configuration changed since deployment "+fp.current.DeploymentId+" (Appwrite reports it not live)"
		}
	}
	return nil
}

// planDatabase reads database db and plans its tables.
func (d *deployer) planDatabase(ctx context.Context, db string, want []tables.Table) (*dbPlan, error) {
	dp := &dbPlan{id: db, name: "Chat"}
	err := d.api.Database(ctx, db)
	switch {
	case awclient.TypeOf(err) == "database_not_found":
		dp.create = true
	case err != nil:
		return nil, refuse("reading the project failed: %v", err)
	}
	for _, t := range want {
		tp := &tablePlan{table: t}
		dp.tables = append(dp.tables, tp)
		if dp.create {
			tp.create = true
			continue
		}
		info, err := d.api.Table(ctx, db, t.ID)
		switch {
		case awclient.TypeOf(err) == "table_not_found":
			tp.create = true
			continue
		case err != nil:
			return nil, refuse("reading the project failed: %v", err)
		}
		for _, c := range t.Columns {
			st, ok := info.Columns[c.Key]
			switch {
			case !ok:
				tp.missing = append(tp.missing, c)
			case st != "available":
				tp.pending = append(tp.pending, c.Key)
			}
		}
		if !info.RowSecurity || len(info.Permissions) > 0 {
			d.note(fmt.Sprintf("The table %s/%s has %s: its rows must be visible only through their own permissions (docs/deploy.md, \"The chat tables\"). Turn row security on and remove the table's permissions (%s).",
				db, t.ID, tableIssue(info), d.consoleURL("databases/database-"+db+"/table-"+t.ID+"/settings")))
		}
	}
	return dp, nil
}

func tableIssue(info *tableInfo) string {
	switch {
	case !info.RowSecurity && len(info.Permissions) > 0:
		return fmt.Sprintf("row security off and table-level permissions %v", info.Permissions)
	case !info.RowSecurity:
		return "row security off"
	}
	return fmt.Sprintf("table-level permissions %v", info.Permissions)
}

// functionsDomain is the domain new function domains are made under: -functions-domain; Appwrite Cloud's
// <region>.appwrite.run (its generated domains: https://appwrite.io/docs/products/functions/domains); for
// a loopback endpoint Appwrite's own default, functions.localhost (.env of appwrite/appwrite 1.9.6); else
// the parent domain of a function domain the project already has; else "".
func (d *deployer) functionsDomain(rules map[string][]proxyRule) string {
	switch {
	case d.opts.FunctionsDomain != "":
		return strings.ToLower(d.opts.FunctionsDomain)
	case d.cloud && d.region != "default":
		return d.region + ".appwrite.run"
	case d.loopback:
		return "functions.localhost"
	}
	for _, name := range functionNames {
		for _, r := range rules[name] {
			if _, parent, ok := strings.Cut(r.Domain, "."); ok && strings.Count(parent, ".") >= 1 && r.Status == "verified" {
				d.note(fmt.Sprintf("New function domains are made under %s, the parent of %s's domain %s: pass -functions-domain to choose another.", parent, name, r.Domain))
				return parent
			}
		}
	}
	return ""
}

// pickRule is the rule of a function deploy uses: one under the functions domain, else a verified one,
// else the first.
func pickRule(rules []proxyRule, functionsDomain string) (proxyRule, bool) {
	if len(rules) == 0 {
		return proxyRule{}, false
	}
	if functionsDomain != "" {
		for _, r := range rules {
			if strings.HasSuffix(r.Domain, "."+functionsDomain) {
				return r, true
			}
		}
	}
	for _, r := range rules {
		if r.Status == "verified" {
			return r, true
		}
	}
	return rules[0], true
}

// domainURL is a function domain's URL: https on Appwrite Cloud; otherwise the endpoint's scheme and port,
// since a self-hosted Appwrite serves its function domains from the same server as its API.
func (d *deployer) domainURL(domain string) string {
	if d.cloud {
		return "https://" + domain
	}
	u := d.endpointURL()
	s := u.Scheme + "://" + domain
	if p := u.Port(); p != "" {
		s += ":" + p
	}
	return s
}

// randomLabel is a new function domain's first label: 20 hex digits, as long as Appwrite's ID.unique().
func randomLabel(random io.Reader) (string, error) {
	b := make([]byte, 10)
	if _, err := io.ReadFull(random, b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
