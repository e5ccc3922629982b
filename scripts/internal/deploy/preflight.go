package deploy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/tables"
)

// Runtime is the Appwrite runtime the functions are built with (appwrite.json).
const Runtime = "go-1.26"

// scopeNeed is one scope the API key needs: what deploy uses it for, and a request that shows whether the key
// has it without changing anything.
//
// Appwrite checks a route's scope in its api init hook, before the route's params are validated
// (app/controllers/shared/api.php:443-447 and utopia-php/http 2.0.0-rc9 Http.php:624-646, 1.9.6): a key
// without the scope gets 401 general_unauthorized_scope "… (role: applications) missing scopes ([…])" from any
// of the route's requests, while a key with it gets the route's own answer. A read is sent as it is; a
// write is sent with an empty body, which Appwrite refuses with 400 (a required param is missing) after the
// scope check and before anything is written. An API key cannot read its own scopes (the keys routes are the
// Console's), so this is how deploy knows, before any change, every scope the key lacks.
type scopeNeed struct {
	scope, purpose string
	method         string
	path           []string // the route's segments below /v1
}

// scopeNeeds are the scopes deploy needs, in the order they are reported.
func (d *deployer) scopeNeeds() []scopeNeed {
	db := d.opts.ChatDatabase
	return []scopeNeed{
		{"functions.read", "read the functions, their variables and deployments", http.MethodGet, []string{"functions", "turn"}},
		{"functions.write", "create and update the functions, set their variables and upload their code", http.MethodPost, []string{"functions"}},
		{"rules.read", "read the functions' domains", http.MethodGet, []string{"proxy", "rules"}},
		{"rules.write", "give each function its domain when it has none", http.MethodPost, []string{"proxy", "rules", "function"}},
		{"databases.read", "find the chat database", http.MethodGet, []string{"tablesdb", db}},
		{"databases.write", "create the chat database", http.MethodPost, []string{"tablesdb"}},
		{"tables.read", "find the chat's tables and turn's progress table", http.MethodGet, []string{"tablesdb", db, "tables", tables.Conversations}},
		{"tables.write", "create those tables and their columns", http.MethodPost, []string{"tablesdb", db, "tables"}},
	}
}

// Scopes lists the API key scopes deploy needs.
func Scopes() []string {
	var out []string
	for _, n := range (&deployer{opts: Options{ChatDatabase: "chat"}}).scopeNeeds() {
		out = append(out, n.scope)
	}
	return out
}

