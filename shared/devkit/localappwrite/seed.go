package localappwrite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// DemoOptions configure SeedDemo.
type DemoOptions struct {
	// ProjectID defaults to "demo".
	ProjectID string
	// FunctionURLs maps function names ("turn", "title", "mcp-events", "webhook-ingress", "chat") to their local
	// URLs.
	// The "title" function is registered with an event trigger on the conversations table; every named
	// function is registered (so createExecution reaches it).
	FunctionURLs map[string]string
	// FunctionSecret is the x-open-runtimes-secret sent to every function ("" = none sent as empty).
	FunctionSecret string
	// TokenTTL is the lifetime of the demo user's OAuth token (24 h).
	TokenTTL time.Duration
	// Schedules are the functions' cron schedules by name, as appwrite.json gives them (the stack reads it):
	// the stand-in runs them as Appwrite does (RunScheduled).
	Schedules map[string]string
}

// Demo is what SeedDemo created: everything scripts and tests need to reach it. It is what
// .dev/stack.json holds.
type Demo struct {
	// Endpoint is the API endpoint (<base>/v1), for appwrite.WithEndpoint.
	Endpoint string `json:"endpoint"`
	// ProjectID is the demo project.
	ProjectID string `json:"projectId"`
	// APIKey is a standard key with every scope the stand-in knows.
	APIKey string `json:"apiKey"`
	// DatabaseID and TableID name the seeded TablesDB table.
	DatabaseID string `json:"databaseId"`
	TableID    string `json:"tableId"`
	// BucketID names the seeded bucket.
	BucketID string `json:"bucketId"`
	// FunctionID names the function triggered by new rows of the table.
	FunctionID string `json:"functionId"`
	// UserID and UserEmail identify the demo user, a project member.
	UserID    string `json:"userId"`
	UserEmail string `json:"userEmail"`
	// UserSession is a session of the demo user (X-Appwrite-Session, or the Realtime authentication message).
	UserSession string `json:"userSession"`
	// ProgressTableID is turn's progress table (in DatabaseID), for the Realtime progress sink.
	ProgressTableID string `json:"progressTableId"`
	// TicketsTableID is a table of no function's (in DatabaseID), for events: chat adds its required columns to
	// TableID when it first runs, which a row written without them would then break.
	TicketsTableID string `json:"ticketsTableId"`
	// OAuthToken is an RS256 access token of the demo user (use with X-Appwrite-Mode: admin).
	OAuthToken string `json:"oauthToken"`
	// Issuer and JWKSURL describe the OAuth issuer.
	Issuer  string `json:"issuer"`
	JWKSURL string `json:"jwksUrl"`
	// AdminURL is the base of the admin endpoints.
	AdminURL string `json:"adminUrl"`
	// Functions maps function names to their local URLs (the runtime servers).
	Functions map[string]string `json:"functions"`
	// Domains maps function names to their local function domains (through the stand-in, as Appwrite's
	// router calls them: with the dynamic key and the http trigger headers).
	Domains map[string]string `json:"domains"`
}

// demoFunctionScopes are the scopes appwrite.json gives each function.
var demoFunctionScopes = map[string][]string{
	"turn":            {"tables.read", "rows.read", "rows.write"},
	"title":           {"rows.read", "rows.write"},
	"mcp-events":      {},
	"webhook-ingress": {"executions.write"},
	"chat":            {"databases.read", "databases.write", "tables.read", "tables.write", "rows.read", "rows.write", "executions.read", "executions.write"},
}

// Demo resource ids and the demo user.
const (
	DemoDatabaseID = "main"
	DemoTableID    = "conversations"
	DemoBucketID   = "uploads"
	DemoFunctionID = "title"
	// DemoProgressTableID is turn's progress table: row security on, no table permission, so each row is
	// readable only by the user its read("user:…") names (docs/turn.md, "Progress sinks").
	DemoProgressTableID = "turn_progress"
	// DemoTicketsTableID is the events document's example table (subject, body; no row security).
	DemoTicketsTableID = "support_tickets"
	DemoUserID         = "demo-user"
	// DemoUserPassword is the demo user's password (sign in on the chat page with DemoUserEmail).
	DemoUserPassword = "demo-password"
	DemoUserEmail    = "demo@example.com"
)

