// Package localappwrite is an in-process stand-in for the parts of Appwrite this product depends on: projects,
// API keys (including the dynamic/ephemeral keys of function executions), OAuth bearer tokens in admin mode
// (Appwrite Cloud behaviour: the open-source server reads no bearer),
// project webhooks with Appwrite's validators and both response formats, TablesDB rows, Storage files, Users,
// Functions executions and event triggers, Appwrite's event strings, and the webhook worker that signs and
// delivers to every matching webhook. It also acts as the OAuth issuer for tests (JWKS + RS256 tokens).
//
// It is an http.Handler serving the API under /v1 and documented admin endpoints under /_local (see
// docs/local-appwrite.md). Every behaviour copied from Appwrite names its source next to the code. It refuses
// what Appwrite 1.9 refuses, with the same status, type and message; the one stand-in-only allowance is
// Options.AllowLoopbackWebhookURLs (off by default).
package localappwrite

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"appwrite-agent/shared/devkit/localappwrite/builder"
	"appwrite-agent/shared/devkit/localappwrite/oauthserver"
	"appwrite-agent/shared/loopback"
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// Clock returns the current time; time.Now when nil.
	Clock func() time.Time
	// DeliveryClient sends webhook deliveries. When nil a client with Appwrite's 15 s timeout is used.
	// Its Timeout, when zero, is set to 15 s on a copy.
	DeliveryClient *http.Client
	// FunctionClient calls function runtimes (executions and event triggers); a plain client when nil.
	FunctionClient *http.Client
	// DeliveryIDHeader adds X-Appwrite-Webhook-Delivery-Id (same value on every retry of one delivery). Off by
	// default: the open-source worker never sends it (Workers/Webhooks.php, every 1.x version); the seed says
	// Appwrite Cloud does. It is NOT covered by X-Appwrite-Webhook-Signature, so a receiver must not trust it.
	DeliveryIDHeader bool
	// AllowLoopbackWebhookURLs is a STAND-IN-ONLY allowance: webhook URLs whose host is localhost or a loopback
	// IP literal pass the PublicDomain check that real Appwrite applies (Webhooks/Create.php:66), so local
	// development and tests can deliver to loopback servers. Off by default: the stand-in then refuses them
	// with Appwrite's 400, as every Appwrite does. scripts/dev, the stack and the tests that need it turn it on.
	AllowLoopbackWebhookURLs bool
	// HTTPS (Start only) also serves the server over https, on a second loopback port with a self-signed
	// certificate (Running.SecureURL, Running.CertPEM), as Appwrite serves function domains: a subscriber whose
	// callback is a function domain (chat's automations) needs an https URL, which mcp-events requires.
	HTTPS bool
	// DeliveryRetries is how many times the worker retries a failed delivery before counting one failure.
	// Appwrite's worker does not retry (0, the default).
	DeliveryRetries int
	// MaxFailedAttempts disables a webhook after that many consecutive failed deliveries
	// (_APP_WEBHOOK_MAX_FAILED_ATTEMPTS, default 10).
	MaxFailedAttempts int
	// Issuer is the OAuth issuer (iss). When empty it is <base URL>/v1/oauth2/console once SetBaseURL or Start
	// has run, and "http://127.0.0.1:8080/v1/oauth2/console" before.
	Issuer string
	// OAuth sets the lifetimes of the authorization server's codes and tokens.
	OAuth oauthserver.Lifetimes
	// Audience is the default aud of minted tokens when MintToken gets none.
	Audience string
	// SigningKey signs OAuth access tokens (RS256). When nil, a 2048-bit key generated once per process
	// (shared by its Servers) is used.
	SigningKey *rsa.PrivateKey
	// KeySecret signs dynamic/ephemeral API keys (HS256, Appwrite's _APP_OPENSSL_KEY_V1). Random when nil.
	KeySecret []byte
	// EphemeralKeys makes function executions receive "ephemeral_" keys (Appwrite >= 1.9.6) instead of
	// "dynamic_" (<= 1.9.0). Both prefixes are always accepted.
	EphemeralKeys bool
	// Version is the Appwrite version reported in error bodies and the delivery User-Agent ("1.9.6").
	Version string
	// ReportedVersion, when set, is what GET /v1/health/version answers instead of Version, while the API
	// keeps behaving as Version. Stand-in only: it plays a server whose version string does not reflect its
	// features (a hosted build name, a wrong number), so a client's behavioural checks can be tested.
	ReportedVersion string
	// Workers is the number of queue workers (2).
	Workers int
	// Builds is how many deployment builds run at once (2); more wait with status "processing".
	Builds int
	// Profile is the server the stand-in plays: ProfileOpenSource (the zero value: open-source Appwrite, as
	// Version) or ProfileCloud (Appwrite Cloud where it differs: docs/local-appwrite.md "Cloud profile").
	Profile Profile
	// WebhookLimit is the per-project webhook limit of ProfileCloud: 0 is the Free plan's 2, a negative
	// number no limit (Pro, Scale). Ignored by ProfileOpenSource, which has no plans.
	WebhookLimit int
	// FunctionsDomain is Appwrite's _APP_DOMAIN_FUNCTIONS: function domains are <sub>.<FunctionsDomain>, created
	// through POST /v1/proxy/rules/function and served by the request's host name (rules.go). Empty is
	// DefaultFunctionsDomain, "functions.localhost", the value of Appwrite's own .env.
	FunctionsDomain string
	// FunctionsRuntimes is Appwrite's _APP_FUNCTIONS_RUNTIMES: the runtimes offered (GET /v1/functions/runtimes)
	// and accepted by a function create; empty offers every runtime of the catalog (runtimes.go).
	FunctionsRuntimes []string
	// RuntimeEnv is STAND-IN ONLY: variables every build and runtime process gets before the function's own
	// (a real runtime has its image's environment, such as its trust store; a test gives its receivers'
	// certificate to deployed functions with SSL_CERT_FILE here).
	RuntimeEnv []string
	// Logf receives diagnostics; log.Printf when nil. Use func(string, ...any){} to silence.
	Logf func(format string, args ...any)
}

