package awclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"appwrite-agent/shared/awclient"

	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/models"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

// answers plays Appwrite's answers by path.
func answers(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch strings.TrimPrefix(r.URL.Path, "/v1") {
		case "/row", "/tablesdb/db/tables/t/rows/r1":
			if r.Header.Get("X-Appwrite-Project") != "p" || r.Header.Get("X-Appwrite-Response-Format") != awclient.ResponseFormat {
				w.WriteHeader(400)
				_, _ = fmt.Fprintf(w, `{"message":"bad headers %v","type":"test"}`, r.Header)
				return
			}
			_, _ = w.Write([]byte(`{"$id":"r1","$sequence":1,"title":"hello"}`))
		case "/missing", "/tablesdb/db/tables/t/rows/gone":
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"message":"Row with the requested ID could not be found.","code":404,"type":"row_not_found","version":"1.9.6"}`))
		case "/html", "/tablesdb/db/tables/t/rows/html":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			_, _ = w.Write([]byte("<html>Bad Gateway</html>\n"))
		case "/big", "/tablesdb/db/tables/t/rows/big":
			_, _ = w.Write([]byte(`{"$id":"big","data":"` + strings.Repeat("x", 300) + `"}`))
		case "/notjson", "/tablesdb/db/tables/t/rows/notjson":
			_, _ = w.Write([]byte(`[1,2`))
		case "/empty":
			w.WriteHeader(204)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCall(t *testing.T) {
	srv := answers(t)
	aw := awclient.New(srv.URL+"/v1/", "p", srv.Client(), 256)
	call := func(path string, body, out any) error {
		return aw.Call(context.Background(), awclient.Key("k"), awclient.Request{Method: "POST", Path: path, Body: body}, out)
	}
	var row struct {
		ID string `json:"$id"`
	}
	if err := call("/row", map[string]string{"a": "b"}, &row); err != nil || row.ID != "r1" {
		t.Fatalf("row: %+v %v", row, err)
	}
	err := call("/missing", nil, &row)
	if awclient.StatusOf(err) != 404 || awclient.TypeOf(err) != "row_not_found" ||
		err.Error() != "appwrite: HTTP 404 row_not_found: Row with the requested ID could not be found." {
		t.Fatalf("missing: %v", err)
	}
	if err := call("/html", nil, nil); awclient.StatusOf(err) != 502 || !strings.Contains(err.Error(), "<html>Bad Gateway</html>") {
		t.Fatalf("html: %v", err)
	}
	if err := call("/big", nil, &row); awclient.TypeOf(err) != "invalid_response" || !strings.Contains(err.Error(), "over 256 bytes") {
		t.Fatalf("an answer over the bound must fail, never decode truncated: %v", err)
	}
	if err := call("/notjson", nil, &row); awclient.TypeOf(err) != "invalid_response" {
		t.Fatalf("not json: %v", err)
	}
	if err := call("/empty", nil, &row); err != nil {
		t.Fatalf("204: %v", err)
	}
	if err := call("/row", func() {}, nil); awclient.StatusOf(err) != 0 || !strings.Contains(err.Error(), "encode the body of POST") {
		t.Fatalf("unencodable body: %v", err)
	}
	if p := awclient.Path("webhooks", "a/b?c", "secret"); p != "/webhooks/a%2Fb%3Fc/secret" {
		t.Fatalf("Path escapes each segment: %s", p)
	}
	srv.Close()
	err = call("/row", nil, nil)
	var e *awclient.Error
	if !errors.As(err, &e) || e.Status != 0 || e.Unwrap() == nil || !strings.Contains(err.Error(), srv.URL+"/v1/row") {
		t.Fatalf("a transport error names the URL: %v", err)
	}
	if awclient.StatusOf(errors.New("plain")) != 0 || awclient.TypeOf(nil) != "" {
		t.Fatal("StatusOf/TypeOf of a non-Appwrite error")
	}
}

// TestAuth: each kind of authentication sends its headers, with the project and the response format, through
// Call and through the SDK alike.
func TestAuth(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"$id":"u1"}`))
	}))
	defer srv.Close()
	aw := awclient.New(srv.URL+"/v1", "p", srv.Client(), 0)
	for _, c := range []struct {
		auth awclient.Auth
		want map[string]string
	}{
		{awclient.Key("api-key"), map[string]string{"X-Appwrite-Key": "api-key", "X-Appwrite-Jwt": "", "Authorization": "", "X-Appwrite-Mode": ""}},
		{awclient.JWT("a.b.c"), map[string]string{"X-Appwrite-Jwt": "a.b.c", "X-Appwrite-Key": "", "Authorization": ""}},
		{awclient.Bearer("tok"), map[string]string{"Authorization": "Bearer tok", "X-Appwrite-Mode": "admin", "X-Appwrite-Key": ""}},
		{awclient.Auth{}, map[string]string{"Authorization": "", "X-Appwrite-Key": "", "X-Appwrite-Jwt": ""}},
	} {
		c.want["X-Appwrite-Project"], c.want["X-Appwrite-Response-Format"] = "p", awclient.ResponseFormat
		if err := aw.Call(context.Background(), c.auth, awclient.Request{Method: "GET", Path: "/account"}, nil); err != nil {
			t.Fatal(err)
		}
		for k, v := range c.want {
			if got.Get(k) != v {
				t.Errorf("Call %+v: %s = %q, want %q", c.auth, k, got.Get(k), v)
			}
		}
		if _, err := awclient.Do(context.Background(), aw, c.auth, func(sdk client.Client) (*models.Row, error) {
			return tablesdb.New(sdk).GetRow("db", "t", "r1")
		}); err != nil {
			t.Fatal(err)
		}
		for k, v := range c.want {
			if got.Get(k) != v {
				t.Errorf("Do %+v: %s = %q, want %q", c.auth, k, got.Get(k), v)
			}
		}
	}
	if _ = aw.Call(context.Background(), awclient.Key("k"), awclient.Request{Method: "GET", Path: "/health/version"}, nil); got.Get("X-Appwrite-Project") != "p" {
		t.Fatal("project header")
	}
	noProject := awclient.New(srv.URL+"/v1", "", srv.Client(), 0)
	if _ = noProject.Call(context.Background(), awclient.Auth{}, awclient.Request{Method: "GET", Path: "/health/version"}, nil); got.Get("X-Appwrite-Project") != "" {
		t.Fatal("a client of no project sends no project header")
	}
}

