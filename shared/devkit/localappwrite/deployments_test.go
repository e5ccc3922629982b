package localappwrite

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/appwrite/sdk-for-go/file"
	"github.com/appwrite/sdk-for-go/functions"
)

// testHandlerMain is a handler module's root: /health answers the deployment id, /env a variable and the
// file the build commands wrote (embedded, so it proves the commands ran before go build).
const testHandlerMain = `package handler

import (
	_ "embed"
	"os"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

//go:embed generated.txt
var generated string

func Main(c openruntimes.Context) openruntimes.Response {
	switch c.Req.Path {
	case "/health":
		return c.Res.Json(map[string]any{"status": "ok", "build_id": os.Getenv("APPWRITE_FUNCTION_DEPLOYMENT")})
	case "/env":
		return c.Res.Json(map[string]any{"greeting": os.Getenv("GREETING"), "generated": generated,
			"function": os.Getenv("APPWRITE_FUNCTION_ID"), "project": os.Getenv("APPWRITE_FUNCTION_PROJECT_ID")})
	}
	return c.Res.Text("not found", c.Res.WithStatusCode(404))
}
`

const testHandlerMod = "module openruntimes/handler\n\ngo 1.25.5\n\nrequire github.com/open-runtimes/types-for-go/v4 v4.0.8\n"

func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is needed to build deployments")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is needed to run build commands")
	}
}

