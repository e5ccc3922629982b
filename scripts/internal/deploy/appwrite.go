package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"appwrite-agent/shared/appwriterest"
	"appwrite-agent/shared/tables"

	"github.com/appwrite/sdk-for-go/appwrite"
	sdkclient "github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/functions"
	"github.com/appwrite/sdk-for-go/models"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

// This file is every call deploy makes to Appwrite's API, in one place, so that they can move to the
// project's one Appwrite client (issue 39) as they are: the official Go SDK (github.com/appwrite/sdk-for-go
// v1.0.0) where it has the call, shared/appwriterest for what it lacks (GET /v1/health/version, the proxy
// rules, the scope probes, and a deployment upload under a deployment id of our choosing). Every error is an
// *appwriterest.Error (Appwrite's status, type and message; Status 0 for a transport failure), wrapped with
// what was being done.
//
// The SDK takes no context: its calls are bounded by the client's timeout (sdkTimeout), and each checks the
// context before it starts.

// sdkTimeout bounds one SDK call (the SDK's own default is 10 s, too short for a loaded server).
const sdkTimeout = 2 * time.Minute

// maxAnswer bounds an answer read through appwriterest.
const maxAnswer = 8 << 20

// uploadChunk is Appwrite's upload chunk size (APP_LIMIT_UPLOAD_CHUNK_SIZE, 5 MiB): a larger archive goes in
// several requests with content-range, as the SDK and the CLI send it.
const uploadChunk = 5 << 20

// appwriteAPI is one project's API, reached with one API key.
type appwriteAPI struct {
	endpoint, project, key string
	hc                     *http.Client
	fns                    *functions.Functions
	db                     *tablesdb.TablesDB
	guestFns               *functions.Functions // without the key: GET /v1/functions/runtimes is scope "public"
}

func newAppwriteAPI(endpoint, project, key string, hc *http.Client) *appwriteAPI {
	withKey := appwrite.NewClient(appwrite.WithEndpoint(endpoint), appwrite.WithProject(project), appwrite.WithKey(key), appwrite.WithTimeout(sdkTimeout))
	guest := appwrite.NewClient(appwrite.WithEndpoint(endpoint), appwrite.WithProject(project), appwrite.WithTimeout(sdkTimeout))
	return &appwriteAPI{endpoint: endpoint, project: project, key: key, hc: hc,
		fns: functions.New(withKey), db: tablesdb.New(withKey), guestFns: functions.New(guest)}
}

// sdkError turns an SDK error into an *appwriteerest.Error wrapped with op.
func sdkError(op string, err error) error {
	if err == nil {
		return nil
	}
	var ae *sdkclient.AppwriteError
	if errors.As(err, &ae) {
		var b struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		}
		_ = json.Unmarshal([]byte(ae.GetResponse()), &b)
		if b.Message == "" {
			b.Message = ae.GetMessage()
		}
		return fmt.Errorf("%s: %w", op, &appwriterest.Error{Status: ae.GetStatusCode(), Type: b.Type, Message: b.Message})
	}
	return fmt.Errorf("%s: %w", op, &appwriterest.Error{Err: err})
}

// sdkCall runs f unless ctx has ended.
func sdkCall[T any](ctx context.Context, op string, f func() (T, error)) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", op, &appwriterest.Error{Err: err})
	}
	v, err := f()
	return v, sdkError(op, err)
}

// header is the project and key of a REST call.
func (a *appwriteAPI) header(withKey bool) http.Header {
	h := http.Header{"X-Appwrite-Project": {a.project}}
	if withKey {
		h.Set("X-Appwrite-Key", a.key)
	}
	return h
}

// rest sends one JSON call through appwriterest.
func (a *appwriteAPI) rest(ctx context.Context, method, path string, query url.Values, body, out any) error {
	u := a.endpoint + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	return appwriterest.Do(ctx, a.hc, appwriterest.Request{Method: method, URL: u, Header: a.header(true), Body: body, MaxAnswer: maxAnswer}, out)
}