// Profile names the server the stand-in plays.
type Profile string

// The profiles.
const (
	// ProfileOpenSource is open-source Appwrite (Options.Version, 1.9.6 by default).
	ProfileOpenSource Profile = ""
	// ProfileCloud is Appwrite Cloud: webhook reads never return authPassword, and a create beyond the plan's
	// webhook limit (Options.WebhookLimit) answers 403 additional_resource_not_allowed.
	ProfileCloud Profile = "cloud"
)

// FreePlanWebhooks is the Free plan's webhooks per project on Appwrite Cloud (appwrite/mcp docs/events.md
// "Free plan": 2 on Free, 50 on Start, unlimited on Pro and Scale).
const FreePlanWebhooks = 2

// ParseProfile reads a profile name: "cloud", or "oss" / "open-source" / "" for the open-source server.
func ParseProfile(s string) (Profile, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "cloud":
		return ProfileCloud, nil
	case "", "oss", "open-source", "opensource":
		return ProfileOpenSource, nil
	}
	return "", fmt.Errorf("localappwrite: unknown profile %q (cloud or oss)", s)
}

// String returns the profile's name: "cloud" or "oss".
func (p Profile) String() string {
	if p == ProfileCloud {
		return "cloud"
	}
	return "oss"
}

// Profile returns the profile the stand-in plays.
func (s *Server) Profile() Profile { return s.opts.Profile }

// WebhookLimit returns the per-project webhook limit in force, or -1 for none.
func (s *Server) WebhookLimit() int { return s.webhookLimit() }

// cloud reports whether the stand-in plays Appwrite Cloud.
func (s *Server) cloud() bool { return s.opts.Profile == ProfileCloud }

// webhookLimit is the per-project webhook limit, or -1 for none.
func (s *Server) webhookLimit() int {
	switch {
	case !s.cloud() || s.opts.WebhookLimit < 0:
		return -1
	case s.opts.WebhookLimit == 0:
		return FreePlanWebhooks
	}
	return s.opts.WebhookLimit
}

