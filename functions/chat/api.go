package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"appwrite-agent/functions/chat/store"
	"appwrite-agent/functions/chat/turns"
	"appwrite-agent/shared/attachment"
	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/fnhttp"
	"appwrite-agent/shared/ident"
	"appwrite-agent/shared/seal"
	"appwrite-agent/shared/turnrequest"

	"github.com/appwrite/sdk-for-go/account"
	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/functions"
	"github.com/appwrite/sdk-for-go/models"
	"github.com/appwrite/sdk-for-go/query"
	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// Budget bounds one API call, inside the platform's 30 s synchronous limit.
const Budget = 25 * time.Second

// apiError is an answer other than success: status, the error code and the message.
type apiError struct {
	status        int
	code, message string
}

func fail(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

func notFound(what, id string) *apiError {
	return fail(http.StatusNotFound, "not_found", "%s '%s' not found", what, id)
}

func invalid(format string, args ...any) *apiError {
	return fail(http.StatusUnprocessableEntity, "invalid_request", format, args...)
}

// call is one authenticated API request.
type call struct {
	rt   openruntimes.Context
	req  *http.Request // the request as the mux matched it: PathValue reads the route's wildcards
	cfg  Config
	ctx  context.Context
	aw   *awclient.Client
	key  string // the execution's API key (x-appwrite-key)
	st   *store.Store
	jwt  string
	user user
	now  func() time.Time
}

// user is the signed-in user: the part of Appwrite's account chat reads.
type user struct {
	ID, Name, Email string
}

// maxAnswer bounds every Appwrite answer chat reads (a conversation's messages and a turn's timeline
// included).
const maxAnswer = 32 << 20

// readAccount reads GET /v1/account as the JWT's user: the only way chat learns who is calling.
func readAccount(ctx context.Context, aw *awclient.Client, jwt string) (user, error) {
	a, err := awclient.Do(ctx, aw, awclient.JWT(jwt), func(sdk client.Client) (*models.User, error) { return account.New(sdk).Get() })
	if err != nil {
		return user{}, err
	}
	if a.Id == "" {
		return user{}, &awclient.Error{Status: http.StatusOK, Type: "invalid_response", Message: "GET /account: the answer has no $id"}
	}
	return user{ID: a.Id, Name: a.Name, Email: a.Email}, nil
}

// handlerFunc answers one route for a signed-in user: the status and body of a success, or the error.
type handlerFunc func(c *call) (int, any, *apiError)

// routes is the API: a net/http ServeMux pattern per route ({id} is an argument, read with PathValue), each
// for a signed-in user. GET /api/config, which needs no JWT, is added by newAPIMux.
var routes = []struct {
	pattern string
	h       handlerFunc
}{
	{"GET /api/me", getMe},
	{"GET /api/conversations", listConversations},
	{"GET /api/conversations/{id}", getConversation},
	{"PATCH /api/conversations/{id}", renameConversation},
	{"DELETE /api/conversations/{id}", deleteConversation},
	{"POST /api/turns", postTurn},
	{"GET /api/turns/{id}/events", getTurnEvents},
	{"POST /api/turns/{id}/stop", stopTurn},
	{"GET /api/engine", getEngine},
	{"GET /api/settings", getSettings},
	{"PUT /api/settings", putSettings},
	{"GET /api/memories", listMemories},
	{"DELETE /api/memories/{id}", deleteMemory},
	{"GET /api/mcp/connections", listMCP},
	{"PUT /api/mcp/connections/{id}", putMCP},
	{"DELETE /api/mcp/connections/{id}", deleteMCP},
}

// apiMux routes every API request. It is built once and never changed; each request's state travels in its
// exchange (the http.ResponseWriter the mux hands to the handler).
var apiMux = newAPIMux()

func newAPIMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /api/config", handler(http.MethodGet, func(x *exchange, _ *http.Request) openruntimes.Response {
		return x.answer(http.StatusOK, configBody(x.cfg), nil)
	}))
	for _, r := range routes {
		method, _, _ := strings.Cut(r.pattern, " ")
		mux.Handle(r.pattern, handler(method, func(x *exchange, req *http.Request) openruntimes.Response {
			return x.signedIn(req, r.h)
		}))
	}
	return mux
}