// Version is GET /v1/health/version (public, no project): {"version": "1.9.6"}.
func (a *appwriteAPI) Version(ctx context.Context) (string, error) {
	var v struct {
		Version *string `json:"version"`
	}
	err := appwriterest.Do(ctx, a.hc, appwriterest.Request{Method: http.MethodGet, URL: a.endpoint + "/health/version", MaxAnswer: 64 << 10}, &v)
	if err != nil {
		return "", fmt.Errorf("GET %s/health/version: %w", a.endpoint, err)
	}
	if v.Version == nil {
		return "", fmt.Errorf("GET %s/health/version: %w", a.endpoint, &appwriterest.Error{Status: 200, Type: "invalid_response", Message: "the answer has no version"})
	}
	return *v.Version, nil
}

// Runtimes is GET /v1/functions/runtimes, asked as a guest of the project: its scope is "public", which
// Appwrite gives guests and never an API key (app/config/roles.php, 1.9.6). The ids of the runtimes the server
// offers (_APP_FUNCTIONS_RUNTIMES).
func (a *appwriteAPI) Runtimes(ctx context.Context) ([]string, error) {
	list, err := sdkCall(ctx, "list runtimes", func() (*models.RuntimeList, error) { return a.guestFns.ListRuntimes() })
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list.Runtimes))
	for _, r := range list.Runtimes {
		out = append(out, r.Id)
	}
	return out, nil
}

