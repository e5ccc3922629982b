package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/tables"

	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/file"
	"github.com/appwrite/sdk-for-go/functions"
	"github.com/appwrite/sdk-for-go/models"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

// This file is every call deploy makes to Appwrite's API, in one place, through the project's one Appwrite
// client, shared/awclient: awclient.Do runs a call of the official Go SDK (github.com/appwrite/sdk-for-go
// v1.0.0) with a context, for everything the SDK has; Client.Call sends what it lacks (GET /v1/health/version,
// the proxy rules, the scope probes). Every error is an *awclient.Error (Appwrite's status, type and message;
// Status 0 for a transport failure), wrapped with what was being done.

// maxAnswer bounds an answer (a function's model with its variables, a table with its columns).
const maxAnswer = 8 << 20

// uploadChunk is Appwrite's upload chunk size (APP_LIMIT_UPLOAD_CHUNK_SIZE, 5 MiB) and the SDK's: a larger
// archive goes in several requests with content-range, as the SDK and the CLI send it.
const uploadChunk = 5 << 20

// appwriteAPI is one project's API, reached with one API key.
type appwriteAPI struct {
	aw     *awclient.Client // the project
	public *awclient.Client // no project: GET /v1/health/version
	key    awclient.Auth
	tmp    string // where an upload's archive is written for the SDK, which reads a file
}

func newAppwriteAPI(endpoint, project, key string, hc *http.Client) *appwriteAPI {
	return &appwriteAPI{aw: awclient.New(endpoint, project, hc, maxAnswer), public: awclient.New(endpoint, "", hc, 64<<10),
		key: awclient.Key(key), tmp: os.TempDir()}
}

// wrap names what failed.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}

// sdk runs one SDK call with the key.
func sdk[T any](ctx context.Context, a *appwriteAPI, op string, call func(c client.Client) (T, error)) (T, error) {
	v, err := awclient.Do(ctx, a.aw, a.key, call)
	return v, wrap(op, err)
}

// Version is GET /v1/health/version (public, no project): {"version": "1.9.6"}.
func (a *appwriteAPI) Version(ctx context.Context) (string, error) {
	var v struct {
		Version *string `json:"version"`
	}
	op := "GET " + a.public.Endpoint() + "/health/version"
	if err := a.public.Call(ctx, awclient.Auth{}, awclient.Request{Method: http.MethodGet, Path: awclient.Path("health", "version")}, &v); err != nil {
		return "", wrap(op, err)
	}
	if v.Version == nil {
		return "", wrap(op, &awclient.Error{Status: 200, Type: "invalid_response", Message: "the answer has no version"})
	}
	return *v.Version, nil
}

// Runtimes is GET /v1/functions/runtimes, asked as a guest of the project: its scope is "public", which
// Appwrite gives guests and never an API key (app/config/roles.php, 1.9.6). The ids of the runtimes the server
// offers (_APP_FUNCTIONS_RUNTIMES).
func (a *appwriteAPI) Runtimes(ctx context.Context) ([]string, error) {
	list, err := awclient.Do(ctx, a.aw, awclient.Auth{}, func(c client.Client) (*models.RuntimeList, error) {
		return functions.New(c).ListRuntimes()
	})
	if err != nil {
		return nil, wrap("list runtimes", err)
	}
	out := make([]string, 0, len(list.Runtimes))
	for _, r := range list.Runtimes {
		out = append(out, r.Id)
	}
	return out, nil
}

// Probe sends method to the route of segments with the key, with an empty JSON body for a write (its params
// missing, so it changes nothing), and returns Appwrite's answer as an error, nil for a 2xx.
func (a *appwriteAPI) Probe(ctx context.Context, method string, segments ...string) error {
	r := awclient.Request{Method: method, Path: awclient.Path(segments...)}
	if method != http.MethodGet {
		r.Body = map[string]any{}
	}
	return wrap(method+" "+r.Path, a.aw.Call(ctx, a.key, r, nil))
}

// Function is GET /v1/functions/{id}.
func (a *appwriteAPI) Function(ctx context.Context, id string) (*models.Function, error) {
	return sdk(ctx, a, "read function "+id, func(c client.Client) (*models.Function, error) { return functions.New(c).Get(id) })
}

