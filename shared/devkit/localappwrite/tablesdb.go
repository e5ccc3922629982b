package localappwrite

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/mail"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"time"
)

type database struct {
	id, name   string
	enabled    bool
	created    time.Time
	updated    time.Time
	tables     map[string]*table
	tableOrder []string
}

type table struct {
	id, name, dbID string
	enabled        bool
	rowSecurity    bool
	permissions    []string
	columns        []Column
	created        time.Time
	updated        time.Time
	rows           map[string]*row
	rowOrder       []string
	seq            int
}

type row struct {
	id      string
	seq     int
	created time.Time
	updated time.Time
	perms   []string
	data    map[string]any
}

// Column is a table column. Type is one of string, varchar, text, mediumtext, longtext, integer, float, boolean,
// datetime, email, url, enum.
type Column struct {
	// Key is the column key.
	Key string `json:"key"`
	// Type is string (deprecated since 1.9.0), varchar, text, mediumtext, longtext, integer, float, boolean,
	// datetime, email, url or enum.
	Type string `json:"type"`
	// Required columns must be given on create.
	Required bool `json:"required,omitempty"`
	// Array columns hold lists of the type.
	Array bool `json:"array,omitempty"`
	// Size is a string column's maximum length (255 when 0).
	Size int `json:"size,omitempty"`
	// Elements are an enum column's values.
	Elements []string `json:"elements,omitempty"`
	// Default is stored when the column is not given on create.
	Default any `json:"default,omitempty"`
}

// TableSpec describes a table to seed.
type TableSpec struct {
	// ID is the table id; Name defaults to it.
	ID   string `json:"tableId"`
	Name string `json:"name"`
	// Columns, when not empty, are enforced on row writes.
	Columns []Column `json:"columns"`
	// RowSecurity and Permissions are stored and returned (not enforced).
	RowSecurity bool     `json:"rowSecurity"`
	Permissions []string `json:"permissions"`
}

// DatabaseSpec describes a TablesDB database to seed, with its tables.
type DatabaseSpec struct {
	// ID is the database id; Name defaults to it.
	ID   string `json:"databaseId"`
	Name string `json:"name"`
	// Tables are created or replaced.
	Tables []TableSpec `json:"tables"`
}

