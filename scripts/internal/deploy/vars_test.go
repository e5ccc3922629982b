package deploy

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"appwrite-agent/shared/awclient"

	"github.com/appwrite/sdk-for-go/models"
)

// planned runs planVars and checkAgreement for a loopback deploy of project p at 127.0.0.1:8180, with the
// given existing variables.
func planned(t *testing.T, opts Options, existing map[string][]models.Variable) ([]*varStep, *deployer, error) {
	t.Helper()
	opts.Endpoint, opts.Project, opts.ChatDatabase, opts.StateDir = "http://127.0.0.1:8180/v1", "p", "chat", t.TempDir()
	if opts.Random == nil {
		opts.Random = bytes.NewReader(bytes.Repeat([]byte("0123456789abcdefghijklmnopqrstuv"), 64))
	}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	d := &deployer{opts: opts, loopback: true, region: "default"}
	urls := functionURLs{}
	for _, n := range functionNames {
		urls[n] = "http://" + n + ".functions.localhost:8180"
	}
	st, err := d.loadState()
	if err != nil {
		t.Fatal(err)
	}
	steps, err := d.planVars(existing, urls, "turn_progress", st)
	if err == nil {
		err = d.checkAgreement(steps, urls)
	}
	return steps, d, err
}

func stepOf(steps []*varStep, fn, key string) *varStep {
	for _, s := range steps {
		if s.fn == fn && s.key == key {
			return s
		}
	}
	return nil
}

// TestVariablesKeepTheUsersValues: a value the user set is kept; a value given to this run (-llm-model)
// replaces it; deploy's own value already there is unchanged; a missing one is created.
func TestVariablesKeepTheUsersValues(t *testing.T) {
	existing := map[string][]models.Variable{
		"turn":       {{Id: "v1", Key: "LLM_MODEL", Value: "mine"}, {Id: "v2", Key: "TURN_PROGRESS_DATABASE", Value: "chat"}},
		"title":      {{Id: "v3", Key: "LLM_MODEL", Value: "mine"}},
		"mcp-events": {{Id: "v4", Key: "MCP_EVENTS_OAUTH_ISSUER", Value: "https://issuer.example/v1/oauth2/console"}},
	}
	steps, _, err := planned(t, Options{}, existing)
	if err != nil {
		t.Fatal(err)
	}
	if s := stepOf(steps, "turn", "LLM_MODEL"); s != nil {
		t.Fatalf("without -llm-model deploy touches LLM_MODEL: %+v", s)
	}
	for _, c := range []struct{ fn, key, action, value string }{
		{"turn", "TURN_PROGRESS_DATABASE", varSame, "chat"},
		{"turn", "TURN_PROGRESS_TABLE", varCreate, "turn_progress"},
		{"mcp-events", "MCP_EVENTS_OAUTH_ISSUER", varKeep, "https://issuer.example/v1/oauth2/console"},
		{"webhook-ingress", "SAFEHTTP_ALLOW", varCreate, localAllow},
	} {
		if s := stepOf(steps, c.fn, c.key); s == nil || s.action != c.action || s.value != c.value {
			t.Errorf("%s %s: %+v, want %s %q", c.fn, c.key, s, c.action, c.value)
		}
	}
	steps, _, err = planned(t, Options{LLMModel: "gpt-new"}, existing)
	if err != nil {
		t.Fatal(err)
	}
	if s := stepOf(steps, "title", "LLM_MODEL"); s.action != varUpdate || s.value != "gpt-new" || s.id != "v3" {
		t.Fatalf("-llm-model: %+v", s)
	}
	// chat's own domain is its automations' callback only over https (mcp-events calls no other): the local
	// stand-in's plain http domain gets no CHAT_PUBLIC_URL.
	if s := stepOf(steps, "chat", "CHAT_PUBLIC_URL"); s != nil {
		t.Fatalf("an http chat domain became CHAT_PUBLIC_URL: %+v", s)
	}
	// Not on this machine: the local allowances are not set, and the user's SAFEHTTP_* are noted.
	_, d, _ := planned(t, Options{}, existing)
	d.loopback = false
	remote, _ := d.planVars(existing, functionURLs{"chat": "https://c.example"}, "turn_progress", &localState{Secrets: map[string]*stateSecret{}})
	for _, s := range remote {
		if strings.HasPrefix(s.key, "SAFEHTTP_") {
			t.Fatalf("a non-loopback deploy sets %s", s.key)
		}
	}
	if s := stepOf(remote, "chat", "CHAT_PUBLIC_URL"); s == nil || s.action != varCreate || s.value != "https://c.example" {
		t.Fatalf("chat's CHAT_PUBLIC_URL on an https domain: %+v", s)
	}
}

