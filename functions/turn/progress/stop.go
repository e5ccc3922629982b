package progress

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"appwrite-agent/shared/awclient"

	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/models"
	"github.com/appwrite/sdk-for-go/query"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

// StopType is the type column of the row a caller writes into the progress table to stop a turn
// (docs/turn.md "Stopping a turn"): turn_id, seq 0, type stop, payload {"type":"stop"}.
const StopType = "stop"

// DefaultStopPoll is how often a turn looks for its stop row: with the cancellation that follows, a stop
// ends the turn within a second.
const DefaultStopPoll = 400 * time.Millisecond

// stopCheckTimeout bounds one look for the stop row.
const stopCheckTimeout = 2 * time.Second

// Stopped reports whether the progress table holds a stop row for the turn. It needs rows.read.
func (r *Realtime) Stopped(ctx context.Context) (bool, error) {
	list, err := awclient.Do(ctx, r.appwrite(), awclient.Key(r.Key), func(sdk client.Client) (*models.RowList, error) {
		db := tablesdb.New(sdk)
		return db.ListRows(r.DatabaseID, r.TableID, db.WithListRowsQueries([]string{
			query.Equal(ColTurnID, r.TurnID), query.Equal(ColType, StopType), query.Limit(1),
		}))
	})
	if err != nil {
		return false, fmt.Errorf("looking for the stop row of turn '%s': %w", r.TurnID, err)
	}
	return len(list.Rows) > 0, nil
}

// StopWatch looks for a turn's stop row while the turn runs.
type StopWatch struct {
	// Stopped reports whether the stop row is there (Realtime.Stopped).
	Stopped func(ctx context.Context) (bool, error)
	// Clock paces the looks (RealClock when nil); Every is the pace (DefaultStopPoll when 0).
	Clock Clock
	Every time.Duration
	// Log receives why the watch gave up.
	Log func(string)
}

// Watch calls stop once the stop row appears, and returns a function that ends the watch and waits for it.
// A look that Appwrite refuses (4xx: a missing rows.read scope, a deleted table) ends the watch, with a line
// in the log; a look that fails otherwise is tried again at the next tick. The watch's goroutine ends when
// the returned function is called (after the turn) or ctx ends.
func (w StopWatch) Watch(ctx context.Context, stop func()) (end func()) {
	clock, every := w.Clock, w.Every
	if clock == nil {
		clock = RealClock
	}
	if every <= 0 {
		every = DefaultStopPoll
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	tick := make(chan struct{}, 1)
	arm := func() func() bool {
		return clock.AfterFunc(every, func() {
			select {
			case tick <- struct{}{}:
			default:
			}
		})
	}
	// The goroutine ends with the turn: end cancels ctx and waits for it.
	go func() {
		defer close(done)
		for {
			disarm := arm()
			select {
			case <-ctx.Done():
				disarm()
				return
			case <-tick:
			}
			lctx, lcancel := context.WithTimeout(ctx, stopCheckTimeout)
			found, err := w.Stopped(lctx)
			lcancel()
			switch {
			case found:
				stop()
				return
			case err != nil && ctx.Err() == nil && refused(err):
				if w.Log != nil {
					w.Log("progress: the turn can no longer be stopped through its progress table: " + err.Error())
				}
				return
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// refused reports an error answer of Appwrite's that a retry would not change.
func refused(err error) bool {
	status := awclient.StatusOf(err)
	return status >= 400 && status < 500 && status != http.StatusTooManyRequests
}
