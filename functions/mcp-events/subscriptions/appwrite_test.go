package subscriptions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
	"appwrite-agent/functions/mcp-events/subscriptions"
	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/devkit/localappwrite"
)

// TestCallsCarryTheCallersToken: every call is made as the caller, in admin mode, in the project, and
// Appwrite errors come back typed.
func TestCallsCarryTheCallersToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("X-Appwrite-Project") != "p1" ||
			r.Header.Get("X-Appwrite-Mode") != "admin" || r.Header.Get("X-Appwrite-Response-Format") != "1.8.0" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message":"Table with the requested ID could not be found.","code":404,"type":"table_not_found"}`))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p := subscriptions.NewAppwrite(srv.URL+"/v1", nil).Project("p1", "tok")
	err := p.Client.Call(ctx, p.Auth, awclient.Request{Method: http.MethodGet, Path: awclient.Path("tablesdb", "db", "tables", "t")}, nil)
	var ae *awclient.Error
	if awclient.StatusOf(err) != 404 || !asError(err, &ae) || ae.Type != "table_not_found" || p.ID() != "p1" {
		t.Fatalf("%v", err)
	}
}

func asError(err error, target **awclient.Error) bool {
	e, ok := err.(*awclient.Error)
	*target = e
	return ok
}

func TestAtLeast(t *testing.T) {
	for _, c := range []struct {
		v    string
		want bool
	}{{"1.9.5", true}, {"1.9.6", true}, {"1.10.0", true}, {"2.0", true}, {"1.9.0", false}, {"1.8.1", false},
		{"1.9.5-rc.1", false}, {"1.9.6-rc.1", true}, {"1.9.5+cloud", true}, {"v1.9.5", true}, {"", false}, {"latest", false}, {"1.9.x", false}} {
		if got := subscriptions.AtLeast(c.v, subscriptions.MinVersion); got != c.want {
			t.Errorf("AtLeast(%q, %s) = %v", c.v, subscriptions.MinVersion, got)
		}
	}
}

// TestRequireVersion: the version is read once per Appwrite; a failed read is not kept; an old version is a
// *VersionError naming what was found and what is needed; a missing or unparseable one passes.
func TestRequireVersion(t *testing.T) {
	var hits int
	version, status := "1.9.0", http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/health/version" {
			http.NotFound(w, r)
			return
		}
		hits++
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"version": version})
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	status = http.StatusServiceUnavailable
	c := subscriptions.NewAppwrite(srv.URL+"/v1", nil)
	if err := c.RequireVersion(ctx); awclient.StatusOf(err) != 503 {
		t.Fatalf("unreachable version: %v", err)
	}
	status = http.StatusOK
	err := c.RequireVersion(ctx)
	var ve *subscriptions.VersionError
	if !errors.As(err, &ve) || ve.Found != "1.9.0" || ve.Need != "1.9.5" || !strings.Contains(err.Error(), "Appwrite 1.9.0; mcp-events needs 1.9.5 or later") {
		t.Fatalf("old version: %v", err)
	}
	version = "1.9.6" // an upgrade is not seen by this Client: the first answer is kept
	if err := c.RequireVersion(ctx); !errors.As(err, &ve) || hits != 2 {
		t.Fatalf("kept answer: %v, %d reads", err, hits)
	}
	c2 := subscriptions.NewAppwrite(srv.URL+"/v1", nil)
	if err := c2.RequireVersion(ctx); err != nil {
		t.Fatalf("1.9.6: %v", err)
	}
	if err := c2.RequireVersion(ctx); err != nil || hits != 3 {
		t.Fatalf("once per client: %v, %d reads", err, hits)
	}
	// No version, or one that does not parse (a hosted build name), is not refused: the webhook writes check
	// what the server does with the secret (CreateWebhook, SetWebhookSecret).
	for _, v := range []string{"", "cloud-2026.12", "1.9.x"} {
		version = v
		if err := subscriptions.NewAppwrite(srv.URL+"/v1", nil).RequireVersion(ctx); err != nil {
			t.Fatalf("version %q: %v", v, err)
		}
	}
}

