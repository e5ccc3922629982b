package appwriterest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"appwrite-agent/shared/appwriterest"
)

func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/row":
			if r.Header.Get("X-Appwrite-Project") != "p" || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Accept") != "application/json" {
				http.Error(w, "bad headers", 400)
				return
			}
			_, _ = w.Write([]byte(`{"$id":"r1"}`))
		case "/missing":
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"message":"Row with the requested ID could not be found.","code":404,"type":"row_not_found","version":"1.9.6"}`))
		case "/html":
			w.WriteHeader(502)
			_, _ = w.Write([]byte("<html>Bad Gateway</html>\n"))
		case "/big":
			_, _ = w.Write([]byte(`{"data":"` + strings.Repeat("x", 300) + `"}`))
		case "/notjson":
			_, _ = w.Write([]byte(`[1,2`))
		case "/empty":
			w.WriteHeader(204)
		}
	}))
	defer srv.Close()
	call := func(path string, body, out any) error {
		return appwriterest.Do(context.Background(), srv.Client(), appwriterest.Request{Method: "POST", URL: srv.URL + path,
			Header: http.Header{"X-Appwrite-Project": {"p"}}, Body: body, MaxAnswer: 256}, out)
	}

	var row struct {
		ID string `json:"$id"`
	}
	if err := call("/row", map[string]string{"a": "b"}, &row); err != nil || row.ID != "r1" {
		t.Fatalf("row: %+v %v", row, err)
	}
	err := call("/missing", nil, &row)
	if appwriterest.StatusOf(err) != 404 || appwriterest.TypeOf(err) != "row_not_found" ||
		err.Error() != "appwrite: HTTP 404 row_not_found: Row with the requested ID could not be found." {
		t.Fatalf("missing: %v", err)
	}
	if err := call("/html", nil, nil); appwriterest.StatusOf(err) != 502 || !strings.Contains(err.Error(), "<html>Bad Gateway</html>") {
		t.Fatalf("html: %v", err)
	}
	if err := call("/big", nil, &row); appwriterest.TypeOf(err) != "invalid_response" || !strings.Contains(err.Error(), "over 256 bytes") {
		t.Fatalf("an answer over the bound must fail, never decode truncated: %v", err)
	}
	if err := call("/notjson", nil, &row); appwriterest.TypeOf(err) != "invalid_response" {
		t.Fatalf("not json: %v", err)
	}
	if err := call("/empty", nil, &row); err != nil {
		t.Fatalf("204: %v", err)
	}
	if err := call("/row", func() {}, nil); appwriterest.StatusOf(err) != 0 || !strings.Contains(err.Error(), "encode POST") {
		t.Fatalf("unencodable body: %v", err)
	}
	srv.Close()
	err = call("/row", nil, nil)
	var e *appwriterest.Error
	if !errors.As(err, &e) || e.Status != 0 || e.Unwrap() == nil || !strings.Contains(err.Error(), srv.URL+"/row") {
		t.Fatalf("transport error must name the URL: %v", err)
	}
	if appwriterest.StatusOf(errors.New("plain")) != 0 || appwriterest.TypeOf(nil) != "" {
		t.Fatal("StatusOf/TypeOf of a non-Appwrite error")
	}
}

func ExampleDo() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(401)
		_, _ = w.Write([]byte(`{"message":"User (role: guests) missing scopes ([\"rows.read\"])","code":401,"type":"general_unauthorized_scope"}`))
	}))
	defer srv.Close()
	err := appwriterest.Do(context.Background(), srv.Client(), appwriterest.Request{Method: "GET", URL: srv.URL + "/v1/tablesdb/main/tables/t/rows", MaxAnswer: 1 << 20}, nil)
	fmt.Println(appwriterest.StatusOf(err), appwriterest.TypeOf(err))
	// Output: 401 general_unauthorized_scope
}
