package localappwrite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/mail"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"appwrite-agent/shared/devkit/localappwrite/oauthserver"
)

// maxBody caps request bodies (Appwrite's router package_max_length is 12 MiB).
const maxBody = 12 << 20

// call is one authenticated API request.
type call struct {
	s       *Server
	r       *http.Request
	w       http.ResponseWriter
	pr      *project
	who     *principal
	params  map[string]any
	files   map[string]uploaded
	legacy  bool // response format below 1.9.1
	pending []pendingEvent
	// after, when a handler sets it, runs once the state lock is released and produces the response
	// (used for calls that wait on something outside, like a synchronous execution).
	after handlerFunc
}

type uploaded struct {
	name string
	data []byte
}

type handlerFunc func(c *call) (status int, body any, err *APIError)

// route is one entry of the stand-in's route table: a net/http pattern and what serves it.
type route struct {
	pattern string
	// scopes and api make an Appwrite API route, served by serveAPI: the caller needs one of the scopes.
	scopes []string
	api    func(*Server, *call) (status int, body any, err *APIError)
	// web serves any other route: the OAuth authorization servers, Realtime, the admin endpoints.
	web func(*Server, http.ResponseWriter, *http.Request)
	// when, if set, serves the route only on a Server for which it holds.
	when func(*Server) bool
}

// Scope sets of several routes.
var (
	webhooksRead   = []string{"webhooks.read"}
	webhooksWrite  = []string{"webhooks.write"}
	rowsRead       = []string{"rows.read", "documents.read"}
	rowsWrite      = []string{"rows.write", "documents.write"}
	columnsWrite   = []string{"tables.write", "collections.write", "columns.write", "attributes.write"}
	functionsRead  = []string{"functions.read"}
	functionsWrite = []string{"functions.write"}
	sessionsWrite  = []string{"sessions.write"}
	account        = []string{"account"}
)

