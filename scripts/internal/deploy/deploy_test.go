package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/stack"
	"appwrite-agent/scripts/internal/staging"
	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/loopback"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/functions"
)

const testProject = "deploytest"

// standIn is a running stand-in with an empty project and a key with deploy's scopes.
type standIn struct {
	run *localappwrite.Running
	key string
}

func startStandIn(t *testing.T, opts localappwrite.Options) *standIn {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	opts.AllowLoopbackWebhookURLs = true
	run, err := localappwrite.Start(context.Background(), "127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = run.Shutdown(ctx)
	})
	key, err := run.Server.SeedEmptyProject(testProject, "Deploy test", Scopes())
	if err != nil {
		t.Fatal(err)
	}
	return &standIn{run: run, key: key}
}

// options are a run's options against s, with a short poll interval and a state folder of the test's own.
func (s *standIn) options(t *testing.T, log *bytes.Buffer) Options {
	t.Helper()
	root, err := staging.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return Options{Endpoint: s.run.Server.Endpoint(), Project: testProject, Key: s.key, Root: root, StateDir: t.TempDir(),
		Log: log, PollInterval: 50 * time.Millisecond, HealthTimeout: time.Minute, BuildTimeout: 5 * time.Minute}
}

// functionsOf reads which of the five functions exist in the project.
func (s *standIn) functionsOf(t *testing.T) []string {
	t.Helper()
	fs := functions.New(appwrite.NewClient(appwrite.WithEndpoint(s.run.Server.Endpoint()), appwrite.WithProject(testProject),
		appwrite.WithKey(s.key), appwrite.WithTimeout(time.Minute)))
	var out []string
	for _, name := range functionNames {
		if _, err := fs.Get(name); err == nil {
			out = append(out, name)
		}
	}
	return out
}