// processSigningKey is the signing key of every Server of the process built without Options.SigningKey:
// generated on first use and never changed. A 2048-bit RSA key takes from a tenth of a second to several
// seconds to generate on a loaded machine (more under the race detector), and test packages start a
// stand-in per test; each Server still has its own issuer (its base URL), so a token of one is not valid at
// another.
var processSigningKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic("localappwrite: generating the OAuth signing key: " + err.Error())
	}
	return k
})

// Server is the stand-in. Create it with New, serve it as an http.Handler, and Close it to stop its workers.
type Server struct {
	opts   Options
	mux    *http.ServeMux
	signer *rsa.PrivateKey
	kid    string

	mu       sync.Mutex
	baseURL  string
	issuer   string
	projects map[string]*project
	rules    map[string]*rule // proxy rules by id, across projects (Appwrite keeps them in the platform database)
	faults   []*fault         // FailRequests' injected failures (faults.go)

	deliveries    []*Delivery
	deliveryIndex map[string]*Delivery

	q      *queue
	deploy *builder.Builder // deployment builds and the runtimes of active deployments (build.go)

	rt realtimeHub // Realtime sessions and connections (realtime.go), guarded by mu

	as *oauthserver.Server // the OAuth authorization servers of every project (oauth.go is their host)

	syncTimeout time.Duration // SetSyncTimeout's limit of synchronous executions; 0 is Appwrite's 30 s. Guarded by mu.

	insecureOnce sync.Once
	insecure     *http.Client

	templatesMu sync.Mutex           // guards templates; no other lock is taken while it is held
	templates   map[string]templates // eventsOf's cache: pattern and param keys → eventTemplates
}

// SetSyncTimeout changes how long a synchronous execution (createExecution without async, and a function
// domain's request) may run before the stand-in answers 408 function_synchronous_timeout; 0 restores Appwrite's
// 30 s. Stand-in only: a test shortens it to show, in a second instead of half a minute, that an async execution
// outlives the synchronous limit.
func (s *Server) SetSyncTimeout(d time.Duration) {
	s.mu.Lock()
	s.syncTimeout = d
	s.mu.Unlock()
}

// syncLimitLocked is the limit of synchronous executions in force (Appwrite's 30 s unless SetSyncTimeout
// changed it). The caller holds mu.
func (s *Server) syncLimitLocked() time.Duration {
	if s.syncTimeout > 0 {
		return s.syncTimeout
	}
	return 30 * time.Second
}

// New builds a Server and starts its queue workers (stopped by Close).
func New(opts Options) *Server {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.DeliveryClient == nil {
		// A webhook URL on a function domain of the stand-in (<sub>.functions.localhost) reaches it: curl,
		// which Appwrite's worker uses, resolves localhost names to loopback (loopback.Dial).
		opts.DeliveryClient = loopback.Client(deliveryTimeout)
	} else if opts.DeliveryClient.Timeout == 0 {
		c := *opts.DeliveryClient
		c.Timeout = deliveryTimeout
		opts.DeliveryClient = &c
	}
	{
		// Appwrite's worker never follows a redirect (1.9.6 sets CURLOPT_MAXREDIRS without FOLLOWLOCATION; HEAD's
		// client turns FOLLOWLOCATION off): the 3xx answer itself is the result, and it is no failure.
		c := *opts.DeliveryClient
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		opts.DeliveryClient = &c
	}
	if opts.FunctionClient == nil {
		opts.FunctionClient = &http.Client{}
	}
	if opts.MaxFailedAttempts <= 0 {
		opts.MaxFailedAttempts = 10
	}
	if opts.Version == "" {
		opts.Version = "1.9.6"
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Builds <= 0 {
		opts.Builds = 2
	}
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	if len(opts.KeySecret) == 0 {
		opts.KeySecret = randomBytes(32)
	}
	s := &Server{
		opts:          opts,
		projects:      map[string]*project{},
		rules:         map[string]*rule{},
		deliveryIndex: map[string]*Delivery{},
		templates:     map[string]templates{},
	}
	s.signer = opts.SigningKey
	if s.signer == nil {
		s.signer = processSigningKey()
	}
	s.kid = keyID(&s.signer.PublicKey)
	s.as = oauthserver.New(oauthserver.Config{Host: oauthHost{s}, Key: s.signer, KeyID: s.kid,
		Scopes: cloudScopesSupported(), Lifetimes: opts.OAuth})
	s.issuer = opts.Issuer
	s.q = newQueue(opts.Workers)
	s.deploy = builder.New(opts.Builds)
	s.routes()
	// The schedule ticker lives until Close (owned by the Server, like the queue workers): it starts delayed
	// executions when they are due, as Appwrite's schedule worker does.
	go s.tickSchedules()
	return s
}

func (s *Server) tickSchedules() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.q.ctx.Done():
			return
		case <-t.C:
			s.RunScheduled(s.now())
		}
	}
}