// routeTable is every route the stand-in serves, in one place. Appwrite's sources are named at each handler
// and in docs/local-appwrite.md.
func routeTable() []route {
	rs := []route{
		// Webhooks (src/Appwrite/Platform/Modules/Webhooks/Http/Webhooks/*), with the projects alias.
		{pattern: "GET /v1/webhooks", scopes: webhooksRead, api: (*Server).listWebhooks},
		{pattern: "POST /v1/webhooks", scopes: webhooksWrite, api: (*Server).createWebhook},
		{pattern: "GET /v1/webhooks/{webhookId}", scopes: webhooksRead, api: (*Server).getWebhook},
		{pattern: "PUT /v1/webhooks/{webhookId}", scopes: webhooksWrite, api: (*Server).updateWebhook},
		{pattern: "DELETE /v1/webhooks/{webhookId}", scopes: webhooksWrite, api: (*Server).deleteWebhook},
		{pattern: "GET /v1/projects/{projectId}/webhooks", scopes: webhooksRead, api: (*Server).listWebhooks},
		{pattern: "POST /v1/projects/{projectId}/webhooks", scopes: webhooksWrite, api: (*Server).createWebhook},
		{pattern: "GET /v1/projects/{projectId}/webhooks/{webhookId}", scopes: webhooksRead, api: (*Server).getWebhook},
		{pattern: "PUT /v1/projects/{projectId}/webhooks/{webhookId}", scopes: webhooksWrite, api: (*Server).updateWebhook},
		{pattern: "DELETE /v1/projects/{projectId}/webhooks/{webhookId}", scopes: webhooksWrite, api: (*Server).deleteWebhook},
		// Secret rotation is PATCH only, and its projects alias ends in /signature, not /secret
		// (Webhooks/Secret/Update.php:32-34, 1.9.5 and 1.9.6). Appwrite 1.9.0 has PATCH /v1/webhooks/{id}/signature
		// instead (Webhooks/Signature/Update.php:32-33), same alias. Any other method or path falls through to
		// route-not-found.
		{pattern: "PATCH /v1/webhooks/{webhookId}/secret", scopes: webhooksWrite, api: (*Server).rotateWebhookSecret,
			when: func(s *Server) bool { return !s.webhooks190() }},
		{pattern: "PATCH /v1/webhooks/{webhookId}/signature", scopes: webhooksWrite, api: (*Server).rotateWebhookSecret,
			when: (*Server).webhooks190},
		{pattern: "PATCH /v1/projects/{projectId}/webhooks/{webhookId}/signature", scopes: webhooksWrite, api: (*Server).rotateWebhookSecret},

		// TablesDB (tablesdb.go, tablesdb_setup.go; the column routes follow the table).
		{pattern: "POST /v1/tablesdb", scopes: []string{"databases.write"}, api: (*Server).createDatabase},
		{pattern: "POST /v1/tablesdb/{databaseId}/tables", scopes: []string{"tables.write", "collections.write"}, api: (*Server).createTable},
		{pattern: "GET /v1/tablesdb/{databaseId}", scopes: []string{"databases.read"}, api: (*Server).getDatabase},
		{pattern: "GET /v1/tablesdb/{databaseId}/tables/{tableId}", scopes: []string{"tables.read", "collections.read"}, api: (*Server).getTable},
		{pattern: "GET /v1/tablesdb/{databaseId}/tables/{tableId}/rows", scopes: rowsRead, api: (*Server).listRows},
		{pattern: "POST /v1/tablesdb/{databaseId}/tables/{tableId}/rows", scopes: rowsWrite, api: (*Server).createRow},
		{pattern: "GET /v1/tablesdb/{databaseId}/tables/{tableId}/rows/{rowId}", scopes: rowsRead, api: (*Server).getRow},
		{pattern: "PATCH /v1/tablesdb/{databaseId}/tables/{tableId}/rows/{rowId}", scopes: rowsWrite, api: (*Server).updateRow},
		{pattern: "PUT /v1/tablesdb/{databaseId}/tables/{tableId}/rows/{rowId}", scopes: rowsWrite, api: (*Server).upsertRow},
		{pattern: "DELETE /v1/tablesdb/{databaseId}/tables/{tableId}/rows/{rowId}", scopes: rowsWrite, api: (*Server).deleteRow},

		// Storage.
		{pattern: "GET /v1/storage/buckets/{bucketId}", scopes: []string{"buckets.read"}, api: (*Server).getBucket},
		{pattern: "GET /v1/storage/buckets/{bucketId}/files/{fileId}", scopes: []string{"files.read"}, api: (*Server).getFile},
		{pattern: "POST /v1/storage/buckets/{bucketId}/files", scopes: []string{"files.write"}, api: (*Server).createFile},
		{pattern: "DELETE /v1/storage/buckets/{bucketId}/files/{fileId}", scopes: []string{"files.write"}, api: (*Server).deleteFile},

		// Account (the Web SDK's sign-in, account.go).
		{pattern: "POST /v1/account", scopes: sessionsWrite, api: (*Server).createAccount},
		{pattern: "POST /v1/account/sessions/email", scopes: sessionsWrite, api: (*Server).createEmailSession},
		{pattern: "POST /v1/account/sessions", scopes: sessionsWrite, api: (*Server).createEmailSession},
		{pattern: "GET /v1/account", scopes: account, api: (*Server).getAccount},
		{pattern: "POST /v1/account/jwts", scopes: account, api: (*Server).createJWT},
		{pattern: "POST /v1/account/jwt", scopes: account, api: (*Server).createJWT},
		{pattern: "DELETE /v1/account/sessions/{sessionId}", scopes: account, api: (*Server).deleteSession},

		// Users.
		{pattern: "GET /v1/users", scopes: []string{"users.read"}, api: (*Server).listUsers},
		{pattern: "POST /v1/users", scopes: []string{"users.write"}, api: (*Server).createUser},
		{pattern: "GET /v1/users/{userId}", scopes: []string{"users.read"}, api: (*Server).getUser},

		// Sites, Functions, their deployments and executions, proxy rules (functions.go, deployments.go).
		{pattern: "GET /v1/sites/{siteId}", scopes: []string{"sites.read"}, api: (*Server).getSite},
		{pattern: "GET /v1/functions/{functionId}", scopes: functionsRead, api: (*Server).getFunction},
		{pattern: "POST /v1/functions", scopes: functionsWrite, api: (*Server).createFunction},
		{pattern: "PUT /v1/functions/{functionId}", scopes: functionsWrite, api: (*Server).updateFunction},
		{pattern: "POST /v1/functions/{functionId}/deployments", scopes: functionsWrite, api: (*Server).createDeployment},
		{pattern: "GET /v1/functions/{functionId}/deployments", scopes: functionsRead, api: (*Server).listDeployments},
		{pattern: "GET /v1/functions/{functionId}/deployments/{deploymentId}", scopes: functionsRead, api: (*Server).getDeployment},
		{pattern: "POST /v1/functions/{functionId}/executions", scopes: []string{"executions.write", "execution.write"}, api: (*Server).createExecution},
		{pattern: "GET /v1/functions/{functionId}/executions/{executionId}", scopes: []string{"executions.read", "execution.read"}, api: (*Server).getExecution},
		{pattern: "GET /v1/functions/runtimes", scopes: []string{"public"}, api: (*Server).listRuntimes},
		{pattern: "GET /v1/functions/{functionId}/variables", scopes: functionsRead, api: (*Server).listVariables},
		{pattern: "POST /v1/functions/{functionId}/variables", scopes: functionsWrite, api: (*Server).createVariable},
		{pattern: "GET /v1/functions/{functionId}/variables/{variableId}", scopes: functionsRead, api: (*Server).getVariable},
		{pattern: "PUT /v1/functions/{functionId}/variables/{variableId}", scopes: functionsWrite, api: (*Server).updateVariable},
		{pattern: "DELETE /v1/functions/{functionId}/variables/{variableId}", scopes: functionsWrite, api: (*Server).deleteVariable},
		{pattern: "GET /v1/proxy/rules", scopes: []string{"rules.read"}, api: (*Server).listRules},
		{pattern: "POST /v1/proxy/rules/function", scopes: []string{"rules.write"}, api: (*Server).createFunctionRule},

		// Health (no authentication).
		{pattern: "GET /v1/health", web: (*Server).serveHealth},
		{pattern: "GET /v1/health/version", web: (*Server).serveHealthVersion},

		// Realtime (realtime.go).
		{pattern: "GET /v1/realtime", web: (*Server).serveRealtime},

		// The OAuth authorization server of every project (package oauthserver, oauth.go), as appwrite/mcp
		// expects them: issuer {endpoint}/oauth2/{project}, metadata also at RFC 8414's inserted paths.
		{pattern: "GET /v1/oauth2/{project}/.well-known/openid-configuration", web: oauth((*oauthserver.Server).ServeMetadata)},
		{pattern: "GET /v1/oauth2/{project}/.well-known/oauth-authorization-server", web: oauth((*oauthserver.Server).ServeMetadata)},
		{pattern: "GET /.well-known/oauth-authorization-server/v1/oauth2/{project}", web: oauth((*oauthserver.Server).ServeMetadata)},
		{pattern: "GET /.well-known/openid-configuration/v1/oauth2/{project}", web: oauth((*oauthserver.Server).ServeMetadata)},
		{pattern: "GET /v1/oauth2/{project}/.well-known/jwks.json", web: (*Server).serveOAuthJWKS},
		{pattern: "GET /v1/oauth2/{project}/jwks", web: (*Server).serveOAuthJWKS},
		{pattern: "POST /v1/oauth2/{project}/register", web: oauth((*oauthserver.Server).ServeRegister)},
		{pattern: "GET /v1/oauth2/{project}/authorize", web: oauth((*oauthserver.Server).ServeAuthorize)},
		{pattern: "POST /v1/oauth2/{project}/authorize", web: oauth((*oauthserver.Server).ServeAuthorizeForm)},
		{pattern: "POST /v1/oauth2/{project}/token", web: oauth((*oauthserver.Server).ServeToken)},

		// The stand-in's own endpoints (admin.go; no Appwrite route uses AdminPrefix), listed by GET /_local in
		// this order, and the function domains (domains.go).
		{pattern: "GET " + AdminPrefix, web: (*Server).adminIndex},
		{pattern: "POST " + AdminPrefix + "/projects", web: (*Server).adminSeedProject},
		{pattern: "POST " + AdminPrefix + "/projects/{projectId}/keys", web: (*Server).adminCreateKey},
		{pattern: "POST " + AdminPrefix + "/projects/{projectId}/members", web: (*Server).adminAddMember},
		{pattern: "POST " + AdminPrefix + "/projects/{projectId}/databases", web: (*Server).adminSeedDatabase},
		{pattern: "POST " + AdminPrefix + "/projects/{projectId}/buckets", web: (*Server).adminSeedBucket},
		{pattern: "POST " + AdminPrefix + "/projects/{projectId}/users", web: (*Server).adminSeedUser},
		{pattern: "POST " + AdminPrefix + "/projects/{projectId}/functions", web: (*Server).adminRegisterFunction},
		{pattern: "PATCH " + AdminPrefix + "/projects/{projectId}/functions/{functionId}", web: (*Server).adminPatchFunction},
		{pattern: "POST " + AdminPrefix + "/oauth/token", web: (*Server).adminMintToken},
		{pattern: "GET " + AdminPrefix + "/deliveries", web: (*Server).adminDeliveries},
		{pattern: "DELETE " + AdminPrefix + "/deliveries", web: (*Server).adminResetDeliveries},
		{pattern: "POST " + AdminPrefix + "/deliveries/{deliveryId}/retry", web: (*Server).adminRedeliver},
		{pattern: "POST " + AdminPrefix + "/flush", web: (*Server).adminFlush},
		{pattern: "POST " + AdminPrefix + "/scheduled/run", web: (*Server).adminRunScheduled},
		{pattern: "GET " + AdminPrefix + "/jwks", web: (*Server).serveJWKS},
		{pattern: DomainPrefix + "/{functionId}/{path...}", web: (*Server).serveDomain},

		// Appwrite's wildcard route (app/controllers/general.php:1737-1742, 1.9.6): 404 general_route_not_found.
		// Go's mux would answer 405 for a known path with another method; the catch-all pattern matches first.
		{pattern: "/", web: func(s *Server, w http.ResponseWriter, _ *http.Request) {
			s.writeError(w, newErr(ErrGeneralRouteNotFound))
		}},
	}
	// One route per column type: POST /v1/tablesdb/{db}/tables/{t}/columns/{type} (TablesDB/Tables/Columns/*/Create.php).
	for _, typ := range columnTypes {
		rs = append(rs, route{pattern: "POST /v1/tablesdb/{databaseId}/tables/{tableId}/columns/" + typ, scopes: columnsWrite,
			api: (*Server).createColumn})
	}
	return rs
}

