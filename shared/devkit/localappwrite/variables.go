package localappwrite

import (
	"net/http"
	"slices"
	"time"
)

// Function variables (Modules/Functions/Http/Variables/*, 1.9.6): the environment of a function's builds and
// runtimes. A change takes effect with the next deployment: every create, update and delete sets the
// function's "live" to false (Create.php:115-116, Update.php:125-126, Delete.php:90-91), and the build that
// activates a deployment sets it back to true (build.go).

// variable is one function variable.
type variable struct {
	id, key, value   string
	secret           bool
	created, updated time.Time
}

// variableModel renders Response/Model/Variable.php (1.9.6): a secret variable's value is null (its filter,
// :72-78: "Secret variables can only be updated or deleted, but never read").
func variableModel(fn *function, v *variable) obj {
	var value any = v.value
	if v.secret {
		value = nil
	}
	return obj{
		{"$id", v.id}, {"$createdAt", formatTime(v.created)}, {"$updatedAt", formatTime(v.updated)},
		{"key", v.key}, {"value", value}, {"secret", v.secret}, {"resourceType", "function"}, {"resourceId", fn.id},
	}
}

func (fn *function) variable(id string) *variable {
	for _, v := range fn.vars {
		if v.id == id {
			return v
		}
	}
	return nil
}

// keyTaken reports whether another variable of fn has key (the unique index on resourceId, key, resourceType
// of the variables collection: app/config/collections/projects.php, 1.9.6).
func (fn *function) keyTaken(key, except string) bool {
	return slices.ContainsFunc(fn.vars, func(v *variable) bool { return v.key == key && v.id != except })
}

// createVariable copies POST /v1/functions/{functionId}/variables (Variables/Create.php, 1.9.6), scope
// functions.write: variableId (custom id or unique(), required: a request in a format below 1.9.4 gets
// "unique()" from request filter V25, Request/Filters/V25.php), key (Text 255), value (Text 8192, may be
// empty), secret (default true). Unknown function: 404 function_not_found; an id the project's variables
// already have, or a key the function already has: 409 variable_already_exists. Answers 201.
func (s *Server) createVariable(c *call) (int, any, *APIError) {
	if c.legacyBefore(1, 9, 4) && !c.has("variableId") {
		c.params["variableId"] = "unique()"
	}
	id, err := c.customID("variableId")
	if err != nil {
		return 0, nil, err
	}
	key, err := c.str("key", true, "", 255)
	if err != nil {
		return 0, nil, err
	}
	value, err := c.str("value", true, "", 8192)
	if err != nil {
		return 0, nil, err
	}
	secret, err := c.boolean("secret", true)
	if err != nil {
		return 0, nil, err
	}
	fn := c.pr.functions[c.r.PathValue("functionId")]
	if fn == nil {
		return 0, nil, newErr(ErrFunctionNotFound)
	}
	idTaken := false
	for _, other := range c.pr.functions {
		idTaken = idTaken || other.variable(id) != nil
	}
	if idTaken || fn.keyTaken(key, "") {
		return 0, nil, newErr(ErrVariableAlreadyExists)
	}
	now := s.now()
	v := &variable{id: id, key: key, value: value, secret: secret, created: now, updated: now}
	fn.vars = append(fn.vars, v)
	fn.live = false
	return http.StatusCreated, variableModel(fn, v), nil
}

// listVariables copies GET /v1/functions/{functionId}/variables (Variables/XList.php, 1.9.6), scope
// functions.read: {"total", "variables"}, oldest first.
func (s *Server) listVariables(c *call) (int, any, *APIError) {
	fn := c.pr.functions[c.r.PathValue("functionId")]
	if fn == nil {
		return 0, nil, newErr(ErrFunctionNotFound)
	}
	out := make([]obj, 0, len(fn.vars))
	for _, v := range fn.vars {
		out = append(out, variableModel(fn, v))
	}
	return http.StatusOK, obj{{"total", len(out)}, {"variables", out}}, nil
}

