package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"appwrite-agent/functions/chat/automations"
	"appwrite-agent/functions/chat/store"
	"appwrite-agent/functions/chat/turns"
	"appwrite-agent/shared/attachment"
	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/fnhttp"
	"appwrite-agent/shared/mcpauth"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/turnrequest"

	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/functions"
	"github.com/appwrite/sdk-for-go/models"
	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// This file is chat's side of its automations (docs/chat.md "Automations", package automations): the API
// the page uses (with the user's JWT), the deliveries of the events (POST /api/events/<id>, signed with the
// automation's secret: no JWT), the scheduled run that keeps them alive (chat's own cron execution), and the
// start of a delivery's turn for the automation's owner.

// MCPTimeout bounds one call to an MCP server (a subscribe waits for the server's verification challenge).
const MCPTimeout = 20 * time.Second

// ScheduleBudget bounds a scheduled run, inside chat's 30 s timeout.
const ScheduleBudget = 25 * time.Second

// automations is the automations of c's user (or, in a delivery or a scheduled run, of every owner).
func (c *call) automations() *automations.Service {
	cfg := c.cfg.Automations
	cfg.Own = c.cfg.OwnResources()
	opts := c.cfg.MCP
	opts.TotalTimeout, opts.MaxResponseBytes = MCPTimeout, 8<<20
	return automations.New(cfg, c.st, safehttp.NewClient(opts), c.now, c.startAutomationTurn, func(s string) { c.rt.Error(s) })
}

// forOwner is c acting for userID: an automation's owner, who is not present.
func (c *call) forOwner(ctx context.Context, userID string) *call {
	oc := *c
	oc.ctx, oc.user, oc.jwt = ctx, user{ID: userID}, ""
	return &oc
}