// oauth serves a route with the stand-in's authorization server.
func oauth(h func(*oauthserver.Server, http.ResponseWriter, *http.Request)) func(*Server, http.ResponseWriter, *http.Request) {
	return func(s *Server, w http.ResponseWriter, r *http.Request) { h(s.as, w, r) }
}

// routes registers the route table on the Server's mux.
func (s *Server) routes() {
	s.mux = http.NewServeMux()
	for _, rt := range routeTable() {
		if rt.when != nil && !rt.when(s) {
			continue
		}
		switch {
		case rt.api != nil:
			scopes, h := rt.scopes, rt.api
			s.mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) {
				s.serveAPI(w, r, scopes, func(c *call) (int, any, *APIError) { return h(s, c) })
			})
		default:
			h := rt.web
			s.mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) { h(s, w, r) })
		}
	}
}

// serveHealth is GET /v1/health.
func (s *Server) serveHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"name": "http", "ping": 0, "status": "pass"})
}

// serveAPI resolves the project, authenticates, checks the scope, parses params, runs h and queues the events
// h produced (Appwrite's shutdown hook in app/controllers/shared/api.php; here just before the response).
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, scopes []string, h handlerFunc) {
	pid := r.Header.Get("X-Appwrite-Project")
	if v := r.PathValue("projectId"); v != "" && pid == "" {
		pid = v
	}
	c := &call{s: s, r: r, w: w, legacy: isLegacyFormat(r.Header.Get("X-Appwrite-Response-Format"))}
	if err := c.parseParams(); err != nil {
		s.writeError(w, err)
		return
	}

	s.mu.Lock()
	status, body, apiErr := func() (int, any, *APIError) {
		if f := s.takeFaultLocked(r); f != nil {
			return 0, nil, f
		}
		if pid == "" {
			// No project: Appwrite falls back to the console project, where a project key is unknown.
			return 0, nil, missingScope(&principal{label: "User", role: "guests"}, scopes[0])
		}
		pr := s.projects[pid]
		if pr == nil {
			return 0, nil, newErr(ErrProjectNotFound)
		}
		c.pr = pr
		who, err := s.authenticate(r, pr)
		if err != nil {
			return 0, nil, err
		}
		c.who = who
		allowed := false
		for _, sc := range scopes {
			if who.has(sc) {
				allowed = true
			}
		}
		if !allowed {
			return 0, nil, missingScope(who, scopes[0])
		}
		return h(c)
	}()
	s.mu.Unlock()
	if apiErr == nil && c.after != nil {
		status, body, apiErr = c.after(c)
	}
	events := c.pending

	if apiErr != nil {
		s.writeError(w, apiErr)
		return
	}
	// Events are queued before the response is written, so that a caller who got the response and then calls
	// Flush waits for the deliveries it caused. The deliveries themselves still go out asynchronously.
	for _, ev := range events {
		s.dispatch(ev)
	}
	if status == http.StatusNoContent {
		w.WriteHeader(status)
	} else {
		writeJSON(w, status, body)
	}
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(body)
}

