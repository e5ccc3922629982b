// Package awclient is the chat function's access to its Appwrite project: the REST calls it makes with the
// execution's API key (TablesDB rows and setup, an execution's status) and with a user's JWT (the account,
// creating the turn's execution as that user). Every call takes a context and has the client's deadline.
package awclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"appwrite-agent/shared/appwriterest"
)

// ResponseFormat is the response format asked for (TablesDB, Appwrite 1.9).
const ResponseFormat = "1.9.0"

// maxResponseBytes bounds every answer read (a conversation's messages and a turn's timeline included).
const maxResponseBytes = 32 << 20

// Client calls one Appwrite project.
type Client struct {
	endpoint string // .../v1
	project  string
	hc       *http.Client
}

// New returns a client of project at endpoint (".../v1") using hc.
func New(endpoint, project string, hc *http.Client) *Client {
	return &Client{endpoint: strings.TrimRight(endpoint, "/"), project: project, hc: hc}
}

// Auth says how a request authenticates: with an API key or a user's JWT.
type Auth struct {
	key, jwt string
}

// Key authenticates with an API key (X-Appwrite-Key).
func Key(k string) Auth { return Auth{key: k} }

// JWT authenticates as a user (X-Appwrite-JWT).
func JWT(t string) Auth { return Auth{jwt: t} }

func (c *Client) call(ctx context.Context, auth Auth, method, path string, query url.Values, body, out any) error {
	u := c.endpoint + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	h := http.Header{}
	h.Set("X-Appwrite-Project", c.project)
	h.Set("X-Appwrite-Response-Format", ResponseFormat)
	if auth.key != "" {
		h.Set("X-Appwrite-Key", auth.key)
	}
	if auth.jwt != "" {
		h.Set("X-Appwrite-JWT", auth.jwt)
	}
	return appwriterest.Do(ctx, c.hc, appwriterest.Request{Method: method, URL: u, Header: h, Body: body, MaxAnswer: maxResponseBytes}, out)
}

func seg(s string) string { return url.PathEscape(s) }

