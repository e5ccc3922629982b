package handler

import (
	"net/http"

	"appwrite-agent/functions/chat/store"
	"appwrite-agent/functions/chat/turns"
	"appwrite-agent/shared/awclient"

	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/models"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

// stopTurn is POST /api/turns/{turn_id}/stop: it asks a running turn of the user to stop by writing the stop
// row of turn's contract (docs/turn.md "Stopping a turn") into the progress table with chat's key: turn_id,
// seq 0, type stop, payload {"type":"stop"}, the time, readable by the user only. turn ends the turn within a
// second: its timeline ends with error cancelled (with the partial answer) and complete, and chat stores the
// message as stopped. A turn that is not the user's is 404, whatever it is; one that has finished answers
// stopping false and writes nothing.
func stopTurn(c *call) (int, any, *apiError) {
	tid := c.req.PathValue("id")
	m, err := c.st.MessageByTurn(c.ctx, c.user.ID, tid)
	if err != nil {
		return 0, nil, fromStore(err, "turn", tid)
	}
	if m.Status != store.StatusRunning {
		return http.StatusOK, map[string]any{"turn_id": tid, "stopping": false, "status": m.Status}, nil
	}
	if c.cfg.ProgressDatabase == "" || c.cfg.ProgressTable == "" {
		return 0, nil, fail(http.StatusServiceUnavailable, "not_configured", "TURN_PROGRESS_DATABASE and TURN_PROGRESS_TABLE are not set: a turn is stopped through its progress table")
	}
	row := map[string]any{
		"turn_id": tid, "seq": 0, "type": turns.StopType, "payload": `{"type":"stop"}`,
		"time": c.now().UTC().Format("2006-01-02T15:04:05.000Z07:00"),
	}
	_, err = awclient.Do(c.ctx, c.aw, awclient.Key(c.key), func(sdk client.Client) (*models.Row, error) {
		db := tablesdb.New(sdk)
		return db.CreateRow(c.cfg.ProgressDatabase, c.cfg.ProgressTable, "unique()", row, db.WithCreateRowPermissions([]string{`read("user:` + c.user.ID + `")`}))
	})
	if err != nil {
		return 0, nil, fail(http.StatusBadGateway, "appwrite_error", "writing the stop row of turn '%s' failed: %v", tid, err)
	}
	return http.StatusAccepted, map[string]any{"turn_id": tid, "stopping": true, "status": m.Status}, nil
}