// isLegacyFormat reports whether X-Appwrite-Response-Format asks for a version below 1.9.1 (response filter
// V22 renames webhook fields back to security/httpUser/httpPass/signatureKey). No header = current format.
func isLegacyFormat(v string) bool {
	if v == "" {
		return false
	}
	p, ok := parseVersion(v)
	if !ok {
		return false
	}
	return versionLess(p, [3]int{1, 9, 1})
}

// legacyBefore reports whether the request asks for a response format (X-Appwrite-Response-Format) below
// major.minor.patch: Appwrite then runs the request and response filters of every later version
// (app/controllers/general.php:870-935, 1.9.6). No header is the current format.
func (c *call) legacyBefore(major, minor, patch int) bool {
	v := c.r.Header.Get("X-Appwrite-Response-Format")
	if v == "" {
		return false
	}
	p, ok := parseVersion(v)
	return ok && versionLess(p, [3]int{major, minor, patch})
}

var indexedKey = regexp.MustCompile(`^([^\[\]]+)((?:\[[^\[\]]*\])+)$`)

// parseParams reads params like Appwrite's router: path values, query (GET; "k[]" arrays), JSON bodies, form and
// multipart bodies (the SDK flattens arrays as "k[0]").
func (c *call) parseParams() *APIError {
	c.params = map[string]any{}
	q := c.r.URL.Query()
	for k, vs := range q {
		addFormValue(c.params, k, vs)
	}
	if c.r.Body != nil && c.r.Method != http.MethodGet {
		body, err := io.ReadAll(io.LimitReader(c.r.Body, maxBody+1))
		if err != nil {
			return newErr(ErrGeneralArgumentInvalid, "Could not read the request body.")
		}
		if len(body) > maxBody {
			return newErr(ErrGeneralArgumentInvalid, "Request body too large.")
		}
		ct, ctParams, _ := mime.ParseMediaType(c.r.Header.Get("Content-Type"))
		switch {
		case ct == "application/json" && len(bytes.TrimSpace(body)) > 0:
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				return newErr(ErrGeneralArgumentInvalid, "Invalid JSON body: %s", err.Error())
			}
			for k, v := range m {
				c.params[k] = v
			}
		case ct == "application/x-www-form-urlencoded":
			vals, err := url.ParseQuery(string(body))
			if err != nil {
				return newErr(ErrGeneralArgumentInvalid, "Invalid form body.")
			}
			for k, vs := range vals {
				addFormValue(c.params, k, vs)
			}
		case ct == "multipart/form-data":
			mr, err := newMultipart(body, ctParams["boundary"])
			if err != nil {
				return newErr(ErrGeneralArgumentInvalid, "Invalid multipart body: %s", err.Error())
			}
			for k, vs := range mr.values {
				addFormValue(c.params, k, vs)
			}
			c.files = mr.files
		}
	}
	return nil
}

