package localappwrite

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/appwrite/sdk-for-go/functions"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

const routeNotFound = "Route not found. Please ensure the endpoint is configured correctly and that the API route is valid for this SDK version. Refer to the API docs for more details."

// rawCall sends a request with a JSON body and the fixture's key, returning status and decoded body.
func (f *fixture) rawCall(t *testing.T, method, path string, body any, header map[string]string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, f.ts.URL+"/v1"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Appwrite-Project", testProject)
	req.Header.Set("X-Appwrite-Key", f.key)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]any{}
	data, _ := io.ReadAll(resp.Body)
	if len(data) > 0 {
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("%s %s: body %q is not JSON", method, path, data)
		}
	}
	return resp.StatusCode, out
}

// Secret rotation is PATCH /v1/webhooks/{id}/secret and PATCH /v1/projects/{p}/webhooks/{id}/signature only
// (Webhooks/Secret/Update.php:32-34). Every other method or path is Appwrite's wildcard route: 404
// general_route_not_found (general.php:1737-1742, errors.php:87-91).
func TestSecretRotationRoutesOnly(t *testing.T) {
	f := newFixture(t, Options{})
	c := f.sdk(f.key)
	if _, err := callJSON(t, c, "POST", "/webhooks", webhookParams("rot")); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/webhooks/rot/secret", "/projects/" + testProject + "/webhooks/rot/signature"} {
		got, err := callJSON(t, c, "PATCH", path, map[string]any{"secret": "abcdefgh"})
		if err != nil || got["signatureKey"] != "abcdefgh" {
			t.Fatalf("PATCH %s: %v %v", path, got, err)
		}
	}
	for _, r := range []struct{ method, path string }{
		{"PUT", "/webhooks/rot/secret"},
		{"POST", "/webhooks/rot/secret"},
		{"PATCH", "/webhooks/rot/signature"},
		{"PATCH", "/projects/" + testProject + "/webhooks/rot/secret"},
		{"PUT", "/projects/" + testProject + "/webhooks/rot/signature"},
		{"PATCH", "/webhooks/rot"},
	} {
		_, err := callJSON(t, c, r.method, r.path, map[string]any{"secret": "abcdefgh"})
		wantAPIError(t, err, 404, ErrGeneralRouteNotFound, routeNotFound)
		status, body := f.rawCall(t, r.method, r.path, map[string]any{"secret": "abcdefgh"}, nil)
		if status != 404 || body["type"] != ErrGeneralRouteNotFound || body["code"] != float64(404) || body["version"] == nil {
			t.Errorf("%s %s: %d %v", r.method, r.path, status, body)
		}
	}
	// None of the refused calls changed the secret.
	d := f.s.webhookSecretForTest(t, "rot")
	if d != "abcdefgh" {
		t.Errorf("secret changed by a refused route: %q", d)
	}
}

var hex128 = regexp.MustCompile(`^[0-9a-f]{128}$`)

// Undeclared params are dropped (utopia-php/http reads declared params only): a signatureKey has no effect on
// create or rotation, and the pre-1.9.1 names are mapped only for requests in a pre-1.9.1 format
// (Request/Filters/V22.php:53-71, general.php:891-893).
func TestUndeclaredParamsDropped(t *testing.T) {
	f := newFixture(t, Options{})
	p := webhookParams("drop")
	p["signatureKey"] = "caller-chosen-key"
	p["httpUser"] = "legacy-user"
	status, got := f.rawCall(t, "POST", "/webhooks", p, map[string]string{"X-Appwrite-Response-Format": "1.9.5"})
	if status != 201 {
		t.Fatalf("%d %v", status, got)
	}
	if s, _ := got["secret"].(string); !hex128.MatchString(s) {
		t.Errorf("signatureKey must be ignored and a secret generated, got %q", s)
	}
	if got["authUsername"] != "" {
		t.Errorf("httpUser is not mapped for a 1.9.5 request: %v", got)
	}
	status, got = f.rawCall(t, "PATCH", "/webhooks/drop/secret", map[string]any{"signatureKey": "caller-chosen-key"}, nil)
	if s, _ := got["secret"].(string); status != 200 || !hex128.MatchString(s) {
		t.Errorf("rotation with signatureKey only must generate: %d %v", status, got)
	}
	// A 1.8.0 request maps httpUser (set) over authUsername, and still ignores signatureKey.
	p = webhookParams("legacy")
	p["signatureKey"] = "caller-chosen-key"
	p["httpUser"] = "legacy-user"
	p["authUsername"] = "new-user"
	status, got = f.rawCall(t, "POST", "/webhooks", p, map[string]string{"X-Appwrite-Response-Format": "1.8.0"})
	if s, _ := got["signatureKey"].(string); status != 201 || got["httpUser"] != "legacy-user" || !hex128.MatchString(s) {
		t.Errorf("legacy create: %d %v", status, got)
	}
}