// TestWebhookWritesCheckTheSecretKept: a create or rotation answered with another secret than the one sent is
// a *VersionError (IgnoredSecret) whatever the version said; the created webhook is deleted, and a failed
// delete is named. An answer with the sent secret, or without one, passes.
func TestWebhookWritesCheckTheSecretKept(t *testing.T) {
	var answer string
	deleteStatus := http.StatusNoContent
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls = append(calls, r.Method+" "+r.URL.Path)
		switch {
		case r.URL.Path == "/v1/health/version":
			_ = json.NewEncoder(w).Encode(map[string]string{"version": "cloud-build-7"})
		case r.Method == http.MethodDelete:
			w.WriteHeader(deleteStatus)
			if deleteStatus >= 300 {
				_ = json.NewEncoder(w).Encode(map[string]any{"message": "boom", "code": deleteStatus, "type": "general_unknown"})
			}
		default:
			var in map[string]any
			_ = json.NewDecoder(r.Body).Decode(&in)
			if answer == "echo" {
				_ = json.NewEncoder(w).Encode(map[string]any{"$id": "wh1", "signatureKey": in["secret"]})
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"$id": "wh1", "signatureKey": answer})
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	aw := subscriptions.NewAppwrite(srv.URL+"/v1", nil)
	p := aw.Project("p1", "tok")
	const sent = "derived-secret-0123456789"

	for _, a := range []string{"echo", ""} {
		answer = a
		if _, err := aw.CreateWebhook(ctx, p, "wh1", sent, awclient.WebhookInput{URL: "https://x.example/h"}); err != nil {
			t.Fatalf("create answered %q: %v", a, err)
		}
		if err := aw.SetWebhookSecret(ctx, p, "wh1", sent); err != nil {
			t.Fatalf("rotation answered %q: %v", a, err)
		}
	}
	answer, calls = "generated-by-the-server", nil
	_, err := aw.CreateWebhook(ctx, p, "wh1", sent, awclient.WebhookInput{URL: "https://x.example/h"})
	var ve *subscriptions.VersionError
	if !errors.As(err, &ve) || !ve.IgnoredSecret || ve.Found != "cloud-build-7" || ve.Need != subscriptions.MinVersion || ve.Leftover != nil {
		t.Fatalf("create with the secret ignored: %v", err)
	}
	if len(calls) != 2 || calls[1] != "DELETE /v1/webhooks/wh1" {
		t.Fatalf("calls %v: the created webhook must be deleted", calls)
	}
	deleteStatus = http.StatusInternalServerError
	_, err = aw.CreateWebhook(ctx, p, "wh1", sent, awclient.WebhookInput{URL: "https://x.example/h"})
	if !errors.As(err, &ve) || ve.Leftover == nil || !strings.Contains(err.Error(), "deleting the webhook it created failed") {
		t.Fatalf("failed delete not named: %v", err)
	}
	if err := aw.SetWebhookSecret(ctx, p, "wh1", sent); !errors.As(err, &ve) || !ve.IgnoredSecret ||
		!strings.Contains(err.Error(), "reporting Appwrite cloud-build-7") || !strings.Contains(err.Error(), "needs 1.9.5 or later") {
		t.Fatalf("rotation with the secret ignored: %v", err)
	}
}

// TestAppwrite2xAccepted: the version gate accepts Appwrite 2.x releases (2.0.0 of 2026-08-31, 2.1.0, 2.2.0).
func TestAppwrite2xAccepted(t *testing.T) {
	for _, v := range []string{"2.0.0", "2.2.0"} {
		t.Run(v, func(t *testing.T) {
			st := eventstest.NewStackWith(t, func(o *localappwrite.Options) { o.Version = v })
			url := st.Instance(st.Server(handler.Options{}))
			secret := eventstest.NewSecret()
			st.Recv.Accept(secret)
			r := eventstest.RPC(t, url, st.Token(eventstest.UserID, eventstest.AllScopes), "events/subscribe", eventstest.SubParams("users.user.created", map[string]any{"project_id": eventstest.ProjectID}, st.Recv.URL("/v2"), secret, nil))
			if r.Error != nil {
				t.Fatalf("Appwrite %s: %s", v, r.Raw)
			}
		})
	}
}