// Probe sends method path with an empty JSON body (a write's params missing, so it changes nothing) and
// returns Appwrite's answer as an error, nil for a 2xx.
func (a *appwriteAPI) Probe(ctx context.Context, method, path string) error {
	var body any
	if method != http.MethodGet {
		body = map[string]any{}
	}
	if err := a.rest(ctx, method, path, nil, body, nil); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

// Function is GET /v1/functions/{id}.
func (a *appwriteAPI) Function(ctx context.Context, id string) (*models.Function, error) {
	return sdkCall(ctx, "read function "+id, func() (*models.Function, error) { return a.fns.Get(id) })
}

// CreateFunction is POST /v1/functions with every setting of s.
func (a *appwriteAPI) CreateFunction(ctx context.Context, s functionSpec) (*models.Function, error) {
	f := a.fns
	return sdkCall(ctx, "create function "+s.ID, func() (*models.Function, error) {
		return f.Create(s.ID, s.Name, s.Runtime, f.WithCreateExecute(s.Execute), f.WithCreateEvents(s.Events),
			f.WithCreateSchedule(s.Schedule), f.WithCreateTimeout(s.Timeout), f.WithCreateEnabled(s.Enabled),
			f.WithCreateLogging(s.Logging), f.WithCreateEntrypoint(s.Entrypoint), f.WithCreateCommands(s.Commands),
			f.WithCreateScopes(s.Scopes), f.WithCreateSpecification(s.Specification))
	})
}

// UpdateFunction is PUT /v1/functions/{id} with every setting of s (an update resets what it omits).
func (a *appwriteAPI) UpdateFunction(ctx context.Context, s functionSpec) (*models.Function, error) {
	f := a.fns
	return sdkCall(ctx, "update function "+s.ID, func() (*models.Function, error) {
		return f.Update(s.ID, s.Name, f.WithUpdateRuntime(s.Runtime), f.WithUpdateExecute(s.Execute),
			f.WithUpdateEvents(s.Events), f.WithUpdateSchedule(s.Schedule), f.WithUpdateTimeout(s.Timeout),
			f.WithUpdateEnabled(s.Enabled), f.WithUpdateLogging(s.Logging), f.WithUpdateEntrypoint(s.Entrypoint),
			f.WithUpdateCommands(s.Commands), f.WithUpdateScopes(s.Scopes), f.WithUpdateSpecification(s.Specification))
	})
}

// Variables is GET /v1/functions/{id}/variables (a secret's value comes back empty).
func (a *appwriteAPI) Variables(ctx context.Context, fid string) ([]models.Variable, error) {
	list, err := sdkCall(ctx, "read the variables of "+fid, func() (*models.VariableList, error) { return a.fns.ListVariables(fid) })
	if err != nil {
		return nil, err
	}
	return list.Variables, nil
}

// CreateVariable is POST /v1/functions/{id}/variables.
func (a *appwriteAPI) CreateVariable(ctx context.Context, fid, key, value string, secret bool) (*models.Variable, error) {
	f := a.fns
	return sdkCall(ctx, "set "+key+" on "+fid, func() (*models.Variable, error) {
		return f.CreateVariable(fid, key, value, f.WithCreateVariableSecret(secret))
	})
}

// UpdateVariable is PUT /v1/functions/{id}/variables/{variableId} with a new value.
func (a *appwriteAPI) UpdateVariable(ctx context.Context, fid, vid, key, value string) (*models.Variable, error) {
	f := a.fns
	return sdkCall(ctx, "set "+key+" on "+fid, func() (*models.Variable, error) {
		return f.UpdateVariable(fid, vid, key, f.WithUpdateVariableValue(value))
	})
}

// proxyRule is the part of Appwrite's Rule model deploy reads.
type proxyRule struct {
	ID           string `json:"$id"`
	Domain       string `json:"domain"`
	Status       string `json:"status"`
	ResourceType string `json:"deploymentResourceType"`
	ResourceID   string `json:"deploymentResourceId"`
}

// queryEqual writes an equal query as the SDK's query package does.
func queryEqual(attr, value string) string {
	b, _ := json.Marshal(map[string]any{"method": "equal", "attribute": attr, "values": []string{value}})
	return string(b)
}

// Rules is GET /v1/proxy/rules for the rules that serve function fid (the SDK v1.0.0 has no proxy service).
func (a *appwriteAPI) Rules(ctx context.Context, fid string) ([]proxyRule, error) {
	q := url.Values{"queries[]": {queryEqual("deploymentResourceType", "function"), queryEqual("deploymentResourceId", fid),
		`{"method":"limit","values":[100]}`}}
	var out struct {
		Rules []proxyRule `json:"rules"`
	}
	if err := a.rest(ctx, http.MethodGet, "/proxy/rules", q, nil, &out); err != nil {
		return nil, fmt.Errorf("read the domains of %s: %w", fid, err)
	}
	return out.Rules, nil
}

// CreateFunctionRule is POST /v1/proxy/rules/function: domain serves function fid.
func (a *appwriteAPI) CreateFunctionRule(ctx context.Context, domain, fid string) (proxyRule, error) {
	var r proxyRule
	if err := a.rest(ctx, http.MethodPost, "/proxy/rules/function", nil, map[string]any{"domain": domain, "functionId": fid}, &r); err != nil {
		return r, fmt.Errorf("create the domain %s of %s: %w", domain, fid, err)
	}
	return r, nil
}

// Database is GET /v1/tablesdb/{id}.
func (a *appwriteAPI) Database(ctx context.Context, id string) error {
	_, err := sdkCall(ctx, "read database "+id, func() (*models.Database, error) { return a.db.Get(id) })
	return err
}

// CreateDatabase is POST /v1/tablesdb.
func (a *appwriteAPI) CreateDatabase(ctx context.Context, id, name string) error {
	_, err := sdkCall(ctx, "create database "+id, func() (*models.Database, error) { return a.db.Create(id, name) })
	return err
}

// tableInfo is what deploy reads of a table.
type tableInfo struct {
	RowSecurity bool
	Permissions []string
	// Columns maps each column's key to its status ("available" once Appwrite's worker made it).
	Columns map[string]string
}

// Table is GET /v1/tablesdb/{db}/tables/{id}.
func (a *appwriteAPI) Table(ctx context.Context, db, id string) (*tableInfo, error) {
	t, err := sdkCall(ctx, "read table "+db+"/"+id, func() (*models.Table, error) { return a.db.GetTable(db, id) })
	if err != nil {
		return nil, err
	}
	info := &tableInfo{RowSecurity: t.RowSecurity, Permissions: t.Permissions, Columns: map[string]string{}}
	for _, c := range t.Columns {
		if m, ok := c.(map[string]any); ok {
			key, _ := m["key"].(string)
			status, _ := m["status"].(string)
			info.Columns[key] = status
		}
	}
	return info, nil
}

// CreateTable is POST /v1/tablesdb/{db}/tables with row security on and no table-level permission.
func (a *appwriteAPI) CreateTable(ctx context.Context, db string, t tables.Table) error {
	d := a.db
	_, err := sdkCall(ctx, "create table "+db+"/"+t.ID, func() (*models.Table, error) {
		return d.CreateTable(db, t.ID, t.Name, d.WithCreateTablePermissions([]string{}), d.WithCreateTableRowSecurity(true))
	})
	return err
}

// CreateColumn is POST /v1/tablesdb/{db}/tables/{table}/columns/{type}.
func (a *appwriteAPI) CreateColumn(ctx context.Context, db, table string, c tables.Column) error {
	d := a.db
	op := "create column " + db + "/" + table + "." + c.Key
	var err error
	switch c.Type {
	case "string":
		_, err = sdkCall(ctx, op, func() (*models.ColumnString, error) {
			//lint:ignore SA1019 the string columns of shared/tables, which chat's store creates through the same route on first use
			return d.CreateStringColumn(db, table, c.Key, c.Size, c.Required)
		})
	case "integer":
		_, err = sdkCall(ctx, op, func() (*models.ColumnInteger, error) { return d.CreateIntegerColumn(db, table, c.Key, c.Required) })
	case "boolean":
		_, err = sdkCall(ctx, op, func() (*models.ColumnBoolean, error) { return d.CreateBooleanColumn(db, table, c.Key, c.Required) })
	case "datetime":
		_, err = sdkCall(ctx, op, func() (*models.ColumnDatetime, error) { return d.CreateDatetimeColumn(db, table, c.Key, c.Required) })
	default:
		err = fmt.Errorf("%s: deploy creates no %q column", op, c.Type)
	}
	return err
}

// deploymentInfo is what deploy reads of a deployment.
type deploymentInfo struct {
	ID        string `json:"$id"`
	Status    string `json:"status"`
	BuildLogs string `json:"buildLogs"`
}

// Upload is POST /v1/functions/{id}/deployments (multipart `code`, `activate`), sent as chunks of at most
// uploadChunk bytes, each with content-range and x-appwrite-id: the id deploy chose, which Appwrite takes for
// an upload with a content-range (Deployments/Create.php:169-178, 1.9.6); the SDK sends a small archive
// without either, so Appwrite makes the id. The build then activates the deployment when it is ready.
func (a *appwriteAPI) Upload(ctx context.Context, fid, id string, archive []byte) (deploymentInfo, error) {
	var out deploymentInfo
	total := len(archive)
	for start := 0; start < total; start += uploadChunk {
		end := min(start+uploadChunk, total)
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		_ = mw.WriteField("activate", "true")
		w, err := mw.CreateFormFile("code", "code.tar.gz")
		if err != nil {
			return out, err
		}
		_, _ = w.Write(archive[start:end])
		_ = mw.Close()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.endpoint+"/functions/"+url.PathEscape(fid)+"/deployments", &body)
		if err != nil {
			return out, err
		}
		req.Header = a.header(true)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Content-Range", "bytes "+strconv.Itoa(start)+"-"+strconv.Itoa(end-1)+"/"+strconv.Itoa(total))
		req.Header.Set("X-Appwrite-Id", id)
		if err := a.send(req, &out); err != nil {
			return out, fmt.Errorf("upload the code of %s (bytes %d-%d of %d): %w", fid, start, end-1, total, err)
		}
	}
	return out, nil
}

// send does req and decodes a 2xx JSON answer into out; anything else is an *appwriterest.Error.
func (a *appwriteAPI) send(req *http.Request, out any) error {
	res, err := a.hc.Do(req)
	if err != nil {
		return &appwriterest.Error{Err: err}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return &appwriterest.Error{Err: err}
	}
	if res.StatusCode >= 300 {
		return appwriterest.ErrorOf(res.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &appwriterest.Error{Status: res.StatusCode, Type: "invalid_response", Message: err.Error()}
	}
	return nil
}

// Deployment is GET /v1/functions/{id}/deployments/{deploymentId}.
func (a *appwriteAPI) Deployment(ctx context.Context, fid, did string) (deploymentInfo, error) {
	d, err := sdkCall(ctx, "read deployment "+did+" of "+fid, func() (*models.Deployment, error) { return a.fns.GetDeployment(fid, did) })
	if err != nil {
		return deploymentInfo{}, err
	}
	return deploymentInfo{ID: d.Id, Status: d.Status, BuildLogs: d.BuildLogs}, nil
}
