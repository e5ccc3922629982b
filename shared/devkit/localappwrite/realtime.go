package localappwrite

// Appwrite Realtime (/v1/realtime) for row events, and the user sessions it authenticates with. Read from
// appwrite/appwrite 1.9.6 (docs/local-appwrite.md, "Realtime", has the file:line of each rule):
//
//   - connect: GET /v1/realtime?project=P&channels[]=C…, optional per-channel queries in the query parameter
//     named after the channel with "." replaced by "_" (app/realtime.php onOpen, Realtime::constructSubscriptions);
//     the user comes from the a_session_<project> cookie, or later from an "authentication" message;
//   - messages in: authentication {session}, subscribe [{channels, queries?, subscriptionId?}],
//     unsubscribe [{subscriptionId}], ping;
//     messages out: connected, response, event, pong, error {code, message};
//   - a row event goes to the channels of Realtime::fromPayload, with the roles that may read it (the table's
//     read roles, plus the row's when row security is on); a connection receives it when one of its roles is
//     among them (or they hold "any") and a subscription's channels and queries match.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// Realtime error codes (app/config/errors.php: realtime_message_format_invalid 1003, realtime_policy_violation
// 1008).
const (
	rtFormatInvalid   = 1003
	rtPolicyViolation = 1008
)

// rtSendBuffer is how many messages a slow connection may fall behind before it is closed.
const rtSendBuffer = 4096

// realtimeHub holds the sessions and the open Realtime connections. Its zero value is ready; it is guarded
// by Server.mu.
type realtimeHub struct {
	sessions map[string]rtSession // by sha256 of the session secret
	conns    map[*rtConn]bool
	nextSub  int
}

// rtSession is one user session (Appwrite's sessions collection, as far as the stand-in needs it).
type rtSession struct {
	id, projectID, userID string
	created, expire       time.Time
}

type rtConn struct {
	projectID string
	userID    string
	roles     []string
	subs      []*rtSub
	out       chan []byte
	closed    bool
}

type rtSub struct {
	id       string
	channels []string
	queries  []rtQuery
	raw      []string
}

// CreateSession creates a session for a seeded user, as POST /v1/account/sessions/email would, and returns
// the session value a browser keeps in the a_session_<project> cookie (or the Web SDK's cookie fallback):
// base64 of {"id": user id, "secret": secret} (utopia-php/auth Store::encode). Send it as the
// X-Appwrite-Session header or a Realtime "authentication" message.
func (s *Server) CreateSession(projectID, userID string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.projects[projectID]
	if pr == nil {
		return "", fmt.Errorf("localappwrite: no project %q", projectID)
	}
	u := pr.users[userID]
	if u == nil {
		return "", fmt.Errorf("localappwrite: no user %q in project %q", userID, projectID)
	}
	_, value := s.newSessionLocked(pr, u)
	return value, nil
}

func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// sessionLocked decodes a session value and returns the session and its user (nil when the value is not a
// live session of a user of pr).
func (s *Server) sessionLocked(pr *project, value string) (rtSession, *user) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
	if err != nil {
		return rtSession{}, nil
	}
	var st struct{ ID, Secret string }
	if json.Unmarshal(raw, &st) != nil || st.Secret == "" {
		return rtSession{}, nil
	}
	sess, ok := s.rt.sessions[hashSecret(st.Secret)]
	if !ok || sess.projectID != pr.id || sess.userID != st.ID || !s.now().Before(sess.expire) {
		return rtSession{}, nil
	}
	u := pr.users[st.ID]
	if u == nil {
		return rtSession{}, nil
	}
	return sess, u
}

// sessionUserLocked decodes a session value and returns its user, or nil.
func (s *Server) sessionUserLocked(pr *project, value string) *user {
	_, u := s.sessionLocked(pr, value)
	return u
}