// pathVariable is the function and variable the request's path names: 404 function_not_found, then 404
// variable_not_found.
func (c *call) pathVariable() (*function, *variable, *APIError) {
	fn := c.pr.functions[c.r.PathValue("functionId")]
	if fn == nil {
		return nil, nil, newErr(ErrFunctionNotFound)
	}
	v := fn.variable(c.r.PathValue("variableId"))
	if v == nil {
		return nil, nil, newErr(ErrVariableNotFound)
	}
	return fn, v, nil
}

// getVariable copies GET /v1/functions/{functionId}/variables/{variableId} (Variables/Get.php, 1.9.6).
func (s *Server) getVariable(c *call) (int, any, *APIError) {
	fn, v, err := c.pathVariable()
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, variableModel(fn, v), nil
}

// updateVariable copies PUT /v1/functions/{functionId}/variables/{variableId} (Variables/Update.php, 1.9.6),
// scope functions.write: key (Nullable Text 255), value (Nullable Text 8192), secret (Nullable Boolean), each
// optional; a secret variable made non-secret is 400 variable_cannot_unset_secret (:96-98), none of the three
// is 400 general_argument_invalid (:100-102), a key another variable has is 409 variable_already_exists.
func (s *Server) updateVariable(c *call) (int, any, *APIError) {
	var key, value *string
	if c.has("key") {
		k, err := c.str("key", false, "", 255)
		if err != nil {
			return 0, nil, err
		}
		key = &k
	}
	if c.has("value") {
		v, err := c.str("value", false, "", 8192)
		if err != nil {
			return 0, nil, err
		}
		value = &v
	}
	var secret *bool
	if c.has("secret") {
		b, err := c.boolean("secret", false)
		if err != nil {
			return 0, nil, err
		}
		secret = &b
	}
	fn, v, apiErr := c.pathVariable()
	if apiErr != nil {
		return 0, nil, apiErr
	}
	if v.secret && secret != nil && !*secret {
		return 0, nil, newErr(ErrVariableCannotUnsetSecret)
	}
	if key == nil && value == nil && secret == nil {
		return 0, nil, newErr(ErrGeneralArgumentInvalid)
	}
	if key != nil && fn.keyTaken(*key, v.id) {
		return 0, nil, newErr(ErrVariableAlreadyExists)
	}
	if key != nil {
		v.key = *key
	}
	if value != nil {
		v.value = *value
	}
	if secret != nil {
		v.secret = *secret
	}
	v.updated = s.now()
	fn.live = false
	return http.StatusOK, variableModel(fn, v), nil
}

// deleteVariable copies DELETE /v1/functions/{functionId}/variables/{variableId} (Variables/Delete.php,
// 1.9.6): 204.
func (s *Server) deleteVariable(c *call) (int, any, *APIError) {
	fn, v, err := c.pathVariable()
	if err != nil {
		return 0, nil, err
	}
	fn.vars = slices.DeleteFunc(fn.vars, func(x *variable) bool { return x == v })
	fn.live = false
	return http.StatusNoContent, nil, nil
}

// Variables returns a function's variables as the runtime sees them, secret ones included (what a test reads
// to check what a deploy stored; no Appwrite route answers a secret's value).
func (s *Server) Variables(projectID, functionID string) (map[string]string, error) {
	out := map[string]string{}
	err := s.withFunction(projectID, functionID, func(fn *function) {
		for _, v := range fn.vars {
			out[v.key] = v.value
		}
	})
	return out, err
}

// SecretVariables returns the keys of a function's variables stored as secret.
func (s *Server) SecretVariables(projectID, functionID string) ([]string, error) {
	var out []string
	err := s.withFunction(projectID, functionID, func(fn *function) {
		for _, v := range fn.vars {
			if v.secret {
				out = append(out, v.key)
			}
		}
	})
	slices.Sort(out)
	return out, err
}