// SetBaseURL tells the server where it is reachable (e.g. an httptest.Server URL, without /v1). It sets the
// issuer when Options.Issuer is empty and the API endpoint given to functions.
func (s *Server) SetBaseURL(base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.baseURL = strings.TrimRight(base, "/")
	if s.opts.Issuer == "" {
		s.issuer = s.baseURL + "/v1/oauth2/console"
	}
}

// Endpoint returns the API endpoint (<base>/v1), as SDK clients want it.
func (s *Server) Endpoint() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endpointLocked()
}

func (s *Server) endpointLocked() string {
	if s.baseURL == "" {
		return "http://127.0.0.1:8080/v1"
	}
	return s.baseURL + "/v1"
}

// Issuer returns the OAuth issuer (iss of minted tokens).
func (s *Server) Issuer() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issuerLocked()
}

func (s *Server) issuerLocked() string {
	if s.issuer == "" {
		return "http://127.0.0.1:8080/v1/oauth2/console"
	}
	return s.issuer
}

// ServeHTTP implements http.Handler.
// Under /v1 it adds Appwrite's CORS headers for a request with an Origin and answers a preflight (OPTIONS)
// with 204 (app/controllers/general.php:990-1001 and :1156-1177).
// A request whose host name is a stored rule's domain is that function's domain (rules.go, domains.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rl := s.ruleForHost(r.Host); rl != nil {
		s.serveRuleDomain(w, r, rl)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/v1/") && r.Header.Get("Upgrade") == "" {
		corsHeaders(w.Header(), r.Header.Get("Origin"))
		if r.Method == http.MethodOptions {
			w.Header().Set("Server", "Appwrite")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// Flush waits until the delivery and function queues are empty and no job is running (jobs enqueued by jobs
// included), or ctx ends.
func (s *Server) Flush(ctx context.Context) error { return s.q.flush(ctx) }

// Close stops the queue: queued jobs are dropped, running ones see their context cancelled (aborting their
// HTTP calls), and Close waits for the workers to return. It also cancels deployment builds, kills the
// runtime processes of built deployments, waits for both and removes their files. The handler keeps
// answering API calls (new builds fail at once).
func (s *Server) Close() error {
	s.q.close()
	s.deploy.Close()
	return nil
}

// Running is a Server listening on a TCP address (see Start).
type Running struct {
	// Server is the stand-in.
	Server *Server
	// URL is the base URL (no /v1), e.g. http://127.0.0.1:8080.
	URL string
	// SecureURL is the https base URL of the same server (Options.HTTPS), "" without one; CertPEM is its
	// self-signed certificate (PEM), for the clients that must trust it (SAFEHTTP_CA_FILE).
	SecureURL string
	CertPEM   []byte
	srv       *http.Server
	tlsSrv    *http.Server
	ln        net.Listener
	err       chan error
}

// Start listens on addr (e.g. "127.0.0.1:8080"), serves a new Server there and returns at once. The server
// stops when ctx ends or Shutdown is called.
func Start(ctx context.Context, addr string, opts Options) (*Running, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("localappwrite: listen %s: %w", addr, err)
	}
	s := New(opts)
	base := "http://" + ln.Addr().String()
	s.SetBaseURL(base)
	r := &Running{Server: s, URL: base, ln: ln, err: make(chan error, 1)}
	r.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	if opts.HTTPS {
		if err := r.listenTLS(); err != nil {
			_ = ln.Close()
			_ = s.Close()
			return nil, err
		}
	}
	// This goroutine runs the listener; it ends when Shutdown closes the server.
	go func() { r.err <- r.srv.Serve(ln) }()
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = r.Shutdown(sctx)
		})
		_ = stop
	}
	return r, nil
}

