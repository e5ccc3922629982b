package handler

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/stdwebhooks"
)

// automationFixture is chat (through the open-runtimes contract, behind the stand-in's function domain),
// the stand-in and a fake MCP events server on one test clock, with alice's events connection.
type automationFixture struct {
	*chatFixture
	ev *fakeEvents
}

func newAutomationFixture(t *testing.T, perHour int, tokenLife time.Duration) *automationFixture {
	t.Helper()
	af := &automationFixture{}
	var clock func() time.Time
	f := newChatFixtureWith(t, func(c *Config, aw *localappwrite.Server) {
		c.Automations.PublicURL = aw.DomainURL("chat") // https in production (CHAT_PUBLIC_URL); the fake takes http
		c.Automations.TurnsPerHour = perHour
		c.Automations.RefreshAhead = 15 * time.Minute
		c.MCP = safehttp.Options{AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowHTTP: true}
		c.FunctionID = "chat"
	}, "*/5 * * * *")
	clock = f.clock.Now
	af.chatFixture, af.ev = f, newFakeEvents(t, clock)
	if s, b := f.call("PUT", "/api/mcp/connections/events", map[string]any{"name": "Events", "url": af.ev.url(),
		"tokens": af.ev.tokens(tokenLife), "client_info": af.ev.clientInfo()}, nil); s != 200 {
		t.Fatalf("connecting the events server: %d %s", s, b)
	}
	return af
}

type automationJSON struct {
	ID, ConversationID, ConnectionID, Event, Instruction, Status, PauseReason, RefreshBefore, RefreshError string
	Arguments                                                                                              map[string]string
	Usage                                                                                                  struct{ Turns, Limited, TotalTokens int }
}

