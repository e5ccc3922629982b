package localappwrite

import (
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"
)

// Proxy rules: the domains that serve a function (Appwrite's platform "rules" collection), as far as a deploy
// with an API key needs them: POST /v1/proxy/rules/function and GET /v1/proxy/rules
// (src/Appwrite/Platform/Modules/Proxy, 1.9.6).

// DefaultFunctionsDomain is the stand-in's _APP_DOMAIN_FUNCTIONS when Options.FunctionsDomain is empty: the
// value of Appwrite's own .env (1.9.6 .env:16), so a function domain is <id>.functions.localhost, which browsers
// and curl resolve to loopback (RFC 6761 §6.3).
const DefaultFunctionsDomain = "functions.localhost"

// rule is one proxy rule of type "deployment" and trigger "manual" that serves a function.
type rule struct {
	id, projectID, domain, functionID, branch string
	// status is "verified" for a domain under _APP_DOMAIN_FUNCTIONS, "created" (answered "unverified") for
	// another one, whose DNS the stand-in does not check; logs says why.
	status, logs     string
	created, updated time.Time
}

// functionsDomain is the stand-in's _APP_DOMAIN_FUNCTIONS.
func (s *Server) functionsDomain() string {
	if s.opts.FunctionsDomain != "" {
		return strings.ToLower(s.opts.FunctionsDomain)
	}
	return DefaultFunctionsDomain
}

// FunctionsDomain is the domain under which function domains are created (Appwrite's _APP_DOMAIN_FUNCTIONS):
// a rule for <sub>.<FunctionsDomain> is owned by Appwrite and verified at once.
func (s *Server) FunctionsDomain() string { return s.functionsDomain() }

// hostnameRe is PHP's FILTER_VALIDATE_DOMAIN with FILTER_FLAG_HOSTNAME: labels of letters, digits and
// hyphens, neither starting nor ending with a hyphen, 1 to 63 characters each, 253 in all.
var hostnameRe = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

// validDomain copies utopia-php/validators 0.2.6 Validator/Domain.php isValid with restrictions: a hostname
// (FILTER_VALIDATE_DOMAIN, FILTER_FLAG_HOSTNAME), not ending in "." or "-", and for every restriction whose
// hostname the value ends with, exactly levels labels (explode('.', $value, levels+1) counted).
func validDomain(v string, restrictions map[string]int) bool {
	if v == "" || len(v) > 253 || !hostnameRe.MatchString(v) {
		return false
	}
	for host, levels := range restrictions {
		if strings.HasSuffix(v, host) && len(strings.SplitN(v, ".", levels+1)) != levels {
			return false
		}
	}
	return true
}

// platformHostnames are the stand-in's own host names (Appwrite's $platform['hostnames'], denied as rule
// domains).
func (s *Server) platformHostnamesLocked() []string {
	out := []string{"localhost"}
	if u := strings.TrimPrefix(strings.TrimPrefix(s.baseURL, "http://"), "https://"); u != "" {
		if h, _, err := net.SplitHostPort(u); err == nil {
			out = append(out, h)
		} else {
			out = append(out, u)
		}
	}
	return out
}

// createFunctionRule copies POST /v1/proxy/rules/function (Modules/Proxy/Http/Rules/Function/Create.php,
// 1.9.6), scope rules.write: domain (Domain validator: "Value must be a valid domain"), functionId (UID),
// branch (Text 255, optional). Then Proxy/Action.php validateDomainRestrictions: a domain under
// _APP_DOMAIN_FUNCTIONS must be exactly one label more than it, and the platform's own host names and the
// functions domain itself are denied: 400 general_argument_invalid "This domain name is not allowed. Please use
// a different domain." An unknown function is 404 rule_resource_not_found. A domain under
// _APP_DOMAIN_FUNCTIONS is Appwrite's (isAppwriteOwned) and "verified"; any other is "created" and DNS-verified,
// which the stand-in does not do (it answers "unverified" with a log saying so). A domain any project already
// uses is 409 rule_already_exists (Action.php createRule). Answers 201 with the rule.
func (s *Server) createFunctionRule(c *call) (int, any, *APIError) {
	domain, err := c.str("domain", true, "", 0)
	if err != nil {
		return 0, nil, err
	}
	if !validDomain(domain, nil) {
		return 0, nil, invalidParam("domain", "Value must be a valid domain")
	}
	fid, err := c.str("functionId", true, "", 0)
	if err != nil {
		return 0, nil, err
	}
	if !validCustomID(fid) {
		return 0, nil, invalidParam("functionId", customIDDescription)
	}
	branch, err := c.str("branch", false, "", 255)
	if err != nil {
		return 0, nil, err
	}
	fnDomain := s.functionsDomain()
	notAllowed := newErr(ErrGeneralArgumentInvalid, "This domain name is not allowed. Please use a different domain.")
	if !validDomain(domain, map[string]int{fnDomain: len(strings.Split(fnDomain, ".")) + 1}) {
		return 0, nil, notAllowed
	}
	if slices.Contains(append(s.platformHostnamesLocked(), fnDomain), domain) {
		return 0, nil, notAllowed
	}
	fn := c.pr.functions[fid]
	if fn == nil {
		return 0, nil, newErr(ErrRuleResourceNotFound)
	}
	for _, r := range s.rules {
		if r.domain == domain {
			return 0, nil, newErr(ErrRuleAlreadyExists)
		}
	}
	now := s.now()
	r := &rule{id: s.uniqueID(), projectID: c.pr.id, domain: domain, functionID: fid, branch: branch,
		status: "verified", created: now, updated: now}
	if !strings.HasSuffix(domain, fnDomain) {
		r.status = "created"
		r.logs = "DNS verification failed as domain " + domain + " does not resolve to a known public apex domain."
		if suffix, icann := publicsuffix.PublicSuffix(domain); icann || strings.Contains(suffix, ".") {
			r.logs = "The local Appwrite stand-in does not verify DNS: the domain stays unverified."
		}
	}
	s.rules[r.id] = r
	return http.StatusCreated, s.ruleModelLocked(r), nil
}

