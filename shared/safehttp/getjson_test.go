package safehttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"appwrite-agent/shared/safehttp"
)

// TestGetJSON: a 200 JSON answer is decoded; another status, a body over the bound and a body that is not
// JSON are errors that say which, naming the URL where the caller needs it.
func TestGetJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "application/json" {
			http.Error(w, "accept", http.StatusNotAcceptable)
			return
		}
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte(`{"keys":["a","b"]}`))
		case "/big":
			_, _ = w.Write([]byte(`{"keys":["` + strings.Repeat("x", 100) + `"]}`))
		case "/html":
			_, _ = w.Write([]byte(`<html>`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	var doc struct{ Keys []string }
	if err := safehttp.GetJSON(context.Background(), srv.Client(), srv.URL+"/ok", 64, &doc); err != nil || len(doc.Keys) != 2 {
		t.Fatalf("ok: %v %v", doc, err)
	}
	if err := safehttp.GetJSON(context.Background(), srv.Client(), srv.URL+"/big", 64, &doc); !errors.Is(err, safehttp.ErrResponseTooLarge) {
		t.Fatalf("over the bound: %v", err)
	}
	for path, want := range map[string]string{"/missing": srv.URL + "/missing answered HTTP 404", "/html": srv.URL + "/html is not JSON"} {
		if err := safehttp.GetJSON(context.Background(), srv.Client(), srv.URL+path, 64, &doc); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("%s: %v, want %q…", path, err, want)
		}
	}
	var se *safehttp.StatusError
	if err := safehttp.GetJSON(context.Background(), srv.Client(), srv.URL+"/missing", 64, &doc); !errors.As(err, &se) || se.Code != 404 || se.URL != srv.URL+"/missing" {
		t.Fatalf("a status other than 200 is a *StatusError naming the URL and the status: %#v", err)
	}
}