// TestSecretRotationOnStrictAppwrite: refresh and rotation set the derived webhook secret with PATCH
// /v1/webhooks/{id}/secret, Appwrite's only route for it (a PUT is 404 general_route_not_found there, which
// made every refresh fail). A secret changed behind the server's back is put right by the next refresh.
func TestSecretRotationOnStrictAppwrite(t *testing.T) {
	st := eventstest.NewStack(t)
	proxy := st.ProxyAppwrite(t, nil)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	cb := st.Recv.URL("/hooks/strict")
	r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe: %s", r.Raw)
	}
	id := r.Result["id"].(string)
	if !st.LastDeliveryVerifies(id) {
		t.Fatal("the created webhook does not sign with the derived secret")
	}

	// The secret is changed out of band; the refresh must set the derived one again.
	if status, body := st.APIKeyCall("PATCH", "/webhooks/"+id+"/secret", map[string]any{"secret": "not-the-derived-one"}); status != 200 {
		t.Fatalf("out-of-band rotation: %d %v", status, body)
	}
	if st.LastDeliveryVerifies(id) {
		t.Fatal("the out-of-band secret must break the signature (test premise)")
	}
	r = eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil))
	if r.Error != nil || r.Result["id"] != id {
		t.Fatalf("refresh: %s", r.Raw)
	}
	if !st.LastDeliveryVerifies(id) {
		t.Fatal("the refresh did not restore the derived secret")
	}

	// Rotation of the subscriber's secret goes through the same update.
	secret2 := eventstest.NewSecret()
	st.Recv.Accept(secret2)
	r = eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret2, nil))
	if r.Error != nil || r.Result["id"] != id {
		t.Fatalf("rotation: %s", r.Raw)
	}
	if !st.LastDeliveryVerifies(id) {
		t.Fatal("rotation broke the webhook signature")
	}
	if n := proxy.Count("PATCH /v1/webhooks/" + id + "/secret"); n != 2 {
		t.Errorf("refresh and rotation must PATCH the secret: %d PATCH calls", n)
	}
	if n := proxy.Count("PUT /v1/webhooks/" + id + "/secret"); n != 0 {
		t.Errorf("%d PUT calls to the secret (a route Appwrite does not have)", n)
	}
}