// exchange is one API request on its way through apiMux: the runtime's request, the configuration, and the
// answer. It is the http.ResponseWriter of the mux: chat's handlers set res; the mux's own handlers (an
// unknown path, a known path with another method, a path that is not clean) only write a status, which
// api turns into chat's JSON error.
type exchange struct {
	rt     openruntimes.Context
	cfg    Config
	now    func() time.Time
	res    *openruntimes.Response
	status int
	header http.Header
}

// Header implements http.ResponseWriter for the mux's own handlers (what they set is not sent).
func (x *exchange) Header() http.Header {
	if x.header == nil {
		x.header = http.Header{}
	}
	return x.header
}

// WriteHeader implements http.ResponseWriter: the mux's own handlers answer with this status.
func (x *exchange) WriteHeader(status int) {
	if x.status == 0 {
		x.status = status
	}
}

// Write implements http.ResponseWriter: the mux's own text is replaced by chat's JSON error.
func (x *exchange) Write(b []byte) (int, error) {
	x.WriteHeader(http.StatusOK)
	return len(b), nil
}

// handler adapts an API handler to the mux. A ServeMux "GET" pattern also matches HEAD; the API has no HEAD
// route, so a method other than the route's is answered as by a known path with another method.
func handler(method string, h func(x *exchange, req *http.Request) openruntimes.Response) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		x := w.(*exchange)
		if req.Method != method {
			x.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		res := h(x, req)
		x.res = &res
	})
}

// answer is the JSON answer of a success (status and body) or of e.
func (x *exchange) answer(status int, body any, e *apiError) openruntimes.Response {
	if e != nil {
		if e.status >= 500 {
			x.rt.Error(fmt.Sprintf("%s %s: %d %s: %s", x.rt.Req.Method, x.rt.Req.Path, e.status, e.code, e.message))
		}
		return fnhttp.Error(x.rt, e.status, e.code, e.message)
	}
	r := fnhttp.JSON(x.rt, status, body)
	r.Headers["cache-control"] = "no-store"
	return r
}

// api answers a request under /api: apiMux finds the route in the path with its slashes at either end
// trimmed (so /api/me/ is /api/me); a path no route has is 404, a route's path with another method 405.
func api(rt openruntimes.Context, cfg Config, now func() time.Time) openruntimes.Response {
	x := &exchange{rt: rt, cfg: cfg, now: now}
	path := "/api/" + strings.Trim(strings.TrimPrefix(rt.Req.Path, "/api"), "/")
	req := &http.Request{Method: rt.Req.Method, URL: &url.URL{Path: path}, Header: http.Header{}}
	apiMux.ServeHTTP(x, req)
	switch {
	case x.res != nil:
		return *x.res
	case x.status == http.StatusMethodNotAllowed:
		return x.answer(0, nil, fail(http.StatusMethodNotAllowed, "method_not_allowed", "%s is not allowed on %s", rt.Req.Method, rt.Req.Path))
	default: // 404, or the redirect of a path with . or .. segments: no route has it
		return x.answer(0, nil, fail(http.StatusNotFound, "not_found", "no route for %s %s", rt.Req.Method, rt.Req.Path))
	}
}