// TestBadInputsAreRefusedBeforeAnyChange: each input deploy cannot work with is refused with a message that
// says what is wrong and what to do, before anything is changed (and before anything is staged).
func TestBadInputsAreRefusedBeforeAnyChange(t *testing.T) {
	s := startStandIn(t, localappwrite.Options{})
	// A port nothing listens on, held from other tests until this one ends (stack.ReservePort).
	port, release, err := stack.ReservePort()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	closedPort := "127.0.0.1:" + strconv.Itoa(port)
	readOnly, err := s.run.Server.CreateKey(testProject, []string{"functions.read", "rules.read", "rules.write", "databases.read", "databases.write", "tables.read", "tables.write"})
	if err != nil {
		t.Fatal(err)
	}
	noWrites, err := s.run.Server.CreateKey(testProject, []string{"functions.read", "rules.read", "databases.read", "tables.read"})
	if err != nil {
		t.Fatal(err)
	}
	expired, err := s.run.Server.CreateKeyExpiring(testProject, Scopes(), time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.run.Server.SeedProject(localappwrite.ProjectSpec{ID: "other"}); err != nil {
		t.Fatal(err)
	}
	otherKey, err := s.run.Server.CreateKey("other", Scopes())
	if err != nil {
		t.Fatal(err)
	}
	old := startStandIn(t, localappwrite.Options{Version: "1.9.0"})
	noGo := startStandIn(t, localappwrite.Options{FunctionsRuntimes: []string{"node-22"}})

	for _, c := range []struct {
		name string
		edit func(o *Options)
		want []string
	}{
		{"nothing given", func(o *Options) { o.Endpoint, o.Project, o.Key = "", "", "" },
			[]string{"deploy needs the endpoint (-endpoint or APPWRITE_ENDPOINT), the project id (-project or APPWRITE_PROJECT_ID), an API key (-key or APPWRITE_API_KEY)."}},
		{"endpoint without /v1", func(o *Options) { o.Endpoint = strings.TrimSuffix(o.Endpoint, "/v1") }, []string{"does not end in /v1"}},
		{"endpoint not a URL", func(o *Options) { o.Endpoint = "fra.cloud.appwrite.io/v1" }, []string{"is not an http(s) URL"}},
		{"unreachable endpoint", func(o *Options) { o.Endpoint = "http://" + closedPort + "/v1" },
			[]string{"cannot reach Appwrite at http://" + closedPort + "/v1", "connection refused", "Check -endpoint"}},
		{"not an Appwrite endpoint", func(o *Options) { o.Endpoint = s.run.URL + "/_local/v1" },
			[]string{"does not answer as an Appwrite API endpoint", "HTTP 404"}},
		{"wrong project", func(o *Options) { o.Project = "nope" }, []string{`project "nope" does not exist at ` + s.run.Server.Endpoint()}},
		{"wrong key", func(o *Options) { o.Key = "standard_0123" }, []string{`the API key is not a key of project "deploytest"`, "(role: guests)", "Check -key"}},
		{"another project's key", func(o *Options) { o.Key = otherKey }, []string{`the API key is not a key of project "deploytest"`}},
		{"expired key", func(o *Options) { o.Key = expired }, []string{"the API key has expired"}},
		{"missing scope", func(o *Options) { o.Key = readOnly },
			[]string{"the API key lacks 1 of the scopes deploy needs:\n  functions.write  to create and update the functions, set their variables and upload their code\n",
				"/console/project-default-deploytest/overview/api-keys"}},
		{"missing scopes", func(o *Options) { o.Key = noWrites },
			[]string{"lacks 4 of the scopes", "functions.write", "rules.write  ", "databases.write", "tables.write"}},
		{"old server", func(o *Options) { o.Endpoint, o.Key = old.run.Server.Endpoint(), old.key },
			[]string{"Appwrite 1.9.0 at " + old.run.Server.Endpoint() + " is older than 1.9.5", "Upgrade the server"}},
		{"runtime not offered", func(o *Options) { o.Endpoint, o.Key = noGo.run.Server.Endpoint(), noGo.key },
			[]string{"this server does not offer the go-1.26 runtime the functions are built with (it offers: node-22)",
				"_APP_FUNCTIONS_RUNTIMES=node-22,go-1.26", "restart Appwrite"}},
		{"bad chat database", func(o *Options) { o.ChatDatabase = "-chat" }, []string{`-chat-database "-chat" is not an Appwrite id`}},
		{"bad functions domain", func(o *Options) { o.FunctionsDomain = "https://fra.appwrite.run" }, []string{"-functions-domain"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			o := s.options(t, &log)
			staged := false
			o.Stage = func(context.Context, string, string, string) error { staged = true; return nil }
			c.edit(&o)
			sum, err := Run(context.Background(), o)
			var r *Refusal
			if !errors.As(err, &r) || sum != nil {
				t.Fatalf("got %v, %v; want a refusal", sum, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal lacks %q:\n%v", w, err)
				}
			}
			if !strings.HasSuffix(err.Error(), "Nothing was changed.") {
				t.Errorf("the refusal does not say nothing was changed: %v", err)
			}
			if staged {
				t.Error("deploy staged the functions before refusing")
			}
		})
	}
	for _, st := range []*standIn{s, old, noGo} {
		if fns := st.functionsOf(t); len(fns) != 0 {
			t.Fatalf("a refused run changed the project: %v", fns)
		}
	}
}

// TestScopesProbedWithoutChange: with every scope, each probe gets the route's own answer (not 401), and the
// probes leave the project as it was.
func TestScopesProbedWithoutChange(t *testing.T) {
	s := startStandIn(t, localappwrite.Options{})
	api := newAppwriteAPI(s.run.Server.Endpoint(), testProject, s.key, &http.Client{Timeout: time.Minute})
	for _, n := range (&deployer{opts: Options{ChatDatabase: "chat"}}).scopeNeeds() {
		err := api.Probe(context.Background(), n.method, n.path...)
		if st := awclient.StatusOf(err); err != nil && (st == 401 || st == 0 || st >= 500) {
			t.Errorf("%s %v with every scope: %v", n.method, n.path, err)
		}
	}
	if fns := s.functionsOf(t); len(fns) != 0 {
		t.Fatalf("probes created %v", fns)
	}
}

// getJSON GETs url (a function domain under .localhost included) and decodes its JSON answer.
func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	res, err := loopback.Client(time.Minute).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}
