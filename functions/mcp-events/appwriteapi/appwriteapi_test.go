package appwriteapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"appwrite-agent/functions/mcp-events/appwriteapi"
)

func TestWebhookBothSpellings(t *testing.T) {
	for _, body := range []string{
		`{"$id":"w","tls":true,"authUsername":"u","authPassword":"p","secret":"s","events":["a"],"enabled":false}`,
		`{"$id":"w","security":true,"httpUser":"u","httpPass":"p","signatureKey":"s","events":["a"],"enabled":false}`,
	} {
		var w appwriteapi.Webhook
		if err := json.Unmarshal([]byte(body), &w); err != nil {
			t.Fatal(err)
		}
		if w.ID != "w" || !w.TLS || w.AuthUsername != "u" || w.AuthPassword != "p" || w.Secret != "s" || w.Enabled {
			t.Fatalf("%s: %+v", body, w)
		}
	}
}

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
	err := appwriteapi.New(srv.URL+"/v1", nil).Project("p1", "tok").GetTable(ctx, "db", "t")
	var ae *appwriteapi.Error
	if appwriteapi.StatusOf(err) != 404 || !asError(err, &ae) || ae.Type != "table_not_found" {
		t.Fatalf("%v", err)
	}
}

func asError(err error, target **appwriteapi.Error) bool {
	e, ok := err.(*appwriteapi.Error)
	*target = e
	return ok
}
