package localappwrite

//lint:file-ignore SA1019 the stand-in serves the string-column route Appwrite 1.9 still serves (deprecated there since 1.9.0); the test drives it through the SDK

import (
	"slices"
	"strings"
	"testing"

	"github.com/appwrite/sdk-for-go/tablesdb"
)

// A dev-stack user sets data up through the API as on Appwrite: database, table, columns, then rows that the
// columns validate; with Appwrite's 404/409/400 answers (errors.php descriptions with the id, 1.9.6).
func TestTablesDBSetupThroughSDK(t *testing.T) {
	f := newFixture(t, Options{})
	rec := newRecorder(t)
	createHook(t, f, "setup", rec.ts.URL+"/h", []string{"databases.*"}, nil)
	db := tablesdb.New(f.sdk(f.key))

	d, err := db.Create("shop", "Shop")
	if err != nil || d.Id != "shop" || d.Name != "Shop" || !d.Enabled || d.Type != "tablesdb" {
		t.Fatalf("create database: %+v %v", d, err)
	}
	_, err = db.Create("shop", "Again")
	wantAPIError(t, err, 409, ErrDatabaseAlreadyExists, "Database with the requested ID 'shop' already exists. Try again with a different ID or use ID.unique() to generate a unique ID.")
	_, err = db.CreateTable("nope", "orders", "Orders")
	wantAPIError(t, err, 404, ErrDatabaseNotFound, "Database with the requested ID 'nope' could not be found.")

	tb, err := db.CreateTable("shop", "orders", "Orders", db.WithCreateTablePermissions([]string{`read("any")`}), db.WithCreateTableRowSecurity(true))
	if err != nil || tb.Id != "orders" || tb.DatabaseId != "shop" || !tb.RowSecurity || len(tb.Permissions) != 1 {
		t.Fatalf("create table: %+v %v", tb, err)
	}
	_, err = db.CreateTable("shop", "orders", "Orders")
	wantAPIError(t, err, 409, ErrTableAlreadyExists, "A table with the requested ID 'orders' already exists. Try again with a different ID or use ID.unique() to generate a unique ID.")

	sc, err := db.CreateVarcharColumn("shop", "orders", "title", 64, true)
	if err != nil || sc.Key != "title" || sc.Size != 64 || sc.Status != "processing" || sc.Type != "varchar" {
		t.Fatalf("varchar column: %+v %v", sc, err)
	}
	if tc, err := db.CreateTextColumn("shop", "orders", "notes", false); err != nil || tc.Type != "text" {
		t.Fatalf("text column: %+v %v", tc, err)
	}
	if _, err := db.CreateIntegerColumn("shop", "orders", "qty", false, db.WithCreateIntegerColumnDefault(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateBooleanColumn("shop", "orders", "paid", false); err != nil {
		t.Fatal(err)
	}
	_, err = db.CreateVarcharColumn("shop", "orders", "title", 10, false)
	wantAPIError(t, err, 409, ErrColumnAlreadyExists, "Column with the requested key 'title' already exists. Column keys must be unique, try again with a different key.")
	_, err = db.CreateVarcharColumn("shop", "orders", "note", 10, true, db.WithCreateVarcharColumnDefault("x"))
	wantAPIError(t, err, 400, ErrColumnDefaultUnsupported, "Cannot set default value for required column")
	_, err = db.CreateVarcharColumn("shop", "orders", "big", 16382, false)
	wantAPIError(t, err, 400, ErrGeneralArgumentInvalid, "Invalid `size` param: Value must be a valid range between 1 and 16,381")
	_, err = db.CreateVarcharColumn("shop", "missing", "title", 10, false)
	wantAPIError(t, err, 404, ErrTableNotFound, "Table with the requested ID 'missing' could not be found.")

	got, err := db.GetTable("shop", "orders")
	if err != nil || len(got.Columns) != 4 {
		t.Fatalf("table: %+v %v", got, err)
	}
	if _, err := db.CreateRow("shop", "orders", "o1", map[string]any{"title": "two mugs", "qty": 2, "paid": true}); err != nil {
		t.Fatal(err)
	}
	_, err = db.CreateRow("shop", "orders", "o2", map[string]any{"qty": 2})
	wantErr(t, err, 400, ErrRowInvalidStructure) // title is required
	_, err = db.GetRow("shop", "orders", "o9")
	wantAPIError(t, err, 404, ErrRowNotFound, "Row with the requested ID 'o9' could not be found.")

	// Each setup call generated its event (the webhook on databases.* saw them, mirrored forms included).
	f.flush(t)
	var seen []string
	for _, r := range rec.all() {
		seen = append(seen, strings.Split(r.Header.Get("X-Appwrite-Webhook-Events"), ",")...)
	}
	for _, w := range []string{"databases.shop.create", "databases.shop.tables.orders.create", "databases.shop.collections.orders.create",
		"databases.shop.tables.orders.columns.title.create", "databases.shop.collections.orders.attributes.title.create"} {
		if !slices.Contains(seen, w) {
			t.Errorf("no delivery carried %s", w)
		}
	}
}
