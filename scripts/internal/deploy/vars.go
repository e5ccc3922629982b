package deploy

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"appwrite-agent/shared/appwritesig"
	"appwrite-agent/shared/seal"
	"appwrite-agent/shared/tables"

	"github.com/appwrite/sdk-for-go/models"
)

// The variables deploy sets, per function (docs/deploy.md "Keys and variables"; each function's config.go
// reads them). Which must agree: AGENT_API_KEY (turn, title, chat: chat sends it to turn as
// X-Session-API-Key); SEAL_KEYS and APPWRITE_WEBHOOK_SECRET_KEYS (mcp-events seals and signs with them,
// webhook-ingress opens and verifies); MCP_EVENTS_INGRESS_URL (mcp-events builds each webhook's URL from it,
// Appwrite signs that URL, webhook-ingress verifies against it); TURN_PROGRESS_DATABASE and
// TURN_PROGRESS_TABLE (turn writes the progress rows chat reads); CHAT_DATABASE_ID, TITLE_DATABASE_ID and
// TITLE_TABLE_ID (the conversations table whose new rows start title, as the staged appwrite.json registers
// it). The secrets are stored as secret variables.

// Local allowances: set only when the endpoint is on this machine, as the local stack sets them
// (scripts/internal/stack): the SSRF-safe client may reach loopback addresses and plain http (a local model, a
// local MCP server, a local receiver).
const (
	localAllow     = "127.0.0.0/8,::1/128"
	localAllowHTTP = "true"
)

// Variable names of the secrets deploy generates once.
const (
	varAgentKey    = "AGENT_API_KEY"
	varSealKeys    = "SEAL_KEYS"
	varWebhookKeys = "APPWRITE_WEBHOOK_SECRET_KEYS"
	varChatSeal    = "CHAT_SEAL_KEYS"
	varLLMKey      = "LLM_API_KEY"
)

// secretGroup is one generated secret and the functions that must hold the same value.
type secretGroup struct {
	key       string
	functions []string
	// keyList is a key list ("id:base64,..."), rotated by -rotate-keys; maxKeys bounds it.
	keyList bool
	maxKeys int
}

// secretGroups are the secrets deploy generates once.
var secretGroups = []secretGroup{
	{key: varAgentKey, functions: []string{"turn", "title", "chat"}},
	{key: varSealKeys, functions: []string{"mcp-events", "webhook-ingress"}, keyList: true, maxKeys: seal.MaxKeys},
	{key: varWebhookKeys, functions: []string{"mcp-events", "webhook-ingress"}, keyList: true, maxKeys: appwritesig.MaxKeys},
	{key: varChatSeal, functions: []string{"chat"}, keyList: true, maxKeys: seal.MaxKeys},
}

// Actions of a varStep.
const (
	varCreate = "create" // the function has no such variable: deploy sets it
	varUpdate = "update" // deploy replaces the value (a value given now, a rotation)
	varKeep   = "keep"   // the function has its own value, which deploy keeps
	varSame   = "same"   // the function already has deploy's value
)

// varStep is one variable of one function.
type varStep struct {
	fn, key string
	action  string
	value   string // what is written (create, update); the effective value of a readable variable
	secret  bool
	id      string // the existing variable's id
	// readable reports that value is the function's value after the run (false for a secret kept as it is).
	readable bool
	why      string
	// holders are the other functions that already hold a secret's value, by the $updatedAt of their
	// variable: this machine's record of the value covers them too once it is written.
	holders map[string]string
}

// wanted is one variable deploy wants on a function.
type wanted struct {
	key, value string
	secret     bool
	// override replaces an existing value: the user gave it on this run (a flag, the environment).
	override bool
}

// functionURLs are the functions' domain URLs the variables are made of.
type functionURLs map[string]string

