package store

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/devkit/localappwrite"
)

// TestAnExistingDatabaseGetsANewColumnOnItsFirstWrite: a chat database made by an earlier schema (every
// table, conversations without active_at) gets the new column when a write first needs it, and the write
// goes on: Appwrite refuses the unknown column with row_invalid_structure ("Unknown attribute"), and the
// store then creates what is missing and writes again; any other structure refusal creates nothing.
func TestAnExistingDatabaseGetsANewColumnOnItsFirstWrite(t *testing.T) {
	aw := localappwrite.New(localappwrite.Options{Logf: t.Logf})
	srv := httptest.NewServer(aw)
	aw.SetBaseURL(srv.URL)
	t.Cleanup(func() { srv.Close(); _ = aw.Close() })
	if err := aw.SeedProject(localappwrite.ProjectSpec{ID: "p"}); err != nil {
		t.Fatal(err)
	}
	key, err := aw.CreateKey("p", []string{"databases.read", "databases.write", "tables.read", "tables.write", "rows.read", "rows.write"})
	if err != nil {
		t.Fatal(err)
	}
	var tables []localappwrite.TableSpec
	for _, tb := range schema {
		spec := localappwrite.TableSpec{ID: tb.id, Name: tb.name, RowSecurity: true}
		for _, c := range tb.columns {
			if tb.id == Conversations && c.Key == "active_at" {
				continue // the earlier schema
			}
			spec.Columns = append(spec.Columns, localappwrite.Column{Key: c.Key, Type: c.Type, Size: c.Size, Required: c.Required})
		}
		tables = append(tables, spec)
	}
	if err := aw.SeedDatabase("p", localappwrite.DatabaseSpec{ID: "chat", Tables: tables}); err != nil {
		t.Fatal(err)
	}
	st := New(awclient.New(srv.URL+"/v1", "p", &http.Client{Timeout: 10 * time.Second}, 0), key, "chat", nil)
	ctx := context.Background()
	conv, err := st.CreateConversation(ctx, "alice", "hello")
	if err != nil {
		t.Fatal(err)
	}
	// A structure refusal that is not an unknown column (a value too long) is the write's, not the schema's:
	// it creates nothing.
	if _, err := st.update(ctx, Conversations, conv.ID, map[string]any{"title": strings.Repeat("t", 257)}); awclient.TypeOf(err) != "row_invalid_structure" {
		t.Fatalf("a title over its column: %v", err)
	}
	if cols, err := st.tableColumns(ctx, Conversations); err != nil || cols["active_at"] != "" {
		t.Fatalf("after a refused value: columns %v, %v (nothing should be created)", cols, err)
	}
	if _, err := st.TouchConversation(ctx, conv.ID, time.Now()); err != nil {
		t.Fatalf("touching a conversation of the earlier schema: %v", err)
	}
}