// TestOldAppwriteIsRefused: below 1.9.5 Appwrite ignores the secret param, so every delivery would fail its
// signature check. Subscribe answers Unsupported naming the version found and the one needed, before the
// callback is contacted or a webhook is made.
func TestOldAppwriteIsRefused(t *testing.T) {
	st := eventstest.NewStackWith(t, func(o *localappwrite.Options) { o.Version = "1.9.0" })
	url := st.Instance(st.Server(handler.Options{}))
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	r := eventstest.RPC(t, url, st.Token(eventstest.UserID, eventstest.AllScopes), "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), st.Recv.URL("/old"), secret, nil))
	if r.Error == nil || r.Error.Code != -32014 || r.Error.Data["appwriteVersion"] != "1.9.0" || r.Error.Data["minimumAppwriteVersion"] != "1.9.5" ||
		!strings.Contains(r.Error.Message, "Appwrite 1.9.0") || !strings.Contains(r.Error.Message, "1.9.5 or later") {
		t.Fatalf("%s", r.Raw)
	}
	if n := len(st.Recv.Received()); n != 0 {
		t.Fatalf("the callback was contacted %d times", n)
	}
	if n := len(st.Webhooks(eventstest.ProjectID)); n != 0 {
		t.Fatalf("%d webhooks on a refused server", n)
	}
}

// TestAppwriteVersionReadOncePerInstance: the version is asked once per server value (one endpoint), not per
// call; another instance asks again.
func TestAppwriteVersionReadOncePerInstance(t *testing.T) {
	st := eventstest.NewStack(t)
	proxy := st.ProxyAppwrite(t, nil)
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	for i := range 3 {
		if r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), st.Recv.URL(fmt.Sprintf("/v%d", i)), secret, nil)); r.Error != nil {
			t.Fatalf("subscribe %d: %s", i, r.Raw)
		}
	}
	if n := proxy.Count("GET /v1/health/version"); n != 1 {
		t.Fatalf("version read %d times by one instance", n)
	}
	url2 := st.Instance(st.Server(handler.Options{}))
	if r := eventstest.RPC(t, url2, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), st.Recv.URL("/v9"), secret, nil)); r.Error != nil {
		t.Fatalf("second instance: %s", r.Raw)
	}
	if n := proxy.Count("GET /v1/health/version"); n != 2 {
		t.Fatalf("two instances read the version %d times", n)
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
			st := eventstest.NewStackWith(t, func(o *localappwrite.Options) { o.Version, o.ReportedVersion = tc.plays, tc.reports })
			proxy := st.ProxyAppwrite(t, nil)
			url := st.Instance(st.Server(handler.Options{}))
			secret := eventstest.NewSecret()
			st.Recv.Accept(secret)
			r := eventstest.RPC(t, url, st.Token(eventstest.UserID, eventstest.AllScopes), "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), st.Recv.URL("/kept"), secret, nil))
			if r.Error == nil || r.Error.Code != -32014 || r.Error.Data["appwriteVersion"] != tc.reports || r.Error.Data["minimumAppwriteVersion"] != "1.9.5" ||
				!strings.Contains(r.Error.Message, "ignored the webhook secret mcp-events sent") || !strings.Contains(r.Error.Message, "reporting Appwrite "+tc.reports) ||
				!strings.Contains(r.Error.Message, "1.9.5 or later") {
				t.Fatalf("%s", r.Raw)
			}
			if n := len(st.Webhooks(eventstest.ProjectID)); n != 0 {
				t.Fatalf("%d webhooks left behind", n)
			}
			deletes := 0
			for _, c := range proxy.Calls() {
				if strings.HasPrefix(c, "DELETE /v1/webhooks/") {
					deletes++
				}
			}
			if proxy.Count("POST /v1/webhooks") != 1 || deletes != 1 {
				t.Fatalf("calls %v", proxy.Calls())
			}
		})
	}
	t.Run("1.9.6 reporting a build name", func(t *testing.T) {
		st := eventstest.NewStackWith(t, func(o *localappwrite.Options) { o.ReportedVersion = "cloud-2026.12" })
		url := st.Instance(st.Server(handler.Options{}))
		secret := eventstest.NewSecret()
		st.Recv.Accept(secret)
		r := eventstest.RPC(t, url, st.Token(eventstest.UserID, eventstest.AllScopes), "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), st.Recv.URL("/cloud"), secret, nil))
		if r.Error != nil {
			t.Fatalf("an unparseable version with a server that keeps the secret: %s", r.Raw)
		}
		if id := r.Result["id"].(string); !st.LastDeliveryVerifies(id) {
			t.Fatal("the webhook does not sign with the derived secret")
		}
	})
}

// TestRotationChecksTheSecretAppwriteKept: a rotation answered with another secret than the one sent (here a
// proxy drops the secret param from the PATCH, so the stand-in generates one, as a server that ignores it
// would) is refused with Unsupported: the webhook no longer signs with the derived secret, and subscribe
// says why instead of answering success.
func TestRotationChecksTheSecretAppwriteKept(t *testing.T) {
	st := eventstest.NewStack(t)
	var strip atomic.Bool
	st.ProxyAppwrite(t, func(r *http.Request, body []byte) {
		if !strip.Load() || r.Method != http.MethodPatch || !strings.HasSuffix(r.URL.Path, "/secret") {
			return
		}
		var p map[string]any
		_ = json.Unmarshal(body, &p)
		delete(p, "secret")
		b, _ := json.Marshal(p)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	})
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	cb := st.Recv.URL("/rotate")
	r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil))
	if r.Error != nil {
		t.Fatalf("subscribe: %s", r.Raw)
	}
	strip.Store(true)
	r = eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), cb, secret, nil))
	if r.Error == nil || r.Error.Code != -32014 || r.Error.Data["appwriteVersion"] != "1.9.6" ||
		!strings.Contains(r.Error.Message, "ignored the webhook secret mcp-events sent") {
		t.Fatalf("refresh on a server that ignored the rotation's secret: %s", r.Raw)
	}
}
