package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"appwrite-agent/functions/mcp-events/mcperr"
	"appwrite-agent/functions/mcp-events/oauth"
	"appwrite-agent/functions/mcp-events/subscriptions"
	"appwrite-agent/functions/mcp-events/tools"
	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/faultreport"
	"appwrite-agent/shared/fnhttp"
	"appwrite-agent/shared/opsmetrics"
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

// Server is one instance of the MCP server: the MCP endpoint over Streamable HTTP, with the OAuth resource
// server in front, events/* dispatched here (events.go) and every other method handled by the official MCP Go
// SDK (server/discover at protocol 2026-07-28 and legacy initialize), with the events capability advertised
// in both shapes. It is safe for concurrent use and stateless: the SDK's Streamable HTTP handler runs
// stateless with JSON (not SSE) answers, because a function answers with one buffered body, and any replica
// may serve any request; it keeps no subscription state.
type Server struct {
	cfg      Config
	resource oauth.Resource
	// discovery reads the authorization server's published scopes_supported; nil when
	// MCP_EVENTS_OAUTH_SCOPES names the scopes.
	discovery *oauth.Discovery
	verifier  *oauth.Verifier
	mcp       http.Handler           // the SDK's Streamable HTTP handler
	subs      *subscriptions.Service // nil when events are off
	faults    *faultreport.Reporter  // nil when SENTRY_DSN is unset
}

// NewServer builds a server of cfg (LoadConfig, ReadConfig). It fails when the envelope budgets do not fit
// Appwrite's columns or the callback CA file does not load.
func NewServer(cfg Config, o Options) (*Server, error) {
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
	sealer, err := seal.NewSealer(cfg.SealKeys, budget)
	if err != nil {
		return nil, err
	}
	cbOpts := safehttp.Options{
		AllowPrivate: cfg.CallbackAllow, ConnectTimeout: cfg.ChallengeTimeout, HeaderTimeout: cfg.ChallengeTimeout,
		TotalTimeout: cfg.ChallengeTimeout, MaxResponseBytes: 64 << 10,
	}
	if cfg.CallbackCAFile != "" {
		if cbOpts, err = safehttp.WithCAFile(cbOpts, cfg.CallbackCAFile); err != nil {
			return nil, err
		}
	}
	aw := subscriptions.NewAppwrite(cfg.AppwriteEndpoint, hc)
	s.subs, err = subscriptions.New(subscriptions.Options{
		Appwrite: aw, Sealer: sealer, SigKeys: cfg.WebhookKeys,
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
	sink := logSink(ctx)
	if sink != nil {
		sink(opsmetrics.Line(tools.CallsTotal, "tool", r.Tool, "outcome", r.Outcome))
	}
	if r.Fault() {
		detail := r.Text
		if r.Detail != "" {
			detail = r.Detail
			if sink != nil {
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
func (s *Server) Config() Config { return s.cfg }

type logKey struct{}

// withLog returns a context whose requests log (diagnostics and counter lines) to sink.
func withLog(ctx context.Context, sink func(line string)) context.Context {
	return context.WithValue(ctx, logKey{}, sink)
}

// logSink is the log of ctx's request (withLog), nil when it has none.
func logSink(ctx context.Context) func(line string) {
	sink, _ := ctx.Value(logKey{}).(func(line string))
	return sink
}

// handles reports whether path is served by the Server.
func handles(path string) bool {
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
				"Forbidden: Origin "+strconv.Quote(origin)+" is not allowed (list it in "+EnvAllowedOrigins+")", nil))
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
	o := normalizeOrigin(origin)
	if o == originOf(s.cfg.PublicURL) || slices.Contains(s.cfg.AllowedOrigins, o) {
		return true
	}
	if !isLoopbackHost(hostOf(s.cfg.PublicURL)) || r.Host == "" || !isLoopbackHost(r.Host) {
		return false
	}
	return o == normalizeOrigin("http://"+r.Host) || o == normalizeOrigin("https://"+r.Host)
}

// hostOf is the host[:port] of an absolute URL ("" when it does not parse).
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Host
}

// normalizeOrigin is an origin as compared: lower case, without a trailing slash, and without the scheme's
// default port (a browser never sends ":443" for https or ":80" for http, RFC 6454 §6.1).
func normalizeOrigin(o string) string {
	o = strings.TrimRight(strings.ToLower(strings.TrimSpace(o)), "/")
	if s, ok := strings.CutSuffix(o, ":443"); ok && strings.HasPrefix(o, "https://") {
		return s
	}
	if s, ok := strings.CutSuffix(o, ":80"); ok && strings.HasPrefix(o, "http://") {
		return s
	}
	return o
}

// originOf is the origin (scheme://host[:port], normalized) of an absolute http or https URL, or "" for
// anything else.
func originOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	return normalizeOrigin(u.Scheme + "://" + u.Host)
}

// isLoopbackHost reports whether host (a URL's host, with or without a port) names this machine:
// localhost (or a name under .localhost), 127.0.0.0/8 or ::1.
func isLoopbackHost(host string) bool {
	h := strings.ToLower(host)
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
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