// userScopes are the scopes of the "users" role (app/config/roles.php) this stand-in serves.
var userScopes = []string{"account", "sessions.write", "documents.read", "documents.write", "rows.read", "rows.write", "files.read", "files.write",
	"execution.read", "execution.write", "executions.read", "executions.write", "locale.read", "avatars.read"}

// sessionPrincipalLocked is the principal of a request carrying a session (sessionValueFromRequest: the
// cookie, X-Appwrite-Session or X-Fallback-Cookies, app/init/resources/request.php:381-405); nil when there is
// none or it is not valid.
func (s *Server) sessionPrincipalLocked(r *http.Request, pr *project) *principal {
	value := sessionValueFromRequest(r, pr.id)
	if value == "" {
		return nil
	}
	sess, u := s.sessionLocked(pr, value)
	if u == nil {
		return nil
	}
	return &principal{kind: "user", scopes: scopeSet(userScopes), userID: u.id, sessionID: sess.id, label: u.email, role: "users"}
}

// userRoles copies User::getRoles (src/Appwrite/Utopia/Database/Documents/User.php:38-83) for a user without
// verification or teams; a guest has only "guests".
func userRoles(u *user) []string {
	if u == nil {
		return []string{"guests"}
	}
	roles := []string{"user:" + u.id, "users", "user:" + u.id + "/unverified", "users/unverified"}
	for _, l := range u.labels {
		roles = append(roles, "label:"+l)
	}
	return roles
}

func accountModel(u *user) obj {
	out := obj{}
	for _, f := range userModel(u) {
		if f.k != "password" && f.k != "hash" && f.k != "hashOptions" {
			out = append(out, f)
		}
	}
	return out
}

func rtMessage(typ string, data any) []byte {
	m := map[string]any{"type": typ}
	if data != nil {
		m["data"] = data
	}
	b, _ := json.Marshal(m)
	return b
}

func rtError(code int, msg string) []byte {
	return rtMessage("error", map[string]any{"code": code, "message": msg})
}

// serveRealtime is GET /v1/realtime.
func (s *Server) serveRealtime(w http.ResponseWriter, r *http.Request) {
	// The stand-in has no platforms, so it checks no Origin (Appwrite checks it against the project's web
	// platforms, app/realtime.php:915-919).
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	ws.SetReadLimit(64 << 10)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	c, first, code := s.openRealtime(r)
	if c == nil {
		_ = ws.Write(ctx, websocket.MessageText, first)
		_ = ws.Close(websocket.StatusCode(code), "")
		return
	}
	defer s.closeRealtime(c)
	// The writer sends what the hub queues for this connection; it ends with the connection.
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for {
			select {
			case <-ctx.Done():
				return
			case msg, ok := <-c.out:
				if !ok {
					_ = ws.Close(websocket.StatusPolicyViolation, "too slow")
					cancel()
					return
				}
				wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
				err := ws.Write(wctx, websocket.MessageText, msg)
				wcancel()
				if err != nil {
					cancel()
					return
				}
			}
		}
	}()
	s.queue(c, first)
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			break
		}
		if typ != websocket.MessageText {
			continue
		}
		reply, fatal := s.realtimeMessage(c, data)
		if reply != nil {
			s.queue(c, reply)
		}
		if fatal {
			break
		}
	}
	cancel()
	<-writerDone
	_ = ws.CloseNow()
}