// decode reads chat's snake_case fields into automationJSON.
func (b *automationJSON) UnmarshalJSON(raw []byte) error {
	var v struct {
		ID             string            `json:"id"`
		ConversationID string            `json:"conversation_id"`
		ConnectionID   string            `json:"connection_id"`
		Event          string            `json:"event"`
		Instruction    string            `json:"instruction"`
		Status         string            `json:"status"`
		PauseReason    string            `json:"pause_reason"`
		RefreshBefore  string            `json:"refresh_before"`
		RefreshError   string            `json:"refresh_error"`
		Arguments      map[string]string `json:"arguments"`
		Usage          struct {
			Turns       int `json:"turns"`
			Limited     int `json:"limited"`
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	*b = automationJSON{ID: v.ID, ConversationID: v.ConversationID, ConnectionID: v.ConnectionID, Event: v.Event, Instruction: v.Instruction,
		Status: v.Status, PauseReason: v.PauseReason, RefreshBefore: v.RefreshBefore, RefreshError: v.RefreshError, Arguments: v.Arguments}
	b.Usage.Turns, b.Usage.Limited, b.Usage.TotalTokens = v.Usage.Turns, v.Usage.Limited, v.Usage.TotalTokens
	return nil
}

var ticketArgs = map[string]string{"project_id": "p", "database_id": "main", "table_id": "tickets"}

func (f *automationFixture) create(instruction string) automationJSON {
	f.t.Helper()
	var out struct{ Automation automationJSON }
	if s, b := f.call("POST", "/api/automations", map[string]any{"connection_id": "events", "event": "tablesdb.row.created",
		"arguments": ticketArgs, "instruction": instruction}, &out); s != 201 {
		f.t.Fatalf("creating an automation: %d %s", s, b)
	}
	return out.Automation
}

func (f *automationFixture) get(id string) automationJSON {
	f.t.Helper()
	var out struct{ Automations []automationJSON }
	if s, b := f.call("GET", "/api/automations", nil, &out); s != 200 {
		f.t.Fatalf("listing automations: %d %s", s, b)
	}
	for _, a := range out.Automations {
		if a.ID == id {
			return a
		}
	}
	f.t.Fatalf("no automation %s in %+v", id, out.Automations)
	return automationJSON{}
}

func (f *automationFixture) requests() int {
	f.turn.mu.Lock()
	defer f.turn.mu.Unlock()
	return len(f.turn.requests)
}

// TestAutomationFromCreateToDelete is an automation's life through chat's API and its deliveries: created
// (subscribed with a fresh whsec_ secret, its callback verified with chat's answer to the challenge, the
// secret sealed at rest, its conversation marked and told), an event starting a turn for its owner who is
// not there (chat's key, progress.user_id, the owner's connections, the event and the instruction in the
// message), the conversation unread until read, the turn's tokens its usage, a redelivery starting nothing,
// and the refusals: forged, tampered, stale, oversize, another automation's secret, an unknown automation;
// another user reaching none of it; pausing (unsubscribed, deliveries start nothing), resuming, deleting
// (unsubscribed, deliveries 410).
func TestAutomationFromCreateToDelete(t *testing.T) {
	f := newAutomationFixture(t, 20, 0)
	var evs struct {
		Events []struct{ Name string }
	}
	if s, b := f.call("GET", "/api/automations/events?connection_id=events", nil, &evs); s != 200 || len(evs.Events) != 1 || evs.Events[0].Name != "tablesdb.row.created" {
		t.Fatalf("events: %d %s", s, b)
	}
	if s, _ := f.callAs("", "POST", "/api/automations", map[string]any{}, nil); s != 401 {
		t.Fatalf("creating without a JWT: %d", s)
	}
	a := f.create("Triage the new ticket: read it, set its priority, and tell me why.")
	sub := f.ev.sub(a.ID)
	if a.Status != "active" || a.RefreshBefore == "" || sub.ID == "" || sub.URL != f.base+"/api/events/"+a.ID || !strings.HasPrefix(sub.Secret, "whsec_") {
		t.Fatalf("automation %+v, subscription %+v", a, sub)
	}
	if rows := f.rows("chat", "automations"); strings.Contains(rows, sub.Secret) || !strings.Contains(rows, `"sealed:`) {
		t.Fatalf("the automation's secret is not sealed at rest:\n%s", rows)
	}
	var conv conversationBody
	if s, b := f.call("GET", "/api/conversations/"+a.ConversationID, nil, &conv); s != 200 || conv.Conversation.Title != "New rows in tickets" ||
		len(conv.Messages) != 1 || conv.Messages[0].Role != "notice" || !strings.Contains(conv.Messages[0].Content, "Triage the new ticket") {
		t.Fatalf("the automation's conversation: %d %s", s, b)
	}

	// An event: the turn starts for alice, who is not there.
	f.turn.events = []map[string]any{{"type": "usage", "model": "m", "agent": "platform", "prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
		{"type": "done", "answer": "Ticket r1 is urgent."}, {"type": "complete"}}
	if s, b := f.ev.deliver(a.ID, "evt_1", "r1"); s != 202 || !strings.Contains(b, `"status":"started"`) {
		t.Fatalf("a delivery: %d %s", s, b)
	}
	f.settle()
	req, hdr := f.turn.last()
	progress, _ := req["progress"].(map[string]any)
	conns, _ := req["mcp_connections"].([]any)
	msg, _ := req["message"].(string)
	if hdr.Get("X-Appwrite-User-Id") != "" || hdr.Get("X-Session-Api-Key") != "session-key" || progress["user_id"] != "alice" || progress["realtime"] != true ||
		len(conns) != 1 || !strings.Contains(fmt.Sprint(conns[0]), "at-1") || !strings.Contains(msg, "Automation event: tablesdb.row.created") ||
		!strings.Contains(msg, "- row_id: r1") || !strings.Contains(msg, "Instruction: Triage the new ticket") {
		t.Fatalf("the turn ran with %v\n%v", hdr, req)
	}
	var list struct {
		Conversations []struct {
			ID           string
			AutomationID string `json:"automation_id"`
			Unread       bool
		}
	}
	unread := func() bool {
		t.Helper()
		list.Conversations = nil
		if s, b := f.call("GET", "/api/conversations", nil, &list); s != 200 {
			t.Fatalf("conversations: %d %s", s, b)
		}
		for _, c := range list.Conversations {
			if c.ID == a.ConversationID {
				return c.Unread
			}
		}
		t.Fatalf("the automation's conversation is not listed: %+v", list)
		return false
	}
	if !unread() {
		t.Fatal("the conversation is not unread after the automation acted")
	}
	if s, b := f.call("GET", "/api/conversations/"+a.ConversationID, nil, &conv); s != 200 || len(conv.Messages) != 3 || conv.Messages[2].Content != "Ticket r1 is urgent." {
		t.Fatalf("the turn in the conversation: %d %s", s, b)
	}
	if unread() {
		t.Fatal("reading the conversation left it unread")
	}
	if got := f.get(a.ID); got.Usage.Turns != 1 || got.Usage.TotalTokens != 120 {
		t.Fatalf("usage %+v", got.Usage)
	}

	// A redelivery of the same webhook-id starts nothing.
	n := f.requests()
	if s, b := f.ev.deliver(a.ID, "evt_1", "r1"); s != 200 || !strings.Contains(b, `"status":"duplicate"`) {
		t.Fatalf("a redelivery: %d %s", s, b)
	}
	// Forged, tampered, stale, oversize, signed with another secret, or for an unknown automation: refused.
	body := event("evt_2", "r2", f.clock.Now())
	for _, c := range []struct {
		name   string
		url    string
		secret string
		body   []byte
		at     time.Time
		status int
		code   string
	}{
		{"forged", sub.URL, "whsec_" + strings.Repeat("A", 43) + "=", body, f.clock.Now(), 401, "bad_signature"},
		{"unsigned", sub.URL, "", body, f.clock.Now(), 401, "bad_signature"},
		{"stale", sub.URL, sub.Secret, body, f.clock.Now().Add(-6 * time.Minute), 401, "stale_timestamp"},
		{"from the future", sub.URL, sub.Secret, body, f.clock.Now().Add(6 * time.Minute), 401, "stale_timestamp"},
		{"oversize", sub.URL, sub.Secret, append(body, make([]byte, 256<<10)...), f.clock.Now(), 413, "payload_too_large"},
		{"unknown automation", f.base + "/api/events/nope", sub.Secret, body, f.clock.Now(), 410, "gone"},
	} {
		if s, b := f.ev.post(c.url, "evt_2", c.secret, c.body, c.at); s != c.status || !strings.Contains(b, `"error":"`+c.code+`"`) {
			t.Errorf("%s: %d %s, want %d %s", c.name, s, b, c.status, c.code)
		}
	}
	// Signed right, then tampered with: another row id in the same signed headers.
	h := http.Header{}
	sec, _ := stdwebhooks.ParseSecret(sub.Secret)
	if err := stdwebhooks.SetHeaders(h, "evt_2", f.clock.Now(), body, sec); err != nil {
		t.Fatal(err)
	}
	tampered, _ := http.NewRequest("POST", sub.URL, strings.NewReader(strings.Replace(string(body), `"r2"`, `"r9"`, 1)))
	tampered.Header = h
	if res, err := http.DefaultClient.Do(tampered); err != nil || res.StatusCode != 401 {
		t.Errorf("a tampered delivery: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	if s, b := f.ev.post(sub.URL, "evt_3", sub.Secret, []byte(`{"eventId":"evt_other","name":"tablesdb.row.created"}`), f.clock.Now()); s != 400 || !strings.Contains(b, "webhook-id") {
		t.Errorf("an eventId other than the webhook-id: %d %s", s, b)
	}
	if s, b := f.call("GET", "/api/events/"+a.ID, nil, nil); s != 405 {
		t.Errorf("GET on the callback: %d %s", s, b)
	}
	f.settle()
	if got := f.requests(); got != n {
		t.Fatalf("refused deliveries started %d turns", got-n)
	}

	// Another user reaches nothing of alice's.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.aw.SeedUser("p", localappwrite.UserSpec{ID: "bob", Email: "bob@example.com", Password: "bob-password"}))
	session, err := f.aw.CreateSession("p", "bob")
	must(err)
	bob, err := f.aw.UserJWT("p", session, 15*time.Minute)
	must(err)
	for _, c := range [][2]string{{"POST", "/api/automations/" + a.ID + "/pause"}, {"POST", "/api/automations/" + a.ID + "/resume"}, {"DELETE", "/api/automations/" + a.ID}} {
		if s, b := f.callAs(bob, c[0], c[1], map[string]any{}, nil); s != 404 {
			t.Errorf("bob: %s %s: %d %s", c[0], c[1], s, b)
		}
	}
	if s, b := f.callAs(bob, "GET", "/api/automations", nil, nil); s != 200 || strings.Contains(b, a.ID) {
		t.Errorf("bob's list: %d %s", s, b)
	}
	if s, b := f.callAs(bob, "GET", "/api/automations/events?connection_id=events", nil, nil); s != 409 || !strings.Contains(b, "no such MCP connection") {
		t.Errorf("bob using alice's connection: %d %s", s, b)
	}

	// Pause: unsubscribed, and a delivery still in flight starts nothing.
	var out struct{ Automation automationJSON }
	if s, b := f.call("POST", "/api/automations/"+a.ID+"/pause", map[string]any{}, &out); s != 200 || out.Automation.Status != "paused" || out.Automation.PauseReason != "user" {
		t.Fatalf("pause: %d %s", s, b)
	}
	if f.ev.sub(a.ID).ID != "" {
		t.Fatal("the paused automation is still subscribed")
	}
	if s, b := f.ev.post(sub.URL, "evt_4", sub.Secret, event("evt_4", "r4", f.clock.Now()), f.clock.Now()); s != 200 || !strings.Contains(b, `"reason":"paused"`) {
		t.Fatalf("a delivery to a paused automation: %d %s", s, b)
	}
	if s, b := f.call("POST", "/api/automations/"+a.ID+"/resume", map[string]any{}, &out); s != 200 || out.Automation.Status != "active" || f.ev.sub(a.ID).ID == "" {
		t.Fatalf("resume: %d %s", s, b)
	}
	f.settle()
	if got := f.requests(); got != n {
		t.Fatalf("a paused automation started %d turns", got-n)
	}

	// Delete: unsubscribed; its deliveries are 410 (the ingress stops); the conversation stays.
	var del struct{ Deleted, Unsubscribed bool }
	if s, b := f.call("DELETE", "/api/automations/"+a.ID, nil, &del); s != 200 || !del.Deleted || !del.Unsubscribed || f.ev.sub(a.ID).ID != "" {
		t.Fatalf("delete: %d %s", s, b)
	}
	if s, b := f.ev.post(sub.URL, "evt_5", sub.Secret, event("evt_5", "r5", f.clock.Now()), f.clock.Now()); s != 410 {
		t.Fatalf("a delivery to a deleted automation: %d %s", s, b)
	}
	if s, b := f.call("GET", "/api/conversations/"+a.ConversationID, nil, nil); s != 200 || strings.Contains(b, `"automation_id"`) {
		t.Fatalf("the conversation after the delete: %d %s", s, b)
	}
}

// TestAutomationRateLimit: past the limit an automation pauses and its conversation says why, once; the
// events after the limit start nothing. Deliveries arriving together never start more than the limit.
func TestAutomationRateLimit(t *testing.T) {
	f := newAutomationFixture(t, 3, 0)
	f.turn.events = []map[string]any{{"type": "done", "answer": "ok"}, {"type": "complete"}}
	a := f.create("Note it.")
	var wg sync.WaitGroup
	statuses := make([]string, 8)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, b := f.ev.deliver(a.ID, fmt.Sprintf("evt_%d", i), fmt.Sprintf("r%d", i))
			var v struct{ Status string }
			_ = json.Unmarshal([]byte(b), &v)
			statuses[i] = v.Status
		}()
	}
	wg.Wait()
	f.settle()
	started := 0
	for _, s := range statuses {
		if s == "started" {
			started++
		}
	}
	got := f.get(a.ID)
	if started > 3 || started == 0 || f.requests() != started || got.Status != "paused" || got.PauseReason != "rate_limit" {
		t.Fatalf("8 deliveries with a limit of 3: %v, %d turns, automation %+v", statuses, f.requests(), got)
	}
	var conv conversationBody
	if s, b := f.call("GET", "/api/conversations/"+a.ConversationID, nil, &conv); s != 200 {
		t.Fatalf("%d %s", s, b)
	}
	notices := 0
	for _, m := range conv.Messages {
		if m.Role == "notice" && strings.HasPrefix(m.Content, "Paused: this automation received more than 3 events within the hour") {
			notices++
		}
	}
	if notices != 1 {
		t.Fatalf("%d rate-limit notices in %+v", notices, conv.Messages)
	}
	// Resumed, it has a new budget (a new generation of the same hour).
	if s, b := f.call("POST", "/api/automations/"+a.ID+"/resume", map[string]any{}, nil); s != 200 {
		t.Fatalf("resume: %d %s", s, b)
	}
	if s, b := f.ev.deliver(a.ID, "evt_after", "r9"); s != 202 {
		t.Fatalf("after the resume: %d %s", s, b)
	}
}

// TestAutomationScheduledRefresh: chat's cron execution (appwrite.json's schedule, run by the stand-in as
// Appwrite does when the test moves its clock) refreshes the access token ahead of its expiry and the
// subscription before its refreshBefore, unsubscribes a paused automation, and stores finished turns. A
// refresh that fails is recorded with its reason; reconnecting the server subscribes again. Only the cron
// execution runs the job: a delayed execution made through the Executions API (trigger schedule too, with a
// client IP) and a domain request claiming the trigger do not.
func TestAutomationScheduledRefresh(t *testing.T) {
	f := newAutomationFixture(t, 20, 10*time.Minute) // the access token expires within the refresh window
	a := f.create("Watch it.")
	before := f.get(a.ID).RefreshBefore
	runSchedule := func() {
		t.Helper()
		f.aw.RunScheduled(f.clock.Now())
		f.settle()
		f.renewJWT() // the page's JWT lasts 15 minutes; the test's clock moved past it
	}
	f.clock.Advance(50 * time.Minute) // past the next 5-minute mark; refreshBefore (54 min) is within 15 minutes
	runSchedule()
	after := f.get(a.ID)
	if after.RefreshError != "" || after.RefreshBefore <= before || f.ev.refreshes == 0 {
		t.Fatalf("after the scheduled run: refreshBefore %s (was %s), error %q, token refreshes %d", after.RefreshBefore, before, after.RefreshError, f.ev.refreshes)
	}
	// The refreshed tokens are stored (sealed): the next calls use them.
	if rows := f.rows("chat", "mcp_connections"); strings.Contains(rows, "at-2") || strings.Contains(rows, "rt-2") {
		t.Fatalf("the refreshed tokens are in the clear:\n%s", rows)
	}

	// A revoked grant: the refresh fails, and the automation says why; reconnecting subscribes it again.
	f.ev.mu.Lock()
	f.ev.access, f.ev.refresh = map[string]bool{"at-new": true}, "rt-revoked-elsewhere"
	f.ev.mu.Unlock()
	f.clock.Advance(time.Hour)
	runSchedule()
	failed := f.get(a.ID)
	if !strings.Contains(failed.RefreshError, "MCP connection 'events'") || !strings.Contains(failed.RefreshError, "reconnect it") {
		t.Fatalf("the failed refresh: %+v", failed)
	}
	if s, b := f.call("PUT", "/api/mcp/connections/events", map[string]any{"name": "Events", "url": f.ev.url(),
		"tokens": map[string]any{"access_token": "at-new", "refresh_token": "rt-revoked-elsewhere"}, "client_info": f.ev.clientInfo()}, nil); s != 200 {
		t.Fatalf("reconnecting: %d %s", s, b)
	}
	var re struct{ Automations []automationJSON }
	if s, b := f.call("POST", "/api/automations/reconnected", map[string]any{"connection_id": "events"}, &re); s != 200 || len(re.Automations) != 1 || re.Automations[0].RefreshError != "" {
		t.Fatalf("after reconnecting: %d %s", s, b)
	}

	// Paused with its subscription left (the unsubscribe failed): the next run removes it.
	f.ev.mu.Lock()
	saved, savedRefresh := f.ev.access, f.ev.refresh
	f.ev.access, f.ev.refresh = map[string]bool{}, "none-valid"
	f.ev.mu.Unlock()
	if s, b := f.call("POST", "/api/automations/"+a.ID+"/pause", map[string]any{}, nil); s != 200 {
		t.Fatalf("pause: %d %s", s, b)
	}
	if f.ev.sub(a.ID).ID == "" || f.get(a.ID).RefreshError == "" {
		t.Fatal("the unsubscribe was meant to fail")
	}
	f.ev.mu.Lock()
	f.ev.access, f.ev.refresh = saved, savedRefresh
	f.ev.mu.Unlock()
	f.clock.Advance(5 * time.Minute)
	runSchedule()
	if f.ev.sub(a.ID).ID != "" {
		t.Fatal("the scheduled run left a paused automation subscribed")
	}

	// Nobody else runs the job: a delayed execution made through the Executions API (trigger schedule, with
	// its creator's client IP) and a domain request claiming the trigger are ordinary requests. The clock
	// stays between two of the schedule's marks meanwhile, so that only those two could run it.
	mark := f.clock.Now().Truncate(5 * time.Minute).Add(5 * time.Minute)
	f.clock.Set(mark.Add(10 * time.Second))
	runSchedule()
	runs := f.logged("automations: ")
	if runs == 0 {
		t.Fatal("the cron execution at the mark did not run the job")
	}
	key, err := f.aw.CreateKey("p", []string{"executions.write"})
	if err != nil {
		t.Fatal(err)
	}
	at := mark.Add(2 * time.Minute).Format("2006-01-02T15:04:05.000-07:00")
	s, b := keyRequest(t, f.turn.endpoint, key, "POST", "/functions/chat/executions", map[string]any{"async": true, "scheduledAt": at, "method": "POST", "path": "/"})
	var delayed struct {
		ID string `json:"$id"`
	}
	if s != 202 || json.Unmarshal([]byte(b), &delayed) != nil {
		t.Fatalf("a delayed execution: %d %s", s, b)
	}
	req, _ := http.NewRequest("POST", f.base+"/", strings.NewReader(""))
	req.Header.Set("X-Appwrite-Trigger", "schedule")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 405 {
		t.Fatalf("a domain request claiming the schedule: %v %v", res, err)
	}
	res.Body.Close()
	f.clock.Set(mark.Add(2*time.Minute + 30*time.Second))
	f.aw.RunScheduled(f.clock.Now())
	f.settle()
	if got := f.logged("automations: "); got != runs {
		t.Fatalf("%d requests that were not chat's schedule ran the job", got-runs)
	}
	readKey, err := f.aw.CreateKey("p", []string{"executions.read"})
	if err != nil {
		t.Fatal(err)
	}
	if s, b := keyRequest(t, f.turn.endpoint, readKey, "GET", "/functions/chat/executions/"+delayed.ID, nil); s != 200 ||
		!strings.Contains(b, `"trigger":"schedule"`) || !strings.Contains(b, `"status":"completed"`) || !strings.Contains(b, `"responseStatusCode":405`) {
		t.Fatalf("the delayed execution ran as an ordinary request (405): %d %s", s, b)
	}
}

// TestAutomationRefusals: what an automation may not be (chat's own tables and functions, bad arguments, an
// event the server does not offer, a connection that is not there), each refused before anything is left.
func TestAutomationRefusals(t *testing.T) {
	f := newAutomationFixture(t, 20, 0)
	for _, c := range []struct {
		name   string
		body   map[string]any
		status int
		want   string
	}{
		{"chat's messages", map[string]any{"connection_id": "events", "event": "tablesdb.row.created", "instruction": "x",
			"arguments": map[string]string{"project_id": "p", "database_id": "chat", "table_id": "messages"}}, 422, "chat's own table 'messages'"},
		{"turn's progress rows", map[string]any{"connection_id": "events", "event": "tablesdb.row.created", "instruction": "x",
			"arguments": map[string]string{"project_id": "p", "database_id": "main", "table_id": "turn_progress"}}, 422, "chat's own table 'turn_progress'"},
		{"turn's failures", map[string]any{"connection_id": "events", "event": "functions.execution.failed", "instruction": "x",
			"arguments": map[string]string{"project_id": "p", "function_id": "turn"}}, 422, "cannot watch the function 'turn'"},
		{"no instruction", map[string]any{"connection_id": "events", "event": "tablesdb.row.created", "arguments": ticketArgs}, 422, "instruction is required"},
		{"a bad id", map[string]any{"connection_id": "events", "event": "tablesdb.row.created", "instruction": "x",
			"arguments": map[string]string{"project_id": "p", "table_id": "../etc"}}, 422, "arguments.table_id must be an Appwrite id"},
		{"an event not offered", map[string]any{"connection_id": "events", "event": "users.user.created", "instruction": "x",
			"arguments": map[string]string{"project_id": "p"}}, 422, "unknown event users.user.created"},
		{"the server's refusal", map[string]any{"connection_id": "events", "event": "tablesdb.row.created", "instruction": "x",
			"arguments": map[string]string{"project_id": "p"}}, 422, "table_id is required"},
		{"the project's webhooks used up", map[string]any{"connection_id": "events", "event": "tablesdb.row.created", "instruction": "x",
			"arguments": map[string]string{"project_id": "p", "database_id": "main", "table_id": "full"}}, 429, "cannot have more webhooks"},
		{"no such connection", map[string]any{"connection_id": "nope", "event": "tablesdb.row.created", "instruction": "x", "arguments": ticketArgs}, 409, "no such MCP connection"},
	} {
		if s, b := f.call("POST", "/api/automations", c.body, nil); s != c.status || !strings.Contains(b, c.want) {
			t.Errorf("%s: %d %s, want %d %q", c.name, s, b, c.status, c.want)
		}
	}
	if rows := f.rows("chat", "automations"); strings.Contains(rows, `"user_id"`) {
		t.Fatalf("a refused automation left a row:\n%s", rows)
	}
	var list struct{ Conversations []struct{ ID string } }
	if s, b := f.call("GET", "/api/conversations", nil, &list); s != 200 || len(list.Conversations) != 0 {
		t.Fatalf("a refused automation left a conversation: %d %s", s, b)
	}
}

// renewJWT gets alice a new JWT, as the page does after a 401.
func (f *automationFixture) renewJWT() {
	f.t.Helper()
	session, err := f.aw.CreateSession("p", "alice")
	if err == nil {
		f.jwt, err = f.aw.UserJWT("p", session, 15*time.Minute)
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

// keyRequest calls the stand-in's API with an API key (a nil body sends none).
func keyRequest(t *testing.T, endpoint, key, method, path string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, endpoint+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Appwrite-Project", "p")
	req.Header.Set("X-Appwrite-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(out)
}
