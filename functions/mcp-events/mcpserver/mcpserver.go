// Package mcpserver is the mcp-events MCP server over Streamable HTTP: OAuth resource server in front,
// events/* dispatched by this package, every other method handled by the official MCP Go SDK (server/discover
// at protocol 2026-07-28 and legacy initialize), with the events capability advertised in both shapes.
//
// The server is stateless: the SDK's Streamable HTTP handler runs stateless with JSON (not SSE) answers,
// because a function answers with one buffered body, and any replica may serve any request.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"appwrite-agent/functions/mcp-events/config"
	"appwrite-agent/functions/mcp-events/mcperr"
	"appwrite-agent/functions/mcp-events/metrics"
	"appwrite-agent/functions/mcp-events/oauth"
	"appwrite-agent/functions/mcp-events/subscriptions"
	"appwrite-agent/functions/mcp-events/tools"
	"appwrite-agent/shared/appwritesig"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/faultreport"
	"appwrite-agent/shared/fnhttp"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/seal"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerName and ServerVersion identify the server in serverInfo.
const (
	ServerName    = "appwrite-mcp-events"
	ServerVersion = "1.0.0"
)

// ExtensionID is the events extension identifier.
const ExtensionID = "io.modelcontextprotocol/events"

// Instructions are returned by server/discover and initialize.
const Instructions = "Subscribe to events in your Appwrite projects (rows, files, users, failed function " +
	"executions) with events/list and events/subscribe; deliveries are Standard Webhooks signed POSTs " +
	"carrying IDs only. Read what an event points at with the read-only tools get_row, get_file, get_user " +
	"and get_execution (logs and errors), and list your subscriptions with list_subscriptions."

// maxRequestBytes bounds a request body.
const maxRequestBytes = 1 << 20

// Options are test and wiring hooks; the zero value is production.
type Options struct {
	// HTTPClient calls Appwrite and the JWKS URL (a client with a 10 s timeout when nil).
	HTTPClient *http.Client
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Faults receives server faults (nil: none are reported; see shared/faultreport).
	Faults *faultreport.Reporter
}

// Server is one instance of the MCP server. It is safe for concurrent use and keeps no subscription state.
type Server struct {
	cfg      config.Config
	resource oauth.Resource
	// discovery reads the authorization server's published scopes_supported; nil when
	// MCP_EVENTS_OAUTH_SCOPES names the scopes.
	discovery *oauth.Discovery
	verifier  *oauth.Verifier
	mcp       http.Handler           // the SDK's Streamable HTTP handler
	subs      *subscriptions.Service // nil when events are off
	faults    *faultreport.Reporter  // nil when SENTRY_DSN is unset
}