// openRealtime runs onOpen (app/realtime.php:825-1100): project check, user, channels and subscriptions, the
// connected message. On failure it returns the error message and the close code.
func (s *Server) openRealtime(r *http.Request) (*rtConn, []byte, int) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.projects[q.Get("project")]
	if pr == nil {
		return nil, rtError(rtPolicyViolation, "Missing or unknown project ID"), rtPolicyViolation
	}
	var u *user
	if v := sessionValueFromRequest(r, pr.id); v != "" {
		u = s.sessionUserLocked(pr, v)
	}
	c := &rtConn{projectID: pr.id, roles: userRoles(u), out: make(chan []byte, rtSendBuffer)}
	if u != nil {
		c.userID = u.id
	}
	names := convertChannels(q["channels[]"], c.userID)
	slots, err := constructSubscriptions(names, q)
	if err != nil {
		return nil, rtError(rtPolicyViolation, err.Error()), rtPolicyViolation
	}
	var mapping []string
	for _, sl := range slots {
		sub := &rtSub{id: s.nextSubIDLocked(), channels: sl.channels, queries: sl.queries, raw: sl.raw}
		c.subs = append(c.subs, sub)
		mapping = append(mapping, sub.id)
	}
	if s.rt.conns == nil {
		s.rt.conns = map[*rtConn]bool{}
	}
	s.rt.conns[c] = true
	var account any
	if u != nil {
		account = accountModel(u)
	}
	return c, rtMessage("connected", map[string]any{"channels": nonNil(names), "subscriptions": nonNil(mapping), "user": account}), 0
}

func (s *Server) nextSubIDLocked() string {
	s.rt.nextSub++
	return s.uniqueID()[:13] + fmt.Sprintf("%07d", s.rt.nextSub%10_000_000)
}

func (s *Server) closeRealtime(c *rtConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rt.conns, c)
	c.closed = true
}

// queue hands msg to the connection's writer; a connection too far behind is closed.
func (s *Server) queue(c *rtConn, msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queueLocked(c, msg)
}

func (s *Server) queueLocked(c *rtConn, msg []byte) {
	if c.closed {
		return
	}
	select {
	case c.out <- msg:
	default:
		c.closed = true
		close(c.out)
		delete(s.rt.conns, c)
	}
}

