package localappwrite

import (
	"encoding/json"
	"net/http"
	"path"
	"slices"
	"strconv"
)

// The TablesDB setup routes, so that a user of the dev stack creates databases, tables and columns through
// the API as on Appwrite (Modules/Databases/Http/TablesDB/Create.php, Tables/Create.php, Tables/Columns/*/
// Create.php, 1.9.6), not only through /_local. Columns are ready at once (Appwrite answers "processing"
// and its database worker makes them "available").

// stringColumnMax is APP_DATABASE_ATTRIBUTE_STRING_MAX_LENGTH (app/init/constants.php:66).
const stringColumnMax = 1_073_741_824

// createDatabase is POST /v1/tablesdb: databaseId (CustomId), name (Text(128), required), enabled.
func (s *Server) createDatabase(c *call) (int, any, *APIError) {
	id, err := c.customID("databaseId")
	if err != nil {
		return 0, nil, err
	}
	name, err := c.str("name", true, "", 128)
	if err != nil {
		return 0, nil, err
	}
	enabled, err := c.boolean("enabled", true)
	if err != nil {
		return 0, nil, err
	}
	if c.pr.databases[id] != nil {
		return 0, nil, withID(ErrDatabaseAlreadyExists, id)
	}
	now := s.now()
	db := &database{id: id, name: name, enabled: enabled, created: now, updated: now, tables: map[string]*table{}}
	c.pr.databases[id] = db
	m := databaseModel(db)
	c.emit("databases.[databaseId].create", m, param{"databaseId", id})
	return http.StatusCreated, m, nil
}

// createTable is POST /v1/tablesdb/{databaseId}/tables: tableId (CustomId), name (Text(128), required),
// permissions, rowSecurity, enabled, columns (inline definitions of the types served here); indexes are not
// supported by the stand-in.
func (s *Server) createTable(c *call) (int, any, *APIError) {
	id, err := c.customID("tableId")
	if err != nil {
		return 0, nil, err
	}
	name, err := c.str("name", true, "", 128)
	if err != nil {
		return 0, nil, err
	}
	perms, _, err := c.permissions()
	if err != nil {
		return 0, nil, err
	}
	rowSecurity, err := c.boolean("rowSecurity", false)
	if err != nil {
		return 0, nil, err
	}
	enabled, err := c.boolean("enabled", true)
	if err != nil {
		return 0, nil, err
	}
	var cols []Column
	if raw, ok := c.params["columns"].([]any); ok {
		for _, r := range raw {
			b, _ := json.Marshal(r)
			var col Column
			if json.Unmarshal(b, &col) != nil || !validCustomID(col.Key) || !slices.Contains(columnTypes, col.Type) {
				return 0, nil, invalidParam("columns", "Value must a valid array no longer than 100 items and Value must be a valid JSON string")
			}
			cols = append(cols, col)
		}
	}
	if idx, ok := c.params["indexes"].([]any); ok && len(idx) > 0 {
		return 0, nil, newErr(ErrGeneralArgumentInvalid, "The local Appwrite stand-in does not support indexes.")
	}
	db := c.pr.databases[c.r.PathValue("databaseId")]
	if db == nil {
		return 0, nil, withID(ErrDatabaseNotFound, c.r.PathValue("databaseId"))
	}
	if db.tables[id] != nil {
		return 0, nil, withID(ErrTableAlreadyExists, id)
	}
	now := s.now()
	t := &table{id: id, name: name, dbID: db.id, enabled: enabled, rowSecurity: rowSecurity, permissions: perms,
		columns: cols, created: now, updated: now, rows: map[string]*row{}}
	db.tables[id] = t
	db.tableOrder = append(db.tableOrder, id)
	m := tableModel(t)
	c.emit("databases.[databaseId].tables.[tableId].create", m, param{"databaseId", db.id}, param{"tableId", id})
	return http.StatusCreated, m, nil
}

// columnTypes are the column routes served. string is deprecated since 1.9.0 in favour of varchar and the text
// types (Columns/Varchar, Text, Mediumtext, Longtext/Create.php).
var columnTypes = []string{"string", "varchar", "text", "mediumtext", "longtext", "integer", "float", "boolean", "datetime", "email", "url", "enum"}