// writeTarGz packs files (name → content) into a tar.gz at path.
func writeTarGz(t *testing.T, path string, files map[string][]byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func waitDeployment(t *testing.T, fs *functions.Functions, fid, did string) (statuses []string, logs string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		d, err := fs.GetDeployment(fid, did)
		if err != nil {
			t.Fatal(err)
		}
		if len(statuses) == 0 || statuses[len(statuses)-1] != d.Status {
			statuses = append(statuses, d.Status)
		}
		if d.Status == "ready" || d.Status == "failed" {
			return statuses, d.BuildLogs
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("deployment %s still %v after 3 minutes", did, statuses)
	return nil, ""
}

func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return res.StatusCode, m
}

// TestDeploymentChunkedBuildAndServe uploads a 6 MiB deployment with the SDK (two chunks with content-range
// and x-appwrite-id), waits for the build, and calls the function over its domain and the executions API.
// A second deployment replaces the first one's process; Close kills the runtime and removes the files.
func TestDeploymentChunkedBuildAndServe(t *testing.T) {
	needGo(t)
	f := newFixture(t, Options{})
	if err := f.s.RegisterFunction(testProject, FunctionSpec{ID: "hello", Commands: "echo from-commands > generated.txt",
		Variables: map[string]string{"GREETING": "hi"}, Execute: []string{"any"}, Timeout: 30}); err != nil {
		t.Fatal(err)
	}
	blob := make([]byte, 6<<20) // incompressible: the archive needs two 5 MiB chunks
	if _, err := rand.Read(blob); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "code.tar.gz")
	writeTarGz(t, archive, map[string][]byte{"go.mod": []byte(testHandlerMod), "main.go": []byte(testHandlerMain), "assets/blob.bin": blob})

	fs := functions.New(f.sdk(f.key))
	dep, err := fs.CreateDeployment("hello", file.NewInputFile(archive, "code.tar.gz"), true, fs.WithCreateDeploymentEntrypoint("main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if dep.ResourceId != "hello" || dep.ResourceType != "functions" || dep.SourceSize < 6<<20 || !dep.Activate {
		t.Fatalf("deployment %+v", dep)
	}
	statuses, logs := waitDeployment(t, fs, "hello", dep.Id)
	if statuses[len(statuses)-1] != "ready" {
		t.Fatalf("statuses %v, logs:\n%s", statuses, logs)
	}
	if !strings.Contains(logs, "Build finished.") {
		t.Fatalf("build logs %q", logs)
	}
	fn, err := fs.Get("hello")
	if err != nil {
		t.Fatal(err)
	}
	if fn.DeploymentId != dep.Id || fn.LatestDeploymentId != dep.Id || fn.LatestDeploymentStatus != "ready" {
		t.Fatalf("function %+v", fn)
	}

	code, health := getJSON(t, f.s.DomainURL("hello")+"/health")
	if code != 200 || health["status"] != "ok" || health["build_id"] != dep.Id {
		t.Fatalf("health %d %v", code, health)
	}
	code, env := getJSON(t, f.s.DomainURL("hello")+"/env")
	if code != 200 || env["greeting"] != "hi" || strings.TrimSpace(env["generated"].(string)) != "from-commands" ||
		env["function"] != "hello" || env["project"] != testProject {
		t.Fatalf("env %d %v", code, env)
	}
	ex, err := fs.CreateExecution("hello", fs.WithCreateExecutionPath("/health"), fs.WithCreateExecutionMethod("GET"))
	if err != nil {
		t.Fatal(err)
	}
	if ex.Status != "completed" || ex.DeploymentId != dep.Id || !strings.Contains(ex.ResponseBody, dep.Id) {
		t.Fatalf("execution %+v", ex)
	}

	if !fn.Live {
		t.Fatalf("a function whose deployment was activated by its build is not live: %+v", fn)
	}
	// A variable changed through the API takes effect with the next deployment: the function is no longer
	// live until a build activates one (Variables/Update.php:125-126, Workers/Builds.php:969-977).
	vars, err := fs.ListVariables("hello")
	if err != nil || vars.Total != 1 || vars.Variables[0].Key != "GREETING" {
		t.Fatalf("variables %+v %v", vars, err)
	}
	if _, err := fs.UpdateVariable("hello", vars.Variables[0].Id, "GREETING", fs.WithUpdateVariableValue("hello again")); err != nil {
		t.Fatal(err)
	}
	if fn, err := fs.Get("hello"); err != nil || fn.Live {
		t.Fatalf("after a variable update: %+v %v", fn, err)
	}
	if code, env := getJSON(t, f.s.DomainURL("hello")+"/env"); code != 200 || env["greeting"] != "hi" {
		t.Fatalf("the running deployment's environment changed: %d %v", code, env)
	}

	// A second deployment (one request, no content-range) takes over; the first runtime is stopped.
	first := f.s.deploy.Runtime(testProject + "/hello")
	small := filepath.Join(t.TempDir(), "small.tar.gz")
	writeTarGz(t, small, map[string][]byte{"go.mod": []byte(testHandlerMod), "main.go": []byte(testHandlerMain)})
	dep2, err := fs.CreateDeployment("hello", file.NewInputFile(small, "small.tar.gz"), true)
	if err != nil {
		t.Fatal(err)
	}
	if statuses, logs := waitDeployment(t, fs, "hello", dep2.Id); statuses[len(statuses)-1] != "ready" {
		t.Fatalf("second deployment %v:\n%s", statuses, logs)
	}
	if code, health := getJSON(t, f.s.DomainURL("hello")+"/health"); code != 200 || health["build_id"] != dep2.Id {
		t.Fatalf("after redeploy: %d %v", code, health)
	}
	if code, env := getJSON(t, f.s.DomainURL("hello")+"/env"); code != 200 || env["greeting"] != "hello again" {
		t.Fatalf("the new deployment's environment: %d %v", code, env)
	}
	if fn, err := fs.Get("hello"); err != nil || !fn.Live || fn.DeploymentId != dep2.Id {
		t.Fatalf("after the redeploy: %+v %v", fn, err)
	}
	select {
	case <-first.Done():
	case <-time.After(time.Minute): // a ceiling on the signal wait, far above the kill and WaitDelay (2 s)
		t.Fatal("the first deployment's runtime still runs")
	}
	if old, _ := fs.GetDeployment("hello", dep.Id); old.Activate {
		t.Fatal("the first deployment is still marked activate")
	}
	list, err := fs.ListDeployments("hello")
	if err != nil || list.Total != 2 || list.Deployments[0].Id != dep2.Id {
		t.Fatalf("list %+v %v", list, err)
	}

	// Close stops the runtime and removes the deployments' files.
	second, root := f.s.deploy.Runtime(testProject+"/hello"), f.s.deploy.Root()
	_ = f.s.Close()
	select {
	case <-second.Done():
	default:
		t.Fatal("Close returned with the runtime still running")
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("deployment files left at %s: %v", root, err)
	}
	// After Close the API still answers, but a new deployment fails at once instead of building.
	smallData, _ := os.ReadFile(small)
	if code, body := rawDeploy(t, f, "hello", "small.tar.gz", smallData, nil, true); code != 202 || body["status"] != "failed" {
		t.Fatalf("deploy after Close: %d %v", code, body)
	}
}

// TestDeploymentBuildFailures: a handler that does not compile and failing build commands end "failed" with
// the reason in buildLogs, and the function keeps its previous deployment.
func TestDeploymentBuildFailures(t *testing.T) {
	needGo(t)
	f := newFixture(t, Options{})
	if err := f.s.RegisterFunction(testProject, FunctionSpec{ID: "broken"}); err != nil {
		t.Fatal(err)
	}
	before, _ := functions.New(f.sdk(f.key)).Get("broken")
	fs := functions.New(f.sdk(f.key))
	dir := t.TempDir()
	// Every status change is fanned out to webhooks as functions.[fn].deployments.[id].update with the
	// Deployment model (Workers/Jobs.php dispatchUpdate).
	rec := newRecorder(t)
	createHook(t, f, "deployments", rec.ts.URL, []string{"functions.broken.deployments.*.update"}, nil)
	var failedIDs []string
	cases := []struct {
		name, commands, want string
		files                map[string][]byte
	}{
		{"compile", "", "undefined: doesNotExist", map[string][]byte{"go.mod": []byte(testHandlerMod),
			"main.go": []byte("package handler\n\nimport \"github.com/open-runtimes/types-for-go/v4/openruntimes\"\n\nfunc Main(c openruntimes.Context) openruntimes.Response { return doesNotExist(c) }\n")}},
		{"commands", "echo building; exit 3", "build commands failed", map[string][]byte{"go.mod": []byte(testHandlerMod), "main.go": []byte(testHandlerMain)}},
	}
	for _, tc := range cases {
		path := filepath.Join(dir, tc.name+".tar.gz")
		writeTarGz(t, path, tc.files)
		dep, err := fs.CreateDeployment("broken", file.NewInputFile(path, tc.name+".tar.gz"), true, fs.WithCreateDeploymentCommands(tc.commands))
		if err != nil {
			t.Fatal(err)
		}
		statuses, logs := waitDeployment(t, fs, "broken", dep.Id)
		if statuses[len(statuses)-1] != "failed" || !strings.Contains(logs, tc.want) {
			t.Fatalf("%s: statuses %v, logs:\n%s", tc.name, statuses, logs)
		}
		failedIDs = append(failedIDs, dep.Id)
	}
	f.flush(t)
	for _, id := range failedIDs {
		var final map[string]any
		for _, d := range rec.all() {
			var m map[string]any
			if err := json.Unmarshal(d.Body, &m); err != nil {
				t.Fatal(err)
			}
			if m["$id"] == id && m["status"] == "failed" {
				final = m
				if ev := d.Header.Get("X-Appwrite-Webhook-Events"); !strings.Contains(ev, "functions.broken.deployments."+id+".update") {
					t.Fatalf("events header %q", ev)
				}
			}
		}
		if final == nil || final["resourceType"] != "functions" || final["resourceId"] != "broken" {
			t.Fatalf("no failed deployments update for %s: %+v", id, final)
		}
	}
	after, _ := fs.Get("broken")
	if after.DeploymentId != before.DeploymentId || after.LatestDeploymentStatus != "failed" {
		t.Fatalf("after failed builds: %+v", after)
	}
}

// rawDeploy posts one multipart deployment request with the given headers.
func rawDeploy(t *testing.T, f *fixture, fid, filename string, data []byte, headers map[string]string, activate bool) (int, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if activate {
		_ = mw.WriteField("activate", "true")
	}
	if filename != "" {
		w, _ := mw.CreateFormFile("code", filename)
		_, _ = w.Write(data)
	}
	_ = mw.Close()
	req, _ := http.NewRequest("POST", f.ts.URL+"/v1/functions/"+fid+"/deployments", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-Appwrite-Project", testProject)
	req.Header.Set("X-Appwrite-Key", f.key)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}

// TestDeploymentErrors covers the answers that need no build: unknown function and deployment, missing file,
// wrong extension, bad content-range, bad x-appwrite-id, a last chunk without its first ones, partial
// uploads staying "waiting" with their chunk counts, and the other routes push uses.
func TestDeploymentErrors(t *testing.T) {
	f := newFixture(t, Options{})
	if err := f.s.RegisterFunction(testProject, FunctionSpec{ID: "fn", Events: []string{"users.*.create"}}); err != nil {
		t.Fatal(err)
	}
	fs := functions.New(f.sdk(f.key))
	archive := filepath.Join(t.TempDir(), "a.tar.gz")
	writeTarGz(t, archive, map[string][]byte{"main.go": []byte("package handler\n")})
	_, err := fs.CreateDeployment("nope", file.NewInputFile(archive, "a.tar.gz"), true)
	wantErr(t, err, 404, ErrFunctionNotFound)
	_, err = fs.GetDeployment("fn", "nope")
	wantErr(t, err, 404, ErrDeploymentNotFound)
	_, err = fs.CreateDeployment("fn", file.NewInputFile(archive, "a.zip"), true)
	wantErr(t, err, 400, ErrFileTypeUnsupported)

	type want struct {
		status int
		typ    string
	}
	data := bytes.Repeat([]byte("x"), 100)
	for name, tc := range map[string]struct {
		headers  map[string]string
		filename string
		data     []byte
		activate bool
		want     want
	}{
		"no file":           {nil, "", nil, true, want{400, ErrFileEmpty}},
		"no activate":       {nil, "a.tar.gz", data, false, want{400, ErrGeneralArgumentInvalid}},
		"garbage range":     {map[string]string{"content-range": "bytes x-y/z"}, "a.tar.gz", data, true, want{400, ErrInvalidContentRange}},
		"end past size":     {map[string]string{"content-range": "bytes 0-99/50"}, "a.tar.gz", data, true, want{400, ErrInvalidContentRange}},
		"range vs body":     {map[string]string{"content-range": "bytes 0-49/200"}, "a.tar.gz", data, true, want{400, ErrInvalidContentRange}},
		"bad appwrite id":   {map[string]string{"content-range": "bytes 0-99/200", "x-appwrite-id": "unique()"}, "a.tar.gz", data, true, want{400, ErrInvalidAppwriteID}},
		"orphan last chunk": {map[string]string{"content-range": "bytes 100-199/200"}, "a.tar.gz", data, true, want{400, ErrInvalidContentRange}},
		"too big":           {map[string]string{"content-range": "bytes 0-99/40000000"}, "a.tar.gz", data, true, want{400, ErrFileInvalidSize}},
	} {
		code, body := rawDeploy(t, f, "fn", tc.filename, tc.data, tc.headers, tc.activate)
		if code != tc.want.status || body["type"] != tc.want.typ {
			t.Errorf("%s: %d %v, want %v", name, code, body, tc.want)
		}
	}

	// First chunk of three: 202, waiting, counts; the id then names the upload.
	code, body := rawDeploy(t, f, "fn", "a.tar.gz", data, map[string]string{"content-range": "bytes 0-99/300", "x-sdk-language": "cli"}, true)
	if code != 202 || body["status"] != "waiting" || body["chunksTotal"] != 3.0 || body["chunksUploaded"] != 1.0 || body["type"] != "cli" {
		t.Fatalf("first chunk: %d %v", code, body)
	}
	id := body["$id"].(string)
	code, body = rawDeploy(t, f, "fn", "a.tar.gz", data, map[string]string{"content-range": "bytes 100-199/300", "x-appwrite-id": id}, true)
	if code != 202 || body["$id"] != id || body["chunksUploaded"] != 2.0 || body["status"] != "waiting" {
		t.Fatalf("second chunk: %d %v", code, body)
	}
	// A chunk of a file of another size does not join the upload.
	if code, body = rawDeploy(t, f, "fn", "a.tar.gz", data, map[string]string{"content-range": "bytes 200-299/400", "x-appwrite-id": id}, true); code != 400 {
		t.Fatalf("foreign chunk: %d %v", code, body)
	}

	// The other routes of `appwrite push functions`.
	if _, err := fs.Update("fn", "renamed", fs.WithUpdateEvents([]string{"bogus"})); err == nil {
		t.Fatal("an invalid event was accepted")
	}
	upd, err := fs.Update("fn", "renamed", fs.WithUpdateTimeout(60), fs.WithUpdateCommands("make"), fs.WithUpdateScopes([]string{"rows.read"}),
		fs.WithUpdateSpecification("s-0.5vcpu-512mb"), fs.WithUpdateLogging(false))
	if err != nil {
		t.Fatal(err)
	}
	// An update without an entrypoint keeps the function's (Update.php:179-181); the name and commands changed,
	// so the function is no longer live (:244-253).
	if upd.Name != "renamed" || upd.Timeout != 60 || upd.Commands != "make" || upd.Entrypoint != "main.go" || len(upd.Events) != 0 ||
		upd.Specification != "s-0.5vcpu-512mb" || upd.Logging || upd.Scopes[0] != "rows.read" || upd.Live {
		t.Fatalf("update %+v", upd)
	}
	// A function created without an entrypoint, and none in the request: function_entrypoint_missing.
	if _, err := fs.Create("noentry", "No entrypoint", "go-1.26"); err != nil {
		t.Fatal(err)
	}
	if code, body := rawDeploy(t, f, "noentry", "a.tar.gz", data, nil, true); code != 404 || body["type"] != ErrFunctionEntrypointMissing {
		t.Fatalf("entrypoint missing: %d %v", code, body)
	}
	_, err = fs.Update("fn", "x", fs.WithUpdateSpecification("huge"))
	wantErr(t, err, 400, ErrGeneralArgumentInvalid)

	rules, err := callJSON(t, f.sdk(f.key), "GET", "/proxy/rules", map[string]any{"queries": []string{
		`{"method":"limit","values":[1]}`, `{"method":"equal","attribute":"deploymentResourceId","values":["fn"]}`}})
	if err != nil {
		t.Fatal(err)
	}
	rl, _ := rules["rules"].([]any)
	if rules["total"] != 1.0 || len(rl) != 1 || !strings.HasSuffix(rl[0].(map[string]any)["domain"].(string), "/_local/domains/fn") {
		t.Fatalf("rules %v", rules)
	}
	code, v := getJSON(t, f.ts.URL+"/v1/health/version")
	if code != 200 || v["version"] != "1.9.6" {
		t.Fatalf("health/version %d %v", code, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := f.s.WaitDeployment(ctx, testProject, "fn", id); err == nil {
		t.Fatal("a partial upload finished")
	}
}

// TestFunctionSpecifications: in the current format a function has buildSpecification and
// runtimeSpecification (Functions/Create.php 1.9.6) and an undeclared "specification" is dropped; a request in
// format 1.8.0 (SDK v1.0.0) sends "specification", which request filter V21 turns into both
// (Request/Filters/V21.php:113-116), and gets it back (Response/Filters/V21.php:85-90).
func TestFunctionSpecifications(t *testing.T) {
	f := newFixture(t, Options{})
	code, body := f.rawCall(t, "POST", "/functions", map[string]any{"functionId": "current", "name": "c", "runtime": "go-1.26",
		"specification": "s-2vcpu-2gb", "runtimeSpecification": "s-0.5vcpu-512mb"}, nil)
	if code != 201 || body["buildSpecification"] != defaultSpecification || body["runtimeSpecification"] != "s-0.5vcpu-512mb" || body["live"] != true || body["deploymentId"] != "" {
		t.Fatalf("current format: %d %v", code, body)
	}
	if _, ok := body["specification"]; ok {
		t.Fatalf("current format answers specification: %v", body)
	}
	fs := functions.New(f.sdk(f.key))
	fn, err := fs.Create("legacy", "l", "go-1.26", fs.WithCreateSpecification("s-2vcpu-2gb"))
	if err != nil {
		t.Fatal(err)
	}
	if fn.Specification != "s-2vcpu-2gb" {
		t.Fatalf("legacy format: %+v", fn)
	}
	code, body = f.rawCall(t, "GET", "/functions/legacy", nil, nil)
	if code != 200 || body["buildSpecification"] != "s-2vcpu-2gb" || body["runtimeSpecification"] != "s-2vcpu-2gb" {
		t.Fatalf("stored: %d %v", code, body)
	}
	// An update that keeps name, entrypoint, commands and runtime leaves the function live, one that renames
	// it does not (Functions/Update.php:244-253).
	if _, err := fs.CreateVariable("legacy", "K", "v"); err != nil {
		t.Fatal(err)
	}
	if fn, err := fs.Update("legacy", "l", fs.WithUpdateTimeout(30)); err != nil || !fn.Live {
		t.Fatalf("an update that rebuilds nothing: %+v %v", fn, err)
	}
	if fn, err := fs.Update("legacy", "renamed"); err != nil || fn.Live {
		t.Fatalf("a rename: %+v %v", fn, err)
	}
}
