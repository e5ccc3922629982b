package handler

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"appwrite-agent/functions/turn/progress"
	"appwrite-agent/functions/turn/request"
	"appwrite-agent/shared/ident"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/turnrequest"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// Messages of the progress sinks' validation (docs/turn.md, "Progress sinks").
const (
	MsgRealtimeNoUser     = "progress.realtime needs a calling user: the execution has no x-appwrite-user-id (create it with a user session, e.g. the Appwrite Web SDK signed in)"
	MsgRealtimeNoKey      = "progress.realtime needs the execution's API key: there is no x-appwrite-key (give the function the tables.read and rows.write scopes)"
	MsgRealtimeNoTable    = "progress.realtime is not available: TURN_PROGRESS_DATABASE and TURN_PROGRESS_TABLE are not configured"
	MsgRealtimeNoEndpoint = "progress.realtime is not available: APPWRITE_FUNCTION_API_ENDPOINT and APPWRITE_FUNCTION_PROJECT_ID are not set"
	msgWebhookBlocked     = "progress.webhook.url is not allowed: "
	msgTableMissing       = "progress.realtime: "
)

// sinkCheckTimeout bounds the checks a sink needs before the turn starts (DNS of the webhook, the table).
const sinkCheckTimeout = 5 * time.Second

// sinks are the progress sinks of one turn and what must be released after it.
type sinks struct {
	list    []progress.Sink
	release []func()
	// realtime is the Realtime sink (nil without one): its table also carries the turn's stop row.
	realtime *progress.Realtime
}

func (s *sinks) close() {
	for _, f := range s.release {
		f()
	}
}

// sinkError is a refused sink: the HTTP answer to give before any model call.
type sinkError struct {
	status  int
	code    string
	message string
}

// openSinks validates and builds the requested sinks; every refusal happens here, before any model call.
func openSinks(rt openruntimes.Context, cfg Config, t request.Turn) (*sinks, *sinkError) {
	out := &sinks{}
	p := t.Progress
	if !p.Any() {
		return out, nil
	}
	turnID := p.TurnID
	if turnID == "" {
		turnID = strings.TrimSpace(rt.Req.Headers["x-appwrite-execution-id"])
	}
	if turnID == "" || !turnrequest.ValidTurnID(turnID) {
		turnID = ident.Unique()
	}
	ctx, cancel := context.WithTimeout(context.Background(), sinkCheckTimeout)
	defer cancel()
	if p.Realtime {
		userID := strings.TrimSpace(rt.Req.Headers["x-appwrite-user-id"])
		key := strings.TrimSpace(rt.Req.Headers["x-appwrite-key"])
		pc := cfg.Progress
		switch {
		case userID == "":
			return nil, &sinkError{http.StatusUnprocessableEntity, "invalid_request", MsgRealtimeNoUser}
		case pc.DatabaseID == "" || pc.TableID == "":
			return nil, &sinkError{http.StatusUnprocessableEntity, "invalid_request", MsgRealtimeNoTable}
		case pc.Endpoint == "" || pc.ProjectID == "":
			return nil, &sinkError{http.StatusUnprocessableEntity, "invalid_request", MsgRealtimeNoEndpoint}
		case key == "":
			return nil, &sinkError{http.StatusUnprocessableEntity, "invalid_request", MsgRealtimeNoKey}
		}
		// The endpoint is the platform's own API: a plain transport of this turn's, closed after it.
		tr := &http.Transport{MaxIdleConnsPerHost: 2, IdleConnTimeout: 30 * time.Second, ResponseHeaderTimeout: 10 * time.Second}
		out.release = append(out.release, tr.CloseIdleConnections)
		rs := &progress.Realtime{Endpoint: pc.Endpoint, ProjectID: pc.ProjectID, Key: key, DatabaseID: pc.DatabaseID,
			TableID: pc.TableID, UserID: userID, TurnID: turnID, Client: &http.Client{Transport: tr, Timeout: 15 * time.Second}}
		if err := rs.CheckTable(ctx); err != nil {
			out.close()
			if errors.Is(err, progress.ErrTableNotFound) {
				return nil, &sinkError{http.StatusUnprocessableEntity, "invalid_request", msgTableMissing + err.Error()}
			}
			rt.Error("progress: " + err.Error())
			return nil, &sinkError{http.StatusBadGateway, "progress_sink_unavailable", msgTableMissing + err.Error()}
		}
		out.list, out.realtime = append(out.list, rs), rs
	}
	if w := p.Webhook; w != nil {
		if err := cfg.Web.Err(); err != nil {
			out.close()
			rt.Error(err.Error())
			return nil, &sinkError{http.StatusInternalServerError, "internal", "the SSRF policy is misconfigured"}
		}
		if err := safehttp.CheckDestination(ctx, w.URL, cfg.Web.Policy); err != nil {
			out.close()
			return nil, &sinkError{http.StatusUnprocessableEntity, "invalid_request", msgWebhookBlocked + err.Error()}
		}
		client := safehttp.NewClient(cfg.Web.Policy)
		out.release = append(out.release, client.CloseIdleConnections)
		out.list = append(out.list, &progress.Webhook{URL: w.URL, Secret: w.Secret, TurnID: turnID, Client: client})
	}
	return out, nil
}