// realtimeMessage runs onMessage (app/realtime.php:1102-1290) and the message handlers
// (src/Appwrite/Realtime/Message/Handlers/*). fatal closes the connection (code 1008).
func (s *Server) realtimeMessage(c *rtConn, data []byte) (reply []byte, fatal bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || (m["type"] == nil && m["data"] == nil) {
		return rtError(rtFormatInvalid, "Message format is not valid."), false
	}
	var typ string
	if err := json.Unmarshal(m["type"], &typ); err != nil {
		return rtError(rtFormatInvalid, "Message type is not valid."), false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.projects[c.projectID]
	switch typ {
	case "ping":
		return rtMessage("pong", nil), false
	case "authentication":
		var d struct {
			Session string `json:"session"`
		}
		_ = json.Unmarshal(m["data"], &d)
		var u *user
		if pr != nil && d.Session != "" {
			u = s.sessionUserLocked(pr, d.Session)
		}
		if u == nil {
			return rtError(rtFormatInvalid, "Session is not valid."), false
		}
		c.userID, c.roles = u.id, userRoles(u)
		return rtMessage("response", map[string]any{"to": "authentication", "success": true, "user": accountModel(u)}), false
	case "subscribe":
		var items []struct {
			Channels       []string `json:"channels"`
			Queries        []string `json:"queries"`
			SubscriptionID *string  `json:"subscriptionId"`
		}
		if err := json.Unmarshal(m["data"], &items); err != nil || len(items) == 0 {
			return rtError(rtFormatInvalid, "Payload is not valid."), false
		}
		type result struct {
			SubscriptionID string   `json:"subscriptionId"`
			Channels       []string `json:"channels"`
			Queries        []string `json:"queries"`
		}
		var subs []*rtSub
		var out []result
		for _, it := range items {
			if len(it.Channels) == 0 {
				return rtError(rtFormatInvalid, "Payload is not valid."), false
			}
			qs, raw, err := parseRealtimeQueries(it.Queries)
			if err != nil {
				return rtError(rtFormatInvalid, "Invalid query: "+err.Error()), false
			}
			id := ""
			if it.SubscriptionID != nil {
				id = *it.SubscriptionID
			} else {
				id = s.nextSubIDLocked()
			}
			chans := convertChannels(it.Channels, c.userID)
			subs = append(subs, &rtSub{id: id, channels: chans, queries: qs, raw: raw})
			out = append(out, result{SubscriptionID: id, Channels: nonNil(chans), Queries: nonNil(raw)})
		}
		for _, sub := range subs {
			c.subs = slices.DeleteFunc(c.subs, func(o *rtSub) bool { return o.id == sub.id })
			c.subs = append(c.subs, sub)
		}
		return rtMessage("response", map[string]any{"to": "subscribe", "success": true, "subscriptions": out}), false
	case "unsubscribe":
		var items []struct {
			SubscriptionID string `json:"subscriptionId"`
		}
		if err := json.Unmarshal(m["data"], &items); err != nil || len(items) == 0 {
			return rtError(rtFormatInvalid, "Payload is not valid."), false
		}
		type result struct {
			SubscriptionID string `json:"subscriptionId"`
			Removed        bool   `json:"removed"`
		}
		out := make([]result, 0, len(items))
		for _, it := range items {
			before := len(c.subs)
			c.subs = slices.DeleteFunc(c.subs, func(o *rtSub) bool { return o.id == it.SubscriptionID })
			out = append(out, result{SubscriptionID: it.SubscriptionID, Removed: len(c.subs) < before})
		}
		return rtMessage("response", map[string]any{"to": "unsubscribe", "success": true, "subscriptions": out}), false
	default:
		return rtError(rtFormatInvalid, "Message type is not valid."), false
	}
}

// convertChannels copies Realtime::convertChannels (src/Appwrite/Messaging/Adapter/Realtime.php:516-562):
// "account" becomes account.<user>, other account.* channels are dropped.
func convertChannels(in []string, userID string) []string {
	var out []string
	for _, ch := range in {
		switch {
		case ch == "account":
			if userID != "" {
				out = append(out, "account."+userID)
			}
		case strings.HasPrefix(ch, "account."):
		default:
			out = append(out, ch)
		}
	}
	return uniqueStrings(out)
}

type rtSlot struct {
	channels []string
	queries  []rtQuery
	raw      []string
}

var slotKeyRe = regexp.MustCompile(`^\[(\d*)\](\[\])?$`)

// constructSubscriptions copies Realtime::constructSubscriptions (Realtime.php:612-678): a channel without a
// query parameter joins subscription 0 (select all); "<ch>=q" is one query, "<ch>[]=q" one subscription per
// value, "<ch>[n][]=q" adds q to subscription n (queries of one subscription are ANDed, subscriptions ORed).
func constructSubscriptions(names []string, q map[string][]string) ([]rtSlot, error) {
	slots := map[int]*rtSlot{}
	get := func(i int) *rtSlot {
		if slots[i] == nil {
			slots[i] = &rtSlot{}
		}
		return slots[i]
	}
	for _, ch := range names {
		key := strings.ReplaceAll(ch, ".", "_")
		byIndex := map[int][]string{}
		found := false
		if vs, ok := q[key]; ok && key != "project" && len(vs) > 0 {
			byIndex[0], found = []string{vs[len(vs)-1]}, true
		}
		next := 0
		var keys []string
		for k := range q {
			if strings.HasPrefix(k, key+"[") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			m := slotKeyRe.FindStringSubmatch(k[len(key):])
			if m == nil {
				continue
			}
			found = true
			if m[1] == "" { // ch[]=q: one subscription per value
				for _, v := range q[k] {
					byIndex[next] = append(byIndex[next], v)
					next++
				}
				continue
			}
			n, _ := strconv.Atoi(m[1])
			byIndex[n] = append(byIndex[n], q[k]...)
		}
		if !found {
			sl := get(0)
			sl.channels = append(sl.channels, ch)
			continue
		}
		for i, raw := range byIndex {
			sl := get(i)
			if !slices.Contains(sl.channels, ch) {
				sl.channels = append(sl.channels, ch)
			}
			if len(sl.raw) == 0 {
				qs, rs, err := parseRealtimeQueries(raw)
				if err != nil {
					return nil, err
				}
				sl.queries, sl.raw = qs, rs
			}
		}
	}
	idx := make([]int, 0, len(slots))
	for i := range slots {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]rtSlot, 0, len(idx))
	for _, i := range idx {
		out = append(out, *slots[i])
	}
	return out, nil
}

