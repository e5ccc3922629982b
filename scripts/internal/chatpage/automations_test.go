package chatpage

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/stack"
	"appwrite-agent/shared/convtitle"
	"appwrite-agent/shared/devkit/browser"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/scriptedllm"
	"appwrite-agent/shared/devkit/testclock"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/id"
	"github.com/chromedp/chromedp"
)

// automator answers the scripted model for TestAutomationsInThePage: a turn an automation started (its
// message begins "Automation event:") for the watched row reads the row with mcp-events' get_row and answers
// from what it read; the turns of the burst answer at once (the router's FINISH), so fifty rows cost little.
type automator struct {
	mu sync.Mutex
	// read is the row ids whose turns read the row; every other event is answered at once.
	read map[string]bool
	// hold keeps the final answer of a row's turn until the test closes it (the turn cannot end before the
	// page has seen it run).
	hold map[string]chan struct{}
}

var eventLine = regexp.MustCompile(`(?m)^- (\w+): (\S+)$`)

// eventIDs are the ids of an automation's event message ("- row_id: …" lines).
func eventIDs(msg string) map[string]string {
	out := map[string]string{}
	for _, m := range eventLine.FindAllStringSubmatch(msg, -1) {
		out[m[1]] = m[2]
	}
	return out
}

var subjectField = regexp.MustCompile(`"subject":\s*"([^"]*)"`)

func (a *automator) reply(r scriptedllm.Request, _ int) scriptedllm.Reply {
	var req chatRequest
	_ = json.Unmarshal(r.Body, &req)
	if len(req.Messages) > 0 && text(req.Messages[0].Content) == convtitle.SystemPrompt {
		return scriptedllm.Reply{Content: "Tickets"} // an automation's conversation keeps its own title
	}
	msg, step := lastUser(req)
	ids := eventIDs(msg)
	a.mu.Lock()
	reads := a.read[ids["row_id"]]
	a.mu.Unlock()
	if len(req.ResponseFormat) > 0 { // the router
		switch {
		case strings.HasPrefix(msg, "Automation event:") && reads:
			return route("platform", "")
		case strings.HasPrefix(msg, "Automation event:"):
			return route("FINISH", "Noted row "+ids["row_id"]+".")
		}
		return route("FINISH", "Hello.")
	}
	if step == 0 {
		return scriptedllm.Reply{Content: "Reading the new ticket.", Chunks: 2, ToolCalls: []scriptedllm.ToolCall{call("get_row", map[string]any{
			"project_id": ids["project_id"], "database_id": ids["database_id"], "table_id": ids["table_id"], "row_id": ids["row_id"]})}}
	}
	a.mu.Lock()
	held := a.hold[ids["row_id"]]
	a.mu.Unlock()
	if held != nil {
		<-held
	}
	subject := "?"
	for _, m := range req.Messages {
		if m.Role == "tool" {
			if s := subjectField.FindStringSubmatch(text(m.Content)); s != nil {
				subject = s[1]
			}
		}
	}
	return scriptedllm.Reply{Content: "Ticket “" + subject + "” is urgent: priority high, because a printer on fire stops the office."}
}