// createColumn is POST .../columns/{type}: key (Key), required (Boolean, required), default (Nullable, of the
// type), array; string takes size (Range 1..1,073,741,824, required), enum elements. A default with required
// or array is 400 column_default_unsupported (Attributes/Action.php:355-361); a taken key 409
// column_already_exists.
func (s *Server) createColumn(c *call) (int, any, *APIError) {
	typ := path.Base(c.r.URL.Path) // the route's last segment, one of columnTypes
	key, err := c.str("key", true, "", 0)
	if err != nil {
		return 0, nil, err
	}
	if !validCustomID(key) {
		return 0, nil, invalidParam("key", customIDDescription)
	}
	col := Column{Key: key, Type: typ}
	if typ == "string" || typ == "varchar" {
		// string: Range(1, 1,073,741,824); varchar: Range(1, 16381) (Columns/Varchar/Create.php:59).
		max, desc := stringColumnMax, "Value must be a valid range between 1 and 1,073,741,824"
		if typ == "varchar" {
			max, desc = 16381, "Value must be a valid range between 1 and 16,381"
		}
		if !c.has("size") {
			return 0, nil, missingParam("size")
		}
		size, err := c.integer("size", 0)
		if err != nil {
			return 0, nil, err
		}
		if size < 1 || size > max {
			return 0, nil, invalidParam("size", desc)
		}
		col.Size = size
	}
	if typ == "enum" {
		elements, _, err := c.strArray("elements", true, 100, "Value must a valid array no longer than 100 items and Value must be a valid string and at least 1 chars and no longer than 255 chars")
		if err != nil {
			return 0, nil, err
		}
		col.Elements = elements
	}
	if !c.has("required") {
		return 0, nil, missingParam("required")
	}
	if col.Required, err = c.boolean("required", false); err != nil {
		return 0, nil, err
	}
	if c.has("default") {
		if col.Default, err = c.columnDefault(typ); err != nil {
			return 0, nil, err
		}
	}
	if col.Array, err = c.boolean("array", false); err != nil {
		return 0, nil, err
	}
	_, t, aerr := s.findTable(c)
	if aerr != nil {
		return 0, nil, aerr
	}
	if col.Required && col.Default != nil {
		return 0, nil, newErr(ErrColumnDefaultUnsupported, "Cannot set default value for required column")
	}
	if col.Array && col.Default != nil {
		return 0, nil, newErr(ErrColumnDefaultUnsupported, "Cannot set default value for array columns")
	}
	for _, existing := range t.columns {
		if existing.Key == key {
			return 0, nil, withID(ErrColumnAlreadyExists, key)
		}
	}
	t.columns = append(t.columns, col)
	t.updated = s.now()
	m := columnModel(col, t)
	for i := range m {
		if m[i].k == "status" {
			m[i].v = "processing" // what Appwrite answers; the stand-in's column is usable at once
		}
	}
	c.emit("databases.[databaseId].tables.[tableId].columns.[columnId].create", m,
		param{"databaseId", t.dbID}, param{"tableId", t.id}, param{"columnId", key})
	return http.StatusCreated, m, nil
}

// columnDefault reads a default of the column's type (Nullable of Text, Integer, FloatValidator, Boolean).
func (c *call) columnDefault(typ string) (any, *APIError) {
	switch typ {
	case "integer":
		n, err := c.integer("default", 0)
		return n, err
	case "float":
		v := c.params["default"]
		var f float64
		var perr error
		switch t := v.(type) {
		case json.Number:
			f, perr = t.Float64()
		case string:
			f, perr = strconv.ParseFloat(t, 64)
		default:
			return nil, invalidParam("default", "Value must be a valid float")
		}
		if perr != nil {
			return nil, invalidParam("default", "Value must be a valid float")
		}
		return f, nil
	case "boolean":
		b, err := c.boolean("default", false)
		return b, err
	default:
		v, err := c.str("default", false, "", 0)
		return v, err
	}
}