// origin is the scheme://host[:port] of a URL.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// derivedVars are the non-secret variables each function gets.
func (d *deployer) derivedVars(urls functionURLs, progressTable string) map[string][]wanted {
	db := d.opts.ChatDatabase
	out := map[string][]wanted{
		"turn":  {{key: "TURN_PROGRESS_DATABASE", value: db}, {key: "TURN_PROGRESS_TABLE", value: progressTable}},
		"title": {{key: "TITLE_DATABASE_ID", value: db}, {key: "TITLE_TABLE_ID", value: tables.Conversations}},
		"mcp-events": {
			{key: "MCP_EVENTS_ENABLED", value: "true"},
			{key: "MCP_EVENTS_PUBLIC_URL", value: urls["mcp-events"]},
			{key: "MCP_EVENTS_OAUTH_ISSUER", value: d.opts.Endpoint + "/oauth2/console"},
			{key: "MCP_EVENTS_INGRESS_URL", value: urls["webhook-ingress"]},
			{key: "MCP_EVENTS_ALLOWED_ORIGINS", value: origin(urls["chat"])},
		},
		"webhook-ingress": {{key: "MCP_EVENTS_INGRESS_URL", value: urls["webhook-ingress"]}},
		"chat":            {{key: "CHAT_DATABASE_ID", value: db}, {key: "TURN_PROGRESS_DATABASE", value: db}, {key: "TURN_PROGRESS_TABLE", value: progressTable}},
	}
	// chat's automations are delivered to its own domain (docs/chat.md "Automations"); mcp-events calls only
	// https callbacks, so a domain served over plain http (a local stand-in) gets none and chat says so.
	if strings.HasPrefix(urls["chat"], "https://") {
		out["chat"] = append(out["chat"], wanted{key: "CHAT_PUBLIC_URL", value: urls["chat"]})
	}
	for _, fn := range []string{"turn", "title"} {
		if d.opts.LLMModel != "" {
			out[fn] = append(out[fn], wanted{key: "LLM_MODEL", value: d.opts.LLMModel, override: true})
		}
		if d.opts.LLMBaseURL != "" {
			out[fn] = append(out[fn], wanted{key: "LLM_BASE_URL", value: d.opts.LLMBaseURL, override: true})
		}
	}
	if d.loopback {
		for _, fn := range functionNames {
			out[fn] = append(out[fn], wanted{key: "SAFEHTTP_ALLOW", value: localAllow}, wanted{key: "SAFEHTTP_ALLOW_HTTP", value: localAllowHTTP})
		}
	}
	return out
}

// planVars plans every variable: existing maps each function to its variables (nil for a function deploy
// creates); st is this machine's copy of the secrets.
func (d *deployer) planVars(existing map[string][]models.Variable, urls functionURLs, progressTable string, st *localState) ([]*varStep, error) {
	find := func(fn, key string) *models.Variable {
		for i := range existing[fn] {
			if existing[fn][i].Key == key {
				return &existing[fn][i]
			}
		}
		return nil
	}
	var steps []*varStep
	for _, fn := range functionNames {
		for _, w := range d.derivedVars(urls, progressTable)[fn] {
			s := &varStep{fn: fn, key: w.key, value: w.value, secret: w.secret, readable: true}
			switch v := find(fn, w.key); {
			case v == nil && w.override:
				s.action, s.why = varCreate, "the value given to this run"
			case v == nil:
				s.action, s.why = varCreate, "set by deploy"
			case v.Value == w.value && !v.Secret:
				s.action, s.id = varSame, v.Id
			case w.override:
				s.action, s.id, s.why = varUpdate, v.Id, "the value given to this run"
			case v.Secret:
				s.action, s.id, s.readable, s.why = varKeep, v.Id, false, "yours, stored as a secret"
			default:
				s.action, s.id, s.value, s.why = varKeep, v.Id, v.Value, "yours: deploy never overwrites a value you set"
			}
			steps = append(steps, s)
		}
	}
	// LLM_API_KEY: from the environment only, on turn and title, stored as a secret; this machine's record
	// of its SHA-256 says whether it changed.
	if d.opts.LLMAPIKey != "" {
		for _, fn := range []string{"turn", "title"} {
			s := &varStep{fn: fn, key: varLLMKey, value: d.opts.LLMAPIKey, secret: true}
			v := find(fn, varLLMKey)
			rec := st.Secrets[varLLMKey]
			switch {
			case v == nil:
				s.action, s.why = varCreate, "from LLM_API_KEY in the environment"
			case rec != nil && rec.SHA256 == sha256Hex(d.opts.LLMAPIKey) && rec.Stored[fn] == v.UpdatedAt:
				s.action, s.id = varSame, v.Id
			default:
				s.action, s.id, s.why = varUpdate, v.Id, "from LLM_API_KEY in the environment"
			}
			steps = append(steps, s)
		}
	} else if find("turn", varLLMKey) == nil && find("title", varLLMKey) == nil {
		d.note("LLM_API_KEY is set on neither turn nor title, and not in deploy's environment: the agent has no model key of its own (each user can set one in the chat's settings). Run deploy with LLM_API_KEY in the environment to set it.")
	}
	for _, g := range secretGroups {
		gs, err := d.planSecret(g, find, st)
		if err != nil {
			return nil, err
		}
		steps = append(steps, gs...)
	}
	return steps, nil
}