// CreateFunction is POST /v1/functions with every setting of s.
func (a *appwriteAPI) CreateFunction(ctx context.Context, s functionSpec) (*models.Function, error) {
	return sdk(ctx, a, "create function "+s.ID, func(c client.Client) (*models.Function, error) {
		f := functions.New(c)
		return f.Create(s.ID, s.Name, s.Runtime, f.WithCreateExecute(s.Execute), f.WithCreateEvents(s.Events),
			f.WithCreateSchedule(s.Schedule), f.WithCreateTimeout(s.Timeout), f.WithCreateEnabled(s.Enabled),
			f.WithCreateLogging(s.Logging), f.WithCreateEntrypoint(s.Entrypoint), f.WithCreateCommands(s.Commands),
			f.WithCreateScopes(s.Scopes), f.WithCreateSpecification(s.Specification))
	})
}

// UpdateFunction is PUT /v1/functions/{id} with every setting of s (an update resets what it omits).
func (a *appwriteAPI) UpdateFunction(ctx context.Context, s functionSpec) (*models.Function, error) {
	return sdk(ctx, a, "update function "+s.ID, func(c client.Client) (*models.Function, error) {
		f := functions.New(c)
		return f.Update(s.ID, s.Name, f.WithUpdateRuntime(s.Runtime), f.WithUpdateExecute(s.Execute),
			f.WithUpdateEvents(s.Events), f.WithUpdateSchedule(s.Schedule), f.WithUpdateTimeout(s.Timeout),
			f.WithUpdateEnabled(s.Enabled), f.WithUpdateLogging(s.Logging), f.WithUpdateEntrypoint(s.Entrypoint),
			f.WithUpdateCommands(s.Commands), f.WithUpdateScopes(s.Scopes), f.WithUpdateSpecification(s.Specification))
	})
}

// Variables is GET /v1/functions/{id}/variables (a secret's value comes back empty).
func (a *appwriteAPI) Variables(ctx context.Context, fid string) ([]models.Variable, error) {
	list, err := sdk(ctx, a, "read the variables of "+fid, func(c client.Client) (*models.VariableList, error) {
		return functions.New(c).ListVariables(fid)
	})
	if err != nil {
		return nil, err
	}
	return list.Variables, nil
}

// CreateVariable is POST /v1/functions/{id}/variables.
func (a *appwriteAPI) CreateVariable(ctx context.Context, fid, key, value string, secret bool) (*models.Variable, error) {
	return sdk(ctx, a, "set "+key+" on "+fid, func(c client.Client) (*models.Variable, error) {
		f := functions.New(c)
		return f.CreateVariable(fid, key, value, f.WithCreateVariableSecret(secret))
	})
}