// signedIn authenticates the request with the user's JWT and runs h as that user.
func (x *exchange) signedIn(req *http.Request, h handlerFunc) openruntimes.Response {
	rt, cfg := x.rt, x.cfg
	jwt, ok := fnhttp.BearerToken(rt.Req.Headers["authorization"])
	if !ok {
		return x.answer(0, nil, fail(http.StatusUnauthorized, "unauthorized", "sign in: send the JWT of account.createJWT() as Authorization: Bearer <jwt>"))
	}
	if cfg.Endpoint == "" || cfg.ProjectID == "" {
		return x.answer(0, nil, fail(http.StatusServiceUnavailable, "not_configured", "APPWRITE_FUNCTION_API_ENDPOINT and APPWRITE_FUNCTION_PROJECT_ID are not set: chat runs as an Appwrite function"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), Budget)
	defer cancel()
	aw := awclient.New(cfg.Endpoint, cfg.ProjectID, &http.Client{Timeout: Budget}, maxAnswer)
	u, err := readAccount(ctx, aw, jwt)
	if err != nil {
		if s := awclient.StatusOf(err); s == http.StatusUnauthorized || s == http.StatusForbidden || s == http.StatusNotFound {
			var ae *awclient.Error
			errors.As(err, &ae)
			return x.answer(0, nil, fail(http.StatusUnauthorized, "unauthorized", "Appwrite refused the JWT (%s: %s): sign in again", ae.Type, ae.Message))
		}
		return x.answer(0, nil, fail(http.StatusBadGateway, "appwrite_error", "reading the account from Appwrite failed: %v", err))
	}
	key := rt.Req.Headers["x-appwrite-key"]
	if key == "" {
		return x.answer(0, nil, fail(http.StatusServiceUnavailable, "not_configured", "the execution has no API key (x-appwrite-key): give chat its scopes in appwrite.json and call it on its function domain"))
	}
	c := &call{rt: rt, req: req, cfg: cfg, ctx: ctx, aw: aw, key: key, st: store.New(aw, key, cfg.DatabaseID, cfg.Secrets), jwt: jwt, user: u, now: x.now}
	return x.answer(h(c))
}

// fromStore turns a store or Appwrite error into an answer.
func fromStore(err error, what, id string) *apiError {
	if errors.Is(err, store.ErrNotFound) {
		return notFound(what, id)
	}
	if errors.Is(err, store.ErrNoSealKeys) {
		return fail(http.StatusServiceUnavailable, "not_configured", "%s: %v", what, err)
	}
	if errors.Is(err, seal.ErrOpen) {
		return fail(http.StatusInternalServerError, "secret_unreadable", "%s: %v", what, err)
	}
	return fail(http.StatusBadGateway, "appwrite_error", "%s: %v", what, err)
}

func configBody(cfg Config) map[string]any {
	return map[string]any{
		"endpoint": cfg.PublicEndpoint,
		"project":  cfg.ProjectID,
		"database": cfg.DatabaseID,
		"tables": map[string]string{"conversations": store.Conversations, "messages": store.Messages,
			"memories": store.Memories},
		"progress": map[string]string{"database": cfg.ProgressDatabase, "table": cfg.ProgressTable},
		"limits": map[string]int{"attachments_max_bytes": cfg.MaxAttachmentBytes,
			"attachments_max_per_message": cfg.MaxAttachments, "request_max_bytes": attachment.MaxExecutionBody},
		"build_id": cfg.BuildID,
	}
}

func getMe(c *call) (int, any, *apiError) {
	return http.StatusOK, map[string]any{"user": map[string]string{"id": c.user.ID, "name": c.user.Name, "email": c.user.Email}}, nil
}

func listConversations(c *call) (int, any, *apiError) {
	list, err := c.st.Conversations(c.ctx, c.user.ID)
	if err != nil {
		return 0, nil, fromStore(err, "conversations", "")
	}
	return http.StatusOK, map[string]any{"conversations": list}, nil
}

// conversationWithMessages reads a conversation of the user and its messages, storing finished turns first.
func (c *call) conversationWithMessages(id string) (store.Conversation, []store.Message, *apiError) {
	conv, err := c.st.Conversation(c.ctx, c.user.ID, id)
	if err != nil {
		return conv, nil, fromStore(err, "conversation", id)
	}
	msgs, err := c.st.Messages(c.ctx, c.user.ID, id)
	if err != nil {
		return conv, nil, fromStore(err, "messages", id)
	}
	for i, m := range msgs {
		if m.Role == "assistant" && m.Status == store.StatusRunning {
			msgs[i] = c.finish(conv, m)
		}
	}
	if conv.Title == "" {
		// finish may have written the first turn's title.
		if fresh, err := c.st.Conversation(c.ctx, c.user.ID, id); err == nil {
			conv = fresh
		}
	}
	return conv, msgs, nil
}

func getConversation(c *call) (int, any, *apiError) {
	id := c.req.PathValue("id")
	conv, msgs, e := c.conversationWithMessages(id)
	if e != nil {
		return 0, nil, e
	}
	return http.StatusOK, map[string]any{"conversation": conv, "messages": msgs}, nil
}

func renameConversation(c *call) (int, any, *apiError) {
	id := c.req.PathValue("id")
	var in struct {
		Title *string `json:"title"`
	}
	if e := decodeBody(c, &in); e != nil {
		return 0, nil, e
	}
	if in.Title == nil {
		return 0, nil, invalid("title is required")
	}
	title := strings.Join(strings.Fields(*in.Title), " ")
	if title == "" {
		return 0, nil, invalid("title must not be empty")
	}
	if n := utf8.RuneCountInString(title); n > TitleMaxChars {
		return 0, nil, invalid("title exceeds %d characters (got %d)", TitleMaxChars, n)
	}
	conv, err := c.st.RenameConversation(c.ctx, c.user.ID, id, title)
	if err != nil {
		return 0, nil, fromStore(err, "conversation", id)
	}
	return http.StatusOK, map[string]any{"conversation": conv}, nil
}

// TitleMaxChars is the longest title a user may give a conversation.
const TitleMaxChars = 120

func deleteConversation(c *call) (int, any, *apiError) {
	id := c.req.PathValue("id")
	if err := c.st.DeleteConversation(c.ctx, c.user.ID, id); err != nil {
		return 0, nil, fromStore(err, "conversation", id)
	}
	return http.StatusOK, map[string]bool{"deleted": true}, nil
}

type turnBody struct {
	ConversationID string `json:"conversation_id"`
	TurnID         string `json:"turn_id"`
	Message        string `json:"message"`
	Attachments    []struct {
		Name          string `json:"name"`
		Mime          string `json:"mime"`
		ContentBase64 string `json:"content_base64"`
		Thumbnail     string `json:"thumbnail"`
	} `json:"attachments"`
}

func decodeBody(c *call, v any) *apiError {
	body := c.rt.Req.BodyBinary()
	if err := json.Unmarshal(body, v); err != nil {
		return fail(http.StatusBadRequest, "invalid_request", "the body must be a JSON object of this route's fields: %v", err)
	}
	if len(strings.TrimSpace(string(body))) == 0 || strings.TrimSpace(string(body))[0] != '{' {
		return fail(http.StatusBadRequest, "invalid_request", "the body must be a JSON object")
	}
	return nil
}

func postTurn(c *call) (int, any, *apiError) {
	var in turnBody
	if e := decodeBody(c, &in); e != nil {
		return 0, nil, e
	}
	if c.cfg.SessionKey == "" {
		return 0, nil, fail(http.StatusServiceUnavailable, "not_configured", "AGENT_API_KEY is not set: chat cannot call turn")
	}
	if c.cfg.ProgressDatabase == "" || c.cfg.ProgressTable == "" {
		return 0, nil, fail(http.StatusServiceUnavailable, "not_configured", "TURN_PROGRESS_DATABASE and TURN_PROGRESS_TABLE are not set: turns need the Realtime progress table")
	}
	message := strings.TrimSpace(in.Message)
	if message == "" && len(in.Attachments) == 0 {
		return 0, nil, invalid("message or attachments required")
	}
	if len(in.Attachments) > c.cfg.MaxAttachments {
		p := attachment.TooMany(c.cfg.MaxAttachments)
		return 0, nil, invalid("%s", p.Message)
	}
	var atts []turnrequest.InlineAttachment
	var kept []store.Attachment
	for _, a := range in.Attachments {
		name := attachment.SanitizeName(a.Name)
		data, p := attachment.Decode(name, a.ContentBase64, c.cfg.MaxAttachmentBytes)
		if p != nil {
			code := "invalid_request"
			if p.Status == http.StatusRequestEntityTooLarge {
				code = "attachment_too_large"
			}
			return 0, nil, fail(p.Status, code, "%s", p.Message)
		}
		mime := strings.TrimSpace(a.Mime)
		if a.Thumbnail != "" && !validThumbnail(a.Thumbnail) {
			return 0, nil, invalid("attachment '%s': thumbnail must be a data:image/jpeg, image/png or image/webp base64 URL of at most %d characters", name, store.ThumbnailChars)
		}
		atts = append(atts, turnrequest.InlineAttachment{Name: name, Mime: mime, Size: int64(len(data)), ContentBase64: a.ContentBase64})
		kept = append(kept, store.Attachment{Name: name, Mime: mime, Size: len(data), Thumbnail: a.Thumbnail})
	}
	tid := strings.TrimSpace(in.TurnID)
	if tid == "" {
		tid = ident.Unique()
	} else if !turnrequest.ValidTurnID(tid) {
		return 0, nil, invalid("turn_id must be 1 to 36 characters of a-z, A-Z, 0-9, _ and -, not starting with _ or -")
	}

	var conv store.Conversation
	var history []turnrequest.HistoryMessage
	if in.ConversationID != "" {
		var msgs []store.Message
		var e *apiError
		conv, msgs, e = c.conversationWithMessages(in.ConversationID)
		if e != nil {
			return 0, nil, e
		}
		for _, m := range msgs {
			if m.Role == "assistant" && m.Status == store.StatusRunning {
				return 0, nil, fail(http.StatusConflict, "conflict", "a turn is already running in this conversation (turn '%s'): wait for its complete event", m.TurnID)
			}
			history = append(history, turnrequest.HistoryMessage{Role: m.Role, Content: m.Content})
		}
	}
	req := turnrequest.Body{Message: message, History: turns.History(history), Attachments: atts, Async: true,
		Progress: &turnrequest.Progress{TurnID: tid, Realtime: true}}
	if e := c.addUserContext(&req); e != nil {
		return 0, nil, e
	}
	body, err := json.Marshal(req)
	if err != nil {
		return 0, nil, fail(http.StatusInternalServerError, "internal", "encoding the turn request: %v", err)
	}
	if len(body) > attachment.MaxExecutionBody {
		return 0, nil, fail(http.StatusRequestEntityTooLarge, "attachment_too_large",
			"the turn request is %d bytes: Appwrite takes at most %d bytes for an execution body (attachments included)", len(body), attachment.MaxExecutionBody)
	}

	if conv.ID == "" {
		first := message
		if first == "" {
			first = "Attachment: " + kept[0].Name
		}
		if conv, err = c.st.CreateConversation(c.ctx, c.user.ID, first); err != nil {
			return 0, nil, fromStore(err, "conversation", "")
		}
	} else if conv, err = c.st.TouchConversation(c.ctx, in.ConversationID, c.now()); err != nil {
		return 0, nil, fromStore(err, "conversation", in.ConversationID)
	}
	userMsg, asst, err := c.st.AddTurnMessages(c.ctx, c.user.ID, conv.ID, tid, message, kept)
	if errors.Is(err, store.ErrTurnExists) {
		return 0, nil, fail(http.StatusConflict, "conflict", "turn_id '%s' is already used: use a new id for every turn", tid)
	}
	if err != nil {
		return 0, nil, fromStore(err, "message", "")
	}
	// The turn runs as the user (their JWT): Appwrite hands turn x-appwrite-user-id and a key of turn's scopes.
	ex, err := awclient.Do(c.ctx, c.aw, awclient.JWT(c.jwt), func(sdk client.Client) (*models.Execution, error) {
		f := functions.New(sdk)
		return f.CreateExecution(c.cfg.TurnFunction, f.WithCreateExecutionBody(string(body)), f.WithCreateExecutionAsync(true),
			f.WithCreateExecutionPath("/"), f.WithCreateExecutionMethod(http.MethodPost), f.WithCreateExecutionHeaders(map[string]string{
				"content-type": "application/json", "x-session-api-key": c.cfg.SessionKey,
			}))
	})
	if err != nil {
		terr := &store.TurnError{Code: "turn_unavailable", Detail: "Starting the turn failed: " + err.Error()}
		if _, ferr := c.st.FinishTurn(c.ctx, asst.ID, "", store.StatusFailed, nil, terr, nil); ferr != nil {
			c.rt.Error("storing the failed start of turn " + tid + ": " + ferr.Error())
		}
		return 0, nil, fail(http.StatusBadGateway, "appwrite_error", "starting the turn (function '%s') failed: %v", c.cfg.TurnFunction, err)
	}
	if err := c.st.SetExecution(c.ctx, asst.ID, ex.Id); err != nil {
		c.rt.Error("recording execution " + ex.Id + " of turn " + tid + ": " + err.Error())
	}
	return http.StatusAccepted, map[string]any{
		"conversation": conv,
		"turn":         map[string]string{"id": tid, "execution_id": ex.Id, "status": store.StatusRunning},
		"messages":     []store.Message{userMsg, asst},
	}, nil
}

// addUserContext adds what the server keeps for the user: memories (the active ones, highest priority first,
// at most turnrequest.MaxMemories), MCP connections with their tokens and the agent settings.
func (c *call) addUserContext(req *turnrequest.Body) *apiError {
	mems, err := c.st.Memories(c.ctx, c.user.ID)
	if err != nil {
		return fromStore(err, "memories", "")
	}
	for _, m := range mems {
		if len(req.Memories) == turnrequest.MaxMemories {
			break // Memories sorts by priority: the lowest are left out
		}
		if m.Active {
			req.Memories = append(req.Memories, turnrequest.Memory{Key: m.Key, Content: m.Content, Category: m.Category, Priority: m.Priority})
		}
	}
	conns, err := c.st.MCPConnections(c.ctx, c.user.ID)
	if err != nil {
		return fromStore(err, "MCP connections", "")
	}
	// The secrets are opened here only, to go with the turn.
	for _, mc := range conns {
		tokens, clientInfo, err := c.st.OpenMCP(c.user.ID, mc)
		if err != nil {
			return fromStore(err, "MCP connection", mc.ID)
		}
		req.MCPConnections = append(req.MCPConnections, turnrequest.MCPConnection{ID: mc.ID, Name: mc.Name, URL: mc.URL,
			Description: mc.Description, Tokens: tokens, ClientInfo: clientInfo})
	}
	s, err := c.st.Settings(c.ctx, c.user.ID)
	if err != nil {
		return fromStore(err, "settings", "")
	}
	key, err := c.st.APIKey(c.user.ID, s)
	if err != nil {
		return fromStore(err, "settings", "")
	}
	if s.Model != "" || key != "" || s.BaseURL != "" {
		req.LLM = &turnrequest.LLM{Model: s.Model, APIKey: key, BaseURL: s.BaseURL}
	}
	return nil
}

// progressEvents reads the user's progress rows of a turn, in order: only rows whose permissions name this
// user (a turn id is no secret).
func (c *call) progressEvents(tid string) ([]turns.Event, error) {
	rows, err := store.ListRows(c.ctx, c.aw, c.key, c.cfg.ProgressDatabase, c.cfg.ProgressTable, query.Equal("turn_id", tid))
	if err != nil {
		return nil, err
	}
	mine := `read("user:` + c.user.ID + `")`
	var evs []turns.Event
	for _, r := range rows {
		// A stop row (seq 0, type stop) is the signal to turn, not an event of the turn.
		if !slices.Contains(r.Permissions, mine) || r.Str("type") == turns.StopType || r.Int("seq") <= 0 || !json.Valid([]byte(r.Str("payload"))) {
			continue
		}
		evs = append(evs, turns.Event{Seq: r.Int("seq"), Time: r.Str("time"), Event: json.RawMessage(r.Str("payload"))})
	}
	return turns.Ordered(evs), nil
}

// finish stores a running turn that has finished (its complete event arrived, or its execution ended) and
// returns the message as stored; a turn still running is returned as it is.
func (c *call) finish(conv store.Conversation, m store.Message) store.Message {
	evs, err := c.progressEvents(m.TurnID)
	if err != nil {
		c.rt.Error("reading the progress of turn " + m.TurnID + ": " + err.Error())
		return m
	}
	res := turns.Summarize(evs)
	if !res.Complete {
		if !c.turnEnded(m) {
			return m
		}
		res.Failed, res.ErrorCode, res.ErrorDetail = true, "turn_failed", "The turn's execution ended without completing."
	}
	for _, cr := range res.Credentials {
		if err := c.st.UpdateMCPTokens(c.ctx, c.user.ID, cr.ID, cr.Tokens, cr.ClientInfo); err != nil {
			c.rt.Error("storing refreshed MCP tokens of connection " + cr.ID + ": " + err.Error())
		}
	}
	for _, a := range res.Memories {
		var err error
		if a.Type == "set" {
			cat := a.Category
			if cat == "" {
				cat = "preference"
			}
			err = c.st.SetMemory(c.ctx, c.user.ID, store.Memory{Key: a.Key, Content: a.Content, Category: cat, Priority: a.Priority})
		} else {
			_, err = c.st.ForgetMemory(c.ctx, c.user.ID, a.Key)
		}
		if err != nil {
			c.rt.Error("storing memory " + a.Key + ": " + err.Error())
		}
	}
	if res.Title != "" {
		if err := c.st.SetTitleIfEmpty(c.ctx, c.user.ID, conv.ID, res.Title); err != nil {
			c.rt.Error("storing the title of conversation " + conv.ID + ": " + err.Error())
		}
	}
	timeline := make([]json.RawMessage, 0, len(evs))
	for _, e := range evs {
		timeline = append(timeline, e.Event)
	}
	status := store.StatusDone
	var terr *store.TurnError
	switch {
	case res.Failed && res.ErrorCode == turns.CodeCancelled:
		status = store.StatusStopped // stopped by its user (docs/turn.md): the partial answer is the answer
	case res.Failed:
		status, terr = store.StatusFailed, &store.TurnError{Code: res.ErrorCode, Detail: res.ErrorDetail}
	}
	var usage json.RawMessage
	if res.Usage != nil {
		usage, _ = json.Marshal(res.Usage)
	}
	done, err := c.st.FinishTurn(c.ctx, m.ID, res.Answer, status, timeline, terr, usage)
	if err != nil {
		c.rt.Error("storing turn " + m.TurnID + ": " + err.Error())
		return m
	}
	return done
}

// TurnDeadline is how long after its start a turn without a complete event is given up: turn's largest
// function timeout (900 s) and a minute more.
const TurnDeadline = 16 * time.Minute

// turnEnded reports whether a running turn can no longer complete: its execution ended (completed or failed;
// turn holds complete back until its sinks delivered it, so an ended execution without it lost its sink), or,
// when its execution is unknown or unreadable, it started more than TurnDeadline ago.
func (c *call) turnEnded(m store.Message) bool {
	if m.ExecutionID != "" {
		ex, err := awclient.Do(c.ctx, c.aw, awclient.Key(c.key), func(sdk client.Client) (*models.Execution, error) {
			return functions.New(sdk).GetExecution(c.cfg.TurnFunction, m.ExecutionID)
		})
		if err == nil {
			return ex.Status == "completed" || ex.Status == "failed"
		}
		c.rt.Error("reading execution " + m.ExecutionID + " of turn " + m.TurnID + ": " + err.Error())
	}
	started, err := time.Parse(time.RFC3339Nano, m.CreatedAt)
	return err == nil && c.now().Sub(started) > TurnDeadline
}

func getTurnEvents(c *call) (int, any, *apiError) {
	tid := c.req.PathValue("id")
	after := int64(0)
	if v := c.rt.Req.Query["after"]; v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, nil, invalid("after must be a non-negative integer (got '%s')", v)
		}
		after = n
	}
	evs, err := c.progressEvents(tid)
	if err != nil {
		return 0, nil, fromStore(err, "turn", tid)
	}
	if len(evs) == 0 {
		if _, err := c.st.MessageByTurn(c.ctx, c.user.ID, tid); err != nil {
			return 0, nil, fromStore(err, "turn", tid)
		}
	}
	out := []turns.Event{}
	complete := false
	for _, e := range evs {
		var t struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(e.Event, &t)
		complete = complete || t.Type == "complete"
		if e.Seq > after {
			out = append(out, e)
		}
	}
	return http.StatusOK, map[string]any{"turn_id": tid, "events": out, "complete": complete}, nil
}