// startAutomationTurn starts a delivery's turn (automations.Starter): in the automation's conversation, as
// its owner: the history is the conversation's stored messages, the owner's memories, MCP connections and
// agent settings go with it (addUserContext), the execution is created with chat's key (it has no calling
// user) and names the owner in progress.user_id, so the progress rows are readable by the owner alone
// (docs/turn.md). On an error nothing of the turn is left.
func (c *call) startAutomationTurn(ctx context.Context, a store.Automation, turnID, message string) error {
	oc := c.forOwner(ctx, a.UserID)
	if c.cfg.SessionKey == "" || c.cfg.ProgressDatabase == "" || c.cfg.ProgressTable == "" {
		return errors.New("AGENT_API_KEY, TURN_PROGRESS_DATABASE and TURN_PROGRESS_TABLE must be set to start turns")
	}
	msgs, err := oc.st.Messages(ctx, a.UserID, a.ConversationID)
	if err != nil {
		return fmt.Errorf("reading the automation's conversation: %w", err)
	}
	var history []turnrequest.HistoryMessage
	for _, m := range msgs {
		if m.Status != store.StatusRunning {
			history = append(history, turnrequest.HistoryMessage{Role: m.Role, Content: m.Content})
		}
	}
	req := turnrequest.Body{Message: message, History: turns.History(history), Async: true,
		Progress: &turnrequest.Progress{TurnID: turnID, Realtime: true, UserID: a.UserID}}
	if e := oc.addUserContext(&req); e != nil {
		return errors.New(e.message)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if len(body) > attachment.MaxExecutionBody {
		return fmt.Errorf("the turn request is %d bytes, more than Appwrite takes (%d)", len(body), attachment.MaxExecutionBody)
	}
	userMsg, asst, err := oc.st.AddTurnMessages(ctx, a.UserID, a.ConversationID, turnID, message, nil)
	if err != nil {
		return fmt.Errorf("storing the turn's messages: %w", err)
	}
	// The turn's start moves the conversation up and marks it unread, before the execution starts: the page
	// learns it through Realtime, reads the conversation and follows the turn from its first event.
	if _, err := oc.st.TouchConversation(ctx, a.ConversationID, c.now()); err != nil {
		c.rt.Error("marking the conversation of automation " + a.ID + " active: " + err.Error())
	}
	// chat's key: the execution has no calling user; progress.user_id names the owner to turn.
	ex, err := awclient.Do(ctx, oc.aw, awclient.Key(oc.key), func(sdk client.Client) (*models.Execution, error) {
		f := functions.New(sdk)
		return f.CreateExecution(c.cfg.TurnFunction, f.WithCreateExecutionBody(string(body)), f.WithCreateExecutionAsync(true),
			f.WithCreateExecutionPath("/"), f.WithCreateExecutionMethod(http.MethodPost), f.WithCreateExecutionHeaders(map[string]string{
				"content-type": "application/json", "x-session-api-key": c.cfg.SessionKey,
			}))
	})
	if err != nil {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		for _, id := range []string{asst.ID, userMsg.ID} {
			if derr := oc.st.DeleteMessage(dctx, id); derr != nil {
				c.rt.Error("removing message " + id + " of a turn that did not start: " + derr.Error())
			}
		}
		return fmt.Errorf("starting the turn (function '%s'): %w", c.cfg.TurnFunction, err)
	}
	if err := oc.st.SetExecution(ctx, asst.ID, ex.Id); err != nil {
		c.rt.Error("recording execution " + ex.Id + " of turn " + turnID + ": " + err.Error())
	}
	return nil
}

// automationsError turns an automations error into an answer.
func automationsError(err error, id string) *apiError {
	var ve *automations.ValidationError
	var ce *automations.ConnectionError
	var re *automations.RemoteError
	switch {
	case errors.As(err, &ve):
		return invalid("%s", ve.Message)
	case errors.Is(err, automations.ErrNotConfigured):
		return fail(http.StatusServiceUnavailable, "not_configured", "%v", err)
	case errors.As(err, &ce):
		return fail(http.StatusConflict, "mcp_connection", "%v", err)
	case errors.As(err, &re):
		switch re.Code {
		case -32602, -32011, -32023:
			return invalid("the events server refused the automation: %s", re.Message)
		case -32012, -32024:
			return fail(http.StatusForbidden, "forbidden", "the events server refused the automation: %s", re.Message)
		case -32013, -32025: // ResourceExhausted: the project's webhooks, or the challenges to chat's host
			return fail(http.StatusTooManyRequests, "rate_limited", "the events server cannot take another subscription now: %s", re.Message)
		}
		return fail(http.StatusBadGateway, "mcp_error", "%v", err)
	}
	var se *safehttp.BlockedError
	if errors.As(err, &se) {
		return fail(http.StatusBadGateway, "mcp_error", "the MCP server cannot be reached: %v", err)
	}
	return fromStore(err, "automation", id)
}

func automationBody(v automations.View) map[string]any { return map[string]any{"automation": v} }

func listAutomations(c *call) (int, any, *apiError) {
	list, err := c.automations().List(c.ctx, c.user.ID)
	if err != nil {
		return 0, nil, automationsError(err, "")
	}
	return http.StatusOK, map[string]any{"automations": list}, nil
}

func createAutomation(c *call) (int, any, *apiError) {
	var in automations.Input
	if e := decodeBody(c, &in); e != nil {
		return 0, nil, e
	}
	v, err := c.automations().Create(c.ctx, c.user.ID, in)
	if err != nil {
		return 0, nil, automationsError(err, "")
	}
	return http.StatusCreated, automationBody(v), nil
}

func automationEvents(c *call) (int, any, *apiError) {
	id := strings.TrimSpace(c.rt.Req.Query["connection_id"])
	if id == "" {
		return 0, nil, invalid("connection_id is required: the MCP connection of the events server")
	}
	evs, err := c.automations().Events(c.ctx, c.user.ID, id)
	if err != nil {
		return 0, nil, automationsError(err, "")
	}
	return http.StatusOK, map[string]any{"events": evs}, nil
}

func pauseAutomation(c *call) (int, any, *apiError) {
	id := c.req.PathValue("id")
	v, err := c.automations().Pause(c.ctx, c.user.ID, id)
	if err != nil {
		return 0, nil, automationsError(err, id)
	}
	return http.StatusOK, automationBody(v), nil
}

func resumeAutomation(c *call) (int, any, *apiError) {
	id := c.req.PathValue("id")
	v, err := c.automations().Resume(c.ctx, c.user.ID, id)
	if err != nil {
		return 0, nil, automationsError(err, id)
	}
	return http.StatusOK, automationBody(v), nil
}

func deleteAutomation(c *call) (int, any, *apiError) {
	id := c.req.PathValue("id")
	res, err := c.automations().Delete(c.ctx, c.user.ID, id)
	if err != nil {
		return 0, nil, automationsError(err, id)
	}
	return http.StatusOK, res, nil
}

func automationsReconnected(c *call) (int, any, *apiError) {
	var in struct {
		ConnectionID string `json:"connection_id"`
	}
	if e := decodeBody(c, &in); e != nil {
		return 0, nil, e
	}
	if strings.TrimSpace(in.ConnectionID) == "" {
		return 0, nil, invalid("connection_id is required")
	}
	list, err := c.automations().Reconnected(c.ctx, c.user.ID, strings.TrimSpace(in.ConnectionID))
	if err != nil {
		return 0, nil, automationsError(err, "")
	}
	return http.StatusOK, map[string]any{"automations": list}, nil
}

// keyCall is a call without a user: a delivery or a scheduled run, with the execution's key.
func keyCall(rt openruntimes.Context, cfg Config, now func() time.Time, budget time.Duration) (*call, context.CancelFunc, *apiError) {
	if cfg.Endpoint == "" || cfg.ProjectID == "" {
		return nil, nil, fail(http.StatusServiceUnavailable, "not_configured", "APPWRITE_FUNCTION_API_ENDPOINT and APPWRITE_FUNCTION_PROJECT_ID are not set: chat runs as an Appwrite function")
	}
	key := rt.Req.Headers["x-appwrite-key"]
	if key == "" {
		return nil, nil, fail(http.StatusServiceUnavailable, "not_configured", "the execution has no API key (x-appwrite-key): give chat its scopes in appwrite.json")
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	aw := awclient.New(cfg.Endpoint, cfg.ProjectID, &http.Client{Timeout: budget}, maxAnswer)
	return &call{rt: rt, cfg: cfg, ctx: ctx, aw: aw, key: key, st: store.New(aw, key, cfg.DatabaseID, cfg.Secrets), now: now}, cancel, nil
}

// deliver is POST /api/events/<automation id>: a delivery of an automation's event, or the verification
// challenge of its subscription (automations.Service.Deliver). Signed with the automation's secret; no JWT.
func deliver(rt openruntimes.Context, cfg Config, now func() time.Time, id string) openruntimes.Response {
	c, cancel, e := keyCall(rt, cfg, now, automations.DeliveryBudget)
	if e != nil {
		return fnhttp.Error(rt, e.status, e.code, e.message)
	}
	defer cancel()
	a := c.automations().Deliver(c.ctx, id, rt.Req.Headers, rt.Req.BodyBinary())
	r := fnhttp.JSON(rt, a.Status, a.Body)
	r.Headers["cache-control"] = "no-store"
	return r
}

// scheduled is chat's cron execution (appwrite.json "schedule", automations.IsScheduled): it keeps every
// automation alive (automations.Service.RunSchedule) and stores their finished turns.
func scheduled(rt openruntimes.Context, cfg Config, now func() time.Time) openruntimes.Response {
	c, cancel, e := keyCall(rt, cfg, now, ScheduleBudget)
	if e != nil {
		rt.Error("scheduled run: " + e.message)
		return fnhttp.Error(rt, e.status, e.code, e.message)
	}
	defer cancel()
	running, err := c.st.RunningTurns(c.ctx)
	if err != nil {
		rt.Error("scheduled run: reading the running turns: " + err.Error())
	}
	sweep := func(ctx context.Context, a store.Automation) error {
		ms := running[a.ConversationID]
		if len(ms) == 0 {
			return nil
		}
		oc := c.forOwner(ctx, a.UserID)
		conv, err := oc.st.Conversation(ctx, a.UserID, a.ConversationID)
		if err != nil {
			return err
		}
		for _, m := range ms {
			oc.finish(conv, m)
		}
		return nil
	}
	rep, err := c.automations().RunSchedule(c.ctx, sweep)
	if err != nil {
		rt.Error("scheduled run: " + err.Error())
		return fnhttp.Error(rt, http.StatusBadGateway, "appwrite_error", err.Error())
	}
	rt.Log(rep.String())
	return fnhttp.JSON(rt, http.StatusOK, map[string]any{"status": "ok", "report": rep})
}

// newerTokens reports whether tokens a finished turn echoed for connection id should replace the stored
// ones: a turn echoes the tokens it was given (or refreshed), and chat's scheduled run may have refreshed the
// connection meanwhile, spending the refresh token the turn knew. The access token that expires later is the
// newer one; when either expiry is unknown, the turn's are kept (as before automations existed).
func (c *call) newerTokens(id string, echoed json.RawMessage) bool {
	mc, err := c.st.MCPConnection(c.ctx, c.user.ID, id)
	if err != nil {
		return true
	}
	storedRaw, _, err := c.st.OpenMCP(c.user.ID, mc)
	if err != nil {
		return true
	}
	stored, ok1 := mcpauth.ParseTokens(storedRaw)
	got, ok2 := mcpauth.ParseTokens(echoed)
	if !ok1 || !ok2 || stored.Expiry().IsZero() || got.Expiry().IsZero() {
		return true
	}
	return !got.Expiry().Before(stored.Expiry())
}