const secretMessage = "Invalid `secret` param: Value must be a valid string and at least 8 chars and no longer than 256 chars"

// secret is Nullable(Text(256, 8)); absent or null generates 128 hex characters (Create.php:73,114).
func TestSecretParam(t *testing.T) {
	f := newFixture(t, Options{})
	c := f.sdk(f.key)
	for i, tc := range []struct {
		secret any
		ok     bool
	}{{"1234567", false}, {strings.Repeat("s", 257), false}, {"12345678", true}, {strings.Repeat("é", 256), true}, {nil, true}} {
		p := webhookParams("s" + string(rune('a'+i)))
		if tc.secret != nil {
			p["secret"] = tc.secret
		} else {
			p["secret"] = nil
		}
		got, err := callJSON(t, c, "POST", "/webhooks", p)
		if !tc.ok {
			wantAPIError(t, err, 400, ErrGeneralArgumentInvalid, secretMessage)
			_, err = callJSON(t, c, "PATCH", "/webhooks/s"+string(rune('a'+2))+"/secret", map[string]any{"secret": tc.secret})
			wantAPIError(t, err, 400, ErrGeneralArgumentInvalid, secretMessage)
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.secret, err)
		}
		want, _ := tc.secret.(string)
		if s, _ := got["signatureKey"].(string); (want != "" && s != want) || (want == "" && !hex128.MatchString(s)) {
			t.Errorf("secret %v: stored %q", tc.secret, s)
		}
	}
}

const urlMessage = "Invalid `url` param: 1. Value must be a valid URL with following schemes (http, https) \n2. Value must be a public domain \n"

// url is Multiple([URL(http, https), PublicDomain]) (Create.php:66, Update.php:64): IP literals, localhost and
// unlisted suffixes are refused with the combined description. By default the stand-in refuses loopback too;
// the stand-in-only AllowLoopbackWebhookURLs lets loopback (and only loopback) through.
func TestWebhookURLPublicDomain(t *testing.T) {
	refused := []string{
		"http://localhost:8080/x", "http://127.0.0.1:9000/x", "http://[::1]:9000/x", "https://10.0.0.7/x",
		"https://192.168.1.2/x", "https://169.254.169.254/latest", "https://8.8.8.8/x", "https://printer.local/x",
		"https://svc.internal/x", "https://hooks.example.test/x", "https://intranet/x", "ftp://example.com/x",
	}
	strict := newStrictFixture(t, Options{})
	c := strict.sdk(strict.key)
	for _, u := range refused {
		p := webhookParams("u1")
		p["url"] = u
		_, err := callJSON(t, c, "POST", "/webhooks", p)
		wantAPIError(t, err, 400, ErrGeneralArgumentInvalid, urlMessage)
	}
	for _, u := range []string{"https://hooks.example.com/a", "http://a.b.example.co.uk:8443/x", "https://my-app.appspot.com/x"} {
		p := webhookParams("ok")
		p["url"] = u
		if _, err := callJSON(t, c, "POST", "/webhooks", p); err != nil {
			t.Errorf("%s: %v", u, err)
		}
		_, _ = c.Call("DELETE", "/webhooks/ok", nil, nil)
	}
	// Update applies the same validator.
	if _, err := callJSON(t, c, "POST", "/webhooks", webhookParams("upd")); err != nil {
		t.Fatal(err)
	}
	upd := webhookParams("upd")
	delete(upd, "webhookId")
	upd["url"] = "http://127.0.0.1:1/x"
	_, err := callJSON(t, c, "PUT", "/webhooks/upd", upd)
	wantAPIError(t, err, 400, ErrGeneralArgumentInvalid, urlMessage)

	loose := newFixture(t, Options{})
	lc := loose.sdk(loose.key)
	for i, u := range []string{"http://localhost:8080/x", "http://127.0.0.1:9000/x", "http://[::1]:9000/x"} {
		p := webhookParams("l" + string(rune('a'+i)))
		p["url"] = u
		if _, err := callJSON(t, lc, "POST", "/webhooks", p); err != nil {
			t.Errorf("allowance: %s: %v", u, err)
		}
	}
	for _, u := range []string{"https://10.0.0.7/x", "https://printer.local/x"} {
		p := webhookParams("priv")
		p["url"] = u
		_, err := callJSON(t, lc, "POST", "/webhooks", p)
		wantAPIError(t, err, 400, ErrGeneralArgumentInvalid, urlMessage)
	}
}

