package localappwrite

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/tablesdb"
	"github.com/appwrite/sdk-for-go/users"
)

func adminCall(t *testing.T, base, method, path string, in any) (int, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	if in != nil {
		_ = json.NewEncoder(&body).Encode(in)
	}
	req, _ := http.NewRequest(method, base+AdminPrefix+path, &body)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]any{}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestAdminEndpoints(t *testing.T) {
	f := newFixture(t, Options{DeliveryIDHeader: true})
	base := f.ts.URL
	mustCreated := func(status int, out map[string]any) map[string]any {
		t.Helper()
		if status != http.StatusCreated {
			t.Fatalf("status %d: %v", status, out)
		}
		return out
	}
	mustCreated(adminCall(t, base, "POST", "/projects", map[string]any{"projectId": "p2", "members": []string{"u1"}}))
	key := mustCreated(adminCall(t, base, "POST", "/projects/p2/keys", map[string]any{"scopes": []string{"rows.write", "users.read", "webhooks.write"}}))["secret"].(string)
	mustCreated(adminCall(t, base, "POST", "/projects/p2/databases", map[string]any{"databaseId": "d", "tables": []map[string]any{{"tableId": "t"}}}))
	mustCreated(adminCall(t, base, "POST", "/projects/p2/buckets", map[string]any{"bucketId": "b"}))
	mustCreated(adminCall(t, base, "POST", "/projects/p2/users", map[string]any{"userId": "u1", "email": "u1@example.test"}))
	mustCreated(adminCall(t, base, "POST", "/projects/p2/members", map[string]any{"userId": "u1"}))
	mustCreated(adminCall(t, base, "POST", "/projects/p2/functions", map[string]any{"functionId": "fn", "events": []string{"users.*.create"}}))
	if status, out := adminCall(t, base, "PATCH", "/projects/p2/functions/fn", map[string]any{"fail": true}); status != http.StatusCreated {
		t.Fatalf("patch function: %d %v", status, out)
	}
	if status, _ := adminCall(t, base, "POST", "/projects", map[string]any{"projectId": "-bad"}); status != http.StatusBadRequest {
		t.Fatalf("invalid project id accepted: %d", status)
	}
	tok := mustCreated(adminCall(t, base, "POST", "/oauth/token", map[string]any{"sub": "u1", "aud": "https://mcp.test/mcp", "scopes": []string{"project:users.read"}, "ttlSeconds": 60}))
	if tok["token_type"] != "Bearer" || tok["expires_in"] != float64(60) {
		t.Fatalf("token: %v", tok)
	}

	c := appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(base+"/v1"), appwrite.WithProject("p2"), appwrite.WithKey(key))
	u, err := users.New(c).Get("u1")
	if err != nil || u.Email != "u1@example.test" {
		t.Fatalf("seeded user: %+v %v", u, err)
	}
	bc := appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(base+"/v1"), appwrite.WithProject("p2"))
	if _, err := bc.Call("GET", "/users/u1", map[string]any{"Authorization": "Bearer " + tok["access_token"].(string), "X-Appwrite-Mode": "admin"}, nil); err != nil {
		t.Fatalf("admin-minted token: %v", err)
	}

	rec := newRecorder(t)
	rec.setStatus(500)
	if _, err := c.Call("POST", "/webhooks", map[string]any{"content-type": "application/json"}, map[string]any{
		"webhookId": "h", "url": rec.ts.URL, "name": "h", "events": []string{"databases.d.tables.t.rows.*.create"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tablesdb.New(c).CreateRow("d", "t", "r", map[string]any{"a": 1}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", base+AdminPrefix+"/flush", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("flush: %v %v", resp, err)
	}
	resp.Body.Close()
	status, ds := adminCall(t, base, "GET", "/deliveries?projectId=p2&webhookId=h", nil)
	if status != 200 || ds["total"] != float64(1) {
		t.Fatalf("deliveries: %v", ds)
	}
	d := ds["deliveries"].([]any)[0].(map[string]any)
	if d["success"] != false || d["done"] != true || len(d["attempts"].([]any)) != 1 {
		t.Fatalf("delivery: %v", d)
	}
	rec.setStatus(200)
	if status, out := adminCall(t, base, "POST", "/deliveries/"+d["id"].(string)+"/retry", nil); status != http.StatusAccepted {
		t.Fatalf("retry: %d %v", status, out)
	}
	f.flush(t)
	got := rec.all()
	if len(got) != 2 || got[1].Header.Get("X-Appwrite-Webhook-Delivery-Id") != d["id"] {
		t.Fatalf("retry delivery: %+v", got)
	}
	_, ds = adminCall(t, base, "GET", "/deliveries", nil)
	if dd := ds["deliveries"].([]any)[0].(map[string]any); dd["success"] != true || len(dd["attempts"].([]any)) != 2 {
		t.Fatalf("after retry: %v", dd)
	}
	if status, _ := adminCall(t, base, "DELETE", "/deliveries", nil); status != http.StatusNoContent {
		t.Fatal("reset")
	}
	if len(f.s.Deliveries()) != 0 {
		t.Fatal("deliveries not reset")
	}
	if status, idx := adminCall(t, base, "GET", "", nil); status != 200 || idx["endpoint"] != base+"/v1" {
		t.Fatalf("index: %v", idx)
	}
}

func TestSeedDemoAndStackJSON(t *testing.T) {
	rt := runtimeStub(t, 200)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := Start(ctx, "127.0.0.1:0", Options{SigningKey: testKey(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		if err := run.Shutdown(sctx); err != nil {
			t.Error(err)
		}
	}()
	urls := map[string]string{"turn": rt.ts.URL + "/turn", "title": rt.ts.URL, "mcp-events": "http://127.0.0.1:3003", "webhook-ingress": "http://127.0.0.1:3004"}
	demo, err := run.Server.SeedDemo(DemoOptions{FunctionURLs: urls, FunctionSecret: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if demo.Endpoint != run.URL+"/v1" || demo.ProjectID != "demo" || demo.Issuer != run.URL+"/v1/oauth2/console" || len(demo.Functions) != 4 {
		t.Fatalf("demo: %+v", demo)
	}
	path := filepath.Join(t.TempDir(), ".dev", "stack.json")
	if err := WriteStackJSON(path, demo); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("stack.json: %v %v", fi, err)
	}
	back, err := ReadStackJSON(path)
	if err != nil || back.APIKey != demo.APIKey || back.OAuthToken != demo.OAuthToken || back.Functions["turn"] != urls["turn"] {
		t.Fatalf("read back: %+v %v", back, err)
	}
	raw, _ := os.ReadFile(path)
	for _, k := range []string{`"endpoint"`, `"projectId"`, `"apiKey"`, `"databaseId"`, `"tableId"`, `"bucketId"`, `"functionId"`, `"oauthToken"`, `"functions"`} {
		if !bytes.Contains(raw, []byte(k)) {
			t.Errorf("stack.json lacks %s", k)
		}
	}

	// Everything seeded is reachable with the stack's credentials, over TCP.
	c := appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(back.Endpoint), appwrite.WithProject(back.ProjectID), appwrite.WithKey(back.APIKey))
	db := tablesdb.New(c)
	if _, err := db.GetTable(back.DatabaseID, back.TableID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRow(back.DatabaseID, back.TableID, "unique()", map[string]any{"title": "new conversation"}); err != nil {
		t.Fatal(err)
	}
	fctx, fcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer fcancel()
	if err := run.Server.Flush(fctx); err != nil {
		t.Fatal(err)
	}
	if reqs := rt.all(); len(reqs) != 1 || reqs[0].Header.Get("x-appwrite-trigger") != "event" || reqs[0].Header.Get("x-open-runtimes-secret") != "dev" {
		t.Fatalf("title function not triggered: %+v", reqs)
	}
	bc := appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(back.Endpoint), appwrite.WithProject(back.ProjectID))
	if _, err := bc.Call("GET", "/webhooks", map[string]any{"Authorization": "Bearer " + back.OAuthToken, "X-Appwrite-Mode": "admin"}, nil); err != nil {
		t.Fatalf("demo token: %v", err)
	}
	// Seeding twice is harmless (a restarted dev stack re-seeds).
	if _, err := run.Server.SeedDemo(DemoOptions{FunctionURLs: urls}); err != nil {
		t.Fatal(err)
	}
}