// New builds a server from the environment read through getenv (os.Getenv when nil).
func New(getenv config.Getenv, o Options) (*Server, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return nil, err
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	s := &Server{
		cfg:      cfg,
		resource: oauth.Resource{PublicURL: cfg.PublicURL, Issuer: cfg.Issuer, Scopes: cfg.Scopes, Needs: eventcatalog.ScopeRequirements()},
		verifier: oauth.NewVerifier(cfg.Issuer, cfg.Audiences, oauth.NewJWKS(cfg.JWKSURL, hc)),
		faults:   o.Faults,
	}
	if !cfg.ScopesSet {
		s.discovery = oauth.NewDiscovery(cfg.Issuer, hc, o.Now)
	}
	caps := &sdk.ServerCapabilities{} // no logging capability: the SDK's default advertises it
	if cfg.Enabled {
		caps.Tools = &sdk.ToolCapabilities{}
		caps.AddExtension(ExtensionID, nil)
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: ServerName, Version: ServerVersion},
		&sdk.ServerOptions{Instructions: Instructions, Capabilities: caps,
			// Every answer is behind the caller's token: only that user's client may cache it.
			SetCacheable: func(_ context.Context, _ sdk.Request, c *sdk.Cacheable) { c.CacheScope = "private" }})
	// Stateless with JSON answers, a call's context ending with its request; the body reaching the SDK is
	// already bounded (maxRequestBytes). The SDK logs nothing (no Logger): functions log through Context.Log
	// only, and everything worth logging is logged by this package.
	s.mcp = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, PropagateRequestCancellation: true})
	if !cfg.Enabled {
		return s, nil
	}

	ring, err := seal.ParseKeyring(getenv(config.EnvSealKeys))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.EnvSealKeys, err)
	}
	budget := seal.DefaultBudget()
	if cfg.UsernameBudget != 0 {
		budget.Username = cfg.UsernameBudget
	}
	if cfg.PasswordBudget != 0 {
		budget.Password = cfg.PasswordBudget
	}
	budget.URL = subscriptions.URLBudget(cfg.IngressURL)
	if cfg.URLBudget >= 0 {
		budget.URL = cfg.URLBudget // subscriptions.New refuses more than fits
	}
	sealer, err := seal.NewSealer(ring, budget)
	if err != nil {
		return nil, err
	}
	keys, err := appwritesig.ParseKeys(getenv(config.EnvWebhookKeys))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.EnvWebhookKeys, err)
	}
	allow, err := safehttp.ParseAllowlist(getenv(config.EnvSafeAllow))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.EnvSafeAllow, err)
	}
	cbOpts := safehttp.Options{
		AllowPrivate: allow, ConnectTimeout: cfg.ChallengeTimeout, HeaderTimeout: cfg.ChallengeTimeout,
		TotalTimeout: cfg.ChallengeTimeout, MaxResponseBytes: 64 << 10,
	}
	if cfg.CallbackCAFile != "" {
		if cbOpts, err = safehttp.WithCAFile(cbOpts, cfg.CallbackCAFile); err != nil {
			return nil, err
		}
	}
	aw := subscriptions.NewAppwrite(cfg.AppwriteEndpoint, hc)
	s.subs, err = subscriptions.New(subscriptions.Options{
		Appwrite: aw, Sealer: sealer, SigKeys: keys,
		Callback: safehttp.NewClient(cbOpts), CallbackOptions: cbOpts, IngressURL: cfg.IngressURL,
		TTLDefault: cfg.TTLDefault, TTLMin: cfg.TTLMin, TTLMax: cfg.TTLMax, RotationGrace: cfg.RotationGrace,
		ChallengeTimeout: cfg.ChallengeTimeout, ChallengeRate: cfg.ChallengeRate, Now: o.Now,
	})
	if err != nil {
		return nil, err
	}
	tools.New(aw, s.subs, cfg.RequestTimeout, s.toolDone).Register(srv)
	return s, nil
}

// toolDone counts one tool call and reports it when it ended in a server fault.
func (s *Server) toolDone(ctx context.Context, r tools.Result) {
	metrics.Count(logSink(ctx), metrics.ToolCallsTotal, "tool", r.Tool, "outcome", r.Outcome)
	if r.Fault() {
		detail := r.Text
		if r.Detail != "" {
			detail = r.Detail
			if sink := logSink(ctx); sink != nil {
				sink("tools/call " + r.Tool + ": " + r.Reason + ": " + r.Detail)
			}
		}
		s.faults.Report(faultreport.Fault{Operation: "tools/call " + r.Tool, ProjectID: r.ProjectID,
			Outcome: r.Outcome, Reason: r.Reason, Detail: detail})
	}
}

// Faults returns the server's fault reporter (nil when none is configured).
func (s *Server) Faults() *faultreport.Reporter { return s.faults }

// Config returns the server's configuration.
func (s *Server) Config() config.Config { return s.cfg }

type logKey struct{}

// WithLog returns a context whose requests log (diagnostics and metric lines) to sink.
func WithLog(ctx context.Context, sink metrics.Sink) context.Context {
	return context.WithValue(ctx, logKey{}, sink)
}

func logSink(ctx context.Context) metrics.Sink {
	if l, ok := ctx.Value(logKey{}).(metrics.Sink); ok {
		return l
	}
	return nil
}

// Handles reports whether path is served by this package.
func Handles(path string) bool {
	switch path {
	case "/", "/mcp", oauth.MetadataPath, oauth.MetadataPath + "/mcp":
		return true
	}
	return false
}