// Options.Version below 1.9.5 plays Appwrite 1.9.0's webhook API: the secret param does not exist (the key is
// always generated), rotation is PATCH /v1/webhooks/{id}/signature without params, and /secret is no route.
func TestWebhooksAsAppwrite190(t *testing.T) {
	f := newFixture(t, Options{Version: "1.9.0"})
	p := webhookParams("old")
	p["secret"] = "caller-chosen-key"
	status, got := f.rawCall(t, "POST", "/webhooks", p, nil)
	if k, _ := got["signatureKey"].(string); status != 201 || !hex128.MatchString(k) {
		t.Fatalf("1.9.0 ignores secret: %d %v", status, got)
	}
	status, got = f.rawCall(t, "GET", "/health/version", nil, nil)
	if status != 200 || got["version"] != "1.9.0" {
		t.Fatalf("version: %d %v", status, got)
	}
	status, got = f.rawCall(t, "PATCH", "/webhooks/old/secret", map[string]any{"secret": "caller-chosen-key"}, nil)
	if status != 404 || got["type"] != ErrGeneralRouteNotFound || got["message"] != routeNotFound || got["version"] != "1.9.0" {
		t.Fatalf("1.9.0 has no /secret route: %d %v", status, got)
	}
	for _, path := range []string{"/webhooks/old/signature", "/projects/" + testProject + "/webhooks/old/signature"} {
		status, got = f.rawCall(t, "PATCH", path, map[string]any{"secret": "caller-chosen-key"}, nil)
		if k, _ := got["signatureKey"].(string); status != 200 || !hex128.MatchString(k) {
			t.Fatalf("%s: %d %v", path, status, got)
		}
	}
}

