package progress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"appwrite-agent/shared/awclient"

	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/models"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

// Columns of the progress table (scripts/dev creates it; docs/turn.md lists it for a real project).
const (
	ColTurnID  = "turn_id"
	ColSeq     = "seq"
	ColType    = "type"
	ColPayload = "payload"
	ColTime    = "time"
	// PayloadChars is the size of the payload column: an event whose JSON is longer is written as
	// {"type":…,"truncated":true,"chars":N} (the synchronous body and the webhook still carry it whole).
	PayloadChars = 1_000_000
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

// maxAnswer bounds what the sink reads of an answer: the table, a look for the stop row. A bulk create's
// answer (the rows written, payloads included) is read only this far and dropped.
const maxAnswer = 64 << 10

// appwrite is the client of the progress table's project.
func (r *Realtime) appwrite() *awclient.Client {
	return awclient.New(r.Endpoint, r.ProjectID, r.Client, maxAnswer)
}

// CheckTable makes sure the table exists and the key can read it (the function needs tables.read for this
// check and rows.write for the rows).
func (r *Realtime) CheckTable(ctx context.Context) error {
	_, err := awclient.Do(ctx, r.appwrite(), awclient.Key(r.Key), func(sdk client.Client) (*models.Table, error) {
		return tablesdb.New(sdk).GetTable(r.DatabaseID, r.TableID)
	})
	switch status := awclient.StatusOf(err); {
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
	var e *awclient.Error
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
		// A REST call rather than the SDK's CreateRow and CreateRows: Appwrite answers with every row written,
		// payloads included, which the sink does not read (the SDK would decode it whole).
		err := r.appwrite().Call(ctx, awclient.Key(r.Key), awclient.Request{Method: http.MethodPost,
			Path: awclient.Path("tablesdb", r.DatabaseID, "tables", r.TableID, "rows"), Body: body}, nil)
		if err != nil {
			status := awclient.StatusOf(err)
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