// ServeHTTP serves the MCP endpoint ("/" and "/mcp") and the protected-resource metadata.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case oauth.MetadataPath, oauth.MetadataPath + "/mcp":
		// The metadata is a public document that carries no credential: any page may read it (a browser
		// client discovers the authorization server from it), as the MCP SDKs' metadata handlers allow every
		// origin "to make it accessible to web-based MCP clients" (Vercel's mcp-handler does the same).
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			w.Header().Set("Access-Control-Allow-Methods", "GET, HEAD")
			w.Header().Set("Access-Control-Max-Age", "86400")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method_not_allowed", "message": "use GET"})
			return
		}
		writeJSON(w, http.StatusOK, s.res(r.Context()).Metadata(strings.TrimPrefix(r.URL.Path, oauth.MetadataPath)))
	case "/", "/mcp":
		if origin := r.Header.Get("Origin"); origin != "" && !s.originAllowed(r, origin) {
			// Streamable HTTP: servers MUST validate Origin (DNS rebinding). A browser page of another site
			// sends its origin; server-side clients (ChatGPT's backend, SDKs) send none; a page of the
			// server's own origin is served.
			writeJSON(w, http.StatusForbidden, rpcError(nil, codeInvalidRequest,
				"Forbidden: Origin "+strconv.Quote(origin)+" is not allowed (list it in "+config.EnvAllowedOrigins+")", nil))
			return
		} else if origin != "" {
			// A listed origin's page may read the answers (CORS): the 401's WWW-Authenticate included, which
			// is how a browser client finds the authorization server. Its preflight is answered here, before
			// the token check (a preflight carries no credentials).
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", "WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version, Retry-After")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", "POST, GET, DELETE")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		s.serveMCP(w, r)
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not_found", "message": "no route for " + r.Method + " " + r.URL.Path})
	}
}

// originAllowed reports whether a request's Origin may call the MCP endpoint (scheme, host and port compared
// without case, a default port left out): the server's own origin, or one MCP_EVENTS_ALLOWED_ORIGINS lists.
//
// The server's own origin is its public URL's. A loopback server (a public URL on localhost, 127.0.0.0/8 or
// ::1: a development or test server, often reached through another local port) also owns the request's own
// host when that host is a loopback one, so http(s)://<Host> is served. A DNS-rebinding page (evil.example
// resolved to 127.0.0.1) sends Host and Origin evil.example: not loopback, not the public URL, refused.
func (s *Server) originAllowed(r *http.Request, origin string) bool {
	o := config.NormalizeOrigin(origin)
	if o == config.OriginOf(s.cfg.PublicURL) || slices.Contains(s.cfg.AllowedOrigins, o) {
		return true
	}
	if !config.IsLoopbackHost(hostOf(s.cfg.PublicURL)) || r.Host == "" || !config.IsLoopbackHost(r.Host) {
		return false
	}
	return o == config.NormalizeOrigin("http://"+r.Host) || o == config.NormalizeOrigin("https://"+r.Host)
}

// hostOf is the host[:port] of an absolute URL ("" when it does not parse).
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Host
}

// res is the resource description, advertising what the authorization server publishes when it does.
func (s *Server) res(ctx context.Context) oauth.Resource {
	if s.discovery == nil {
		return s.resource
	}
	return s.resource.Published(s.discovery.Scopes(ctx))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request, desc string) {
	w.Header().Set("WWW-Authenticate", s.res(r.Context()).Challenge(r.URL.Path, desc))
	writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token", "error_description": desc})
}

// keysUnavailable answers a request whose token could not be checked because the issuer's keys could not
// be fetched: HTTP 503 with Retry-After (the next fetch may run then), not a 401, which would tell the
// client its token is bad and send the user through authorization again for nothing.
func (s *Server) keysUnavailable(w http.ResponseWriter, ue *oauth.UnavailableError) {
	w.Header().Set("Retry-After", strconv.Itoa(int((ue.RetryAfter+time.Second-1)/time.Second)))
	writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "temporarily_unavailable",
		"error_description": "the token could not be checked: " + ue.Error() + "; retry later"})
}

// noCredentials answers a request without a bearer token: the challenge carries no error code (RFC 6750
// §3.1), only where the metadata is and which scopes to ask for.
func (s *Server) noCredentials(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", s.res(r.Context()).NoCredentials(r.URL.Path))
	writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized",
		"error_description": "Authentication required: send an OAuth access token as Authorization: Bearer <token>"})
}