// The worker never follows a redirect (1.9.6 sets CURLOPT_MAXREDIRS without FOLLOWLOCATION): the 3xx is the
// answer, it is no failure, and the Location target gets nothing.
func TestDeliveryNeverFollowsRedirects(t *testing.T) {
	f := newFixture(t, Options{})
	seedRowsTable(t, f)
	target := newRecorder(t)
	rec := newRecorder(t)
	rec.reply = func(w http.ResponseWriter, r *http.Request, _ []byte) {
		http.Redirect(w, r, target.ts.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}
	createHook(t, f, "moved", rec.ts.URL+"/hook", []string{"databases.*.tables.*.rows.*.create"}, nil)
	db := tablesdb.New(f.sdk(f.key))
	for range 3 {
		if _, err := db.CreateRow("db1", "t1", "unique()", map[string]any{"title": "x"}); err != nil {
			t.Fatal(err)
		}
		f.flush(t)
	}
	if n := len(target.all()); n != 0 {
		t.Fatalf("the redirect target got %d requests", n)
	}
	if n := len(rec.all()); n != 3 {
		t.Fatalf("the webhook got %d requests, want 3", n)
	}
	ds := f.s.Deliveries()
	for _, d := range ds {
		if !d.Success || len(d.Attempts) != 1 || d.Attempts[0].StatusCode != http.StatusTemporaryRedirect {
			t.Fatalf("delivery %+v", d)
		}
	}
	if wh := webhookState(t, f, "moved"); wh["attempts"] != float64(0) || wh["enabled"] != true {
		t.Fatalf("a 3xx is no failure: %v", wh)
	}
}

// Appwrite 1.9.6 and earlier sign rawurldecode(url) + body; later versions the stored url. The request goes
// to the stored url either way.
func TestSignatureOverDecodedURLUpTo196(t *testing.T) {
	for _, tc := range []struct {
		version string
		decoded bool
	}{{"1.9.6", true}, {"1.9.5", true}, {"1.9.7", false}} {
		f := newFixture(t, Options{Version: tc.version})
		seedRowsTable(t, f)
		rec := newRecorder(t)
		stored := rec.ts.URL + "/appwrite/webhooks/enc?cb=https%3A%2F%2Fx.example.com%2Fa%20b%zz"
		createHook(t, f, "enc", stored, []string{"databases.*.tables.*.rows.*.create"}, map[string]any{"secret": "s3cr3t-enc"})
		if _, err := tablesdb.New(f.sdk(f.key)).CreateRow("db1", "t1", "unique()", map[string]any{"title": "x"}); err != nil {
			t.Fatal(err)
		}
		f.flush(t)
		got := rec.all()
		if len(got) != 1 || got[0].Path != "/appwrite/webhooks/enc?cb=https%3A%2F%2Fx.example.com%2Fa%20b%zz" {
			t.Fatalf("%s: %+v", tc.version, got)
		}
		signed := stored
		if tc.decoded {
			signed = rec.ts.URL + "/appwrite/webhooks/enc?cb=https://x.example.com/a b%zz"
		}
		if sig := got[0].Header.Get("X-Appwrite-Webhook-Signature"); sig != independentSignature("s3cr3t-enc", signed, got[0].Body) {
			t.Errorf("%s: signature is not over %q", tc.version, signed)
		}
	}
}

// A function domain runs the function only when execute includes "any" or "guests" (general.php:364-370):
// else 401 with Appwrite's message in the HTML error view, and the runtime is not called.
func TestFunctionDomainNeedsAnyOrGuests(t *testing.T) {
	f := newFixture(t, Options{})
	rt := runtimeStub(t, 200)
	for id, execute := range map[string][]string{"none": nil, "users": {"users"}, "guests": {"guests"}, "any": {"any", "users"}} {
		if err := f.s.RegisterFunction(testProject, FunctionSpec{ID: id, URL: rt.ts.URL, Execute: execute, Timeout: 15}); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]int{"none": 401, "users": 401, "guests": 200, "any": 200} {
		res, err := http.Post(f.s.DomainURL(id)+"/", "text/plain", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("%s: %d %s", id, res.StatusCode, body)
		}
		if want == 401 && (!strings.Contains(string(body), "To execute function using domain, execute permissions must include &#34;any&#34; or &#34;guests&#34;.") ||
			!strings.HasPrefix(res.Header.Get("content-type"), "text/html")) {
			t.Fatalf("%s: %q", id, body)
		}
	}
	if n := len(rt.all()); n != 2 {
		t.Fatalf("the runtime ran %d times, want 2", n)
	}
}

// Creating or updating a function with a functions.* event is refused by the FunctionEvent validator
// (Event/Validator/FunctionEvent.php; Functions/Create.php:86, Update.php:78), through ArrayList's description.
func TestFunctionEventsRefused(t *testing.T) {
	f := newFixture(t, Options{})
	fns := functions.New(f.sdk(f.key))
	const msg = "Invalid `events` param: Value must a valid array no longer than 100 items and Triggering a function on a function event is not allowed."
	_, err := fns.Create("fnx", "fnx", "go-1.26", fns.WithCreateEvents([]string{"functions.*"}))
	wantAPIError(t, err, 400, ErrGeneralArgumentInvalid, msg)
	created, err := fns.Create("fnx", "fnx", "go-1.26", fns.WithCreateEvents([]string{"users.*.create"}), fns.WithCreateExecute([]string{"any"}))
	if err != nil || created.Id != "fnx" || created.Runtime != "go-1.26" || len(created.Events) != 1 || created.Timeout != 15 {
		t.Fatalf("create: %+v %v", created, err)
	}
	_, err = fns.Create("fnx", "again", "go-1.26")
	wantAPIError(t, err, 409, ErrFunctionAlreadyExists, "Function with the requested ID already exists. Try again with a different ID or use ID.unique() to generate a unique ID.")
	_, err = fns.Update("fnx", "fnx", fns.WithUpdateEvents([]string{"users.*.create", "functions.other.executions.*.create"}))
	wantAPIError(t, err, 400, ErrGeneralArgumentInvalid, msg)
	if got, err := fns.Get("fnx"); err != nil || len(got.Events) != 1 || got.Events[0] != "users.*.create" {
		t.Fatalf("a refused update changed the function: %+v %v", got, err)
	}
	if _, err := fns.Update("fnx", "fnx", fns.WithUpdateEvents([]string{"users.*.create"})); err != nil {
		t.Fatal(err)
	}
}
