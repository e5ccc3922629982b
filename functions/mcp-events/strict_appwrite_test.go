package handler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"appwrite-agent/functions/mcp-events/mcpserver"
	"appwrite-agent/shared/appwritesig"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/eventcatalog"
)

// appwriteProxy sits between the function and the stand-in: it records every call and can act before one is
// forwarded (to play another replica). The function's endpoint points at it.
type appwriteProxy struct {
	srv    *httptest.Server
	mu     sync.Mutex
	calls  []string
	before func(r *http.Request, body []byte)
	// failing, when set, picks the calls answered with Appwrite's 503 instead of being forwarded.
	failing func(method, path string) bool
}

// fail makes the proxy answer the calls f picks with Appwrite's 503 (nil: forward every call again).
func (p *appwriteProxy) fail(f func(method, path string) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failing = f
}

func (st *stack) proxyAppwrite(t *testing.T, before func(r *http.Request, body []byte)) *appwriteProxy {
	t.Helper()
	target, err := url.Parse(st.laSrv.URL)
	must(t, err)
	p := &appwriteProxy{before: before}
	rp := httputil.NewSingleHostReverseProxy(target)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		p.mu.Lock()
		p.calls = append(p.calls, r.Method+" "+r.URL.Path)
		fail := p.failing != nil && p.failing(r.Method, r.URL.Path)
		p.mu.Unlock()
		if fail {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"message":"maintenance","code":503,"type":"general_server_error"}`))
			return
		}
		if p.before != nil {
			p.before(r, body)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	st.env["MCP_EVENTS_APPWRITE_ENDPOINT"] = p.srv.URL + "/v1"
	return p
}

func (p *appwriteProxy) count(call string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.calls {
		if c == call {
			n++
		}
	}
	return n
}

// apiKeyCall calls the stand-in with the stack's API key (as another tool or replica would).
func (st *stack) apiKeyCall(method, path string, body any) (int, map[string]any) {
	st.t.Helper()
	b, _ := json.Marshal(body)
	status, raw := st.call(projectID, st.apiKey, method, path, "application/json", bytes.NewReader(b))
	out := map[string]any{}
	_ = json.Unmarshal(raw, &out)
	return status, out
}

// lastDeliveryVerifies creates a watched row and reports whether Appwrite's signature on the delivery to the
// ingress verifies with the secret mcp-events derives for the webhook.
func (st *stack) lastDeliveryVerifies(id string) bool {
	st.t.Helper()
	st.createRow(tableID, "check the signature")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must(st.t, st.la.Flush(ctx))
	reqs, bodies := st.ingress.requests()
	if len(reqs) == 0 {
		st.t.Fatal("no delivery reached the ingress")
	}
	req, body := reqs[len(reqs)-1], bodies[len(bodies)-1]
	keys, err := appwritesig.ParseKeys(st.env["APPWRITE_WEBHOOK_SECRET_KEYS"])
	must(st.t, err)
	return req.Header.Get("X-Appwrite-Webhook-Id") == id &&
		keys.Verify(id, st.ingress.srv.URL+"/appwrite/webhooks/"+id, body, req.Header.Get("X-Appwrite-Webhook-Signature"))
}

// TestSecretRotationOnStrictAppwrite: refresh and rotation set the derived webhook secret with PATCH
// /v1/webhooks/{id}/secret, Appwrite's only route for it (a PUT is 404 general_route_not_found there, which
// made every refresh fail). A secret changed behind the server's back is put right by the next refresh.
func TestSecretRotationOnStrictAppwrite(t *testing.T) {
	st := newStack(t)
	proxy := st.proxyAppwrite(t, nil)
	url := st.instance(st.server(mcpserver.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	cb := st.recv.url("/hooks/strict")
	r := rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), cb, secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe: %s", r.Raw)
	}
	id := r.Result["id"].(string)
	if !st.lastDeliveryVerifies(id) {
		t.Fatal("the created webhook does not sign with the derived secret")
	}

	// The secret is changed out of band; the refresh must set the derived one again.
	if status, body := st.apiKeyCall("PATCH", "/webhooks/"+id+"/secret", map[string]any{"secret": "not-the-derived-one"}); status != 200 {
		t.Fatalf("out-of-band rotation: %d %v", status, body)
	}
	if st.lastDeliveryVerifies(id) {
		t.Fatal("the out-of-band secret must break the signature (test premise)")
	}
	r = rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), cb, secret, nil))
	if r.Error != nil || r.Result["id"] != id {
		t.Fatalf("refresh: %s", r.Raw)
	}
	if !st.lastDeliveryVerifies(id) {
		t.Fatal("the refresh did not restore the derived secret")
	}

	// Rotation of the subscriber's secret goes through the same update.
	secret2 := newSecret()
	st.recv.accept(secret2)
	r = rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), cb, secret2, nil))
	if r.Error != nil || r.Result["id"] != id {
		t.Fatalf("rotation: %s", r.Raw)
	}
	if !st.lastDeliveryVerifies(id) {
		t.Fatal("rotation broke the webhook signature")
	}
	if n := proxy.count("PATCH /v1/webhooks/" + id + "/secret"); n != 2 {
		t.Errorf("refresh and rotation must PATCH the secret: %d PATCH calls", n)
	}
	if n := proxy.count("PUT /v1/webhooks/" + id + "/secret"); n != 0 {
		t.Errorf("%d PUT calls to the secret (a route Appwrite does not have)", n)
	}
}

// TestConflictRecoveryOnStrictAppwrite: when another replica creates the webhook between this one's read and
// create, Appwrite answers 409 and the subscribe updates the webhook and PATCHes the derived secret.
func TestConflictRecoveryOnStrictAppwrite(t *testing.T) {
	st := newStack(t)
	var once sync.Once
	proxy := st.proxyAppwrite(t, func(r *http.Request, body []byte) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/webhooks" {
			return
		}
		once.Do(func() {
			var p map[string]any
			_ = json.Unmarshal(body, &p)
			// The other replica's webhook, with a secret this one did not derive.
			status, out := st.apiKeyCall("POST", "/webhooks", map[string]any{
				"webhookId": p["webhookId"], "url": p["url"], "name": "other replica", "events": p["events"],
				"secret": "another-replicas-secret",
			})
			if status != http.StatusCreated {
				t.Errorf("other replica's create: %d %v", status, out)
			}
		})
	})
	url := st.instance(st.server(mcpserver.Options{}))
	secret := newSecret()
	st.recv.accept(secret)
	r := rpc(t, url, st.token(userID, allScopes), "events/subscribe", subParams("tablesdb.row.created", rowArgs(), st.recv.url("/race"), secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe after a 409: %s", r.Raw)
	}
	id := r.Result["id"].(string)
	if proxy.count("POST /v1/webhooks") != 1 || proxy.count("PUT /v1/webhooks/"+id) != 1 || proxy.count("PATCH /v1/webhooks/"+id+"/secret") != 1 {
		t.Fatalf("409 recovery calls: %v", proxy.calls)
	}
	hooks := st.webhooks(projectID)
	if len(hooks) != 1 || strings.Contains(fmt.Sprint(hooks[0]["name"]), "other replica") {
		t.Fatalf("webhook not taken over: %v", hooks)
	}
	if !st.lastDeliveryVerifies(id) {
		t.Fatal("after the 409 recovery the webhook does not sign with the derived secret")
	}
}

// TestOldAppwriteIsRefused: below 1.9.5 Appwrite ignores the secret param, so every delivery would fail its
// signature check. Subscribe answers Unsupported naming the version found and the one needed, before the
// callback is contacted or a webhook is made.
func TestOldAppwriteIsRefused(t *testing.T) {
	st := newStackWith(t, func(o *localappwrite.Options) { o.Version = "1.9.0" })
	url := st.instance(st.server(mcpserver.Options{}))
	secret := newSecret()
	st.recv.accept(secret)
	r := rpc(t, url, st.token(userID, allScopes), "events/subscribe", subParams("tablesdb.row.created", rowArgs(), st.recv.url("/old"), secret, nil))
	if r.Error == nil || r.Error.Code != -32014 || r.Error.Data["appwriteVersion"] != "1.9.0" || r.Error.Data["minimumAppwriteVersion"] != "1.9.5" ||
		!strings.Contains(r.Error.Message, "Appwrite 1.9.0") || !strings.Contains(r.Error.Message, "1.9.5 or later") {
		t.Fatalf("%s", r.Raw)
	}
	if n := len(st.recv.received()); n != 0 {
		t.Fatalf("the callback was contacted %d times", n)
	}
	if n := len(st.webhooks(projectID)); n != 0 {
		t.Fatalf("%d webhooks on a refused server", n)
	}
}

// TestAppwriteVersionReadOncePerInstance: the version is asked once per server value (one endpoint), not per
// call; another instance asks again.
func TestAppwriteVersionReadOncePerInstance(t *testing.T) {
	st := newStack(t)
	proxy := st.proxyAppwrite(t, nil)
	url := st.instance(st.server(mcpserver.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	for i := range 3 {
		if r := rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), st.recv.url(fmt.Sprintf("/v%d", i)), secret, nil)); r.Error != nil {
			t.Fatalf("subscribe %d: %s", i, r.Raw)
		}
	}
	if n := proxy.count("GET /v1/health/version"); n != 1 {
		t.Fatalf("version read %d times by one instance", n)
	}
	url2 := st.instance(st.server(mcpserver.Options{}))
	if r := rpc(t, url2, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), st.recv.url("/v9"), secret, nil)); r.Error != nil {
		t.Fatalf("second instance: %s", r.Raw)
	}
	if n := proxy.count("GET /v1/health/version"); n != 2 {
		t.Fatalf("two instances read the version %d times", n)
	}
}

// TestManagedWebhookURLsHaveNoPercent: Appwrite 1.9.6 and earlier sign rawurldecode(url) + body, HEAD signs
// the stored url: a managed URL holding a "%" would verify on one and not the other. Every URL this server
// creates, for every catalog event and callback URLs full of escapes, is %-free.
func TestManagedWebhookURLsHaveNoPercent(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(mcpserver.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	args := map[string]map[string]any{
		eventcatalog.ArgDatabase: {eventcatalog.ArgDatabase: dbID, eventcatalog.ArgTable: tableID},
		eventcatalog.ArgBucket:   {eventcatalog.ArgBucket: bucketID},
		eventcatalog.ArgFunction: {eventcatalog.ArgFunction: fnID},
		eventcatalog.ArgSite:     {eventcatalog.ArgSite: siteID},
	}
	made := 0
	for _, ev := range eventcatalog.All() {
		a := map[string]any{"project_id": projectID}
		for _, name := range ev.Args {
			for k, v := range args[name] {
				a[k] = v
			}
			if name == eventcatalog.ArgTable {
				a[eventcatalog.ArgDatabase] = dbID
			}
		}
		for _, path := range []string{"/plain", "/with%20space?q=%2F%25&x=%E2%9C%93", "/" + strings.Repeat("%41", 20)} {
			r := rpc(t, url, tok, "events/subscribe", subParams(ev.Name, a, st.recv.url(path), secret, nil))
			if r.Error != nil {
				t.Fatalf("%s %s: %s", ev.Name, path, r.Raw)
			}
			made++
		}
	}
	hooks := st.webhooks(projectID)
	if len(hooks) != made {
		t.Fatalf("%d webhooks for %d subscriptions", len(hooks), made)
	}
	for _, h := range hooks {
		u, _ := h["url"].(string)
		if u == "" || strings.Contains(u, "%") {
			t.Errorf("managed webhook url %q", u)
		}
	}
}

// TestSubscribeChecksTheSecretAppwriteKept: the version string is not trusted alone. A server that answers
// the create with a secret other than the one sent ignored it (Appwrite before 1.9.5 always generates one):
// subscribe deletes the webhook it just made and answers Unsupported naming the version reported and the one
// needed, whatever the version string said. A version string that does not parse is not refused: the
// behavioural check decides.
func TestSubscribeChecksTheSecretAppwriteKept(t *testing.T) {
	for _, tc := range []struct{ name, plays, reports string }{
		{"1.9.0 reporting 1.9.6", "1.9.0", "1.9.6"},
		{"1.9.0 reporting a build name", "1.9.0", "cloud-2026.12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStackWith(t, func(o *localappwrite.Options) { o.Version, o.ReportedVersion = tc.plays, tc.reports })
			proxy := st.proxyAppwrite(t, nil)
			url := st.instance(st.server(mcpserver.Options{}))
			secret := newSecret()
			st.recv.accept(secret)
			r := rpc(t, url, st.token(userID, allScopes), "events/subscribe", subParams("tablesdb.row.created", rowArgs(), st.recv.url("/kept"), secret, nil))
			if r.Error == nil || r.Error.Code != -32014 || r.Error.Data["appwriteVersion"] != tc.reports || r.Error.Data["minimumAppwriteVersion"] != "1.9.5" ||
				!strings.Contains(r.Error.Message, "ignored the webhook secret mcp-events sent") || !strings.Contains(r.Error.Message, "reporting Appwrite "+tc.reports) ||
				!strings.Contains(r.Error.Message, "1.9.5 or later") {
				t.Fatalf("%s", r.Raw)
			}
			if n := len(st.webhooks(projectID)); n != 0 {
				t.Fatalf("%d webhooks left behind", n)
			}
			deletes := 0
			proxy.mu.Lock()
			for _, c := range proxy.calls {
				if strings.HasPrefix(c, "DELETE /v1/webhooks/") {
					deletes++
				}
			}
			proxy.mu.Unlock()
			if proxy.count("POST /v1/webhooks") != 1 || deletes != 1 {
				t.Fatalf("calls %v", proxy.calls)
			}
		})
	}
	t.Run("1.9.6 reporting a build name", func(t *testing.T) {
		st := newStackWith(t, func(o *localappwrite.Options) { o.ReportedVersion = "cloud-2026.12" })
		url := st.instance(st.server(mcpserver.Options{}))
		secret := newSecret()
		st.recv.accept(secret)
		r := rpc(t, url, st.token(userID, allScopes), "events/subscribe", subParams("tablesdb.row.created", rowArgs(), st.recv.url("/cloud"), secret, nil))
		if r.Error != nil {
			t.Fatalf("an unparseable version with a server that keeps the secret: %s", r.Raw)
		}
		if id := r.Result["id"].(string); !st.lastDeliveryVerifies(id) {
			t.Fatal("the webhook does not sign with the derived secret")
		}
	})
}

// TestRotationChecksTheSecretAppwriteKept: a rotation answered with another secret than the one sent (here a
// proxy drops the secret param from the PATCH, so the stand-in generates one, as a server that ignores it
// would) is refused with Unsupported: the webhook no longer signs with the derived secret, and subscribe
// says why instead of answering success.
func TestRotationChecksTheSecretAppwriteKept(t *testing.T) {
	st := newStack(t)
	var strip atomic.Bool
	st.proxyAppwrite(t, func(r *http.Request, body []byte) {
		if !strip.Load() || r.Method != http.MethodPatch || !strings.HasSuffix(r.URL.Path, "/secret") {
			return
		}
		var p map[string]any
		_ = json.Unmarshal(body, &p)
		delete(p, "secret")
		b, _ := json.Marshal(p)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	})
	url := st.instance(st.server(mcpserver.Options{}))
	tok := st.token(userID, allScopes)
	secret := newSecret()
	st.recv.accept(secret)
	cb := st.recv.url("/rotate")
	r := rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), cb, secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe: %s", r.Raw)
	}
	strip.Store(true)
	r = rpc(t, url, tok, "events/subscribe", subParams("tablesdb.row.created", rowArgs(), cb, secret, nil))
	if r.Error == nil || r.Error.Code != -32014 || r.Error.Data["appwriteVersion"] != "1.9.6" ||
		!strings.Contains(r.Error.Message, "ignored the webhook secret mcp-events sent") {
		t.Fatalf("refresh on a server that ignored the rotation's secret: %s", r.Raw)
	}
}