// insufficientScope answers a call the token lacks scopes for: HTTP 403 with an insufficient_scope
// challenge naming the scopes the call needs (so the client can ask the user for them), and the JSON-RPC
// Forbidden error in the body.
func (s *Server) insufficientScope(w http.ResponseWriter, r *http.Request, id json.RawMessage, merr *mcperr.Error) {
	w.Header().Set("WWW-Authenticate", s.res(r.Context()).InsufficientScope(r.URL.Path, merr.StepUp, merr.Message))
	we := s.cfg.Codes.Wire(merr)
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	writeJSON(w, http.StatusForbidden, rpcResponse{JSONRPC: "2.0", ID: id, Error: &we})
}

// rpcHead is the part of a JSON-RPC message the dispatcher looks at.
type rpcHead struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tok, ok := fnhttp.BearerToken(r.Header.Get("Authorization"))
	if !ok {
		s.noCredentials(w, r)
		return
	}
	principal, err := s.verifier.Verify(ctx, tok)
	if err != nil {
		if sink := logSink(ctx); sink != nil {
			sink("auth: " + err.Error())
		}
		if ue := (*oauth.UnavailableError)(nil); errors.As(err, &ue) {
			s.keysUnavailable(w, ue)
			return
		}
		desc := strings.TrimPrefix(err.Error(), oauth.ErrInvalidToken.Error()+": ")
		s.unauthorized(w, r, desc)
		return
	}
	if r.Method != http.MethodPost {
		methodNotAllowed(w, r.Method)
		return
	}
	var body []byte
	if r.Body != nil {
		body, err = io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
		if err != nil || len(body) > maxRequestBytes {
			writeJSON(w, http.StatusRequestEntityTooLarge, rpcError(nil, codeInvalidRequest,
				fmt.Sprintf("request body too large or unreadable (at most %d bytes)", maxRequestBytes), nil))
			return
		}
	}
	if f := checkShape(body); f != nil {
		f.write(w)
		return
	}
	var head rpcHead
	_ = json.Unmarshal(body, &head) // checkShape proved it is an object
	if strings.HasPrefix(head.Method, "events/") {
		s.serveEvents(w, r.WithContext(ctx), principal, head)
		return
	}
	if head.Method == methodSetLevel && refuseSetLevel(w, r, head) {
		return
	}
	if s.cfg.Enabled && head.Method == "tools/call" {
		var call struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(head.Params, &call)
		if missing, stepUp := tools.StepUp(call.Name, principal.Scopes); len(stepUp) > 0 {
			s.toolDone(ctx, tools.Result{Tool: call.Name, Outcome: "forbidden"})
			s.insufficientScope(w, r, head.ID, mcperr.InsufficientScope(missing, stepUp,
				"the access token lacks the scopes %s needs: %s", call.Name, strings.Join(missing, ", ")))
			return
		}
	}
	ctx = tools.WithPrincipal(ctx, principal)
	r = r.WithContext(ctx)
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := NewRecorder()
	s.mcp.ServeHTTP(rec, r)
	out := rec.body.Bytes()
	if s.cfg.Enabled && rec.status == http.StatusOK && (head.Method == "server/discover" || head.Method == "initialize") {
		if patched, err := addEventsCapability(out); err == nil {
			out = patched
		}
	}
	out = jsonBody(&rec.status, rec.header, out, head.ID)
	for k, vs := range rec.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(out)
}

// methodSetLevel is the logging utility's request, which this server refuses.
const methodSetLevel = "logging/setLevel"

// SetLevelRefusal is the message of the Method not found error that answers a legacy logging/setLevel.
const SetLevelRefusal = "Method not found: logging/setLevel (this server does not declare the logging capability and sends no log notifications)"