func addFormValue(params map[string]any, k string, vs []string) {
	if strings.HasSuffix(k, "[]") {
		name := strings.TrimSuffix(k, "[]")
		arr, _ := params[name].([]any)
		for _, v := range vs {
			arr = append(arr, v)
		}
		params[name] = arr
		return
	}
	if m := indexedKey.FindStringSubmatch(k); m != nil {
		// "permissions[0]": collect into an array ordered by index.
		name := m[1]
		idx := strings.Trim(m[2], "[]")
		holder, _ := params["\x00"+name].(map[string]string)
		if holder == nil {
			holder = map[string]string{}
			params["\x00"+name] = holder
		}
		if len(vs) > 0 {
			holder[idx] = vs[0]
		}
		keys := make([]string, 0, len(holder))
		for k := range holder {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, _ := strconv.Atoi(keys[i])
			b, _ := strconv.Atoi(keys[j])
			return a < b
		})
		arr := make([]any, 0, len(keys))
		for _, k := range keys {
			arr = append(arr, holder[k])
		}
		params[name] = arr
		return
	}
	if len(vs) > 0 {
		params[k] = vs[0]
	}
}

// ---- param accessors (validators copy utopia-php/framework's Text, Boolean, ArrayList, URL) ----

func (c *call) has(name string) bool {
	v, ok := c.params[name]
	return ok && v != nil
}