// TestAutomationsInThePage is issue 41's end-to-end test, in a real Chromium through the staged stack with a
// scripted model: the user connects mcp-events with OAuth in the browser, writes "When a row is added to
// support_tickets, triage it…", which the page offers as an automation (nothing is made until the user
// confirms), and creates it; a row created through the Appwrite API reaches the automation's conversation
// (marked unread in the sidebar) as a turn whose answer read the row with get_row; a second row, watched
// live, gives the first-token figure of docs/benchmarks.md; Appwrite's redelivery of the first row's webhook
// and a forged delivery start nothing; the scheduled execution of chat (the stand-in's cron, on its moved
// clock) moves refreshBefore forward; pausing removes the webhook and stops turns; resumed, a burst of 50 rows
// ends paused after the limit with the notice; deleting removes the webhook. At a phone's width too.
func TestAutomationsInThePage(t *testing.T) {
	root, axe := needPage(t)
	ctx := browser.New(t, 8*time.Minute)
	model := scriptedllm.New()
	defer model.Close()
	bot := &automator{read: map[string]bool{}, hold: map[string]chan struct{}{}}
	model.SetHandler(bot.reply)
	// The stand-in's clock starts 5 minutes behind the wall clock (the staged functions keep the wall clock),
	// so that moving it to the schedule's next mark leaves it at most seconds ahead of them: the tokens the
	// stand-in mints then are not "not yet valid" for mcp-events (30 s of leeway).
	clk := testclock.Wall()
	clk.Set(time.Now().Add(-5 * time.Minute))
	st := startStack(t, stack.Options{
		Env: map[string][]string{
			"turn":  append(modelEnv(model, turnModel), "SAFEHTTP_ALLOW_HTTP=true"), // the staged mcp-events is plain http on loopback
			"title": modelEnv(model, titleModel),
			// Every scheduled run refreshes: the staged functions keep the wall clock, only the stand-in's moves.
			"chat": {"CHAT_AUTOMATION_REFRESH_AHEAD=2h"},
		},
		Appwrite: localappwrite.Options{Clock: clk.Now},
	})
	d := st.Demo
	aw := st.Appwrite.Server
	const table = "support_tickets"
	if err := aw.SeedDatabase(d.ProjectID, localappwrite.DatabaseSpec{ID: d.DatabaseID, Tables: []localappwrite.TableSpec{{ID: table, Name: "Support tickets",
		Columns: []localappwrite.Column{{Key: "subject", Type: "string", Size: 256}, {Key: "priority", Type: "string", Size: 16}}}}}); err != nil {
		t.Fatal(err)
	}
	const email, password = "ada@example.com", "correct horse battery"
	if err := aw.SeedUser(d.ProjectID, localappwrite.UserSpec{ID: "ada", Email: email, Password: password, Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	db := appwrite.NewTablesDB(appwrite.NewClient(appwrite.WithTimeout(2*time.Minute), appwrite.WithEndpoint(d.Endpoint), appwrite.WithProject(d.ProjectID), appwrite.WithKey(d.APIKey)))
	ticket := func(subject string) string {
		t.Helper()
		row, err := db.CreateRow(d.DatabaseID, table, id.Unique(), map[string]any{"subject": subject})
		if err != nil {
			t.Fatal(err)
		}
		return row.Id
	}
	settle := func() {
		t.Helper()
		c, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := aw.Flush(c); err != nil {
			t.Fatal(err)
		}
	}
	chatURL := aw.DomainURL("chat") + "/"
	p := &page{t: t, ctx: ctx, root: root}

	p.do("opening the page", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(chatURL))
	p.wait("the sign-in form", `!!document.querySelector("#signin input[name=email]")`)
	p.do("signing in", browser.Type(chromedp.CSS(`#signin input[name=email]`), email),
		browser.Type(chromedp.CSS(`#signin input[name=password]`), password), chromedp.Click(chromedp.CSS(`#signin button[type=submit]`)))
	p.wait("the chat after sign-in", `document.querySelector("#me")?.textContent === `+js(email))
	p.connectEvents(st.URLs["mcp-events"] + "/mcp")
	p.do("closing the settings", chromedp.Click(chromedp.CSS(`#settings button[aria-label="Close settings"]`)))

	// A message that reads like an automation is offered as one; nothing is sent or made yet.
	const ask = "When a row is added to support_tickets, triage it: read it, set its priority, and tell me why."
	p.do("writing the automation as a message", browser.Type(chromedp.ID("prompt"), ask), chromedp.Click(chromedp.ID("send")))
	p.wait("the offer", `document.querySelector("#automation-offer")?.textContent.includes("reads like an automation")`)
	p.wait("the form filled in from the message and the server's events/list", `document.querySelector('#automation-form select[name=event]')?.value === "tablesdb.row.created" && `+
		`document.querySelector('#automation-form input[name=arg-table_id]')?.value === "support_tickets" && `+
		`document.querySelector('#automation-form input[name=arg-project_id]')?.value === `+js(d.ProjectID)+` && `+
		`document.querySelector('#automation-form textarea[name=instruction]')?.value.startsWith("Triage it: read it")`)
	if n := p.eval(`String(document.querySelectorAll(".msg-user").length)`); n != "0" {
		t.Fatalf("the offered message was sent (%s user messages)", n)
	}
	p.do("naming the database", browser.Type(chromedp.CSS(`#automation-form input[name=arg-database_id]`), d.DatabaseID))
	p.axe("the automation offer", axe)
	p.dismissToasts()
	p.shot("chat-automation-offer.png")
	p.do("creating the automation", chromedp.Click(chromedp.ID("automation-create")))
	p.wait("the automation's conversation, marked, with chat's notice", `document.querySelector("#conversations li.active")?.dataset.automationId && `+
		`document.querySelector("#conversation-title")?.textContent === "New rows in support_tickets" && `+
		`document.querySelector(".notice-chat")?.textContent.startsWith("Automation created.")`)
	autoID := p.eval(`document.querySelector("#conversations li.active").dataset.automationId`)
	convID := p.eval(`document.querySelector("#conversations li.active").dataset.conversationId`)
	if p.eval(`document.querySelector("#prompt").value`) != "" {
		t.Errorf("the composer still holds the message the automation was made of")
	}
	jwt := adaJWT(t, aw, d.ProjectID)
	auto := func() automationState {
		t.Helper()
		return readAutomation(t, chatURL, jwt, autoID)
	}
	first := auto()
	if first.Status != "active" || first.RefreshBefore == "" {
		t.Fatalf("the automation after creation: %+v", first)
	}
	webhookID := first.subscription(t, d)

	// A row created through the Appwrite API while the user is elsewhere: the conversation is marked unread,
	// and shows the turn that read the row with get_row.
	p.do("going to a new chat", chromedp.Click(chromedp.CSS(`.new-chat`)))
	row1 := ticket("Printer on fire")
	bot.mu.Lock()
	bot.read[row1] = true
	bot.mu.Unlock()
	p.wait("the unread mark", `document.querySelector('#conversations li[data-conversation-id=`+js(convID)+`]')?.dataset.unread === "true"`)
	p.do("opening the automation's conversation", chromedp.Click(chromedp.CSS(`#conversations li[data-conversation-id=`+js(convID)+`] a`)))
	p.wait("get_row's card with the row it read", `document.querySelector('details.tool[data-tool="get_row"] .tool-output')?.textContent.includes("Printer on fire")`)
	p.wait("the answer, from what get_row read", `[...document.querySelectorAll(".answer")].some(a => a.textContent.includes("Ticket “Printer on fire” is urgent"))`)
	p.wait("the unread mark gone once read", `!document.querySelector('#conversations li[data-conversation-id=`+js(convID)+`]')?.dataset.unread`)
	if card := p.eval(`document.querySelector(".msg-event .event-card")?.textContent ?? ""`); !strings.Contains(card, "tablesdb.row.created") || !strings.Contains(card, "row_id"+row1) ||
		!strings.Contains(card, "Triage it: read it") {
		t.Errorf("the event card of the turn: %q", card)
	}
	p.dismissToasts()
	p.shot("chat-automation.png")

	// A second row with the conversation open: its turn is followed live (its final answer is held until the
	// page shows it running), and the time from the row's creation to its first token on the page is the
	// figure of docs/benchmarks.md.
	settle()
	p.eval(`(() => { window.__firstToken = 0; const n = document.querySelectorAll(".msg-assistant").length;
		new MutationObserver((_, o) => { const a = document.querySelectorAll(".msg-assistant"), m = a[a.length - 1];
			if (a.length > n && m.querySelector('.turn[data-running="true"] .tokens')?.textContent) { window.__firstToken = Date.now(); o.disconnect() } })
		.observe(document.querySelector("#messages"), {subtree: true, childList: true, characterData: true}); return "ok" })()`)
	row2ID := id.Unique()
	release := make(chan struct{})
	bot.mu.Lock()
	bot.read[row2ID], bot.hold[row2ID] = true, release
	bot.mu.Unlock()
	var released sync.Once
	let := func() { released.Do(func() { close(release) }) }
	defer let() // a failing test must not leave the model's reply blocked
	created := time.Now()
	if _, err := db.CreateRow(d.DatabaseID, table, row2ID, map[string]any{"subject": "Coffee machine empty"}); err != nil {
		t.Fatal(err)
	}
	p.wait("the second ticket's turn running, its first token live", `window.__firstToken > 0`)
	firstToken, _ := strconv.ParseInt(p.eval(`String(window.__firstToken)`), 10, 64)
	t.Logf("automation first token: %d ms from the row's creation to the first token on the page", firstToken-created.UnixMilli())
	let()
	p.wait("the second answer", `[...document.querySelectorAll(".answer")].some(a => a.textContent.includes("Coffee machine empty"))`)
	settle()
	turns := assistantMessages(t, chatURL, jwt, convID)

	// Appwrite's redelivery of the first row's webhook (the ingress gives it the same eventId), and a forged
	// delivery to chat's callback: nothing starts.
	var redelivered bool
	for _, dl := range aw.Deliveries() {
		if dl.WebhookID == webhookID && strings.Contains(dl.Body, row1) {
			if err := aw.Redeliver(dl.ID); err != nil {
				t.Fatal(err)
			}
			redelivered = true
			break
		}
	}
	if !redelivered {
		t.Fatalf("no delivery of webhook %s for row %s to redeliver", webhookID, row1)
	}
	forged, _ := http.NewRequest("POST", st.Appwrite.SecureDomainURL("chat")+"/api/events/"+autoID, strings.NewReader(`{"eventId":"evt_forged","name":"tablesdb.row.created","data":{"row_id":"x"}}`))
	forged.Header.Set("webhook-id", "evt_forged")
	forged.Header.Set("webhook-timestamp", strconv.FormatInt(time.Now().Unix(), 10))
	forged.Header.Set("webhook-signature", "v1,bm90IGEgc2lnbmF0dXJlIGF0IGFsbCwganVzdCBub2lzZQ==")
	tlsClient := stackClient(t, st)
	if res, err := tlsClient.Do(forged); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a forged delivery: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	settle()
	if got := assistantMessages(t, chatURL, jwt, convID); got != turns {
		t.Fatalf("a redelivery and a forged delivery started %d turns", got-turns)
	}

	// chat's scheduled execution, run by the stand-in at the schedule's next mark on its moved clock,
	// refreshes the subscription: refreshBefore moves forward (mcp-events grants from its wall clock, which
	// has moved on by the seconds the turns above took).
	before := auto().RefreshBefore
	clk.Set(clk.Now().Truncate(5 * time.Minute).Add(5*time.Minute + 10*time.Second))
	aw.RunScheduled(clk.Now())
	settle()
	jwt = adaJWT(t, aw, d.ProjectID) // the moved clock may have ended the last one
	if after := auto(); after.RefreshBefore <= before || after.RefreshError != "" {
		t.Fatalf("the scheduled refresh: refreshBefore %s (was %s), error %q", after.RefreshBefore, before, after.RefreshError)
	}

	// Pausing removes the webhook, and a row then starts nothing.
	p.do("opening the automations", chromedp.Click(chromedp.ID("open-automations")))
	item := `#automation-list li[data-automation-id=` + js(autoID) + `]`
	p.wait("the automation in the list, with its usage", `document.querySelector(`+js(item+` .automation-usage`)+`)?.textContent.startsWith("2 turns")`)
	p.do("pausing", chromedp.Click(chromedp.CSS(item+` button.pause`)))
	p.wait("paused", `document.querySelector(`+js(item)+`)?.dataset.status === "paused"`)
	if hooks := webhooks(t, d); strings.Contains(hooks, webhookID) {
		t.Fatalf("the paused automation's webhook is still there: %s", hooks)
	}
	ticket("Ignored while paused")
	settle()
	if got := assistantMessages(t, chatURL, jwt, convID); got != turns {
		t.Fatalf("a paused automation started %d turns", got-turns)
	}
	p.do("resuming", chromedp.Click(chromedp.CSS(item+` button.resume`)))
	p.wait("active again", `document.querySelector(`+js(item)+`)?.dataset.status === "active"`)
	if hooks := webhooks(t, d); !strings.Contains(hooks, webhookID) {
		t.Fatalf("the resumed automation has no webhook: %s", hooks)
	}

	// A burst of 50 rows: the limit's worth of turns (20 in the hour), then the automation pauses and its
	// conversation says why.
	for i := range 50 {
		ticket("Burst " + strconv.Itoa(i))
	}
	settle()
	p.do("closing the automations", chromedp.Click(chromedp.CSS(`#automations button[aria-label="Close automations"]`)))
	p.wait("the rate-limit notice in the conversation", `[...document.querySelectorAll(".notice-chat")].some(n => n.textContent.startsWith("Paused: this automation received more than 20 events within the hour"))`)
	burst := assistantMessages(t, chatURL, jwt, convID) - turns
	if paused := auto(); paused.Status != "paused" || paused.PauseReason != "rate_limit" || burst != 20 {
		t.Fatalf("after 50 rows: %d turns, automation %+v", burst, paused)
	}
	p.do("opening the automations", chromedp.Click(chromedp.ID("open-automations")))
	p.wait("paused by its rate limit", `document.querySelector(`+js(item+` .automation-state`)+`)?.textContent === "paused by its rate limit"`)
	p.axe("the automations", axe)
	p.dismissToasts()
	p.shot("chat-automations.png")

	// At a phone's width: the sheet fits, nothing scrolls sideways.
	p.do("a phone's screen", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch))
	p.wait("laid out at 390, the drawer gone", `innerWidth === 390 && getComputedStyle(document.querySelector("#sidebar")).visibility === "hidden"`)
	p.wait("the sheet filling the screen", `(() => { const r = document.querySelector("#automations").getBoundingClientRect(); return r.left === 0 && r.right === 390 })()`)
	if w := p.eval(`String(Math.max(document.documentElement.scrollWidth, document.querySelector("#automations").scrollWidth))`); w != "390" {
		t.Errorf("at 390 px the automations are %s px wide", w)
	}
	p.shot("chat-automations-phone.png")
	p.do("back to a desktop screen", chromedp.EmulateViewport(1280, 900))

	// Deleting removes the webhook; the conversation stays.
	p.do("deleting", chromedp.Click(chromedp.CSS(item+` button.delete`)))
	p.wait("the confirmation", `!!document.querySelector("#confirm-dialog[open]")`)
	p.do("confirming", chromedp.Click(chromedp.ID("confirm-ok")))
	p.wait("the automation gone", `!document.querySelector(`+js(item)+`)`)
	if hooks := webhooks(t, d); strings.Contains(hooks, webhookID) {
		t.Fatalf("the deleted automation's webhook is still there: %s", hooks)
	}
}

// dismissToasts closes the toasts on the page (before a screenshot: they cover what it shows).
func (p *page) dismissToasts() {
	p.t.Helper()
	p.eval(`document.querySelectorAll(".toasts button[aria-label=Dismiss]").forEach(b => b.click()), "ok"`)
	p.wait("the toasts dismissed", `!document.querySelector(".toasts .toast")`)
}

// automationState is an automation as chat's API answers it.
type automationState struct {
	ID            string `json:"id"`
	Status        string `json:"status"`
	PauseReason   string `json:"pause_reason"`
	RefreshBefore string `json:"refresh_before"`
	RefreshError  string `json:"refresh_error"`
	Event         string `json:"event"`
}

// subscription is the automation's webhook id: the one managed webhook of the project for the event.
func (a automationState) subscription(t *testing.T, d *localappwrite.Demo) string {
	t.Helper()
	var out struct {
		Webhooks []struct {
			ID     string   `json:"$id"`
			Events []string `json:"events"`
		} `json:"webhooks"`
	}
	if status, body := keyCall(t, d, http.MethodGet, "/webhooks", nil); status != http.StatusOK || json.Unmarshal(body, &out) != nil {
		t.Fatalf("listing webhooks: %d %s", status, body)
	}
	for _, w := range out.Webhooks {
		if strings.HasPrefix(w.ID, "mcpev_") && len(w.Events) > 0 && strings.Contains(w.Events[0], ".tables.support_tickets.rows.") {
			return w.ID
		}
	}
	t.Fatalf("no webhook for the automation in %+v", out.Webhooks)
	return ""
}

// webhooks is the project's webhooks as an API key lists them.
func webhooks(t *testing.T, d *localappwrite.Demo) string {
	t.Helper()
	status, body := keyCall(t, d, http.MethodGet, "/webhooks", nil)
	if status != http.StatusOK {
		t.Fatalf("listing webhooks: %d %s", status, body)
	}
	return string(body)
}

// adaJWT is a JWT of Ada's, as the page gets one.
func adaJWT(t *testing.T, aw *localappwrite.Server, project string) string {
	t.Helper()
	session, err := aw.CreateSession(project, "ada")
	if err != nil {
		t.Fatal(err)
	}
	jwt, err := aw.UserJWT(project, session, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return jwt
}

func getJSON(t *testing.T, url, jwt string, out any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+jwt)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func readAutomation(t *testing.T, chatURL, jwt, id string) automationState {
	t.Helper()
	var out struct{ Automations []automationState }
	getJSON(t, chatURL+"api/automations", jwt, &out)
	for _, a := range out.Automations {
		if a.ID == id {
			return a
		}
	}
	t.Fatalf("no automation %s", id)
	return automationState{}
}

// assistantMessages counts the assistant messages of a conversation (chat stores finished turns as it reads).
func assistantMessages(t *testing.T, chatURL, jwt, conversationID string) int {
	t.Helper()
	var out struct {
		Messages []struct{ Role string }
	}
	getJSON(t, chatURL+"api/conversations/"+conversationID, jwt, &out)
	n := 0
	for _, m := range out.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// stackClient trusts the stand-in's https certificate (its function domains over https).
func stackClient(t *testing.T, st *stack.Stack) *http.Client {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(st.Appwrite.CertPEM) {
		t.Fatal("the stand-in's certificate does not parse")
	}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
}
