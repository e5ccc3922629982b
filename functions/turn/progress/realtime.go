package progress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"appwrite-agent/shared/appwriterest"
	"appwrite-agent/shared/tables"
)

// Columns of the progress table (shared/tables.Progress, which scripts/deploy creates; docs/turn.md lists it).
const (
	ColTurnID  = tables.ProgressTurnID
	ColSeq     = tables.ProgressSeq
	ColType    = tables.ProgressType
	ColPayload = tables.ProgressPayload
	ColTime    = tables.ProgressTime
	// PayloadChars is the size of the payload column: an event whose JSON is longer is written as
	// {"type":…,"truncated":true,"chars":N} (the synchronous body and the webhook still carry it whole).
	PayloadChars = tables.ProgressPayloadChars
)

// Realtime writes every event as a row of a TablesDB table in the function's own project, readable only by
// the calling user, so that the user's browser receives it through Appwrite Realtime. Rows are written one
// at a time, in order.
type Realtime struct {
	// Endpoint is the API endpoint (APPWRITE_FUNCTION_API_ENDPOINT, ending in /v1), ProjectID the project.
	Endpoint, ProjectID string
	// Key is the execution's dynamic or ephemeral key (x-appwrite-key), with rows.write.
	Key string
	// DatabaseID and TableID name the table.
	DatabaseID, TableID string
	// UserID is the calling user (x-appwrite-user-id): each row gets read("user:<UserID>") only.
	UserID string
	TurnID string
	// Client talks to the trusted endpoint.
	Client *http.Client
}

// Name implements Sink.
func (r *Realtime) Name() string { return "realtime" }

// ErrTableNotFound is returned by CheckTable when the table (or its database) does not exist.
var ErrTableNotFound = errors.New("progress table not found")

func (r *Realtime) tableURL() string {
	return strings.TrimRight(r.Endpoint, "/") + "/tablesdb/" + url.PathEscape(r.DatabaseID) + "/tables/" + url.PathEscape(r.TableID)
}

// call sends one request to the progress table with the function's key and decodes the answer into out
// (nil: dropped); an Appwrite error is an *appwriterest.Error.
func (r *Realtime) call(ctx context.Context, method, u string, body, out any) error {
	h := http.Header{}
	h.Set("X-Appwrite-Project", r.ProjectID)
	h.Set("X-Appwrite-Key", r.Key)
	h.Set("X-Appwrite-Response-Format", "1.9.1")
	return appwriterest.Do(ctx, r.Client, appwriterest.Request{Method: method, URL: u, Header: h, Body: body, MaxAnswer: 64 << 10}, out)
}

// CheckTable makes sure the table exists and the key can read it (the function needs tables.read for this
// check and rows.write for the rows).
func (r *Realtime) CheckTable(ctx context.Context) error {
	err := r.call(ctx, http.MethodGet, r.tableURL(), nil, nil)
	switch status := appwriterest.StatusOf(err); {
	case err == nil, status == 0:
		return err
	case status == http.StatusNotFound:
		return fmt.Errorf("%w: table '%s' of database '%s' does not exist in project '%s' (%s)", ErrTableNotFound,
			r.TableID, r.DatabaseID, r.ProjectID, appwriteMessage(err))
	default:
		return fmt.Errorf("reading table '%s/%s' answered HTTP %d: %s", r.DatabaseID, r.TableID, status, appwriteMessage(err))
	}
}

// appwriteMessage is "type: message" of an Appwrite error answer.
func appwriteMessage(err error) string {
	var e *appwriterest.Error
	if errors.As(err, &e) && e.Type != "" {
		return e.Type + ": " + e.Message
	}
	if e != nil {
		return e.Message
	}
	return err.Error()
}

// RowData is the row written for one envelope.
func (r *Realtime) RowData(e Envelope) map[string]any {
	payload, err := json.Marshal(e.Event)
	if err != nil || utf8.RuneCount(payload) > PayloadChars {
		payload, _ = json.Marshal(map[string]any{"type": e.Event.Type, "truncated": true, "chars": utf8.RuneCount(payload)})
	}
	return map[string]any{
		ColTurnID: r.TurnID, ColSeq: e.Seq, ColType: e.Event.Type, ColPayload: string(payload),
		ColTime: e.Time.UTC().Format(TimeFormat),
	}
}

// MaxBulkRows is how many rows one bulk create carries (Appwrite's APP_LIMIT_DATABASE_BATCH).
const MaxBulkRows = 100

// Send implements Sink: a batch of one event is one row create; a longer batch goes in bulk creates of up to
// MaxBulkRows rows (Appwrite stores them in order and sends one Realtime event per row, in order), so a burst
// of tokens costs one request instead of one per event. It stops at the first failure.
func (r *Realtime) Send(ctx context.Context, batch []Envelope) (int, error) {
	perms := []string{`read("user:` + r.UserID + `")`}
	done := 0
	for done < len(batch) {
		chunk := batch[done:min(len(batch), done+MaxBulkRows)]
		var body map[string]any
		if len(chunk) == 1 {
			body = map[string]any{"rowId": "unique()", "data": r.RowData(chunk[0]), "permissions": perms}
		} else {
			rows := make([]map[string]any, len(chunk))
			for i, e := range chunk {
				row := r.RowData(e)
				row["$permissions"] = perms
				rows[i] = row
			}
			body = map[string]any{"rows": rows}
		}
		if err := r.call(ctx, http.MethodPost, r.tableURL()+"/rows", body, nil); err != nil {
			status := appwriterest.StatusOf(err)
			if status == 0 {
				return done, err
			}
			err := fmt.Errorf("creating the rows of events %d-%d answered HTTP %d: %s", chunk[0].Seq, chunk[len(chunk)-1].Seq,
				status, appwriteMessage(err))
			if status == http.StatusNotFound {
				err = fmt.Errorf("%w: %v", ErrPermanent, err)
			}
			return done, err
		}
		done += len(chunk)
	}
	return done, nil
}