// refuseSetLevel answers a legacy logging/setLevel request with JSON-RPC Method not found (-32601, in a 200
// as every legacy JSON-RPC error) and reports whether it did. The server declares no logging capability
// (capabilities are negotiated, and only negotiated ones may be used): it is stateless and answers JSON,
// never a stream, so it has no session to keep a level in and nothing to carry a notifications/message;
// the SDK would answer {} and keep the level in a session that ends with the request. Logging is
// deprecated by protocol 2026-07-28 (SEP-2577), whose requests the SDK refuses the method for itself (404,
// -32601). A notification (no id) and a request with an unknown protocol version header are left to the SDK.
func refuseSetLevel(w http.ResponseWriter, r *http.Request, head rpcHead) bool {
	e := detectEra(r, head.Params)
	if e.modern || (e.headerVersion != "" && !knownProtocol(e.headerVersion)) || len(head.ID) == 0 || string(head.ID) == "null" {
		return false
	}
	writeJSON(w, http.StatusOK, rpcError(head.ID, codeMethodNotFound, SetLevelRefusal, nil))
	return true
}

// addEventsCapability adds to a server/discover or initialize answer the top-level capabilities.events the
// design-sketch clients (ChatGPT) read, beside capabilities.extensions[ExtensionID] that the SDK sends.
func addEventsCapability(body []byte) ([]byte, error) {
	var msg struct {
		JSONRPC string                     `json:"jsonrpc"`
		ID      json.RawMessage            `json:"id"`
		Result  map[string]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.Result == nil {
		return nil, errors.New("not a JSON-RPC result")
	}
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(msg.Result["capabilities"], &caps); err != nil || caps == nil {
		return nil, errors.New("no capabilities")
	}
	caps["events"] = json.RawMessage(`{}`)
	msg.Result["capabilities"], _ = json.Marshal(caps)
	out, err := json.Marshal(rpcResponse{JSONRPC: msg.JSONRPC, ID: msg.ID, Result: msg.Result})
	return append(out, '\n'), err
}

// rpcResponse is a JSON-RPC answer.
type rpcResponse struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Result  any               `json:"result,omitempty"`
	Error   *mcperr.WireError `json:"error,omitempty"`
}

func rpcError(id json.RawMessage, code int, msg string, data map[string]any) rpcResponse {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return rpcResponse{JSONRPC: "2.0", ID: id, Error: &mcperr.WireError{Code: code, Message: msg, Data: data}}
}

// ListResult is the result of events/list.
type ListResult struct {
	ResultType string                 `json:"resultType"`
	Events     []eventcatalog.Listing `json:"events"`
}

// List returns the catalog entries the scopes allow.
func List(scopes map[string]bool) ListResult {
	out := ListResult{ResultType: "complete", Events: []eventcatalog.Listing{}}
	for _, e := range eventcatalog.All() {
		if len(e.MissingScopes(scopes)) == 0 {
			out.Events = append(out.Events, e.Listing())
		}
	}
	return out
}

// listStepUp is what a token that can use no event at all is asked to add: for every event, the scopes it
// lacks (first alternatives), without repeats.
func listStepUp(scopes map[string]bool) []string {
	var out []string
	for _, e := range eventcatalog.All() {
		for _, sc := range e.StepUpScopes(scopes) {
			if !slices.Contains(out, sc) {
				out = append(out, sc)
			}
		}
	}
	return out
}

