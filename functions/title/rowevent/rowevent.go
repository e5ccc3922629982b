// Package rowevent is the title function's event trigger: when Appwrite runs the function for a row
// created in the configured conversations table, it reads the message column of that row, asks for a
// title, and writes it to the title column of the same row with the execution's dynamic key.
//
// It never loops: only create events of the configured table are handled (the function's own update makes
// an update event), and a row that already has a title is left alone.
package rowevent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"appwrite-agent/shared/awclient"

	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/models"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

// Environment variables.
const (
	EnvDatabaseID    = "TITLE_DATABASE_ID"
	EnvTableID       = "TITLE_TABLE_ID"
	EnvMessageColumn = "TITLE_MESSAGE_COLUMN"
	EnvTitleColumn   = "TITLE_COLUMN"
)

// Defaults of the column names.
const (
	DefaultMessageColumn = "message"
	DefaultTitleColumn   = "title"
)

// Config says which rows get titles.
type Config struct {
	DatabaseID, TableID        string
	MessageColumn, TitleColumn string
	// Endpoint and ProjectID locate the Appwrite API (APPWRITE_FUNCTION_API_ENDPOINT, _PROJECT_ID).
	Endpoint, ProjectID string
}

// ConfigFromEnv reads the configuration.
func ConfigFromEnv() Config {
	c := Config{
		DatabaseID:    strings.TrimSpace(os.Getenv(EnvDatabaseID)),
		TableID:       strings.TrimSpace(os.Getenv(EnvTableID)),
		MessageColumn: strings.TrimSpace(os.Getenv(EnvMessageColumn)),
		TitleColumn:   strings.TrimSpace(os.Getenv(EnvTitleColumn)),
		Endpoint:      strings.TrimRight(os.Getenv("APPWRITE_FUNCTION_API_ENDPOINT"), "/"),
		ProjectID:     os.Getenv("APPWRITE_FUNCTION_PROJECT_ID"),
	}
	if c.MessageColumn == "" {
		c.MessageColumn = DefaultMessageColumn
	}
	if c.TitleColumn == "" {
		c.TitleColumn = DefaultTitleColumn
	}
	return c
}

// RowCreate is a parsed row-create event.
type RowCreate struct {
	DatabaseID, TableID, RowID string
}

// ParseEvent reads a concrete Appwrite row-create event in any of its spellings
// (databases.D.tables.T.rows.R.create, the legacy databases.D.collections.C.documents.R.create, and the
// tablesdb.… mirror). ok is false for anything else.
func ParseEvent(event string) (RowCreate, bool) {
	p := strings.Split(event, ".")
	if len(p) != 7 || p[6] != "create" || (p[0] != "databases" && p[0] != "tablesdb") {
		return RowCreate{}, false
	}
	if !(p[2] == "tables" && p[4] == "rows") && !(p[2] == "collections" && p[4] == "documents") {
		return RowCreate{}, false
	}
	for _, id := range []string{p[1], p[3], p[5]} {
		if id == "" || id == "*" {
			return RowCreate{}, false
		}
	}
	return RowCreate{DatabaseID: p[1], TableID: p[3], RowID: p[5]}, true
}

// Outcome is what happened to one event.
type Outcome struct {
	// Status is titled, skipped or failed.
	Status string `json:"status"`
	// Reason says why an event was skipped or failed.
	Reason string `json:"reason,omitempty"`
	// Title is the title written.
	Title string `json:"title,omitempty"`
	// RowID is the row concerned.
	RowID string `json:"rowId,omitempty"`
}

// Titler makes a title for a message ("" when the model gave nothing usable).
type Titler func(ctx context.Context, message string) (string, error)

// RowWriter writes the title column of a row.
type RowWriter func(ctx context.Context, ev RowCreate, column, title string) error

// Handle decides what to do with one event execution: event is the x-appwrite-event header, body the row
// (Appwrite's event payload is the resource model).
func Handle(ctx context.Context, c Config, event string, body []byte, title Titler, write RowWriter) Outcome {
	ev, ok := ParseEvent(event)
	if !ok {
		return Outcome{Status: "skipped", Reason: "not a row create event: " + event}
	}
	if c.DatabaseID == "" || c.TableID == "" {
		return Outcome{Status: "skipped", Reason: EnvDatabaseID + " and " + EnvTableID + " are not set", RowID: ev.RowID}
	}
	if ev.DatabaseID != c.DatabaseID || ev.TableID != c.TableID {
		return Outcome{Status: "skipped", Reason: "not the conversations table", RowID: ev.RowID}
	}
	var row map[string]any
	if err := json.Unmarshal(body, &row); err != nil {
		return Outcome{Status: "failed", Reason: "the event payload is not a row: " + err.Error(), RowID: ev.RowID}
	}
	if id, _ := row["$id"].(string); id != "" && id != ev.RowID {
		return Outcome{Status: "failed", Reason: fmt.Sprintf("the payload is row %q, the event names %q", id, ev.RowID), RowID: ev.RowID}
	}
	if existing, _ := row[c.TitleColumn].(string); strings.TrimSpace(existing) != "" {
		return Outcome{Status: "skipped", Reason: "the row already has a title", RowID: ev.RowID}
	}
	message, _ := row[c.MessageColumn].(string)
	if strings.TrimSpace(message) == "" {
		return Outcome{Status: "skipped", Reason: "the row has no " + c.MessageColumn, RowID: ev.RowID}
	}
	t, err := title(ctx, message)
	if err != nil {
		return Outcome{Status: "failed", Reason: "title: " + err.Error(), RowID: ev.RowID}
	}
	if t == "" {
		return Outcome{Status: "failed", Reason: "the model gave no usable title", RowID: ev.RowID}
	}
	if err := write(ctx, ev, c.TitleColumn, t); err != nil {
		return Outcome{Status: "failed", Reason: "write the title: " + err.Error(), RowID: ev.RowID}
	}
	return Outcome{Status: "titled", Title: t, RowID: ev.RowID}
}

// ErrNoKey means the execution carried no x-appwrite-key: the function's scopes must include rows.write.
var ErrNoKey = errors.New("no x-appwrite-key on the execution (give the function the rows.write scope)")

// SDKWriter writes with the Appwrite Go SDK (shared/awclient) and the execution's dynamic key (PATCH
// /tablesdb/{db}/tables/{table}/rows/{row} with data {column: title}), within ctx and at most timeout.
func SDKWriter(c Config, key string, timeout time.Duration) RowWriter {
	return func(ctx context.Context, ev RowCreate, column, title string) error {
		if key == "" {
			return ErrNoKey
		}
		if c.Endpoint == "" || c.ProjectID == "" {
			return errors.New("APPWRITE_FUNCTION_API_ENDPOINT and APPWRITE_FUNCTION_PROJECT_ID are not set")
		}
		aw := awclient.New(c.Endpoint, c.ProjectID, &http.Client{Timeout: timeout}, 0)
		_, err := awclient.Do(ctx, aw, awclient.Key(key), func(sdk client.Client) (*models.Row, error) {
			db := tablesdb.New(sdk)
			return db.UpdateRow(ev.DatabaseID, ev.TableID, ev.RowID, db.WithUpdateRowData(map[string]any{column: title}))
		})
		return err
	}
}