// Shutdown stops the HTTP server and the Server's workers.
func (r *Running) Shutdown(ctx context.Context) error {
	err := r.srv.Shutdown(ctx)
	if r.tlsSrv != nil {
		if terr := r.tlsSrv.Shutdown(ctx); terr != nil && !errors.Is(terr, http.ErrServerClosed) && err == nil {
			err = terr
		}
	}
	_ = r.Server.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Wait blocks until the HTTP server stops and returns its error (nil after Shutdown).
func (r *Running) Wait() error {
	err := <-r.err
	r.err <- err
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// ---- small shared helpers ----

func (s *Server) now() time.Time { return s.opts.Clock().UTC() }

// formatTime is Appwrite's DateTime::formatTz: "2006-01-02T15:04:05.000+00:00".
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000-07:00")
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("localappwrite: crypto/rand: " + err.Error())
	}
	return b
}

// uniqueID copies Appwrite's ID::unique(): PHP uniqid() (13 hex digits of seconds+microseconds) padded with
// random hex digits to 20 characters.
func (s *Server) uniqueID() string {
	t := s.now()
	id := fmt.Sprintf("%08x%05x", t.Unix(), t.Nanosecond()/1000)
	return id + hex.EncodeToString(randomBytes(4))[:7]
}

// parseVersion turns "1.8.0" into comparable numbers; ok is false for anything else.
func parseVersion(v string) (parts [3]int, ok bool) {
	fs := strings.Split(strings.TrimSpace(v), ".")
	if len(fs) == 0 || len(fs) > 3 {
		return parts, false
	}
	for i, f := range fs {
		n, err := strconv.Atoi(f)
		if err != nil {
			return parts, false
		}
		parts[i] = n
	}
	return parts, true
}

func versionLess(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// Profiles are the profiles a suite runs against: Appwrite Cloud, then open-source Appwrite.
var Profiles = []Profile{ProfileCloud, ProfileOpenSource}

// EnvProfiles names the profiles EachProfile runs, by String ("cloud", "oss", comma-separated); unset, all of
// Profiles. One pass is what a CPU or memory profile of a test binary needs: Go writes -test.cpuprofile once
// per process, and a second pass leaves the file empty.
const EnvProfiles = "LOCALAPPWRITE_PROFILES"

// EachProfile runs a test binary's tests (m is the *testing.M of TestMain) once per profile of Profiles (or
// of EnvProfiles when set), calling use with the profile before each pass and naming it on stderr, and
// returns the first failing pass's exit code (0 when every pass passes): what a suite's TestMain calls to
// test against both. An unknown name in EnvProfiles fails the binary with exit code 2 and says so.
func EachProfile(m interface{ Run() int }, use func(Profile)) int {
	profiles := Profiles
	if names := os.Getenv(EnvProfiles); names != "" {
		profiles = nil
		for _, name := range strings.Split(names, ",") {
			i := slices.IndexFunc(Profiles, func(p Profile) bool { return p.String() == strings.TrimSpace(name) })
			if i < 0 {
				fmt.Fprintf(os.Stderr, "%s=%q: no stand-in profile %q (known: cloud, oss)\n", EnvProfiles, names, name)
				return 2
			}
			profiles = append(profiles, Profiles[i])
		}
	}
	code := 0
	for _, p := range profiles {
		use(p)
		fmt.Fprintf(os.Stderr, "== stand-in profile %s\n", p)
		if c := m.Run(); c != 0 && code == 0 {
			code = c
		}
	}
	return code
}