// TestVariablesMustAgree: values that must be the same on several functions, or that must match the staged
// title event, are refused before any change when the user's differ; the refusal names each value.
func TestVariablesMustAgree(t *testing.T) {
	for _, c := range []struct {
		name     string
		existing map[string][]models.Variable
		opts     Options
		want     []string
	}{
		{"ingress URL", map[string][]models.Variable{
			"mcp-events":      {{Key: "MCP_EVENTS_INGRESS_URL", Value: "https://in.example.com"}},
			"webhook-ingress": {{Key: "MCP_EVENTS_INGRESS_URL", Value: "https://other.example.com"}}},
			Options{}, []string{`MCP_EVENTS_INGRESS_URL must be the same on mcp-events and webhook-ingress, and mcp-events has "https://in.example.com", webhook-ingress has "https://other.example.com".`}},
		{"trailing slash", map[string][]models.Variable{
			"mcp-events":      {{Key: "MCP_EVENTS_INGRESS_URL", Value: "https://in.example.com/"}},
			"webhook-ingress": {{Key: "MCP_EVENTS_INGRESS_URL", Value: "https://in.example.com/"}}},
			Options{}, []string{`MCP_EVENTS_INGRESS_URL "https://in.example.com/" ends in /`}},
		{"percent", map[string][]models.Variable{
			"mcp-events":      {{Key: "MCP_EVENTS_INGRESS_URL", Value: "https://in.example.com/a%20b"}},
			"webhook-ingress": {{Key: "MCP_EVENTS_INGRESS_URL", Value: "https://in.example.com/a%20b"}}},
			Options{}, []string{"holds a %"}},
		{"progress table", map[string][]models.Variable{"chat": {{Key: "TURN_PROGRESS_TABLE", Value: "progress"}}},
			Options{}, []string{`TURN_PROGRESS_TABLE must be the same on turn and chat, and turn has "turn_progress", chat has "progress".`}},
		{"chat database", map[string][]models.Variable{"chat": {{Key: "CHAT_DATABASE_ID", Value: "other"}}},
			Options{}, []string{`chat's CHAT_DATABASE_ID is "other", but "chat" is the database whose conversations table starts title (-chat-database chat): run with -chat-database other`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := planned(t, c.opts, c.existing)
			var r *Refusal
			if !errors.As(err, &r) {
				t.Fatalf("want a refusal, got %v", err)
			}
			for _, w := range append(c.want, "Fix them in the Console", "Nothing was changed.") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestSharedSecrets: a generated secret goes to every function that shares it; one set on some functions
// only is copied from this machine's copy or the environment, and refused without either (Appwrite never
// returns a secret's value); a value in the environment must parse as the functions will parse it.
func TestSharedSecrets(t *testing.T) {
	steps, _, err := planned(t, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	seal, ingress := stepOf(steps, "mcp-events", "SEAL_KEYS"), stepOf(steps, "webhook-ingress", "SEAL_KEYS")
	if seal.action != varCreate || !seal.secret || seal.value != ingress.value || !strings.HasPrefix(seal.value, "k1:") {
		t.Fatalf("SEAL_KEYS %+v / %+v", seal, ingress)
	}
	if k := stepOf(steps, "chat", "AGENT_API_KEY"); k.value != stepOf(steps, "turn", "AGENT_API_KEY").value || len(k.value) != 43 {
		t.Fatalf("AGENT_API_KEY %+v", k)
	}

	half := map[string][]models.Variable{"mcp-events": {{Id: "s1", Key: "SEAL_KEYS", Secret: true, UpdatedAt: "2026-12-06T10:00:00.000+00:00"}}}
	_, _, err = planned(t, Options{}, half)
	var r *Refusal
	if !errors.As(err, &r) || !strings.Contains(err.Error(), "SEAL_KEYS is set on mcp-events but not on webhook-ingress, and the functions must have the same value.") ||
		!strings.Contains(err.Error(), "this machine has no copy of it") {
		t.Fatalf("half set, no copy: %v", err)
	}
	key := "k1:" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdefghijklmnopqrstuv"))
	steps, _, err = planned(t, Options{Getenv: func(k string) string {
		if k == "SEAL_KEYS" {
			return key
		}
		return ""
	}}, half)
	if err != nil {
		t.Fatal(err)
	}
	// Copied from the environment; once written, this machine's record covers mcp-events's variable too.
	if s := stepOf(steps, "webhook-ingress", "SEAL_KEYS"); s.action != varCreate || s.value != key || s.holders["mcp-events"] != "2026-12-06T10:00:00.000+00:00" {
		t.Fatalf("copied from the environment: %+v", s)
	}
	if s := stepOf(steps, "mcp-events", "SEAL_KEYS"); s.action != varSame {
		t.Fatalf("mcp-events's own: %+v", s)
	}
	_, _, err = planned(t, Options{Getenv: func(k string) string {
		if k == "SEAL_KEYS" {
			return "k1:short"
		}
		return ""
	}}, half)
	if !errors.As(err, &r) || !strings.Contains(err.Error(), "SEAL_KEYS in deploy's environment") {
		t.Fatalf("a bad key list in the environment: %v", err)
	}
	// Both set, nothing on this machine: kept, with a note that deploy cannot compare them.
	both := map[string][]models.Variable{"mcp-events": half["mcp-events"], "webhook-ingress": {{Id: "s2", Key: "SEAL_KEYS", Secret: true}}}
	steps, d, err := planned(t, Options{}, both)
	if err != nil || stepOf(steps, "webhook-ingress", "SEAL_KEYS").action != varSame ||
		!strings.Contains(strings.Join(d.notes, "\n"), "deploy cannot check that they hold the same value. If they differ, webhook-ingress cannot open the subscriptions") {
		t.Fatalf("both set: %v %v", err, d.notes)
	}
}

// TestGenerateSecret: a key list starts at k1 with 32 random bytes; a rotation prepends the next id and keeps
// the list; a full list is refused.
func TestGenerateSecret(t *testing.T) {
	g := secretGroup{key: "SEAL_KEYS", keyList: true, maxKeys: 3}
	rnd := bytes.NewReader(bytes.Repeat([]byte{7, 1, 2, 3, 4, 5, 6, 8, 9, 10}, 20))
	v, err := generateSecret(g, "", rnd)
	if err != nil || !strings.HasPrefix(v, "k1:") {
		t.Fatalf("%q %v", v, err)
	}
	if b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(v, "k1:")); err != nil || len(b) != 32 {
		t.Fatalf("key %q: %v", v, err)
	}
	v2, err := generateSecret(g, "k7:AAA,k2:BBB", rnd)
	if err != nil || !strings.HasPrefix(v2, "k8:") || !strings.HasSuffix(v2, ",k7:AAA,k2:BBB") {
		t.Fatalf("rotation %q %v", v2, err)
	}
	if _, err := generateSecret(g, "k3:A,k2:B,k1:C", rnd); err == nil || !strings.Contains(err.Error(), "already holds 3 keys") {
		t.Fatalf("a full list: %v", err)
	}
}

// TestArchiveIsDeterministic: the same files give the same archive and hash whatever their timestamps; a
// changed byte or execute bit changes the hash; the deployment id carries it.
func TestArchiveIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("main.go", "package handler\n", 0o644)
	write("sub/run.sh", "echo\n", 0o644)
	a, err := pack(dir)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	_ = os.Chtimes(filepath.Join(dir, "main.go"), later, later)
	b, _ := pack(dir)
	if a.SHA256 != b.SHA256 || !bytes.Equal(a.Data, b.Data) || a.Files != 2 {
		t.Fatalf("a timestamp changed the archive: %s %s", a.SHA256, b.SHA256)
	}
	write("sub/run.sh", "echo\n", 0o755)
	c, _ := pack(dir)
	write("sub/run.sh", "echo!\n", 0o644)
	e, _ := pack(dir)
	if c.SHA256 == a.SHA256 || e.SHA256 == a.SHA256 || c.SHA256 == e.SHA256 {
		t.Fatal("a mode or content change kept the hash")
	}
	id, err := newDeploymentID(a.SHA256, bytes.NewReader([]byte{1, 2, 3, 4}))
	if err != nil || len(id) != 36 || !awclient.ValidID(id) || !builtFrom(id, a.SHA256) || builtFrom(id, e.SHA256) || builtFrom("", a.SHA256) {
		t.Fatalf("deployment id %q", id)
	}
}

// FuzzParseVersion: whatever a server reports, parseVersion does not panic, and what it accepts is three
// non-negative numbers that compare consistently.
func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"1.9.6", "1.9.5-rc.1", "2.0.0", "v1.9.0", "cloud-2026.12", "", "1.9", "1.9.6.1", "-1.0.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := parseVersion(s)
		if !ok {
			return
		}
		for _, n := range p {
			if n < 0 {
				t.Fatalf("%q parsed to %v", s, p)
			}
		}
		if versionBefore(p, p) {
			t.Fatalf("%v before itself", p)
		}
	})
}