// str reads a string param. max <= 0 means no Text length limit.
func (c *call) str(name string, required bool, def string, max int) (string, *APIError) {
	v, ok := c.params[name]
	if !ok || v == nil {
		if required {
			return "", missingParam(name)
		}
		return def, nil
	}
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case json.Number:
		s = t.String()
	case bool:
		s = strconv.FormatBool(t)
	default:
		return "", invalidParam(name, textDescription(max))
	}
	if max > 0 && len([]rune(s)) > max {
		return "", invalidParam(name, textDescription(max))
	}
	return s, nil
}

// textDescription copies utopia's Text::getDescription.
func textDescription(max int) string {
	if max <= 0 {
		return "Value must be a valid string"
	}
	return fmt.Sprintf("Value must be a valid string and no longer than %d chars", max)
}

// boolean copies utopia's Boolean validator in loose mode: true/false, "true"/"false", 1/0, "1"/"0".
func (c *call) boolean(name string, def bool) (bool, *APIError) {
	v, ok := c.params[name]
	if !ok || v == nil {
		return def, nil
	}
	switch t := v.(type) {
	case bool:
		return t, nil
	case string:
		switch t {
		case "true", "1":
			return true, nil
		case "false", "0":
			return false, nil
		}
	case json.Number:
		switch t.String() {
		case "1":
			return true, nil
		case "0":
			return false, nil
		}
	}
	return false, invalidParam(name, "Value must be a valid boolean")
}