func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request, p *oauth.Principal, head rpcHead) {
	e := detectEra(r, head.Params)
	if f := checkEventsTransport(r, head, e); f != nil {
		f.write(w)
		return
	}
	if len(head.ID) == 0 || string(head.ID) == "null" {
		w.WriteHeader(http.StatusAccepted) // a notification: nothing to answer
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	call := subscriptions.Call{Principal: p, Log: logSink(ctx)}
	var result any
	var merr *mcperr.Error
	if head.JSONRPC != "2.0" {
		writeJSON(w, statusFor(e, codeInvalidRequest), rpcError(head.ID, codeInvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"", nil))
		return
	}
	method := head.Method
	if !s.cfg.Enabled {
		method = "" // with events off, no events/* method exists
	}
	switch method {
	case "events/list":
		// The MCP spec's pagination: a cursor the server did not issue is invalid params. events/list answers
		// every event in one page and issues none.
		var params struct {
			Cursor json.RawMessage `json:"cursor"`
		}
		if len(head.Params) > 0 && string(head.Params) != "null" {
			if err := decodeParams(head.Params, &params); err != nil {
				merr = err
				break
			}
		}
		if len(params.Cursor) > 0 && string(params.Cursor) != "null" {
			merr = mcperr.Invalid("cursor", "cursor: not a cursor of this server (events/list answers every event in one page and issues none)")
			break
		}
		result = List(p.Scopes)
		if res := result.(ListResult); len(res.Events) == 0 {
			ask := listStepUp(p.Scopes)
			merr = mcperr.InsufficientScope(nil, ask,
				"the access token carries none of the scopes any event needs; ask for %s", strings.Join(ask, " "))
			merr.Data = map[string]any{"missingScopes": ask}
		}
	case "events/subscribe":
		var params subscriptions.SubscribeParams
		if err := decodeParams(head.Params, &params); err != nil {
			merr = err
			break
		}
		res, err := s.subs.Subscribe(ctx, call, params)
		if err != nil {
			merr = err
		} else {
			result = res
		}
	case "events/unsubscribe":
		var params subscriptions.UnsubscribeParams
		if err := decodeParams(head.Params, &params); err != nil {
			merr = err
			break
		}
		res, err := s.subs.Unsubscribe(ctx, call, params)
		if err != nil {
			merr = err
		} else {
			result = res
		}
	default:
		writeJSON(w, statusFor(e, mcperr.CodeMethodNotFound), rpcError(head.ID, mcperr.CodeMethodNotFound, "Method not found: "+head.Method, nil))
		return
	}
	if merr != nil {
		if merr.Kind == mcperr.Internal {
			s.reportEventsFault(head, merr)
		}
		if merr.Kind == mcperr.Forbidden && len(merr.StepUp) > 0 {
			s.insufficientScope(w, r, head.ID, merr)
			return
		}
		we := s.cfg.Codes.Wire(merr)
		writeJSON(w, statusFor(e, we.Code), rpcResponse{JSONRPC: "2.0", ID: head.ID, Error: &we})
		return
	}
	writeJSON(w, http.StatusOK, rpcResponse{JSONRPC: "2.0", ID: head.ID, Result: result})
}

// reportEventsFault reports an events/* call that failed on the server's side (Appwrite failing or
// unreachable, an internal error); the caller's bad input and the subscriber's endpoint never come here.
func (s *Server) reportEventsFault(head rpcHead, merr *mcperr.Error) {
	if s.faults == nil {
		return
	}
	var p struct {
		Name      string `json:"name"`
		Arguments struct {
			ProjectID string `json:"project_id"`
		} `json:"arguments"`
	}
	_ = json.Unmarshal(head.Params, &p)
	event := p.Name
	if _, ok := eventcatalog.Lookup(event); !ok {
		event = ""
	}
	project := p.Arguments.ProjectID
	if !eventcatalog.ValidID(project) {
		project = ""
	}
	s.faults.Report(faultreport.Fault{Operation: head.Method, Event: event, ProjectID: project,
		Outcome: metrics.OutcomeError, Reason: merr.FaultReason(), Detail: merr.Message})
}

func decodeParams(raw json.RawMessage, v any) *mcperr.Error {
	if len(raw) == 0 || string(raw) == "null" {
		return mcperr.Invalid("params", "params: required object")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return mcperr.Invalid(te.Field, "%s: must be %s", te.Field, te.Type.String())
		}
		return mcperr.Invalid("params", "params: not a valid object")
	}
	return nil
}

// Recorder is the function's one buffering http.ResponseWriter: it keeps the whole answer (status,
// headers, body), as the open-runtimes contract takes one buffered response; the SDK's JSON answers are
// recorded the same way before this package completes them.
type Recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

// NewRecorder returns an empty Recorder whose status is 200 until WriteHeader or Write says otherwise.
func NewRecorder() *Recorder { return &Recorder{header: http.Header{}, status: http.StatusOK} }

// Header implements http.ResponseWriter.
func (r *Recorder) Header() http.Header { return r.header }

// WriteHeader implements http.ResponseWriter; only the first status counts.
func (r *Recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
}

// Write implements http.ResponseWriter.
func (r *Recorder) Write(p []byte) (int, error) {
	r.wrote = true
	return r.body.Write(p)
}

// Status is the recorded status code.
func (r *Recorder) Status() int { return r.status }

// Body is the recorded body.
func (r *Recorder) Body() []byte { return r.body.Bytes() }
