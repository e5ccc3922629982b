package chatpage

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/stack"
	"appwrite-agent/scripts/internal/staging"
	"appwrite-agent/shared/devkit/browser"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/scriptedllm"
	"appwrite-agent/shared/devkit/snapshot"
	"appwrite-agent/shared/devkit/testclock"
	"appwrite-agent/shared/seal"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/golang-jwt/jwt/v5"
)

// page drives the browser; every wait is on a DOM condition, bounded by a generous ceiling.
type page struct {
	t    *testing.T
	ctx  context.Context
	root string
}

const ceiling = 60 * time.Second

func (p *page) fail(format string, args ...any) {
	p.t.Helper()
	body, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 3000) : ""`))
	p.t.Fatalf("%s\n--- the page's text:\n%s", fmt.Sprintf(format, args...), body)
}

func (p *page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		p.fail("%s: %v", what, err)
	}
}

// wait polls a JavaScript condition until it is true. A navigation while polling (the OAuth round trip
// loads other pages) ends that poll; polling goes on in the new page.
func (p *page) wait(what, cond string) {
	p.t.Helper()
	deadline := time.Now().Add(ceiling)
	for {
		left := time.Until(deadline)
		_, err := chromedp.Run(p.ctx, chromedp.Poll[bool]("!!("+cond+")", chromedp.WithPollingTimeout(left)))
		if err == nil {
			return
		}
		if left > 0 && (strings.Contains(err.Error(), "navigated or closed") || strings.Contains(err.Error(), "context was destroyed") || strings.Contains(err.Error(), "Cannot find context")) {
			continue
		}
		p.fail("waiting for %s (%s): %v", what, cond, err)
	}
}

func (p *page) eval(expr string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.fail("evaluating %s: %v", expr, err)
	}
	return v
}

// send types a message and sends it.
func (p *page) send(msg string) {
	p.t.Helper()
	p.wait("the composer to be ready", `document.querySelector("#send")?.disabled === false`) // Send, not Stop: the last turn has ended
	before := p.eval(`String(document.querySelectorAll(".msg-user").length)`)
	p.do("sending "+msg, browser.Type(chromedp.ID("prompt"), msg), chromedp.Click(chromedp.ID("send")))
	p.wait("the message "+msg+" sent (or an error)", `document.querySelectorAll(".msg-user").length > `+before+` || document.querySelector(".toast-error")`)
	if e := p.eval(`document.querySelector(".toast-error")?.textContent ?? ""`); e != "" {
		p.fail("sending %q: the page says %s", msg, e)
	}
}

// waitStored waits until the page has read the last turn back from chat (which stores a finished turn, its
// memories and refreshed tokens included, when the conversation is next read): the message's stored status.
func (p *page) waitStored() {
	p.t.Helper()
	p.wait("the last turn stored", `document.querySelector("#messages > .msg-assistant:last-child")?.classList.contains("status-done")`)
}

// shot saves a documentation image under docs/img/ when the snapshots are being updated (UPDATE_SNAPSHOTS=1),
// so a normal run leaves the tree clean.
func (p *page) shot(name string) {
	p.t.Helper()
	if !snapshot.Update() {
		return
	}
	if err := browser.Screenshot(p.ctx, filepath.Join(p.root, "docs", "img", name)); err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
}

// js quotes a Go string for JavaScript.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestChatPage signs in, runs conversations against the scripted model and checks what a user sees:
// the title arriving through Realtime, tokens and a tool card while a turn runs, the Console actions
// rendered, a clarify form whose answers reach the next turn, an MCP server connected through OAuth in the
// browser, the conversation found again after a reload; and the hostile cases: model HTML stays inert, an
// oversized attachment is refused by the page and by chat, an expired JWT is renewed while the session
// lives and leads to the sign-in form when it does not; then a second user signs up in the same tab and
// attaches files through the picker (signUpAndAttach). One browser, one tab, one stack.
func TestChatPage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack and a browser")
	}
	if why := os.Getenv("CHAT_WEB_UNBUILT"); why != "" {
		t.Skip(why)
	}
	root, err := staging.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "functions", "chat", "web", "dist", "index.html")); err != nil {
		t.Skip("the chat page is not built (scripts/build-chat-web builds it; scripts/test runs it first)")
	}
	ctx := browser.New(t, 4*time.Minute)

	model := scriptedllm.New()
	defer model.Close()
	dir := newDirector()
	model.SetHandler(dir.reply)
	defer dir.releaseAll() // a failing test must not leave the model's replies blocked
	widgets := newOAuthMCP(t)
	clk := testclock.Wall() // the stand-in's clock: the browser reads the wall clock; the test moves JWT and session expiry
	llm := func(m string) []string {
		return []string{"LLM_API_KEY=scripted", "LLM_MODEL=" + m, "LLM_BASE_URL=" + model.BaseURL()}
	}
	// A smaller attachment limit than the engine's default (10 MB), so chat's own refusal can be reached:
	// a request with more than 10 MB decoded is already over Appwrite's 12 MiB router limit as base64.
	// The page reads the limit from chat's /api/config.
	const maxBytes = "ATTACHMENTS_MAX_BYTES=1000000"
	var logs bytes.Buffer
	st, err := stack.Start(context.Background(), stack.Options{
		Env: map[string][]string{
			"turn":  append(llm(turnModel), "SAFEHTTP_ALLOW_HTTP=true", maxBytes), // the staged mcp-events is plain http on loopback
			"title": llm(titleModel),
			"chat":  {maxBytes},
		},
		Output:   &logs,
		Appwrite: localappwrite.Options{Clock: clk.Now},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Stop()
	defer func() {
		if t.Failed() {
			t.Logf("stack output:\n%s", logs.String())
		}
	}()
	d := st.Demo
	aw := st.Appwrite.Server
	const email, password = "ada@example.com", "correct horse battery"
	if err := aw.SeedUser(d.ProjectID, localappwrite.UserSpec{ID: "ada", Email: email, Password: password, Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	chatURL := aw.DomainURL("chat") + "/"
	p := &page{t: t, ctx: ctx, root: root}

	// Sign in.
	p.do("opening the page", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(chatURL))
	p.wait("the sign-in form", `!!document.querySelector("#signin input[name=email]")`)
	p.do("filling the sign-in form", browser.Type(chromedp.CSS(`#signin input[name=email]`), email), browser.Type(chromedp.CSS(`#signin input[name=password]`), password))
	p.shot("chat-signin.png")
	p.do("signing in", chromedp.Click(chromedp.CSS(`#signin button[type=submit]`)))
	p.wait("the chat after sign-in", `document.querySelector("#me")?.textContent === `+js(email))

	// A conversation: tokens and a tool card while the turn runs, the Console actions it returned.
	p.send("Show my databases and their usage")
	running := `document.querySelector('.msg-assistant .turn[data-running="true"]')`
	p.wait("the tokens while the turn runs", running+`?.querySelector(".tokens")?.textContent.includes("Let me check your project.")`)
	p.wait("the console tool card while the turn runs", running+`?.querySelector('details.tool[data-tool="console"][data-run-id] .pill-done')`)
	p.wait("the route and subagent badges", running+`?.querySelector(".badge-route")?.textContent === "→ platform" && `+running+`.querySelector(".badge-subagent")?.textContent.startsWith("platform")`)
	rows := p.eval(`JSON.stringify([...document.querySelectorAll('.resource-list[data-resource-type="database"] tr')].map(r => [...r.children].map(c => c.textContent)))`)
	if want := `[["Name","ID","Type"],["Main","main","tablesdb"],["Analytics","analytics","legacy"]]`; rows != want {
		t.Errorf("resource_list table = %s, want %s", rows, want)
	}
	if got := p.eval(`document.querySelector('.resource-list[data-resource-type="bucket"] .empty')?.textContent ?? ""`); got != "This project has no buckets yet." {
		t.Errorf("empty resource_list = %q", got)
	}
	chart := p.eval(`JSON.stringify({type: document.querySelector("figure.chart")?.dataset.chartType, bars: document.querySelectorAll("figure.chart svg rect.bar").length, total: document.querySelector("figure.chart .chart-headline strong")?.textContent, labels: [...document.querySelectorAll("figure.chart svg text.axis")].map(t => t.textContent).filter(t => t.includes(":"))})`)
	if want := `{"type":"bar","bars":3,"total":"91","labels":["08:00","09:00","10:00"]}`; chart != want {
		t.Errorf("chart = %s, want %s", chart, want)
	}
	p.wait("the toast", `[...document.querySelectorAll(".toasts .toast-success .toast-message")].some(t => t.textContent === "Listed 2 databases")`)
	p.wait("the theme switched by set_theme", `document.documentElement.dataset.theme === "dark"`)
	p.shot("chat-running.png")
	dir.releaseTurn()
	done := `document.querySelector('.msg-assistant .turn[data-running="false"] .answer')`
	p.wait("the answer as markdown", done+`?.querySelector("strong")?.textContent === "databases" && `+done+`.querySelectorAll("table td").length === 4`)

	// The title: held until now, so it can reach the sidebar only through Realtime.
	p.wait("the conversation in the sidebar", `document.querySelector("#conversations li.active a")?.textContent === "New conversation"`)
	convID := p.eval(`document.querySelector("#conversations li.active").dataset.conversationId`)
	dir.releaseTitle()
	p.wait("the title arriving through Realtime", `document.querySelector("#conversations li.active a")?.textContent === "Databases and usage"`)

	// Clarify: the form's answers go into the next turn.
	p.send("Delete one of my buckets")
	p.wait("the clarify form", `!!document.querySelector('form.clarify input[name="clarify-bucket"][value="uploads"]')`)
	p.do("answering", chromedp.Click(chromedp.CSS(`form.clarify input[name="clarify-bucket"][value="uploads"]`)),
		browser.Type(chromedp.CSS(`form.clarify input[name="clarify-note"]`), "keep the avatars"))
	p.shot("chat-clarify.png")
	p.do("sending the answers", chromedp.Click(chromedp.CSS(`form.clarify button[type=submit]`)))
	p.wait("the answer to the clarified turn", `[...document.querySelectorAll(".answer")].some(a => a.textContent.includes("Deleting the uploads bucket"))`)
	// The answer is the next user message, exactly the protocol's JSON (what the Console's code reads), and
	// the page shows it in words under the questions.
	const clarifyAnswer = `{"protocol":"appwrite.clarify/v1","answers":[{"id":"bucket","kind":"choice","values":["uploads"]},{"id":"note","kind":"text","value":"keep the avatars"}]}`
	var sent []string
	for _, r := range model.Requests() {
		var req chatRequest
		if json.Unmarshal(r.Body, &req) == nil && len(req.ResponseFormat) > 0 {
			if msg, _ := lastUser(req); strings.Contains(msg, "appwrite.clarify/v1") {
				sent = append(sent, msg)
			}
		}
	}
	if len(sent) != 1 || sent[0] != clarifyAnswer {
		t.Errorf("the turn after the clarify form sent the model %q, want exactly %s", sent, clarifyAnswer)
	}
	readable := `JSON.stringify([...document.querySelectorAll(".msg-user [data-clarify-answer] dl > div")].map(d => [d.querySelector("dt").textContent, d.querySelector("dd").textContent]))`
	if got, want := p.eval(readable), `[["Which bucket should I delete?","uploads"],["Anything I should keep?","keep the avatars"]]`; got != want {
		t.Errorf("the clarify answer reads %s, want %s", got, want)
	}
	p.wait("the answered form filled back in", `document.querySelector('form.clarify.answered input[name="clarify-bucket"][value="uploads"]')?.checked === true`)

	// MCP: connect the staged mcp-events through OAuth in the browser, with the stand-in's authorization server:
	// discovery from mcp-events' 401, its protected-resource metadata, the authorization server's metadata,
	// dynamic registration, the stand-in's login and consent pages, the callback, the code exchange with
	// PKCE; the tokens then live in chat's row, never in the page.
	mcpURL := st.URLs["mcp-events"] + "/mcp"
	dir.mcpProject.Store(d.ProjectID)
	p.do("opening the settings", chromedp.Click(chromedp.ID("open-settings")))
	p.wait("the settings", `!!document.querySelector("#mcp-add input[name=mcp_url]")`)
	p.do("adding the MCP server", browser.Type(chromedp.CSS(`#mcp-add input[name=mcp_name]`), "Events"),
		browser.Type(chromedp.CSS(`#mcp-add input[name=mcp_url]`), mcpURL),
		chromedp.Click(chromedp.CSS(`#mcp-add button[type=submit]`)))
	p.wait("the authorization server's sign-in page (or the page's error)", `document.querySelector("form#login #email") || document.querySelector("#mcp-add .error")`)
	if e := p.eval(`document.querySelector("#mcp-add .error")?.textContent ?? ""`); e != "" {
		p.fail("connecting mcp-events: the page says %s", e)
	}
	p.do("signing in at the authorization server", browser.Type(chromedp.ID("email"), localappwrite.DemoUserEmail),
		browser.Type(chromedp.ID("password"), localappwrite.DemoUserPassword), chromedp.Click(chromedp.ID("sign-in")))
	p.wait("the consent page", `document.querySelector("#account")?.textContent === `+js(localappwrite.DemoUserEmail))
	if res := p.eval(`[...document.querySelectorAll("code.resource")].map(c => c.textContent).join(" ")`); res != mcpURL {
		t.Errorf("the consent is for the resource %q, want %q", res, mcpURL)
	}
	p.do("authorizing", chromedp.Click(chromedp.ID("authorize")))
	p.wait("the connected server after the OAuth round trip", `!!document.querySelector('#mcp-connections li[data-connection-id="events"] .pill-done')`)
	p.wait("the connection toast", `[...document.querySelectorAll(".toast-message")].some(t => t.textContent === "Connected Events")`)
	if loc := p.eval(`location.href`); loc != chatURL+"#c="+convID {
		t.Errorf("after the OAuth callback the page is at %s, want %s", loc, chatURL+"#c="+convID)
	}
	// A third-party MCP server whose authorization server is on another origin (CORS) and approves at once.
	// The settings are open again after the round trip.
	p.wait("the settings", `!!document.querySelector("#mcp-add input[name=mcp_url]")`)
	p.do("adding the third-party MCP server", browser.Type(chromedp.CSS(`#mcp-add input[name=mcp_name]`), "Widgets"),
		browser.Type(chromedp.CSS(`#mcp-add input[name=mcp_url]`), widgets.resource()),
		chromedp.Click(chromedp.CSS(`#mcp-add button[type=submit]`)))
	p.wait("the third-party server connected", `!!document.querySelector('#mcp-connections li[data-connection-id="widgets"] .pill-done') || document.querySelector("#mcp-add .error")`)
	if e := p.eval(`document.querySelector("#mcp-add .error")?.textContent ?? ""`); e != "" {
		p.fail("connecting the third-party server: the page says %s", e)
	}
	if registered, _, _ := widgets.counts(); registered != 1 {
		t.Errorf("the third-party server's dynamic registrations = %d, want 1", registered)
	}
	p.shot("chat-mcp.png")
	stored := mcpRow(t, d, st.Secrets.ChatSealKeys, "ada", "events")
	claims := jwt.MapClaims{}
	if _, err := jwt.ParseWithClaims(stored.Tokens.AccessToken, claims, func(*jwt.Token) (any, error) { return aw.PublicKey(), nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(d.Issuer), jwt.WithAudience(mcpURL)); err != nil {
		t.Fatalf("the access token chat stored is not the stand-in's for mcp-events: %v", err)
	}
	if claims["sub"] != d.UserID || stored.Tokens.RefreshToken == "" || !strings.HasPrefix(stored.ClientInfo.ClientID, "mcp_") || stored.ClientInfo.Issuer != d.Issuer {
		t.Errorf("chat stored sub %v, refresh token %t, client %q of issuer %q: want the signed-in Console user, a refresh token and a client registered with %s",
			claims["sub"], stored.Tokens.RefreshToken != "", stored.ClientInfo.ClientID, stored.ClientInfo.Issuer, d.Issuer)
	}
	// Agent settings: the user's own key goes to the model through chat and turn, and is never shown back.
	const userKey = "sk-user-ada-0123456789"
	p.do("saving an API key", browser.Type(chromedp.CSS(`#agent-settings input[name=api_key]`), userKey), chromedp.Click(chromedp.CSS(`#agent-settings button[type=submit]`)))
	p.wait("the key saved", `document.querySelector("#api-key-state")?.textContent === "Your key is set." && document.querySelector("#agent-settings input[name=api_key]").value === ""`)
	p.do("closing the settings", chromedp.Click(chromedp.CSS(`#settings button[aria-label="Close settings"]`)))
	p.do("opening the settings again", chromedp.Click(chromedp.ID("open-settings")))
	p.wait("the settings read again", `document.querySelector("#api-key-state")?.textContent === "Your key is set."`)
	if shown := p.eval(`String(document.documentElement.outerHTML.includes(` + js(userKey) + `))`); shown != "false" {
		t.Errorf("the page shows the saved API key")
	}
	p.do("closing the settings", chromedp.Click(chromedp.CSS(`#settings button[aria-label="Close settings"]`)))
	p.send("Look up the user ada and list my widgets")
	// get_user's answer is what mcp-events read from the stand-in with the access token: it saw a valid one.
	p.wait("mcp-events' tool card", `document.querySelector('details.tool[data-tool="get_user"] .tool-output')?.textContent.includes(`+js(email)+`)`)
	p.wait("the third-party tool card", `document.querySelector('details.tool[data-tool="list_widgets"] .tool-output')?.textContent === "sprocket, flange"`)
	p.wait("the answer using the MCP tools", `[...document.querySelectorAll(".answer")].some(a => a.textContent.includes("Ada signs in as"))`)
	if _, authorized, _ := widgets.counts(); authorized == 0 {
		t.Errorf("the third-party MCP server never saw the access token the page obtained")
	}
	// The tokens stay server-side: nowhere in the page, its storage or its cookies.
	for _, secret := range []string{stored.Tokens.AccessToken, stored.Tokens.RefreshToken} {
		if shown := p.eval(`String([document.documentElement.outerHTML, JSON.stringify({...localStorage}), JSON.stringify({...sessionStorage}), document.cookie].some(s => s.includes(` + js(secret) + `)))`); shown != "false" {
			t.Errorf("the page holds an MCP token")
		}
	}
	keys := map[string]bool{}
	for _, r := range model.Requests() {
		if strings.Contains(string(r.Body), "Look up the user ada and list my widgets") {
			keys[r.Header.Get("Authorization")] = true
		}
	}
	if len(keys) != 1 || !keys["Bearer "+userKey] {
		t.Errorf("the turn after saving a key reached the model with %v, want only the user's key", keys)
	}

	// Memory: what the agent saves is listed in the settings, goes into the next turn, and can be forgotten.
	p.send("Remember that I like concise answers")
	p.wait("the memory notice", `[...document.querySelectorAll(".notice-memory-set")].some(n => n.textContent.includes("Prefer concise answers"))`)
	p.do("opening the settings while the turn runs", chromedp.Click(chromedp.ID("open-settings")))
	p.wait("the settings", `!!document.querySelector("#memories li")`)
	if got := p.eval(`String(!!document.querySelector('#memories li[data-memory-key="style.concise"]'))`); got != "false" {
		t.Errorf("the memory is listed before its turn was stored")
	}
	dir.releaseMemory()
	p.wait("the answer after the memory", `[...document.querySelectorAll(".answer")].some(a => a.textContent.includes("concise answers from now on"))`)
	p.wait("the saved memory in the open settings", `document.querySelector('#memories li[data-memory-key="style.concise"]')?.textContent.includes("Prefer concise answers")`)
	p.waitStored()
	p.do("closing the settings", chromedp.Click(chromedp.CSS(`#settings button[aria-label="Close settings"]`)))

	// An attachment dropped on the message box goes with the message to the model.
	if got := p.eval(`(() => {
		const dt = new DataTransfer()
		dt.items.add(new File(["release notes: the flange ships on Friday"], "notes.txt", {type: "text/plain"}))
		document.querySelector("#composer").dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}))
		return "dropped"
	})()`); got != "dropped" {
		t.Fatalf("dropping a file: %s", got)
	}
	p.wait("the attachment chip", `document.querySelector("#pending-attachments")?.textContent.includes("notes.txt")`)
	p.send("Please read the attached notes")
	p.wait("the attachment on the sent message", `[...document.querySelectorAll(".msg-user .chip")].some(c => c.textContent.includes("notes.txt"))`)
	p.wait("the answer to the attachment", `document.querySelectorAll(".answer").length === 6`)
	var withFile string
	for _, r := range model.Requests() {
		if strings.Contains(string(r.Body), "Please read the attached notes") {
			withFile = string(r.Body)
		}
	}
	if !strings.Contains(withFile, "release notes: the flange ships on Friday") || !strings.Contains(withFile, "notes.txt") {
		t.Errorf("the model did not get the dropped file:\n%.1500s", withFile)
	}

	// Hostile: model HTML in an answer is inert.
	p.send("Answer with some HTML please")
	p.wait("the hostile answer", `[...document.querySelectorAll(".answer strong")].some(s => s.textContent === "bold")`)
	p.do("clicking the hostile link", chromedp.Click(chromedp.CSS(`.msg-assistant:last-child .answer a`)))
	var withMemory string
	for _, r := range model.Requests() {
		if strings.Contains(string(r.Body), "Answer with some HTML") {
			withMemory = string(r.Body)
		}
	}
	if !strings.Contains(withMemory, "Prefer concise answers") {
		t.Errorf("the turn after the memory was saved does not carry it to the model:\n%.1500s", withMemory)
	}
	inert := p.eval(`JSON.stringify({pwned: String(window.__pwned), parent: String(window.parent.__pwned), tags: document.querySelectorAll(".answer img, .answer script, .answer svg, .answer iframe").length, hrefs: [...document.querySelectorAll(".msg-assistant:last-child .answer a")].map(a => a.getAttribute("href"))})`)
	if want := `{"pwned":"undefined","parent":"undefined","tags":0,"hrefs":[null,null]}`; inert != want {
		t.Errorf("model HTML is not inert: %s, want %s", inert, want)
	}

	// Reload: the conversation is found again, from the rows.
	p.do("reloading", chromedp.Reload())
	p.wait("the conversation after the reload", `document.querySelectorAll("#messages .msg-assistant .answer").length === 7 && document.querySelector("#conversations li.active a")?.textContent === "Databases and usage"`)
	p.wait("the stored Console actions after the reload", `document.querySelectorAll(".resource-list tbody tr").length === 2 && document.querySelectorAll("figure.chart rect.bar").length === 3`)
	if got, want := p.eval(readable), `[["Which bucket should I delete?","uploads"],["Anything I should keep?","keep the avatars"]]`; got != want {
		t.Errorf("after the reload the clarify answer reads %s, want %s", got, want)
	}
	p.shot("chat-conversation.png")

	// The metadata sheet of the first answer.
	p.do("opening the first answer's details", chromedp.Click(chromedp.CSS(`.msg-assistant button.link`)))
	p.wait("the details", `document.querySelector("#metadata")?.textContent.includes("platform") && document.querySelector("#metadata")?.textContent.includes("console")`)
	p.do("closing the details", chromedp.Click(chromedp.CSS(`#metadata button[aria-label="Close details"]`)))

	// Forgetting the memory from the settings.
	p.do("opening the settings", chromedp.Click(chromedp.ID("open-settings")))
	p.do("forgetting the memory", chromedp.Click(chromedp.CSS(`#memories li[data-memory-key="style.concise"] button`)))
	p.wait("the memory gone", `!document.querySelector('#memories li[data-memory-key="style.concise"]') && !!document.querySelector("#memories li.muted")`)
	p.do("closing the settings", chromedp.Click(chromedp.CSS(`#settings button[aria-label="Close settings"]`)))

	// Hostile: an oversized attachment is refused by the page (dropped on the composer)...
	if got := p.eval(`(() => {
		const dt = new DataTransfer()
		dt.items.add(new File([new Uint8Array(1000001)], "big.bin", {type: "application/octet-stream"}))
		document.querySelector("#composer").dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}))
		return "dropped"
	})()`); got != "dropped" {
		t.Fatalf("dropping an oversized file: %s", got)
	}
	p.wait("the page refusing the attachment", `document.querySelector("#attach-error")?.textContent === "Attachment 'big.bin' exceeds max size (1000000 bytes)" && !document.querySelector("#pending-attachments")`)
	// ...and by chat, for a client that skips the page.
	session, err := aw.CreateSession(d.ProjectID, "ada")
	if err != nil {
		t.Fatal(err)
	}
	jwt, err := aw.UserJWT(d.ProjectID, session, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	status, body := postJSON(t, chatURL+"api/turns", jwt, map[string]any{"message": "here", "attachments": []map[string]any{{
		"name": "big.bin", "mime": "application/octet-stream", "size": 1000001, "content_base64": base64.StdEncoding.EncodeToString(make([]byte, 1000001))}}})
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, `Attachment 'big.bin' exceeds max size (1000000 bytes)`) {
		t.Errorf("chat answered an oversized attachment with %d %.300s, want 413", status, body)
	}

	// An expired JWT: renewed while the session lives...
	p.eval(`performance.clearResourceTimings(), performance.setResourceTimingBufferSize(1000), "ok"`)
	clk.Advance(16 * time.Minute)
	p.do("opening the settings", chromedp.Click(chromedp.ID("open-settings")))
	p.wait("the settings read with a renewed JWT", `document.querySelector("#api-key-state")?.textContent === "Your key is set."`)
	// What the browser fetched meanwhile: the expired JWT refused (401), one new JWT for the three calls the
	// settings make at once, the same call again (200).
	fetched := `performance.getEntriesByType("resource").map(e => [new URL(e.name).pathname.replace(/^.*\/(api|v1)\//, "$1/"), e.responseStatus]).filter(([p]) => p === "api/settings" || p === "v1/account/jwts")`
	p.wait("the browser's record of those fetches", fetched+`.length >= 3`) // entries are recorded as responses end
	calls := p.eval(`JSON.stringify(` + fetched + `)`)
	if want := `[["api/settings",401],["v1/account/jwts",201],["api/settings",200]]`; calls != want {
		t.Errorf("after the JWT expired the page fetched %s, want %s", calls, want)
	}
	p.do("closing the settings", chromedp.Click(chromedp.CSS(`#settings button[aria-label="Close settings"]`)))
	// ...and the sign-in form once the session has ended too.
	clk.Advance(366 * 24 * time.Hour)
	p.do("opening the settings", chromedp.Click(chromedp.ID("open-settings")))
	p.wait("the sign-in form after the session ended", `document.querySelector("#signin-notice")?.textContent === "Your session has ended. Sign in again."`)

	signUpAndAttach(t, p, model, d, convID)
}

