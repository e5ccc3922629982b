package staging_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"appwrite-agent/scripts/internal/staging"
)

// appwriteFunction is the part of a CLI 12.x appwrite.json function entry this project fills in.
type appwriteFunction struct {
	ID            string   `json:"$id"`
	Name          string   `json:"name"`
	Runtime       string   `json:"runtime"`
	Specification string   `json:"specification"`
	Execute       []string `json:"execute"`
	Events        []string `json:"events"`
	Scopes        []string `json:"scopes"`
	Timeout       int      `json:"timeout"`
	Schedule      string   `json:"schedule"`
	Enabled       *bool    `json:"enabled"`
	Logging       *bool    `json:"logging"`
	Entrypoint    string   `json:"entrypoint"`
	Commands      *string  `json:"commands"`
	Path          string   `json:"path"`
}

// Specifications Appwrite accepts (app/config/specifications.php).
var specifications = []string{"s-0.5vcpu-512mb", "s-1vcpu-512mb", "s-1vcpu-1gb", "s-2vcpu-2gb", "s-2vcpu-4gb", "s-4vcpu-4gb", "s-4vcpu-8gb", "s-8vcpu-4gb", "s-8vcpu-8gb"}

// The fewest scopes each function needs: turn and mcp-events act with their callers' own tokens; title reads
// and writes the conversation row that triggered it; webhook-ingress schedules delayed retries of itself.
var wantScopes = map[string][]string{
	"turn":            {"tables.read", "rows.read", "rows.write"}, // the Realtime progress sink and its stop row (docs/turn.md)
	"title":           {"rows.read", "rows.write"},
	"mcp-events":      {},
	"webhook-ingress": {"executions.write"},
	// chat creates its tables on first use, keeps its rows, reads the turn's execution status and starts turns:
	// an automation's turn with its own key (executions.write), for the owner named in progress.user_id, so it
	// needs no users.write to make the owner a JWT (docs/deploy.md).
	"chat": {"databases.read", "databases.write", "tables.read", "tables.write", "rows.read", "rows.write", "executions.read", "executions.write"},
}

func TestAppwriteJSONDescribesTheStagedFunctions(t *testing.T) {
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "appwrite.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Functions []appwriteFunction `json:"functions"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("appwrite.json: %v", err)
	}
	if len(cfg.Functions) != len(staging.Functions) {
		t.Fatalf("appwrite.json has %d functions, want %d", len(cfg.Functions), len(staging.Functions))
	}
	for _, f := range cfg.Functions {
		if !slices.Contains(staging.Functions, f.ID) {
			t.Errorf("unknown function %q", f.ID)
			continue
		}
		if f.Name == "" || f.Runtime != "go-1.26" || f.Entrypoint != "main.go" || f.Commands == nil || *f.Commands != "" {
			t.Errorf("%s: name/runtime/entrypoint/commands = %q %q %q %v", f.ID, f.Name, f.Runtime, f.Entrypoint, f.Commands)
		}
		if f.Path != "build/functions/"+f.ID {
			t.Errorf("%s: path %q, want the staged folder", f.ID, f.Path)
		}
		if !slices.Contains(specifications, f.Specification) {
			t.Errorf("%s: specification %q", f.ID, f.Specification)
		}
		if f.Timeout < 1 || f.Timeout > 900 || f.Enabled == nil || !*f.Enabled || f.Logging == nil || !*f.Logging {
			t.Errorf("%s: timeout/enabled/logging = %d %v %v", f.ID, f.Timeout, f.Enabled, f.Logging)
		}
		if !slices.Equal(f.Execute, []string{"any"}) {
			t.Errorf("%s: execute %v: function domains need any", f.ID, f.Execute)
		}
		if !slices.Equal(f.Scopes, wantScopes[f.ID]) {
			t.Errorf("%s: scopes %v, want %v", f.ID, f.Scopes, wantScopes[f.ID])
		}
		wantEvents := []string{}
		if f.ID == "title" {
			wantEvents = []string{staging.TitleEvent(staging.DefaultChatDatabase)}
		}
		if !slices.Equal(f.Events, wantEvents) {
			t.Errorf("%s: events %v, want %v", f.ID, f.Events, wantEvents)
		}
		// Only chat runs on a schedule: every 5 minutes it refreshes its automations' subscriptions before
		// they lapse (docs/chat.md "Automations"; automations.DefaultRefreshAhead is 15 minutes).
		if want := map[string]string{"chat": "*/5 * * * *"}[f.ID]; f.Schedule != want {
			t.Errorf("%s: schedule %q, want %q", f.ID, f.Schedule, want)
		}
	}
	if got, err := staging.Schedules(data); err != nil || len(got) != 1 || got["chat"] != "*/5 * * * *" {
		t.Errorf("Schedules: %v %v", got, err)
	}
}

// TestStagedAppwriteJSONRegistersTitleForConversationsOnly: the staged appwrite.json registers title for
// new rows of the deployment's conversations table only (never a wildcard that would start an execution
// for every progress row of every turn), points every function at its staged folder, and keeps the rest.
func TestStagedAppwriteJSONRegistersTitleForConversationsOnly(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "appwrite.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{"chat", "prod-2"} {
		out, err := staging.StagedAppwriteJSON(raw, db)
		if err != nil {
			t.Fatal(err)
		}
		var staged, orig struct {
			Functions []appwriteFunction `json:"functions"`
		}
		if err := json.Unmarshal(out, &staged); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &orig); err != nil {
			t.Fatal(err)
		}
		if len(staged.Functions) != len(orig.Functions) {
			t.Fatalf("%d functions staged, %d in appwrite.json", len(staged.Functions), len(orig.Functions))
		}
		for i, f := range staged.Functions {
			if f.Path != "functions/"+f.ID {
				t.Errorf("%s: path %q", f.ID, f.Path)
			}
			want := []string{}
			if f.ID == "title" {
				want = []string{"databases." + db + ".tables.conversations.rows.*.create"}
			}
			if !slices.Equal(f.Events, want) {
				t.Errorf("%s: events %v, want %v", f.ID, f.Events, want)
			}
			o := orig.Functions[i]
			if f.ID != o.ID || f.Timeout != o.Timeout || !slices.Equal(f.Scopes, o.Scopes) || f.Runtime != o.Runtime {
				t.Errorf("%s: staging changed more than path and events: %+v vs %+v", f.ID, f, o)
			}
		}
	}
	for _, bad := range []string{"", "-x", "a b", "databases.*", strings.Repeat("a", 37)} {
		if _, err := staging.StagedAppwriteJSON(raw, bad); err == nil {
			t.Errorf("chat database %q accepted", bad)
		}
	}
}