// planSecret plans one generated secret on each function of g.
func (d *deployer) planSecret(g secretGroup, find func(fn, key string) *models.Variable, st *localState) ([]*varStep, error) {
	present := map[string]string{} // function → $updatedAt
	var missing []string
	for _, fn := range g.functions {
		if v := find(fn, g.key); v != nil {
			present[fn] = v.UpdatedAt
		} else {
			missing = append(missing, fn)
		}
	}
	// The current value: this machine's copy when it still describes what the functions hold, else the
	// environment's.
	current, from := "", ""
	if rec := st.Secrets[g.key]; rec != nil && rec.Value != "" && rec.matches(present) {
		current, from = rec.Value, "this machine's copy"
	} else if v := strings.TrimSpace(d.opts.Getenv(g.key)); v != "" && len(present) > 0 {
		current, from = v, g.key+" in the environment"
		if err := checkKeyList(g, v); err != nil {
			return nil, refuse("%s in deploy's environment: %v", g.key, err)
		}
	}
	steps := make([]*varStep, 0, len(g.functions))
	add := func(fn, action, value, why string) {
		s := &varStep{fn: fn, key: g.key, action: action, value: value, secret: true, readable: value != "", why: why}
		if v := find(fn, g.key); v != nil {
			s.id = v.Id
		}
		steps = append(steps, s)
	}
	rotate := d.opts.RotateKeys && g.keyList
	switch {
	case len(present) == 0:
		v, err := generateSecret(g, "", d.opts.Random)
		if err != nil {
			return nil, err
		}
		for _, fn := range g.functions {
			add(fn, varCreate, v, "generated once")
		}
	case rotate && current == "":
		return nil, refuse("-rotate-keys keeps the current keys of %s, and Appwrite never returns a secret variable's value: %s. Set %s in deploy's environment to its current value (as %s has it) and run again.",
			g.key, d.noCopy(g.key, st), g.key, strings.Join(sortedKeys(present), " and "))
	case rotate:
		v, err := generateSecret(g, current, d.opts.Random)
		if err != nil {
			return nil, err
		}
		for _, fn := range g.functions {
			if _, ok := present[fn]; ok {
				add(fn, varUpdate, v, "a new key first, the old ones kept (-rotate-keys; from "+from+")")
			} else {
				add(fn, varCreate, v, "a new key first, the old ones kept (-rotate-keys; from "+from+")")
			}
		}
	case len(missing) > 0 && current == "":
		return nil, refuse("%s is set on %s but not on %s, and the functions must have the same value. Appwrite never returns a secret variable's value, and %s. Either set %s in deploy's environment to the value %s has (deploy copies it), or delete it from %s (deploy then generates one for all), and run again.",
			g.key, strings.Join(sortedKeys(present), " and "), strings.Join(missing, " and "), d.noCopy(g.key, st), g.key,
			strings.Join(sortedKeys(present), " and "), strings.Join(sortedKeys(present), " and "))
	default:
		for _, fn := range g.functions {
			if _, ok := present[fn]; ok {
				add(fn, varSame, current, "")
			} else {
				add(fn, varCreate, current, "the value the other functions have (from "+from+")")
				steps[len(steps)-1].holders = present
			}
		}
		if current == "" && len(g.functions) > 1 {
			d.note(fmt.Sprintf("%s is set on %s as a secret that deploy did not write from this machine: Appwrite never returns it, so deploy cannot check that they hold the same value. If they differ, %s.",
				g.key, strings.Join(g.functions, " and "), disagreeEffect(g.key)))
		}
	}
	return steps, nil
}

// noCopy says why this machine has no usable copy of a secret.
func (d *deployer) noCopy(key string, st *localState) string {
	if st.Secrets[key] == nil || st.Secrets[key].Value == "" {
		return "this machine has no copy of it (" + d.statePath() + ")"
	}
	return "this machine's copy (" + d.statePath() + ") no longer matches it: the variable was changed since deploy wrote it"
}