// signUpAndAttach is the second user of TestChatPage, in the same tab after Ada's session ended: Grace
// creates an account through the page (refused first for a too-short password and for Ada's email, the
// errors shown on the form), lands signed in with none of Ada's data, attaches files through the file
// picker (an oversized one refused by the page, a good one reaching the model with the message), and signs
// out. A MutationObserver records anything of Ada's the page ever puts in the DOM meanwhile, however briefly.
func signUpAndAttach(t *testing.T, p *page, model *scriptedllm.Server, d *localappwrite.Demo, adaConv string) {
	const adaMessage = "Show my databases and their usage"
	if got := p.eval(`(() => {
		window.__leaks = []
		window.__toasts = new Set()
		const look = () => {
			document.querySelectorAll(".toast-message").forEach(t => window.__toasts.add(t.textContent))
			if (document.querySelector('[data-conversation-id=` + js(adaConv) + `]')) window.__leaks.push("Ada's conversation in the sidebar")
			if (document.body.textContent.includes(` + js(adaMessage) + `)) window.__leaks.push("Ada's message")
			if (document.body.textContent.includes("Ada's private plans")) window.__leaks.push("Ada's retitled conversation")
			if (document.body.textContent.includes("big.bin")) window.__leaks.push("the toast of Ada's refused attachment")
		}
		new MutationObserver(look).observe(document.body, {subtree: true, childList: true, characterData: true})
		return "watching"
	})()`); got != "watching" {
		t.Fatalf("installing the observer: %s", got)
	}

	// Sign-up, refused twice: Appwrite checks the password before the email is found taken.
	const email, password = "grace@example.com", "short"
	p.do("opening the sign-up form", chromedp.Click(chromedp.CSS(`#signin button.link`)))
	p.wait("the sign-up form", `document.querySelector("#signin h1")?.textContent === "Create an account" && !!document.querySelector("#signin input[name=name]")`)
	p.do("signing up with a short password and Ada's email", browser.Type(chromedp.CSS(`#signin input[name=name]`), "Grace"),
		browser.Type(chromedp.CSS(`#signin input[name=email]`), "ada@example.com"),
		browser.Type(chromedp.CSS(`#signin input[name=password]`), password),
		chromedp.Click(chromedp.CSS(`#signin button[type=submit]`)))
	onForm := `document.querySelector("#signin h1")?.textContent === "Create an account" && !document.querySelector("#me") && !document.querySelector("#signin button[type=submit]").disabled`
	p.wait("the password refused on the form", onForm+` && document.querySelector("#signin .error")?.textContent === "Password must be between 8 and 256 characters long."`)
	p.do("signing up with Ada's email", browser.Type(chromedp.CSS(`#signin input[name=password]`), " and long enough"),
		chromedp.Click(chromedp.CSS(`#signin button[type=submit]`)))
	p.wait("the taken email refused on the form", onForm+` && document.querySelector("#signin .error")?.textContent === "An account with this email already exists. Sign in, or use another email."`)
	p.do("signing up with a new email", browser.Type(chromedp.CSS(`#signin input[name=email]`), strings.Repeat(kb.Backspace, len("ada@example.com"))+email))
	if got := p.eval(`[...document.querySelectorAll("#signin input")].map(i => i.value).join(" | ")`); got != "Grace | "+email+" | short and long enough" {
		t.Fatalf("the sign-up form holds %q", got)
	}
	p.do("creating the account", chromedp.Click(chromedp.CSS(`#signin button[type=submit]`)))
	p.wait("Grace signed in", `document.querySelector("#me")?.textContent === `+js(email)+` && document.querySelector("#conversation-title")?.textContent === "New chat"`)

	// The file picker: an oversized file is refused by the page, a good one goes with the message.
	dir := t.TempDir()
	big, notes := filepath.Join(dir, "huge.log"), filepath.Join(dir, "picked.txt")
	if err := os.WriteFile(big, make([]byte, 1000001), 0o600); err != nil {
		t.Fatal(err)
	}
	const picked = "picked through the file picker: the sprocket ships on Monday"
	if err := os.WriteFile(notes, []byte(picked), 0o600); err != nil {
		t.Fatal(err)
	}
	p.do("picking an oversized file", chromedp.SetUploadFiles(chromedp.ID("file-input"), []string{big}))
	p.wait("the page refusing the picked file", `document.querySelector("#attach-error")?.textContent === "Attachment 'huge.log' exceeds max size (1000000 bytes)" && !document.querySelector("#pending-attachments")`)
	p.do("picking a file", chromedp.SetUploadFiles(chromedp.ID("file-input"), []string{notes}))
	p.wait("the picked file's chip", `document.querySelector("#pending-attachments")?.textContent.includes("picked.txt") && !document.querySelector("#attach-error")`)
	// The refusal's toast (gone by itself after 10 s) would read as a failed send.
	p.eval(`document.querySelectorAll(".toast-error button[aria-label=Dismiss]").forEach(b => b.click()), "ok"`)
	p.wait("the toast dismissed", `!document.querySelector(".toast-error")`)
	if !strings.Contains(p.eval(`JSON.stringify([...window.__toasts])`), "Attachment 'huge.log' exceeds max size (1000000 bytes)") {
		t.Errorf("no toast said why the picked file was refused")
	}
	p.send("Grace here: please read the picked file")
	p.wait("the picked file on the sent message", `[...document.querySelectorAll(".msg-user .chip")].some(c => c.textContent.includes("picked.txt"))`)
	p.waitStored()
	var withFile string
	for _, r := range model.Requests() {
		if strings.Contains(string(r.Body), "Grace here: please read the picked file") && strings.Contains(string(r.Body), "response_format") {
			withFile = string(r.Body) // the router's request (the conversation's first turn also asks for a title)
		}
	}
	if !strings.Contains(withFile, picked) || !strings.Contains(withFile, "picked.txt") {
		t.Errorf("the model did not get the picked file:\n%.1500s", withFile)
	}

	// Grace's own conversation, and nothing of Ada's: Ada's conversation changing, an event Realtime sends
	// Ada, must not reach Grace's page. The signal: Grace's conversation changing right after, an event
	// Realtime sends Grace on the same connection, later. (Her title first, so the title function's write
	// cannot come after ours.)
	graceConv := p.eval(`document.querySelector("#conversations li.active")?.dataset.conversationId ?? ""`)
	if graceConv == "" || graceConv == adaConv {
		t.Fatalf("Grace's conversation is %q (Ada's is %s)", graceConv, adaConv)
	}
	p.wait("Grace's title", `document.querySelector("#conversations li.active a")?.textContent === "Databases and usage"`)
	patchRow(t, d, "conversations", adaConv, map[string]any{"title": "Ada's private plans"})
	patchRow(t, d, "conversations", graceConv, map[string]any{"title": "Grace's reading list"})
	p.wait("Grace's retitled conversation through Realtime", `document.querySelector("#conversations li.active a")?.textContent === "Grace's reading list"`)
	if got := p.eval(`JSON.stringify([...document.querySelectorAll("#conversations li")].map(li => li.dataset.conversationId))`); got != `["`+graceConv+`"]` {
		t.Errorf("Grace's sidebar lists %s, want only her conversation %s", got, graceConv)
	}
	// Ada's conversation by its address: the page says it is not Grace's, and shows nothing of it.
	p.eval(`location.hash = "c=" + ` + js(adaConv) + `, "ok"`)
	p.wait("Ada's conversation refused", `window.__toasts.has("This conversation does not exist (or is not yours).") && document.querySelector("#conversation-title")?.textContent === "New chat"`)
	if leaks := p.eval(`JSON.stringify([...new Set(window.__leaks)])`); leaks != "[]" {
		t.Errorf("Grace's page showed Ada's data: %s", leaks)
	}

	// Signing out: the sign-in form, and nothing of Grace's left on the page.
	p.do("signing out", chromedp.Click(chromedp.CSS(`.me button:last-child`)))
	p.wait("the sign-in form after signing out", `!!document.querySelector("#signin input[name=email]") && !document.querySelector("#me")`)
	if got := p.eval(`String(document.body.textContent.includes("Grace here"))`); got != "false" {
		t.Errorf("Grace's conversation is still on the page after she signed out")
	}
}