// rtQuery is one Realtime query (RuntimeQuery::ALLOWED_QUERIES, src/Appwrite/Utopia/Database/RuntimeQuery.php:14-33).
type rtQuery struct {
	Method    string            `json:"method"`
	Attribute string            `json:"attribute"`
	Values    []json.RawMessage `json:"values"`
	nested    []rtQuery
}

var rtAllowed = []string{"equal", "notEqual", "lessThan", "lessThanEqual", "greaterThan", "greaterThanEqual",
	"isNull", "isNotNull", "and", "or", "select"}

func parseRealtimeQueries(raw []string) ([]rtQuery, []string, error) {
	var out []rtQuery
	for _, r := range raw {
		q, err := parseRealtimeQuery([]byte(r))
		if err != nil {
			return nil, nil, err
		}
		out = append(out, q)
	}
	if len(raw) == 0 {
		return nil, []string{`{"method":"select","values":["*"]}`}, nil
	}
	return out, raw, nil
}

func parseRealtimeQuery(b []byte) (rtQuery, error) {
	var q rtQuery
	if err := json.Unmarshal(b, &q); err != nil || q.Method == "" {
		//lint:ignore ST1005 Appwrite's own message, which the stand-in answers with
		return q, fmt.Errorf("Invalid query: %s", string(b))
	}
	if !slices.Contains(rtAllowed, q.Method) {
		//lint:ignore ST1005 Appwrite's own message, which the stand-in answers with
		return q, fmt.Errorf("Query method '%s' is not supported in Realtime queries. Allowed: %s", q.Method, strings.Join(rtAllowed, ", "))
	}
	if q.Method == "and" || q.Method == "or" {
		for _, v := range q.Values {
			n, err := parseRealtimeQuery(v)
			if err != nil {
				return q, err
			}
			q.nested = append(q.nested, n)
		}
	}
	return q, nil
}

// matches applies a subscription's queries (ANDed) to an event payload (RuntimeQuery::filter).
func (sub *rtSub) matches(payload map[string]any) bool {
	for _, q := range sub.queries {
		if !q.match(payload) {
			return false
		}
	}
	return true
}

func (q rtQuery) match(p map[string]any) bool {
	v, present := p[q.Attribute]
	switch q.Method {
	case "select":
		return true
	case "and":
		for _, n := range q.nested {
			if !n.match(p) {
				return false
			}
		}
		return true
	case "or":
		for _, n := range q.nested {
			if n.match(p) {
				return true
			}
		}
		return false
	case "isNull":
		return !present || v == nil
	case "isNotNull":
		return present && v != nil
	}
	hit := false
	for _, raw := range q.Values {
		var want any
		_ = json.Unmarshal(raw, &want)
		switch q.Method {
		case "equal", "notEqual":
			hit = hit || equalJSON(v, want)
		default:
			a, ok1 := toFloat(v)
			b, ok2 := toFloat(want)
			if ok1 && ok2 {
				switch q.Method {
				case "lessThan":
					hit = hit || a < b
				case "lessThanEqual":
					hit = hit || a <= b
				case "greaterThan":
					hit = hit || a > b
				case "greaterThanEqual":
					hit = hit || a >= b
				}
			}
		}
	}
	if q.Method == "notEqual" {
		return !hit
	}
	return hit
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case int:
		return float64(n), true
	}
	return 0, false
}