// disagreeEffect says what goes wrong when a shared secret differs between functions.
func disagreeEffect(key string) string {
	switch key {
	case varAgentKey:
		return "chat's turns are refused by turn (401)"
	case varSealKeys:
		return "webhook-ingress cannot open the subscriptions mcp-events seals, and no event is delivered"
	case varWebhookKeys:
		return "webhook-ingress refuses every delivery's signature, and no event is delivered"
	}
	return "the functions do not work together"
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checkKeyList validates a key list given in the environment as the functions will read it.
func checkKeyList(g secretGroup, v string) error {
	if !g.keyList {
		return nil
	}
	if g.key == varWebhookKeys {
		_, err := appwritesig.ParseKeys(v)
		return err
	}
	_, err := seal.ParseKeyring(v)
	return err
}

var keyIDNumber = regexp.MustCompile(`^k([0-9]+)$`)

// generateSecret makes g's value: for a key list, a new 32-byte key (openssl rand -base64 32) with id k1, or
// with -rotate-keys the next id prepended to current; AGENT_API_KEY is 32 random bytes, base64url.
func generateSecret(g secretGroup, current string, random io.Reader) (string, error) {
	b := make([]byte, 32)
	if _, err := io.ReadFull(random, b); err != nil {
		return "", fmt.Errorf("generate %s: %w", g.key, err)
	}
	if !g.keyList {
		return base64.RawURLEncoding.EncodeToString(b), nil
	}
	key := base64.StdEncoding.EncodeToString(b)
	if current == "" {
		return "k1:" + key, nil
	}
	entries := strings.Split(current, ",")
	if len(entries) >= g.maxKeys {
		return "", refuse("%s already holds %d keys, the most the functions accept: remove the oldest ones (once every subscription sealed with them was refreshed or expired: MCP_EVENTS_TTL_MAX, 24 h by default) before rotating again.", g.key, len(entries))
	}
	next := 0
	for _, e := range entries {
		id, _, _ := strings.Cut(strings.TrimSpace(e), ":")
		if m := keyIDNumber.FindStringSubmatch(id); m != nil {
			if n, _ := strconv.Atoi(m[1]); n > next {
				next = n
			}
		}
	}
	return "k" + strconv.Itoa(next+1) + ":" + key + "," + current, nil
}

// effective is the value a function's variable has after the run, and whether deploy can know it.
func effective(steps []*varStep, fn, key string) (string, bool, bool) {
	for _, s := range steps {
		if s.fn == fn && s.key == key {
			return s.value, s.readable, true
		}
	}
	return "", false, false
}

// checkAgreement refuses values that must agree and do not, and notes the ones that should.
func (d *deployer) checkAgreement(steps []*varStep, urls functionURLs) error {
	var problems []string
	same := func(key string, fns ...string) {
		vals := map[string]string{}
		for _, fn := range fns {
			if v, readable, ok := effective(steps, fn, key); ok && readable {
				vals[fn] = v
			}
		}
		if len(vals) < 2 {
			return
		}
		first := vals[fns[0]]
		for _, fn := range fns[1:] {
			if vals[fn] != first {
				var parts []string
				for _, f := range fns {
					parts = append(parts, fmt.Sprintf("%s has %q", f, vals[f]))
				}
				problems = append(problems, fmt.Sprintf("%s must be the same on %s, and %s.", key, strings.Join(fns, " and "), strings.Join(parts, ", ")))
				return
			}
		}
	}
	same("MCP_EVENTS_INGRESS_URL", "mcp-events", "webhook-ingress")
	same("TURN_PROGRESS_DATABASE", "turn", "chat")
	same("TURN_PROGRESS_TABLE", "turn", "chat")
	if v, ok, _ := effective(steps, "webhook-ingress", "MCP_EVENTS_INGRESS_URL"); ok {
		switch {
		case strings.Contains(v, "%"):
			problems = append(problems, fmt.Sprintf("MCP_EVENTS_INGRESS_URL %q holds a %%: Appwrite 1.9.6 and earlier sign the percent-decoded webhook URL, later versions the stored one, so no event would verify on one of them.", v))
		case strings.HasSuffix(v, "/"):
			problems = append(problems, fmt.Sprintf("MCP_EVENTS_INGRESS_URL %q ends in /: Appwrite signs each webhook's URL exactly as stored, which mcp-events builds from the URL without it.", v))
		case len(v)+len("/appwrite/webhooks/")+36 > 255:
			problems = append(problems, fmt.Sprintf("MCP_EVENTS_INGRESS_URL %q is too long: with /appwrite/webhooks/ and a 36-character id it passes Appwrite's 255-character webhook URL.", v))
		}
	}
	for _, c := range []struct{ fn, key, want, why string }{
		{"chat", "CHAT_DATABASE_ID", d.opts.ChatDatabase, "the database whose conversations table starts title"},
		{"title", "TITLE_DATABASE_ID", d.opts.ChatDatabase, "the database whose conversations table starts title"},
		{"title", "TITLE_TABLE_ID", tables.Conversations, "the table whose new rows start title"},
	} {
		if v, ok, _ := effective(steps, c.fn, c.key); ok && v != c.want {
			problems = append(problems, fmt.Sprintf("%s's %s is %q, but %q is %s (-chat-database %s): run with -chat-database %s, or delete the variable so that deploy sets it.",
				c.fn, c.key, v, c.want, c.why, d.opts.ChatDatabase, v))
		}
	}
	if len(problems) > 0 {
		return refuse("the functions' variables do not agree:\n  %s\nFix them in the Console (%s), or delete them so that deploy sets them, and run again.",
			strings.Join(problems, "\n  "), d.consoleURL("functions"))
	}
	if v, ok, _ := effective(steps, "mcp-events", "MCP_EVENTS_ALLOWED_ORIGINS"); ok && !slices.Contains(strings.Split(strings.ReplaceAll(v, " ", ","), ","), origin(urls["chat"])) {
		d.note(fmt.Sprintf("mcp-events's MCP_EVENTS_ALLOWED_ORIGINS (%q, yours) does not list the chat page's origin %s: the chat page cannot connect mcp-events until it does.", v, origin(urls["chat"])))
	}
	return nil
}