// patchRow updates a row of chat's table with the demo's key, as a server would (its events go out).
func patchRow(t *testing.T, d *localappwrite.Demo, table, id string, data map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"data": data})
	if status, out := keyCall(t, d, http.MethodPatch, "/tablesdb/"+d.DatabaseID+"/tables/"+table+"/rows/"+id, b); status != http.StatusOK {
		t.Fatalf("updating %s row %s: %d %.300s", table, id, status, out)
	}
}

// keyCall sends a request to the stand-in's API with the demo's key and returns the status and body.
func keyCall(t *testing.T, d *localappwrite.Demo, method, path string, body []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, d.Endpoint+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Appwrite-Project", d.ProjectID)
	req.Header.Set("X-Appwrite-Key", d.APIKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return res.StatusCode, out
}

// storedConnection is the part of chat's mcp_connections row the test reads.
type storedConnection struct {
	Tokens struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	ClientInfo struct {
		ClientID string `json:"client_id"`
		Issuer   string `json:"issuer"`
	}
}

// mcpRow reads the MCP connection id of user in chat's table through the stand-in's API (with the demo's
// key), as chat stored it: sealed with chatKeys (CHAT_SEAL_KEYS), opened here as docs/chat.md "Secrets at
// rest" describes (shared/seal's blob, bound to the column, the user and the connection).
func mcpRow(t *testing.T, d *localappwrite.Demo, chatKeys, user, id string) storedConnection {
	t.Helper()
	status, body := keyCall(t, d, http.MethodGet, "/tablesdb/"+d.DatabaseID+"/tables/mcp_connections/rows", nil)
	var out struct {
		Rows []struct {
			ConnectionID string `json:"connection_id"`
			Tokens       string `json:"tokens"`
			ClientInfo   string `json:"client_info"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(body, &out); err != nil || status != http.StatusOK {
		t.Fatalf("reading chat's MCP connections: %d %v %.300s", status, err, body)
	}
	ring, err := seal.ParseKeyring(chatKeys)
	if err != nil {
		t.Fatal(err)
	}
	open := func(column, v string) []byte {
		t.Helper()
		b, ok := strings.CutPrefix(v, "sealed:")
		if !ok {
			t.Fatalf("chat stored the %s of %s in the clear: %.200s", column, id, v)
		}
		pt, err := ring.OpenBlob("chat/mcp_connections/"+column+"\x00"+user+"\x00"+id, b)
		if err != nil {
			t.Fatalf("the sealed %s of %s does not open: %v", column, id, err)
		}
		return pt
	}
	for _, r := range out.Rows {
		if r.ConnectionID == id {
			var c storedConnection
			if json.Unmarshal(open("tokens", r.Tokens), &c.Tokens) != nil || json.Unmarshal(open("client_info", r.ClientInfo), &c.ClientInfo) != nil || c.Tokens.AccessToken == "" {
				t.Fatalf("chat's row of %s holds no tokens", id)
			}
			return c
		}
	}
	t.Fatalf("chat stored no MCP connection %s (%d rows)", id, len(out.Rows))
	return storedConnection{}
}

func postJSON(t *testing.T, url, jwt string, body any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+jwt)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(out)
}