// UpdateVariable is PUT /v1/functions/{id}/variables/{variableId} with a new value.
func (a *appwriteAPI) UpdateVariable(ctx context.Context, fid, vid, key, value string) (*models.Variable, error) {
	return sdk(ctx, a, "set "+key+" on "+fid, func(c client.Client) (*models.Variable, error) {
		f := functions.New(c)
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
	err := a.aw.Call(ctx, a.key, awclient.Request{Method: http.MethodGet, Path: awclient.Path("proxy", "rules"), Query: q}, &out)
	return out.Rules, wrap("read the domains of "+fid, err)
}

// CreateFunctionRule is POST /v1/proxy/rules/function: domain serves function fid.
func (a *appwriteAPI) CreateFunctionRule(ctx context.Context, domain, fid string) (proxyRule, error) {
	var r proxyRule
	err := a.aw.Call(ctx, a.key, awclient.Request{Method: http.MethodPost, Path: awclient.Path("proxy", "rules", "function"),
		Body: map[string]any{"domain": domain, "functionId": fid}}, &r)
	return r, wrap("create the domain "+domain+" of "+fid, err)
}

// Database is GET /v1/tablesdb/{id}.
func (a *appwriteAPI) Database(ctx context.Context, id string) error {
	_, err := sdk(ctx, a, "read database "+id, func(c client.Client) (*models.Database, error) { return tablesdb.New(c).Get(id) })
	return err
}

// CreateDatabase is POST /v1/tablesdb.
func (a *appwriteAPI) CreateDatabase(ctx context.Context, id, name string) error {
	_, err := sdk(ctx, a, "create database "+id, func(c client.Client) (*models.Database, error) { return tablesdb.New(c).Create(id, name) })
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
	t, err := sdk(ctx, a, "read table "+db+"/"+id, func(c client.Client) (*models.Table, error) { return tablesdb.New(c).GetTable(db, id) })
	if err != nil {
		return nil, err
	}
	var cols struct {
		Columns []struct {
			Key    string `json:"key"`
			Status string `json:"status"`
		} `json:"columns"`
	}
	if err := t.Decode(&cols); err != nil {
		return nil, fmt.Errorf("read table %s/%s: %w", db, id, err)
	}
	info := &tableInfo{RowSecurity: t.RowSecurity, Permissions: t.Permissions, Columns: map[string]string{}}
	for _, c := range cols.Columns {
		info.Columns[c.Key] = c.Status
	}
	return info, nil
}

// CreateTable is POST /v1/tablesdb/{db}/tables with row security on and no table-level permission.
func (a *appwriteAPI) CreateTable(ctx context.Context, db string, t tables.Table) error {
	_, err := sdk(ctx, a, "create table "+db+"/"+t.ID, func(c client.Client) (*models.Table, error) {
		d := tablesdb.New(c)
		return d.CreateTable(db, t.ID, t.Name, d.WithCreateTablePermissions([]string{}), d.WithCreateTableRowSecurity(true))
	})
	return err
}

// CreateColumn is POST /v1/tablesdb/{db}/tables/{table}/columns/{type}.
func (a *appwriteAPI) CreateColumn(ctx context.Context, db, table string, col tables.Column) error {
	_, err := sdk(ctx, a, "create column "+db+"/"+table+"."+col.Key, func(c client.Client) (struct{}, error) {
		d := tablesdb.New(c)
		var err error
		switch col.Type {
		case "string":
			//lint:ignore SA1019 the string columns of shared/tables, which chat's store creates through the same route on first use
			_, err = d.CreateStringColumn(db, table, col.Key, col.Size, col.Required)
		case "integer":
			_, err = d.CreateIntegerColumn(db, table, col.Key, col.Required)
		case "boolean":
			_, err = d.CreateBooleanColumn(db, table, col.Key, col.Required)
		case "datetime":
			_, err = d.CreateDatetimeColumn(db, table, col.Key, col.Required)
		default:
			err = fmt.Errorf("deploy creates no %q column", col.Type)
		}
		return struct{}{}, err
	})
	return err
}

// deploymentInfo is what deploy reads of a deployment.
type deploymentInfo struct {
	ID        string
	Status    string
	BuildLogs string
}

// Upload is POST /v1/functions/{id}/deployments (multipart `code`, `activate`) through the SDK's file upload,
// under the deployment id deploy chose: Appwrite takes the `x-appwrite-id` of an upload sent with a
// content-range (Deployments/Create.php:169-178, 1.9.6). The SDK sends an archive larger than its 5 MiB chunk
// in chunks, each with its content-range and that id (and resumes an upload the server already holds part
// of); a smaller one in one request, which gets its content-range here, since the SDK sends none for it. The
// build then activates the deployment when it is ready.
func (a *appwriteAPI) Upload(ctx context.Context, fid, id string, archive []byte) (deploymentInfo, error) {
	op := "upload the code of " + fid
	path := filepath.Join(a.tmp, "deploy-"+id+".tar.gz")
	if err := os.WriteFile(path, archive, 0o600); err != nil {
		return deploymentInfo{}, wrap(op, err)
	}
	defer os.Remove(path)
	d, err := sdk(ctx, a, op, func(c client.Client) (*models.Deployment, error) {
		headers := map[string]any{"content-type": "multipart/form-data"}
		if len(archive) <= uploadChunk {
			headers["content-range"] = "bytes 0-" + strconv.Itoa(len(archive)-1) + "/" + strconv.Itoa(len(archive))
		}
		params := map[string]any{"functionId": fid, "code": file.NewInputFile(path, "code.tar.gz"), "activate": true}
		res, err := c.FileUpload("/functions/"+fid+"/deployments", headers, params, "code", id)
		if err != nil {
			return nil, err
		}
		var dep models.Deployment
		if s, ok := res.Result.(string); ok {
			err = json.Unmarshal([]byte(s), &dep)
		}
		return &dep, err
	})
	if err != nil {
		return deploymentInfo{}, err
	}
	return deploymentInfo{ID: d.Id, Status: d.Status}, nil
}

// Deployment is GET /v1/functions/{id}/deployments/{deploymentId}.
func (a *appwriteAPI) Deployment(ctx context.Context, fid, did string) (deploymentInfo, error) {
	d, err := sdk(ctx, a, "read deployment "+did+" of "+fid, func(c client.Client) (*models.Deployment, error) {
		return functions.New(c).GetDeployment(fid, did)
	})
	if err != nil {
		return deploymentInfo{}, err
	}
	return deploymentInfo{ID: d.Id, Status: d.Status, BuildLogs: d.BuildLogs}, nil
}