// SeedDatabase creates a database (or reuses it) and adds the given tables (replacing same-id tables).
func (s *Server) SeedDatabase(projectID string, spec DatabaseSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr, err := s.seedProjectLocked(projectID, "database", spec.ID)
	if err != nil {
		return err
	}
	now := s.now()
	db := pr.databases[spec.ID]
	if db == nil {
		db = &database{id: spec.ID, name: orDefault(spec.Name, spec.ID), enabled: true, created: now, updated: now, tables: map[string]*table{}}
		pr.databases[spec.ID] = db
	}
	for _, ts := range spec.Tables {
		if !validCustomID(ts.ID) {
			return fmt.Errorf("localappwrite: invalid table id %q", ts.ID)
		}
		if _, ok := db.tables[ts.ID]; !ok {
			db.tableOrder = append(db.tableOrder, ts.ID)
		}
		db.tables[ts.ID] = &table{
			id: ts.ID, name: orDefault(ts.Name, ts.ID), dbID: db.id, enabled: true, rowSecurity: ts.RowSecurity,
			permissions: slices.Clone(ts.Permissions), columns: slices.Clone(ts.Columns),
			created: now, updated: now, rows: map[string]*row{},
		}
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func databaseModel(db *database) obj {
	return obj{
		{"$id", db.id}, {"name", db.name}, {"$createdAt", formatTime(db.created)}, {"$updatedAt", formatTime(db.updated)},
		{"enabled", db.enabled}, {"type", "tablesdb"}, {"policies", []any{}}, {"archives", []any{}},
	}
}

func columnModel(col Column, t *table) obj {
	typ, format := col.Type, ""
	switch col.Type {
	case "email", "url", "enum":
		typ, format = "string", col.Type
	}
	o := obj{
		{"key", col.Key}, {"type", typ}, {"status", "available"}, {"error", ""}, {"required", col.Required},
		{"array", col.Array}, {"$createdAt", formatTime(t.created)}, {"$updatedAt", formatTime(t.updated)},
	}
	if (typ == "string" || typ == "varchar") && format == "" {
		o = append(o, kv{"size", columnSize(col)})
	}
	if format != "" {
		o = append(o, kv{"format", format})
	}
	if format == "enum" {
		o = append(o, kv{"elements", col.Elements})
	}
	return append(o, kv{"default", col.Default})
}

// textSizes are the character limits of the text column types (MariaDB TEXT, MEDIUMTEXT, LONGTEXT at 4 bytes per
// character, as utopia-php/database sizes them); the stand-in's approximation.
var textSizes = map[string]int{"text": 16383, "mediumtext": 4194303, "longtext": 1073741823}

func columnSize(col Column) int {
	if n, ok := textSizes[col.Type]; ok {
		return n
	}
	if col.Size > 0 {
		return col.Size
	}
	return 255
}

func tableModel(t *table) obj {
	cols := make([]obj, 0, len(t.columns))
	for _, col := range t.columns {
		cols = append(cols, columnModel(col, t))
	}
	return obj{
		{"$id", t.id}, {"$createdAt", formatTime(t.created)}, {"$updatedAt", formatTime(t.updated)},
		{"$permissions", nonNil(t.permissions)}, {"databaseId", t.dbID}, {"name", t.name}, {"enabled", t.enabled},
		{"rowSecurity", t.rowSecurity}, {"columns", cols}, {"indexes", []any{}}, {"bytesMax", 0}, {"bytesUsed", 0},
	}
}

// rowModel renders Response/Model/Row.php: the $ attributes, then every column (null when unset), then any
// other stored key.
func rowModel(t *table, r *row) obj {
	o := obj{
		{"$id", r.id}, {"$sequence", r.seq}, {"$tableId", t.id}, {"$databaseId", t.dbID},
		{"$createdAt", formatTime(r.created)}, {"$updatedAt", formatTime(r.updated)}, {"$permissions", nonNil(r.perms)},
	}
	seen := map[string]bool{}
	for _, col := range t.columns {
		o = append(o, kv{col.Key, r.data[col.Key]})
		seen[col.Key] = true
	}
	keys := make([]string, 0, len(r.data))
	for k := range r.data {
		if !seen[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		o = append(o, kv{k, r.data[k]})
	}
	return o
}

func (s *Server) findTable(c *call) (*database, *table, *APIError) {
	db := c.pr.databases[c.r.PathValue("databaseId")]
	if db == nil {
		return nil, nil, withID(ErrDatabaseNotFound, c.r.PathValue("databaseId"))
	}
	t := db.tables[c.r.PathValue("tableId")]
	if t == nil {
		return db, nil, withID(ErrTableNotFound, c.r.PathValue("tableId"))
	}
	return db, t, nil
}

func (s *Server) getDatabase(c *call) (int, any, *APIError) {
	db := c.pr.databases[c.r.PathValue("databaseId")]
	if db == nil {
		return 0, nil, withID(ErrDatabaseNotFound, c.r.PathValue("databaseId"))
	}
	return http.StatusOK, databaseModel(db), nil
}

func (s *Server) getTable(c *call) (int, any, *APIError) {
	_, t, err := s.findTable(c)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, tableModel(t), nil
}

func (s *Server) listRows(c *call) (int, any, *APIError) {
	_, t, err := s.findTable(c)
	if err != nil {
		return 0, nil, err
	}
	queries, _, err := c.strArray("queries", false, 100, "Invalid queries")
	if err != nil {
		return 0, nil, err
	}
	items := make([]obj, 0, len(t.rowOrder))
	for _, id := range t.rowOrder {
		if c.mayRead(t, t.rows[id]) {
			items = append(items, rowModel(t, t.rows[id]))
		}
	}
	page, total, err := applyQueries(items, queries)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, obj{{"total", total}, {"rows", nonNilObjs(page)}}, nil
}

func (s *Server) getRow(c *call) (int, any, *APIError) {
	_, t, err := s.findTable(c)
	if err != nil {
		return 0, nil, err
	}
	r := t.rows[c.r.PathValue("rowId")]
	if r == nil || !c.mayRead(t, r) {
		return 0, nil, withID(ErrRowNotFound, c.r.PathValue("rowId"))
	}
	return http.StatusOK, rowModel(t, r), nil
}

// mayRead applies Appwrite's read authorization to a user's (session or JWT) REST read: the row is visible
// when one of the user's roles (or "any") holds a read permission of the table or, with row security on, of
// the row; otherwise it does not exist for them (getRow 404 row_not_found, listRows leaves it out), as the
// database's Authorization filter does (utopia-php/database Database::getDocument/find with the request's
// roles, app/init/resources/request.php). API keys read everything.
func (c *call) mayRead(t *table, r *row) bool {
	if c.who.kind != "user" && c.who.kind != "jwt" {
		return true
	}
	roles := readRoles(t.permissions)
	if t.rowSecurity {
		roles = append(roles, readRoles(r.perms)...)
	}
	if slices.Contains(roles, "any") {
		return true
	}
	for _, role := range userRoles(c.pr.users[c.who.userID]) {
		if slices.Contains(roles, role) {
			return true
		}
	}
	return false
}

// documentParams are the params the documents action sets (Documents/Create.php:484-487,530-531).
func documentParams(t *table, r *row) []param {
	return []param{{"databaseId", t.dbID}, {"collectionId", t.id}, {"tableId", t.id}, {"documentId", r.id}, {"rowId", r.id}}
}

func rowParams(t *table, r *row) []param {
	return []param{{"databaseId", t.dbID}, {"tableId", t.id}, {"rowId", r.id}}
}

const rowEvent = "databases.[databaseId].tables.[tableId].rows.[rowId]."

// documentEvent is the documents form of rowEvent, which a row create sets (Documents/Create.php:529-532).
const documentEvent = "databases.[databaseId].collections.[collectionId].documents.[documentId]."

func (s *Server) createRow(c *call) (int, any, *APIError) {
	_, t, err := s.findTable(c)
	if err != nil {
		return 0, nil, err
	}
	if rows, ok := c.params["rows"].([]any); ok && len(rows) > 0 {
		return s.createRowsBulk(c, t) // bulkrows.go
	}
	id, err := c.customID("rowId")
	if err != nil {
		return 0, nil, err
	}
	data, _, err := c.object("data", true)
	if err != nil {
		return 0, nil, err
	}
	perms, _, err := c.permissions()
	if err != nil {
		return 0, nil, err
	}
	if _, dup := t.rows[id]; dup {
		return 0, nil, newErr(ErrRowAlreadyExists)
	}
	clean, err := validateRow(t, data, nil)
	if err != nil {
		return 0, nil, err
	}
	r := s.insertRow(t, id, clean, perms)
	m := rowModel(t, r)
	// A row create runs the documents action, which sets the collections form as the event
	// (Documents/Create.php:483-487,529-532, 1.9.6): so the first generated event, and a function trigger's
	// x-appwrite-event, is databases.<db>.collections.<table>.documents.<row>.create; the mirror then adds the
	// tables forms (the same 42 strings as from the tables pattern, in another order).
	c.emit(documentEvent+"create", m, documentParams(t, r)...)
	return http.StatusCreated, m, nil
}

func (s *Server) insertRow(t *table, id string, data map[string]any, perms []string) *row {
	t.seq++
	now := s.now()
	r := &row{id: id, seq: t.seq, created: now, updated: now, perms: perms, data: data}
	t.rows[id] = r
	t.rowOrder = append(t.rowOrder, id)
	return r
}

func (s *Server) updateRow(c *call) (int, any, *APIError) {
	_, t, err := s.findTable(c)
	if err != nil {
		return 0, nil, err
	}
	data, hasData, err := c.object("data", false)
	if err != nil {
		return 0, nil, err
	}
	perms, hasPerms, err := c.permissions()
	if err != nil {
		return 0, nil, err
	}
	if !hasData && !hasPerms {
		return 0, nil, newErr(ErrRowMissingPayload)
	}
	r := t.rows[c.r.PathValue("rowId")]
	if r == nil {
		return 0, nil, withID(ErrRowNotFound, c.r.PathValue("rowId"))
	}
	merged, err := validateRow(t, data, r.data)
	if err != nil {
		return 0, nil, err
	}
	s.applyUpdate(r, merged, perms, hasPerms)
	m := rowModel(t, r)
	c.emit(rowEvent+"update", m, rowParams(t, r)...)
	return http.StatusOK, m, nil
}

// applyUpdate writes an update's merged data (and its permissions, when given) to r. $updatedAt moves only
// when a value or the permissions change, as Appwrite's database does (utopia-php/database
// src/Database/Database.php updateDocument: $shouldUpdate, set by comparing every attribute with the stored
// document; only then is $updatedAt set): an update that writes what is already stored leaves it.
func (s *Server) applyUpdate(r *row, merged map[string]any, perms []string, hasPerms bool) {
	changed := !reflect.DeepEqual(merged, r.data)
	if hasPerms {
		changed = changed || !slices.Equal(slices.Sorted(slices.Values(perms)), slices.Sorted(slices.Values(r.perms)))
		r.perms = perms
	}
	r.data = merged
	if changed {
		r.updated = s.now()
	}
}

func (s *Server) upsertRow(c *call) (int, any, *APIError) {
	_, t, err := s.findTable(c)
	if err != nil {
		return 0, nil, err
	}
	id := c.r.PathValue("rowId")
	if id == "unique()" {
		id = s.uniqueID()
	} else if !validCustomID(id) {
		return 0, nil, invalidParam("rowId", customIDDescription)
	}
	data, _, err := c.object("data", false)
	if err != nil {
		return 0, nil, err
	}
	perms, hasPerms, err := c.permissions()
	if err != nil {
		return 0, nil, err
	}
	status := http.StatusOK
	r := t.rows[id]
	if r == nil {
		clean, err := validateRow(t, data, nil)
		if err != nil {
			return 0, nil, err
		}
		r = s.insertRow(t, id, clean, perms)
		status = http.StatusCreated
	} else {
		merged, err := validateRow(t, data, r.data)
		if err != nil {
			return 0, nil, err
		}
		s.applyUpdate(r, merged, perms, hasPerms)
	}
	m := rowModel(t, r)
	c.emit(rowEvent+"upsert", m, rowParams(t, r)...)
	return status, m, nil
}

func (s *Server) deleteRow(c *call) (int, any, *APIError) {
	_, t, err := s.findTable(c)
	if err != nil {
		return 0, nil, err
	}
	r := t.rows[c.r.PathValue("rowId")]
	if r == nil {
		return 0, nil, withID(ErrRowNotFound, c.r.PathValue("rowId"))
	}
	m := rowModel(t, r)
	delete(t.rows, r.id)
	t.rowOrder = slices.DeleteFunc(t.rowOrder, func(id string) bool { return id == r.id })
	c.emit(rowEvent+"delete", m, rowParams(t, r)...)
	return http.StatusNoContent, nil, nil
}

// permissionRe copies the shape of Appwrite's Permissions validator: action("role").
var permissionRe = regexp.MustCompile(`^(read|create|update|delete|write)\("([^"]+)"\)$`)

func (c *call) permissions() ([]string, bool, *APIError) {
	const desc = "Permissions must be of the form action(\"role\") with action in read, create, update, delete, write."
	perms, present, err := c.strArray("permissions", false, 100, desc)
	if err != nil {
		return nil, present, err
	}
	for _, p := range perms {
		if !permissionRe.MatchString(p) {
			return nil, present, invalidParam("permissions", desc)
		}
	}
	return perms, present, nil
}

// validateRow applies the table's columns like Appwrite's Structure validator: unknown columns, missing
// required columns (on create) and wrong types are 400 row_invalid_structure. Keys starting with "$" are
// dropped. base (the stored data, for updates) is merged under data. A table without columns accepts any data.
func validateRow(t *table, data map[string]any, base map[string]any) (map[string]any, *APIError) {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	cols := map[string]Column{}
	for _, col := range t.columns {
		cols[col.Key] = col
	}
	for k, v := range data {
		if len(k) > 0 && k[0] == '$' {
			continue
		}
		col, known := cols[k]
		if !known && len(t.columns) > 0 {
			return nil, newErr(ErrRowInvalidStructure, "Invalid document structure: Unknown attribute: \"%s\"", k)
		}
		if known && v != nil {
			if msg := checkColumn(col, v); msg != "" {
				return nil, newErr(ErrRowInvalidStructure, "Invalid document structure: Attribute \"%s\" has invalid type. %s", k, msg)
			}
		}
		out[k] = v
	}
	if base == nil {
		for _, col := range t.columns {
			if _, ok := out[col.Key]; !ok || out[col.Key] == nil {
				if col.Required {
					return nil, newErr(ErrRowInvalidStructure, "Invalid document structure: Missing required attribute \"%s\"", col.Key)
				}
				out[col.Key] = col.Default
			}
		}
	}
	return out, nil
}

func checkColumn(col Column, v any) string {
	if col.Array {
		arr, ok := v.([]any)
		if !ok {
			return "Value must be an array"
		}
		for _, e := range arr {
			if msg := checkScalar(col, e); msg != "" {
				return msg
			}
		}
		return ""
	}
	return checkScalar(col, v)
}

func checkScalar(col Column, v any) string {
	switch col.Type {
	case "string", "varchar", "text", "mediumtext", "longtext":
		s, ok := v.(string)
		if !ok || len([]rune(s)) > columnSize(col) {
			return fmt.Sprintf("Value must be a valid string and no longer than %d chars", columnSize(col))
		}
	case "integer":
		n, ok := v.(json.Number)
		if _, err := strconv.ParseInt(string(n), 10, 64); !ok || err != nil {
			return "Value must be a valid integer"
		}
	case "float":
		n, ok := v.(json.Number)
		if _, err := n.Float64(); !ok || err != nil {
			return "Value must be a valid float"
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return "Value must be a valid boolean"
		}
	case "datetime":
		s, ok := v.(string)
		if _, err := time.Parse(time.RFC3339Nano, s); !ok || err != nil {
			return "Value must be valid date between 0000-01-01 00:00:00 and 9999-12-31 23:59:59."
		}
	case "email":
		s, ok := v.(string)
		if _, err := mail.ParseAddress(s); !ok || err != nil {
			return "Value must be a valid email address"
		}
	case "url":
		s, ok := v.(string)
		if u, err := url.Parse(s); !ok || err != nil || u.Scheme == "" || u.Host == "" {
			return "Value must be a valid URL"
		}
	case "enum":
		s, ok := v.(string)
		if !ok || !slices.Contains(col.Elements, s) {
			return fmt.Sprintf("Value must be one of (%s)", joinComma(col.Elements))
		}
	}
	return ""
}

func joinComma(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}
