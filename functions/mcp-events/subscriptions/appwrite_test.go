package subscriptions_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"appwrite-agent/functions/mcp-events/subscriptions"
	"appwrite-agent/shared/awclient"
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