func (c *call) integer(name string, def int) (int, *APIError) {
	v, ok := c.params[name]
	if !ok || v == nil {
		return def, nil
	}
	var s string
	switch t := v.(type) {
	case json.Number:
		s = t.String()
	case string:
		s = t
	default:
		return 0, invalidParam(name, "Value must be a valid integer")
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, invalidParam(name, "Value must be a valid integer")
	}
	return n, nil
}

// strArray reads an array of strings; desc is the ArrayList description for errors.
func (c *call) strArray(name string, required bool, max int, desc string) ([]string, bool, *APIError) {
	v, ok := c.params[name]
	if !ok || v == nil {
		if required {
			return nil, false, missingParam(name)
		}
		return nil, false, nil
	}
	arr, ok := v.([]any)
	if !ok {
		if s, isStr := v.(string); isStr {
			// A JSON-encoded array sent as a string (form bodies).
			var list []any
			if json.Unmarshal([]byte(s), &list) == nil {
				arr = list
				ok = true
			}
		}
	}
	if !ok || (max > 0 && len(arr) > max) {
		return nil, true, invalidParam(name, desc)
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, isStr := e.(string)
		if !isStr {
			return nil, true, invalidParam(name, desc)
		}
		out = append(out, s)
	}
	return out, true, nil
}

// object reads a JSON object param (also accepted as a JSON string, like Appwrite's JSON validator).
func (c *call) object(name string, required bool) (map[string]any, bool, *APIError) {
	v, ok := c.params[name]
	if !ok || v == nil {
		if required {
			return nil, false, missingParam(name)
		}
		return nil, false, nil
	}
	switch t := v.(type) {
	case map[string]any:
		return t, true, nil
	case string:
		dec := json.NewDecoder(strings.NewReader(t))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err == nil && m != nil {
			return m, true, nil
		}
	case []any:
		if len(t) == 0 {
			return map[string]any{}, true, nil
		}
	}
	return nil, true, invalidParam(name, "Value must be a valid JSON string")
}

// customIDRe copies utopia-php/database's Key/UID validator used by CustomId: at most 36 chars of a-z, A-Z, 0-9,
// period, hyphen and underscore, not starting with a special char.
var customIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,35}$`)

const customIDDescription = "Parameter must contain at most 36 chars. Valid chars are a-z, A-Z, 0-9, period, hyphen, and underscore. Can't start with a special char"

func validCustomID(id string) bool { return customIDRe.MatchString(id) }

// seedProjectLocked is the project that a Seed or Register call adds a kind (a function, a site, a bucket, a
// database) called id to: an error when there is no such project or id is not a custom id Appwrite takes.
// s.mu must be held.
func (s *Server) seedProjectLocked(projectID, kind, id string) (*project, error) {
	pr := s.projects[projectID]
	if pr == nil {
		return nil, fmt.Errorf("localappwrite: no project %q", projectID)
	}
	if !validCustomID(id) {
		return nil, fmt.Errorf("localappwrite: invalid %s id %q", kind, id)
	}
	return pr, nil
}

// customID reads a CustomId param: "unique()" generates an id (Appwrite's ID::unique()).
// email reads an Email param (utopia-php's Email validator: "Value must be a valid email address"); an
// optional one may be empty.
func (c *call) email(name string, required bool) (string, *APIError) {
	v, err := c.str(name, required, "", 0)
	if err != nil || v == "" {
		return v, err
	}
	if a, e := mail.ParseAddress(v); e != nil || a.Address != v {
		return "", invalidParam(name, "Value must be a valid email address")
	}
	return v, nil
}

func (c *call) customID(name string) (string, *APIError) {
	v, err := c.str(name, true, "", 0)
	if err != nil {
		return "", err
	}
	if v == "unique()" {
		return c.s.uniqueID(), nil
	}
	if !validCustomID(v) {
		return "", invalidParam(name, customIDDescription)
	}
	return v, nil
}
