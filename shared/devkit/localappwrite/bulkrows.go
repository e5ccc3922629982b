package localappwrite

import (
	"net/http"
)

// maxBulkRows is APP_LIMIT_DATABASE_BATCH (app/init/constants.php:45).
const maxBulkRows = 100

func badRequest(msg string) *APIError {
	return &APIError{Type: "general_bad_request", Code: http.StatusBadRequest, Message: msg}
}

// createRowsBulk is the bulk path of POST /v1/tablesdb/{db}/tables/{t}/rows, read from Appwrite 1.9.6
// (src/Appwrite/Platform/Modules/Databases/Http/Databases/Collections/Documents/Create.php): "rows" is an
// array of at most 100 JSON objects (:132); not with "data", "rowId" or "permissions" (:173-194); only API
// keys and privileged users (:207); each row's "$id" (default unique(), CustomId-validated, :364-380) and
// "$permissions" (Permissions-validated, :238-245); all rows are validated before any is stored; the answer is
// 201 {"total","rows"} and every row gets its own create event, in order (triggerBulk,
// Documents/Action.php:432-465).
func (s *Server) createRowsBulk(c *call, t *table) (int, any, *APIError) {
	raw, _ := c.params["rows"].([]any)
	const listDesc = "Value must a valid array no longer than 100 items and Value must be a valid JSON string"
	if len(raw) > maxBulkRows {
		return 0, nil, invalidParam("rows", listDesc)
	}
	if d, ok := c.params["data"]; ok && d != nil {
		if m, ok := d.(map[string]any); !ok || len(m) > 0 {
			return 0, nil, badRequest("You can only send one of the following parameters: data, rows")
		}
	}
	if id, _ := c.params["rowId"].(string); id != "" {
		return 0, nil, badRequest(`Param "rowId" is not allowed when creating multiple rows, set "$id" on each instead.`)
	}
	if p, ok := c.params["permissions"].([]any); ok && len(p) > 0 {
		return 0, nil, badRequest(`Param "permissions" is disallowed when creating multiple rows, set "$permissions" on each instead`)
	}
	if k := c.who.kind; k != "key" && k != "dynamic" && k != "oauth" {
		return 0, nil, newErr(ErrGeneralUnauthorizedScope)
	}
	type pending struct {
		id    string
		data  map[string]any
		perms []string
	}
	var rows []pending
	seen := map[string]bool{}
	for _, item := range raw {
		obj, ok := item.(map[string]any)
		if !ok {
			return 0, nil, invalidParam("rows", listDesc)
		}
		id := "unique()"
		if v, ok := obj["$id"]; ok {
			sv, ok := v.(string)
			if !ok || (sv != "unique()" && !validCustomID(sv)) {
				return 0, nil, badRequest(customIDDescription)
			}
			id = sv
		}
		if id == "unique()" {
			id = s.uniqueID()
		}
		var perms []string
		if v, ok := obj["$permissions"]; ok && v != nil {
			list, ok := v.([]any)
			if !ok {
				return 0, nil, badRequest("Permissions must be an array of strings.")
			}
			for _, p := range list {
				ps, ok := p.(string)
				if !ok || !permissionRe.MatchString(ps) {
					return 0, nil, badRequest("Permissions must be of the form action(\"role\") with action in read, create, update, delete, write.")
				}
				perms = append(perms, ps)
			}
		}
		if _, dup := t.rows[id]; dup || seen[id] {
			return 0, nil, newErr(ErrRowAlreadyExists)
		}
		seen[id] = true
		clean, err := validateRow(t, obj, nil)
		if err != nil {
			return 0, nil, err
		}
		rows = append(rows, pending{id: id, data: clean, perms: perms})
	}
	models := make([]obj, 0, len(rows))
	for _, p := range rows {
		r := s.insertRow(t, p.id, p.data, p.perms)
		m := rowModel(t, r)
		// triggerBulk with the documents pattern (Documents/Create.php:513-526, Documents/Action.php:444-467,
		// 1.9.6): the collections form comes first, as for a single create.
		c.emit(documentEvent+"create", m, documentParams(t, r)...)
		models = append(models, m)
	}
	return http.StatusCreated, obj{{"total", len(models)}, {"rows", nonNilObjs(models)}}, nil
}