// preflight checks, changing nothing: the endpoint answers as Appwrite 1.9.5 or later, the project exists,
// the key is the project's and has every scope deploy needs, and the server offers the go-1.26 runtime.
func (d *deployer) preflight(ctx context.Context) error {
	u := d.endpointURL()
	d.loopback = isLoopbackHost(u.Hostname())
	host := strings.ToLower(u.Hostname())
	d.cloud = host == "cloud.appwrite.io" || strings.HasSuffix(host, ".cloud.appwrite.io")
	d.region = "default"
	if r, ok := strings.CutSuffix(host, ".cloud.appwrite.io"); ok && !strings.Contains(r, ".") {
		d.region = r
	}
	d.logf("checking %s (project %s)...", d.opts.Endpoint, d.opts.Project)

	v, err := d.api.Version(ctx)
	if err != nil {
		if awclient.StatusOf(err) == 0 && awclient.TypeOf(err) == "" {
			return refuse("cannot reach Appwrite at %s: %v\nCheck -endpoint (the API's base URL, such as https://fra.cloud.appwrite.io/v1) and that the server is running.", d.opts.Endpoint, err)
		}
		return refuse("%s does not answer as an Appwrite API endpoint: %v\nCheck -endpoint: it is the API's base URL, ending in /v1, such as https://fra.cloud.appwrite.io/v1.", d.opts.Endpoint, err)
	}
	d.version = v
	if p, ok := parseVersion(v); !ok {
		d.note(fmt.Sprintf("The server reports the version %q, which is not a release number: deploy goes on; mcp-events checks on its first subscribe that the server keeps the webhook secrets it is given (Appwrite 1.9.5 or later).", v))
	} else if versionBefore(p, minVersion) {
		return refuse("Appwrite %s at %s is older than 1.9.5: the events (mcp-events and webhook-ingress) need 1.9.5 or later, which keep the signing secret a webhook is created with (docs/deploy.md, \"Appwrite version\"). Upgrade the server, then run deploy again.", v, d.opts.Endpoint)
	}

	// The project and the key, then every scope.
	var missing []scopeNeed
	for _, n := range d.scopeNeeds() {
		err := d.api.Probe(ctx, n.method, n.path...)
		typ, status := awclient.TypeOf(err), awclient.StatusOf(err)
		switch {
		case err == nil || (status >= 400 && status < 500 && status != 401):
			// The route's own answer (a 404 for what does not exist yet, a 400 for the missing params): the key
			// has the scope. A 404 project_not_found is the project's, checked on the first probe.
			if typ == "project_not_found" {
				return refuse("project %q does not exist at %s: check -project (the project's id, on its Settings page in the Console).", d.opts.Project, d.opts.Endpoint)
			}
		case typ == "project_key_expired":
			return refuse("the API key has expired: create a new key with the scopes %s (%s) and run deploy with it.", strings.Join(Scopes(), ", "), d.consoleURL("overview/api-keys"))
		case typ == "user_unauthorized" || (typ == "general_unauthorized_scope" && strings.Contains(messageOf(err), "(role: guests)")):
			return refuse("the API key is not a key of project %q: Appwrite treats the request as a guest's (%q). Check -key, and that -project is the project the key was created in.", d.opts.Project, messageOf(err))
		case typ == "general_unauthorized_scope":
			missing = append(missing, n)
		default:
			return refuse("checking the key's scopes failed: %v", err)
		}
	}
	if len(missing) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "the API key lacks %d of the scopes deploy needs:\n", len(missing))
		for _, n := range missing {
			fmt.Fprintf(&b, "  %-16s to %s\n", n.scope, n.purpose)
		}
		fmt.Fprintf(&b, "Add them to the key (Console → Overview → API keys → the key → Scopes: %s), or create a key with %s, and run deploy again.",
			d.consoleURL("overview/api-keys"), strings.Join(Scopes(), ", "))
		return &Refusal{Reason: b.String()}
	}

	runtimes, err := d.api.Runtimes(ctx)
	switch {
	case err != nil:
		d.note(fmt.Sprintf("Could not list the server's runtimes (%v): if %s is not offered, creating the functions fails.", err, Runtime))
	case !slices.Contains(runtimes, Runtime):
		fix := "Set _APP_FUNCTIONS_RUNTIMES in the server's .env to include it (for example _APP_FUNCTIONS_RUNTIMES=node-22," + Runtime + ") and restart Appwrite (docker compose up -d), then run deploy again."
		if d.cloud {
			fix = "Appwrite Cloud offers it in every region; check -endpoint."
		}
		return refuse("this server does not offer the %s runtime the functions are built with (it offers: %s). %s", Runtime, strings.Join(runtimes, ", "), fix)
	}
	return nil
}

func messageOf(err error) string {
	var e *awclient.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return ""
}

// note keeps a line for the end of the run.
func (d *deployer) note(s string) {
	if !slices.Contains(d.notes, s) {
		d.notes = append(d.notes, s)
	}
}

// consoleURL is a page of the project in the Appwrite Console: cloud.appwrite.io for Appwrite Cloud, the
// endpoint's own origin for a self-hosted server (region "default"), as the Console routes
// /console/project-<region>-<project>/<page>.
func (d *deployer) consoleURL(page string) string {
	origin := "https://cloud.appwrite.io"
	if !d.cloud {
		u := d.endpointURL()
		origin = u.Scheme + "://" + u.Host
	}
	return origin + "/console/project-" + d.region + "-" + d.opts.Project + "/" + page
}