// ruleModelLocked renders Response/Model/Rule.php (1.9.6); a stored "created" status is answered
// "unverified" (Function/Create.php:157-159, XList.php:114-116). deploymentId is the function's active
// deployment (the builds worker and the activation move rules along: Workers/Builds.php:969-994).
func (s *Server) ruleModelLocked(r *rule) obj {
	status := r.status
	if status == "created" {
		status = "unverified"
	}
	deploymentID := ""
	if pr := s.projects[r.projectID]; pr != nil {
		if fn := pr.functions[r.functionID]; fn != nil && fn.deployments[fn.deploymentID] != nil {
			deploymentID = fn.deploymentID
		}
	}
	return obj{
		{"$id", r.id}, {"$createdAt", formatTime(r.created)}, {"$updatedAt", formatTime(r.updated)},
		{"domain", r.domain}, {"type", "deployment"}, {"trigger", "manual"}, {"redirectUrl", ""},
		{"redirectStatusCode", 301}, {"deploymentId", deploymentID}, {"deploymentResourceType", "function"},
		{"deploymentResourceId", r.functionID}, {"deploymentVcsProviderBranch", r.branch}, {"status", status},
		{"logs", r.logs}, {"renewAt", ""},
	}
}

// listRules copies GET /v1/proxy/rules (Modules/Proxy/Http/Rules/XList.php, 1.9.6), scope rules.read: the
// project's rules, newest last, filtered by the queries the stand-in supports (equal, notEqual, startsWith,
// limit, offset: query.go) on the model's attributes. A function registered with RegisterFunction (a
// function made in the Console, whose domain Appwrite made with it) also has a derived rule whose domain is
// its local path domain (<host:port>/_local/domains/<id>, served by domains.go): stand-in only, what
// `appwrite push` prints; functions created through the API have only the rules created for them.
func (s *Server) listRules(c *call) (int, any, *APIError) {
	qs, _, err := c.strArray("queries", false, 100, "Invalid query")
	if err != nil {
		return 0, nil, err
	}
	var items []obj
	var stored []*rule
	for _, r := range s.rules {
		if r.projectID == c.pr.id {
			stored = append(stored, r)
		}
	}
	slices.SortFunc(stored, func(a, b *rule) int {
		if d := a.created.Compare(b.created); d != 0 {
			return d
		}
		return strings.Compare(a.id, b.id)
	})
	for _, r := range stored {
		items = append(items, s.ruleModelLocked(r))
	}
	host := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSuffix(s.endpointLocked(), "/v1"), "http://"), "https://")
	ids := make([]string, 0, len(c.pr.functions))
	for id, fn := range c.pr.functions {
		if fn.seeded {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		fn := c.pr.functions[id]
		items = append(items, obj{
			{"$id", "rule-" + id}, {"$createdAt", formatTime(fn.created)}, {"$updatedAt", formatTime(fn.updated)},
			{"domain", host + DomainPrefix + "/" + id}, {"type", "deployment"}, {"trigger", "manual"},
			{"redirectUrl", ""}, {"redirectStatusCode", 301}, {"deploymentId", fn.deploymentID},
			{"deploymentResourceType", "function"}, {"deploymentResourceId", id}, {"deploymentVcsProviderBranch", ""},
			{"status", "verified"}, {"logs", ""}, {"renewAt", ""},
		})
	}
	out, total, qerr := applyQueries(items, qs)
	if qerr != nil {
		return 0, nil, qerr
	}
	if out == nil {
		out = []obj{}
	}
	return http.StatusOK, obj{{"total", total}, {"rules", out}}, nil
}

// ruleForHost is the stored rule whose domain is host (a request's Host, its port dropped), or nil. Appwrite's
// router serves a function domain by the request's host name (app/controllers/general.php router()).
func (s *Server) ruleForHost(host string) *rule {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rules {
		if r.domain == host {
			return r
		}
	}
	return nil
}

// RuleDomains returns the domains of the function's stored rules (those created through
// POST /v1/proxy/rules/function), oldest first.
func (s *Server) RuleDomains(projectID, functionID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rs []*rule
	for _, r := range s.rules {
		if r.projectID == projectID && r.functionID == functionID {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, func(a, b *rule) int { return a.created.Compare(b.created) })
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.domain)
	}
	return out
}