// rowChannels copies Realtime::fromPayload for a TablesDB row event (Realtime.php:774-800, 931-975, and the
// action suffix of :868-910): the legacy documents channels, then the rows channels under databases. and
// tablesdb., then the same with ".<action>" for channels whose last or second-to-last segment is a resource.
func rowChannels(dbID, tableID, rowID, action string) []string {
	base := []string{
		"documents", "databases." + dbID + ".collections." + tableID + ".documents",
		"databases." + dbID + ".collections." + tableID + ".documents." + rowID,
		"rows", "databases." + dbID + ".tables." + tableID + ".rows", "databases." + dbID + ".tables." + tableID + ".rows." + rowID,
		"tablesdb." + dbID + ".tables." + tableID + ".rows", "tablesdb." + dbID + ".tables." + tableID + ".rows." + rowID,
	}
	out := slices.Clone(base)
	if slices.Contains([]string{"create", "update", "upsert", "delete"}, action) {
		for _, ch := range base {
			seg := strings.Split(ch, ".")
			leaf := seg[len(seg)-1] == "documents" || seg[len(seg)-1] == "rows"
			parent := len(seg) >= 2 && (seg[len(seg)-2] == "documents" || seg[len(seg)-2] == "rows")
			if leaf || parent {
				out = append(out, ch+"."+action)
			}
		}
	}
	return uniqueStrings(out)
}

func readRoles(perms []string) []string {
	var out []string
	for _, p := range perms {
		if m := permissionRe.FindStringSubmatch(p); m != nil && m[1] == "read" {
			out = append(out, m[2])
		}
	}
	return out
}

// realtimeLocked publishes one dispatched event to the Realtime connections (the realtime part of
// Appwrite's shutdown hook, app/controllers/shared/api.php; here only row events). Runs with s.mu held, in
// dispatch order, so a connection receives a table's events in the order they were written.
func (s *Server) realtimeLocked(pr *project, ev pendingEvent, events []string) {
	action, isRow := strings.CutPrefix(ev.pattern, rowEvent)
	if !isRow {
		// A row create carries the documents form (see createRow).
		action, isRow = strings.CutPrefix(ev.pattern, documentEvent)
	}
	if len(s.rt.conns) == 0 || !isRow {
		return
	}
	vals := map[string]string{}
	for _, p := range ev.params {
		vals[p.key] = p.value
	}
	db := pr.databases[vals["databaseId"]]
	if db == nil {
		return
	}
	t := db.tables[vals["tableId"]]
	if t == nil {
		return
	}
	body, err := phpJSON(ev.payload)
	if err != nil {
		return
	}
	var payload map[string]any
	if json.Unmarshal(body, &payload) != nil {
		return
	}
	perms, _ := payload["$permissions"].([]any)
	var rowPerms []string
	for _, p := range perms {
		if s, ok := p.(string); ok {
			rowPerms = append(rowPerms, s)
		}
	}
	roles := readRoles(t.permissions)
	if t.rowSecurity {
		roles = append(roles, readRoles(rowPerms)...)
	}
	channels := rowChannels(db.id, t.id, vals["rowId"], action)
	anyRole := slices.Contains(roles, "any")
	for c := range s.rt.conns {
		if c.projectID != pr.id {
			continue
		}
		allowed := anyRole
		for _, r := range c.roles {
			allowed = allowed || slices.Contains(roles, r)
		}
		if !allowed {
			continue
		}
		var matched []string
		for _, sub := range c.subs {
			hit := false
			for _, ch := range sub.channels {
				hit = hit || slices.Contains(channels, ch)
			}
			if hit && sub.matches(payload) {
				matched = append(matched, sub.id)
			}
		}
		if len(matched) == 0 {
			continue
		}
		s.queueLocked(c, rtMessage("event", map[string]any{
			"events": events, "channels": channels, "timestamp": formatTime(s.now()), "payload": json.RawMessage(body),
			"subscriptions": matched,
		}))
	}
}