// Account is the part of Appwrite's Account model chat reads.
type Account struct {
	ID    string `json:"$id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Account reads GET /v1/account as the JWT's user: the only way chat learns who is calling.
func (c *Client) Account(ctx context.Context, jwt string) (Account, error) {
	var a Account
	err := c.call(ctx, JWT(jwt), http.MethodGet, "/account", nil, nil, &a)
	if err == nil && a.ID == "" {
		err = &appwriterest.Error{Status: http.StatusOK, Type: "invalid_response", Message: "GET /account: the answer has no $id"}
	}
	return a, err
}

// Row is a TablesDB row: its system fields and its columns.
type Row struct {
	ID          string   `json:"$id"`
	CreatedAt   string   `json:"$createdAt"`
	UpdatedAt   string   `json:"$updatedAt"`
	Permissions []string `json:"$permissions"`
	// Data holds every field of the row, system fields included.
	Data map[string]any `json:"-"`
}

// UnmarshalJSON reads the system fields and keeps the whole object in Data.
func (r *Row) UnmarshalJSON(b []byte) error {
	type sys Row
	var s sys
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*r = Row(s)
	return json.Unmarshal(b, &r.Data)
}

// Str returns the string column k ("" when absent or not a string).
func (r Row) Str(k string) string {
	s, _ := r.Data[k].(string)
	return s
}

// Int returns the integer column k (0 when absent; Data holds JSON numbers as float64).
func (r Row) Int(k string) int64 {
	f, _ := r.Data[k].(float64)
	return int64(f)
}

// Bool returns the boolean column k.
func (r Row) Bool(k string) bool {
	b, _ := r.Data[k].(bool)
	return b
}

func rowsPath(db, table string) string {
	return "/tablesdb/" + seg(db) + "/tables/" + seg(table) + "/rows"
}

// CreateRow creates a row with id (or "unique()"), data and permissions.
func (c *Client) CreateRow(ctx context.Context, key, db, table, id string, data map[string]any, perms []string) (Row, error) {
	var r Row
	body := map[string]any{"rowId": id, "data": data}
	if perms != nil {
		body["permissions"] = perms
	}
	err := c.call(ctx, Key(key), http.MethodPost, rowsPath(db, table), nil, body, &r)
	return r, err
}

// GetRow reads a row.
func (c *Client) GetRow(ctx context.Context, key, db, table, id string) (Row, error) {
	var r Row
	err := c.call(ctx, Key(key), http.MethodGet, rowsPath(db, table)+"/"+seg(id), nil, nil, &r)
	return r, err
}

// UpdateRow updates some columns of a row.
func (c *Client) UpdateRow(ctx context.Context, key, db, table, id string, data map[string]any) (Row, error) {
	var r Row
	err := c.call(ctx, Key(key), http.MethodPatch, rowsPath(db, table)+"/"+seg(id), nil, map[string]any{"data": data}, &r)
	return r, err
}

// DeleteRow deletes a row.
func (c *Client) DeleteRow(ctx context.Context, key, db, table, id string) error {
	return c.call(ctx, Key(key), http.MethodDelete, rowsPath(db, table)+"/"+seg(id), nil, nil, nil)
}

// Query is one Appwrite query ({"method","attribute","values"}, as the SDKs write it).
type Query struct {
	Method    string `json:"method"`
	Attribute string `json:"attribute,omitempty"`
	Values    []any  `json:"values,omitempty"`
}

// Equal is the query attribute == value.
func Equal(attr string, value any) Query {
	return Query{Method: "equal", Attribute: attr, Values: []any{value}}
}

// PageSize is how many rows ListRows asks for per request.
const PageSize = 500

// ListRows lists every row matching the queries, page by page, in Appwrite's order (creation).
func (c *Client) ListRows(ctx context.Context, key, db, table string, queries ...Query) ([]Row, error) {
	var all []Row
	for offset := 0; ; {
		q := url.Values{}
		for _, qq := range queries {
			b, _ := json.Marshal(qq)
			q.Add("queries[]", string(b))
		}
		q.Add("queries[]", fmt.Sprintf(`{"method":"limit","values":[%d]}`, PageSize))
		q.Add("queries[]", `{"method":"offset","values":[`+strconv.Itoa(offset)+`]}`)
		var page struct {
			Total int   `json:"total"`
			Rows  []Row `json:"rows"`
		}
		if err := c.call(ctx, Key(key), http.MethodGet, rowsPath(db, table), q, nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Rows...)
		offset += len(page.Rows)
		if len(page.Rows) < PageSize || offset >= page.Total {
			break
		}
	}
	return all, nil
}

// Execution is the part of Appwrite's Execution model chat reads.
type Execution struct {
	ID     string `json:"$id"`
	Status string `json:"status"` // waiting, processing, completed, failed, scheduled
}

// CreateAsyncExecution starts functionID asynchronously as the JWT's user: POST /v1/functions/{id}/executions
// with async true, the body, method POST, path "/" and the given headers.
func (c *Client) CreateAsyncExecution(ctx context.Context, jwt, functionID string, body []byte, headers map[string]string) (Execution, error) {
	return c.StartExecution(ctx, JWT(jwt), functionID, body, headers)
}

// StartExecution starts functionID asynchronously with auth (a user's JWT: the execution is that user's;
// an API key: it has no user), as CreateAsyncExecution.
func (c *Client) StartExecution(ctx context.Context, auth Auth, functionID string, body []byte, headers map[string]string) (Execution, error) {
	var e Execution
	in := map[string]any{"body": string(body), "async": true, "path": "/", "method": "POST", "headers": headers}
	err := c.call(ctx, auth, http.MethodPost, "/functions/"+seg(functionID)+"/executions", nil, in, &e)
	return e, err
}

// Response is a synchronous execution's answer: the function's status and body.
type Response struct {
	Status int    `json:"responseStatusCode"`
	Body   string `json:"responseBody"`
}

// Execute runs functionID synchronously with the API key: POST /v1/functions/{id}/executions with async
// false, the method and path, no body; Appwrite answers once the function has (at most 30 s).
func (c *Client) Execute(ctx context.Context, key, functionID, method, path string) (Response, error) {
	var r Response
	in := map[string]any{"async": false, "path": path, "method": method}
	err := c.call(ctx, Key(key), http.MethodPost, "/functions/"+seg(functionID)+"/executions", nil, in, &r)
	return r, err
}

// GetExecution reads an execution with the API key.
func (c *Client) GetExecution(ctx context.Context, key, functionID, executionID string) (Execution, error) {
	var e Execution
	err := c.call(ctx, Key(key), http.MethodGet, "/functions/"+seg(functionID)+"/executions/"+seg(executionID), nil, nil, &e)
	return e, err
}

// CreateDatabase creates a database (POST /v1/tablesdb).
func (c *Client) CreateDatabase(ctx context.Context, key, id, name string) error {
	return c.call(ctx, Key(key), http.MethodPost, "/tablesdb", nil, map[string]any{"databaseId": id, "name": name}, nil)
}

// CreateTable creates a table with row security on and no table-level permission.
func (c *Client) CreateTable(ctx context.Context, key, db, id, name string) error {
	return c.call(ctx, Key(key), http.MethodPost, "/tablesdb/"+seg(db)+"/tables", nil,
		map[string]any{"tableId": id, "name": name, "permissions": []string{}, "rowSecurity": true}, nil)
}

// Column is a column to create: Type is the route's type (string, integer, boolean, datetime).
type Column struct {
	Key      string
	Type     string
	Size     int
	Required bool
}

// CreateColumn creates a column (POST /v1/tablesdb/{db}/tables/{t}/columns/{type}).
func (c *Client) CreateColumn(ctx context.Context, key, db, table string, col Column) error {
	body := map[string]any{"key": col.Key, "required": col.Required}
	if col.Type == "string" {
		body["size"] = col.Size
	}
	return c.call(ctx, Key(key), http.MethodPost, "/tablesdb/"+seg(db)+"/tables/"+seg(table)+"/columns/"+col.Type, nil, body, nil)
}

// TableColumns reads a table's columns: key and status ("available" once Appwrite's database worker made
// it; "processing" before).
func (c *Client) TableColumns(ctx context.Context, key, db, table string) (map[string]string, error) {
	var t struct {
		Columns []struct {
			Key    string `json:"key"`
			Status string `json:"status"`
		} `json:"columns"`
	}
	if err := c.call(ctx, Key(key), http.MethodGet, "/tablesdb/"+seg(db)+"/tables/"+seg(table), nil, nil, &t); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(t.Columns))
	for _, col := range t.Columns {
		out[col.Key] = col.Status
	}
	return out, nil
}