// SeedDemo seeds the dev stack: a project with an API key holding every scope, a demo user who is a project
// member, a database with a conversations table, a bucket, the functions (title triggered by new
// conversation rows) and an OAuth token for the demo user (audience: the mcp-events URL when given).
func (s *Server) SeedDemo(opts DemoOptions) (*Demo, error) {
	pid := opts.ProjectID
	if pid == "" {
		pid = "demo"
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = 24 * time.Hour
	}
	if err := s.SeedProject(ProjectSpec{ID: pid, Name: "Demo", Members: []string{DemoUserID}}); err != nil {
		return nil, err
	}
	key, err := s.CreateKey(pid, projectScopes)
	if err != nil {
		return nil, err
	}
	if err := s.SeedUser(pid, UserSpec{ID: DemoUserID, Email: DemoUserEmail, Name: "Demo User", Password: DemoUserPassword}); err != nil {
		if apiErr, ok := err.(*APIError); !ok || apiErr.Type != ErrUserAlreadyExists {
			return nil, err
		}
	}
	// The demo user is also a Console account, who signs in at the Console's OAuth server (package oauthserver).
	if err := s.seedConsoleUser(); err != nil {
		return nil, err
	}
	err = s.SeedDatabase(pid, DatabaseSpec{ID: DemoDatabaseID, Name: "Main", Tables: []TableSpec{{
		// Row security on and no table permission, as chat creates it: each conversation is readable by its
		// user only, who receives the title's update through Realtime.
		ID: DemoTableID, Name: "Conversations", RowSecurity: true,
		Columns: []Column{
			{Key: "title", Type: "string", Size: 256},
			{Key: "message", Type: "string", Size: 10000},
			{Key: "userId", Type: "string", Size: 36},
			{Key: "status", Type: "string", Size: 32},
		},
	}, {
		ID: DemoProgressTableID, Name: "Turn progress", RowSecurity: true,
		Columns: []Column{
			{Key: "turn_id", Type: "string", Size: 64, Required: true},
			{Key: "seq", Type: "integer", Required: true},
			{Key: "type", Type: "string", Size: 32, Required: true},
			{Key: "payload", Type: "string", Size: 1_000_000, Required: true},
			{Key: "time", Type: "datetime", Required: true},
		},
	}, {
		ID: DemoTicketsTableID, Name: "Support tickets",
		Columns: []Column{
			{Key: "subject", Type: "string", Size: 256},
			{Key: "body", Type: "string", Size: 10000},
		},
	}}})
	if err != nil {
		return nil, err
	}
	if err := s.SeedBucket(pid, BucketSpec{ID: DemoBucketID, Name: "Uploads"}); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(opts.FunctionURLs))
	for n := range opts.FunctionURLs {
		names = append(names, n)
	}
	if !slices.Contains(names, DemoFunctionID) {
		names = append(names, DemoFunctionID)
	}
	slices.Sort(names)
	for _, n := range names {
		// Scopes and timeouts as appwrite.json declares them: the fewest each function needs.
		spec := FunctionSpec{ID: n, Name: n, URL: opts.FunctionURLs[n], Secret: opts.FunctionSecret,
			Scopes: demoFunctionScopes[n], Execute: []string{"any"}, Timeout: 30, Schedule: opts.Schedules[n]}
		switch n {
		case "webhook-ingress":
			spec.Timeout = 60
		case "turn":
			spec.Timeout = 900 // async turns run up to the function's timeout
		}
		if n == DemoFunctionID {
			spec.Events = []string{fmt.Sprintf("databases.%s.tables.%s.rows.*.create", DemoDatabaseID, DemoTableID)}
		}
		if err := s.RegisterFunction(pid, spec); err != nil {
			return nil, err
		}
	}
	aud := opts.FunctionURLs["mcp-events"]
	tok, err := s.MintToken(DemoUserID, aud, CloudScopes(projectScopes...), opts.TokenTTL)
	if err != nil {
		return nil, err
	}
	session, err := s.CreateSession(pid, DemoUserID)
	if err != nil {
		return nil, err
	}
	iss := s.Issuer()
	s.mu.Lock()
	base := s.baseURL
	s.mu.Unlock()
	fns, domains := map[string]string{}, map[string]string{}
	for k, v := range opts.FunctionURLs {
		fns[k] = v
		domains[k] = base + DomainPrefix + "/" + k
	}
	return &Demo{
		Endpoint: s.Endpoint(), ProjectID: pid, APIKey: key, DatabaseID: DemoDatabaseID, TableID: DemoTableID,
		BucketID: DemoBucketID, FunctionID: DemoFunctionID, UserID: DemoUserID, UserEmail: DemoUserEmail,
		UserSession: session, ProgressTableID: DemoProgressTableID, TicketsTableID: DemoTicketsTableID,
		OAuthToken: tok, Issuer: iss, JWKSURL: iss + "/jwks", AdminURL: base + AdminPrefix, Functions: fns,
		Domains: domains,
	}, nil
}

// WriteStackJSON writes d (a *Demo, or what a dev mode writes instead) to path (e.g. ".dev/stack.json") as
// JSON, creating the directory, readable by the owner only (it holds a key and a token).
func WriteStackJSON(path string, d any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadStackJSON reads a file written by WriteStackJSON.
func ReadStackJSON(path string) (*Demo, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d Demo
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("localappwrite: %s: %w", path, err)
	}
	return &d, nil
}

// seedConsoleUser makes the demo user a Console account (a user of the seeded project "console"), who signs in
// at the Console's OAuth server.
func (s *Server) seedConsoleUser() error {
	if err := s.SeedProject(ProjectSpec{ID: "console", Name: "Console"}); err != nil {
		return err
	}
	err := s.SeedUser("console", UserSpec{ID: DemoUserID, Email: DemoUserEmail, Name: "Demo User", Password: DemoUserPassword})
	if apiErr, ok := err.(*APIError); err != nil && (!ok || apiErr.Type != ErrUserAlreadyExists) {
		return err
	}
	return nil
}

// SeedEmptyProject seeds what a deploy starts from: a project with no functions, no database and no user of
// its own, whose member is the demo user (a Console account, so an MCP client signs in as them and acts on
// the project), and an API key with scopes. It returns the key.
func (s *Server) SeedEmptyProject(projectID, name string, scopes []string) (string, error) {
	if err := s.SeedProject(ProjectSpec{ID: projectID, Name: name, Members: []string{DemoUserID}}); err != nil {
		return "", err
	}
	if err := s.seedConsoleUser(); err != nil {
		return "", err
	}
	return s.CreateKey(projectID, scopes)
}