func settingsBody(s store.AgentSettings) map[string]any {
	return map[string]any{"model": s.Model, "base_url": s.BaseURL, "api_key_set": s.HasAPIKey}
}

func getSettings(c *call) (int, any, *apiError) {
	s, err := c.st.Settings(c.ctx, c.user.ID)
	if err != nil {
		return 0, nil, fromStore(err, "settings", "")
	}
	return http.StatusOK, settingsBody(s), nil
}

func putSettings(c *call) (int, any, *apiError) {
	var in struct {
		Model   *string `json:"model"`
		BaseURL *string `json:"base_url"`
		APIKey  *string `json:"api_key"`
	}
	if e := decodeBody(c, &in); e != nil {
		return 0, nil, e
	}
	s, err := c.st.Settings(c.ctx, c.user.ID)
	if err != nil {
		return 0, nil, fromStore(err, "settings", "")
	}
	if in.Model != nil {
		s.Model = strings.TrimSpace(*in.Model)
		if len(s.Model) > 256 {
			return 0, nil, invalid("model is longer than 256 characters")
		}
	}
	if in.APIKey != nil {
		k := strings.TrimSpace(*in.APIKey)
		if len(k) > 2048 {
			return 0, nil, invalid("api_key is longer than 2048 characters")
		}
		s.NewAPIKey, s.ClearAPIKey, s.HasAPIKey = k, k == "", k != ""
	}
	if in.BaseURL != nil {
		s.BaseURL = strings.TrimSpace(*in.BaseURL)
	}
	if s.BaseURL != "" {
		u, err := url.Parse(s.BaseURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || len(s.BaseURL) > 2048 {
			return 0, nil, invalid("base_url must be an https:// URL with a host")
		}
		if !s.HasAPIKey {
			return 0, nil, invalid("api_key is required when base_url is set (the server's key is never sent to another endpoint)")
		}
	}
	if err := c.st.PutSettings(c.ctx, c.user.ID, s); err != nil {
		return 0, nil, fromStore(err, "settings", "")
	}
	return http.StatusOK, settingsBody(s), nil
}

func listMemories(c *call) (int, any, *apiError) {
	mems, err := c.st.Memories(c.ctx, c.user.ID)
	if err != nil {
		return 0, nil, fromStore(err, "memories", "")
	}
	return http.StatusOK, map[string]any{"memories": mems}, nil
}

func deleteMemory(c *call) (int, any, *apiError) {
	id := c.req.PathValue("id")
	ok, err := c.st.ForgetMemory(c.ctx, c.user.ID, id)
	if err != nil {
		return 0, nil, fromStore(err, "memory", id)
	}
	if !ok {
		return 0, nil, notFound("memory", id)
	}
	return http.StatusOK, map[string]bool{"deleted": true}, nil
}

// connectionID is an MCP connection id as chat takes it: ^[a-z][a-z0-9_-]{1,35}$, what turn accepts
// (^[a-z][a-z0-9_-]{1,63}$ after lower-casing, docs/turn.md "MCP connections") within the 36 characters of the
// connection_id column. An id turn would drop, or would merge with another by case, is refused here.
var connectionID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]{1,35}$`) })

func connectionBody(mc store.MCPConnection) map[string]any {
	return map[string]any{"id": mc.ID, "name": mc.Name, "url": mc.URL, "description": mc.Description,
		"connected": mc.Connected, "updated_at": mc.UpdatedAt}
}

func listMCP(c *call) (int, any, *apiError) {
	conns, err := c.st.MCPConnections(c.ctx, c.user.ID)
	if err != nil {
		return 0, nil, fromStore(err, "MCP connections", "")
	}
	out := make([]map[string]any, 0, len(conns))
	for _, mc := range conns {
		out = append(out, connectionBody(mc))
	}
	return http.StatusOK, map[string]any{"connections": out}, nil
}

func putMCP(c *call) (int, any, *apiError) {
	id := c.req.PathValue("id")
	if !connectionID().MatchString(id) {
		return 0, nil, invalid("the connection id must be 2 to 36 characters of a-z, 0-9, _ and -, starting with a letter (got '%s')", id)
	}
	var in struct {
		Name        string          `json:"name"`
		URL         string          `json:"url"`
		Description string          `json:"description"`
		Tokens      json.RawMessage `json:"tokens"`
		ClientInfo  json.RawMessage `json:"client_info"`
	}
	if e := decodeBody(c, &in); e != nil {
		return 0, nil, e
	}
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || len(in.URL) > 2048 {
		return 0, nil, invalid("url must be an http(s) URL with a host")
	}
	if len(in.Name) > 256 || len(in.Description) > 2048 {
		return 0, nil, invalid("name (256) or description (2048) is too long")
	}
	for field, raw := range map[string]json.RawMessage{"tokens": in.Tokens, "client_info": in.ClientInfo} {
		t := strings.TrimSpace(string(raw))
		if t != "" && t != "null" && !strings.HasPrefix(t, "{") {
			return 0, nil, invalid("%s must be a JSON object", field)
		}
		if len(t) > 65_536 {
			return 0, nil, invalid("%s is larger than 65536 bytes", field)
		}
	}
	mc, err := c.st.PutMCPConnection(c.ctx, c.user.ID, store.MCPConnection{ID: id, Name: strings.TrimSpace(in.Name),
		URL: u.String(), Description: in.Description, Tokens: nonNull(in.Tokens), ClientInfo: nonNull(in.ClientInfo)})
	if err != nil {
		return 0, nil, fromStore(err, "MCP connection", id)
	}
	return http.StatusOK, connectionBody(mc), nil
}

func nonNull(raw json.RawMessage) json.RawMessage {
	if t := strings.TrimSpace(string(raw)); t == "" || t == "null" {
		return nil
	}
	return raw
}

func deleteMCP(c *call) (int, any, *apiError) {
	id := c.req.PathValue("id")
	if err := c.st.DeleteMCPConnection(c.ctx, c.user.ID, id); err != nil {
		return 0, nil, fromStore(err, "MCP connection", id)
	}
	return http.StatusOK, map[string]bool{"deleted": true}, nil
}