func getRow(aw *awclient.Client, ctx context.Context, id string) (*models.Row, error) {
	return awclient.Do(ctx, aw, awclient.Key("k"), func(sdk client.Client) (*models.Row, error) {
		return tablesdb.New(sdk).GetRow("db", "t", id)
	})
}

// TestDo: an SDK call's answers and errors are those of Call: Appwrite's error decoded, bounded answers, an
// answer the SDK cannot read.
func TestDo(t *testing.T) {
	srv := answers(t)
	aw := awclient.New(srv.URL+"/v1", "p", srv.Client(), 256)
	ctx := context.Background()
	row, err := getRow(aw, ctx, "r1")
	var data struct{ Title string }
	if err != nil || row.Id != "r1" || row.Decode(&data) != nil || data.Title != "hello" {
		t.Fatalf("row: %+v %v", row, err)
	}
	_, err = getRow(aw, ctx, "gone")
	if awclient.StatusOf(err) != 404 || awclient.TypeOf(err) != "row_not_found" ||
		err.Error() != "appwrite: HTTP 404 row_not_found: Row with the requested ID could not be found." {
		t.Fatalf("missing: %v", err)
	}
	if _, err := getRow(aw, ctx, "html"); awclient.StatusOf(err) != 502 || !strings.Contains(err.Error(), "<html>Bad Gateway</html>") {
		t.Fatalf("html: %v", err)
	}
	if _, err := getRow(aw, ctx, "big"); awclient.StatusOf(err) != 200 || awclient.TypeOf(err) != "invalid_response" || !strings.Contains(err.Error(), "over 256 bytes") {
		t.Fatalf("an answer over the bound must fail, never decode truncated: %v", err)
	}
	if _, err := getRow(aw, ctx, "notjson"); awclient.StatusOf(err) != 200 || awclient.TypeOf(err) != "invalid_response" {
		t.Fatalf("not json: %v", err)
	}
	srv.Close()
	_, err = getRow(aw, ctx, "r1")
	var e *awclient.Error
	if !errors.As(err, &e) || e.Status != 0 || e.Unwrap() == nil || !strings.Contains(err.Error(), srv.URL+"/v1/tablesdb/db/tables/t/rows/r1") {
		t.Fatalf("a transport error names the URL: %v", err)
	}
}

// TestDoRefusesPathsThatAreNotIds: the SDK writes ids into the path unescaped; a "." or ".." segment, or a
// segment that is no Appwrite id, is refused before anything is sent.
func TestDoRefusesPathsThatAreNotIds(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"$id":"x"}`))
	}))
	defer srv.Close()
	aw := awclient.New(srv.URL+"/v1", "p", srv.Client(), 0)
	for _, id := range []string{"..", ".", "../../../account", "a b", "a%2Fb", "x#frag", ""} {
		_, err := getRow(aw, context.Background(), id)
		if err == nil || awclient.StatusOf(err) != 0 || !strings.Contains(err.Error(), "refused before sending") {
			t.Errorf("id %q: %v", id, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the server", n)
	}
	if _, err := getRow(aw, context.Background(), "Row-1_a.b"); err != nil || hits.Load() != 1 {
		t.Fatalf("an Appwrite id: %v", err)
	}
	// An update carries its parameters in the body: a query there came from an id.
	_, err := awclient.Do(context.Background(), aw, awclient.Key("k"), func(sdk client.Client) (*models.Row, error) {
		db := tablesdb.New(sdk)
		return db.UpdateRow("db", "t", "x?queries[]=1", db.WithUpdateRowData(map[string]any{"a": 1}))
	})
	if err == nil || !strings.Contains(err.Error(), "refused before sending") || hits.Load() != 1 {
		t.Fatalf("a query in an update's id: %v", err)
	}
}

// TestDoEndsWithItsContext: the SDK has no context; the call's context still ends its request.
func TestDoEndsWithItsContext(t *testing.T) {
	arrived := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done() // never answers: only the client's leaving ends the request
	}))
	defer srv.Close()
	aw := awclient.New(srv.URL+"/v1", "p", srv.Client(), 0)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	_, err := getRow(aw, ctx, "r1")
	if !errors.Is(err, context.Canceled) || awclient.StatusOf(err) != 0 {
		t.Fatalf("cancelled call: %v", err)
	}
	// The *http.Client's Timeout bounds an SDK call as it bounds Call (the server never answers).
	hc := srv.Client()
	hc.Timeout = 50 * time.Millisecond
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	_, err = getRow(awclient.New(srv.URL+"/v1", "p", hc, 0), context.Background(), "r1")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timed-out call: %v", err)
	}
}

func ExampleDo() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		_, _ = w.Write([]byte(`{"message":"User (role: guests) missing scopes ([\"rows.read\"])","code":401,"type":"general_unauthorized_scope"}`))
	}))
	defer srv.Close()
	aw := awclient.New(srv.URL+"/v1", "my-project", srv.Client(), 1<<20)
	_, err := awclient.Do(context.Background(), aw, awclient.Key("the-execution-key"), func(sdk client.Client) (*models.RowList, error) {
		return tablesdb.New(sdk).ListRows("main", "conversations")
	})
	fmt.Println(awclient.StatusOf(err), awclient.TypeOf(err))
	// Output: 401 general_unauthorized_scope
}

func ExampleValidID() {
	for _, id := range []string{"conv-1", "A.b_c", "unique()", "_x", "a b", "a/b", "", strings.Repeat("x", 37)} {
		fmt.Printf("%q %v\n", id, awclient.ValidID(id))
	}
	// Output:
	// "conv-1" true
	// "A.b_c" true
	// "unique()" false
	// "_x" false
	// "a b" false
	// "a/b" false
	// "" false
	// "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" false
}
