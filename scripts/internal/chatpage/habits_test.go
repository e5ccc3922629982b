package chatpage

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/stack"
	"appwrite-agent/scripts/internal/staging"
	"appwrite-agent/shared/convtitle"
	"appwrite-agent/shared/devkit/browser"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/scriptedllm"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The answer of the suggested "Learn" prompt: markdown with a TypeScript block, to copy and to highlight.
const (
	learnCode   = "import { Client } from \"appwrite\"\nconst client = new Client()"
	learnAnswer = "Realtime sends you **events** on channels.\n\n```ts\n" + learnCode + "\n```\n\nSubscribe once per channel."
	// longStory is streamed two words at a time and stalls after storyChunks chunks: the model never ends it.
	longStory   = "Once upon a time there was a project with many functions and a very long answer that nobody wanted to read to the end"
	storyChunks = 3
)

// habits answers the scripted model for TestChatHabits by the user's last message, and records when the
// stalled story's stream was answered (the first token leaves the model right after).
type habits struct {
	mu         sync.Mutex
	storySent  []time.Time
	routerSeen map[string]scriptedllm.Reply // the router's reply by message, for the usage figures
}

func (h *habits) reply(r scriptedllm.Request, _ int) scriptedllm.Reply {
	var req chatRequest
	_ = json.Unmarshal(r.Body, &req)
	if len(req.Messages) > 0 && text(req.Messages[0].Content) == convtitle.SystemPrompt {
		return scriptedllm.Reply{Content: "Habits of a chat"}
	}
	msg, _ := lastUser(req)
	if len(req.ResponseFormat) > 0 {
		var out scriptedllm.Reply
		switch {
		case strings.Contains(msg, "Realtime channels"):
			out = route("FINISH", learnAnswer)
		case strings.Contains(msg, "long story"):
			out = route("researcher", "")
		default:
			out = route("FINISH", "Still here: what next?")
		}
		h.mu.Lock()
		h.routerSeen[msg] = out
		h.mu.Unlock()
		return out
	}
	if strings.Contains(msg, "long story") {
		h.mu.Lock()
		h.storySent = append(h.storySent, time.Now())
		h.mu.Unlock()
		return scriptedllm.Reply{Content: longStory, Chunks: 12, StallAfter: storyChunks}
	}
	return scriptedllm.Reply{Content: "Done."}
}

// axe runs axe-core (functions/chat/web's dev dependency, injected into the page) and fails on any serious
// or critical violation.
func (p *page) axe(what, script string) {
	p.t.Helper()
	if p.eval(`String(typeof window.axe)`) != "object" {
		if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](script+";true")); err != nil {
			p.fail("injecting axe-core: %v", err)
		}
	}
	found, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.target.join(" "))}))))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		p.fail("axe-core on %s: %v", what, err)
	}
	if found != "[]" {
		p.t.Errorf("axe-core: serious or critical violations on %s: %s", what, found)
	}
}

// TestChatHabits is what every chat user reaches for first, in a real Chromium through the staged stack: a
// suggested prompt, copying an answer and a code block (read back from the clipboard), a highlighted block,
// the tokens of each model call in the details, Stop (Esc) mid-stream with the partial answer kept and the
// conversation going on, Stop after a reload mid-turn, rename and search, an image pasted from the
// clipboard, the phone drawer at 390 x 844 and nothing scrolling sideways at 360, and axe-core on the
// sign-in form, the chat, the settings and the drawer. It logs the first-token figure of docs/benchmarks.md.
func TestChatHabits(t *testing.T) {
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
	web := filepath.Join(root, "functions", "chat", "web")
	if _, err := os.Stat(filepath.Join(web, "dist", "index.html")); err != nil {
		t.Skip("the chat page is not built (scripts/build-chat-web builds it; scripts/test runs it first)")
	}
	axeJS, err := os.ReadFile(filepath.Join(web, "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core (a dev dependency of the page, installed by scripts/build-chat-web): %v", err)
	}
	ctx := browser.New(t, 4*time.Minute)
	model := scriptedllm.New()
	defer model.Close()
	h := &habits{routerSeen: map[string]scriptedllm.Reply{}}
	model.SetHandler(h.reply)
	llm := func(m string) []string {
		return []string{"LLM_API_KEY=scripted", "LLM_MODEL=" + m, "LLM_BASE_URL=" + model.BaseURL()}
	}
	var logs bytes.Buffer
	st, err := stack.Start(context.Background(), stack.Options{
		Env:    map[string][]string{"turn": llm(turnModel), "title": llm(titleModel)},
		Output: &logs,
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
	const email, password = "lin@example.com", "correct horse battery"
	if err := aw.SeedUser(d.ProjectID, localappwrite.UserSpec{ID: "lin", Email: email, Password: password, Name: "Lin"}); err != nil {
		t.Fatal(err)
	}
	chatURL := aw.DomainURL("chat") + "/"
	p := &page{t: t, ctx: ctx, root: root}
	axe := string(axeJS)

	// The sign-in form.
	p.do("opening the page", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(chatURL))
	p.wait("the sign-in form", `!!document.querySelector("#signin input[name=email]")`)
	p.axe("the sign-in form", axe)
	origin := strings.TrimSuffix(chatURL, "/")
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted, Origin: origin}); err != nil {
			t.Fatalf("letting the page use the clipboard (%s): %v", name, err)
		}
	}
	p.do("signing in", browser.Type(chromedp.CSS(`#signin input[name=email]`), email),
		browser.Type(chromedp.CSS(`#signin input[name=password]`), password), chromedp.Click(chromedp.CSS(`#signin button[type=submit]`)))
	p.wait("the chat after sign-in", `document.querySelector("#me")?.textContent === `+js(email))

	// A first screen that helps: suggested prompts; one click sends one.
	p.wait("the suggested prompts", `document.querySelectorAll(".suggestions button.suggestion").length >= 3`)
	p.axe("the empty chat", axe)
	p.shot("chat-empty.png")
	p.do("picking the Learn suggestion", chromedp.Click(chromedp.CSS(`.suggestions li:nth-child(4) button.suggestion`)))
	p.wait("the suggested prompt sent", `[...document.querySelectorAll(".msg-user")].some(m => m.textContent.includes("Explain Appwrite Realtime channels"))`)
	p.wait("the answer with its code block highlighted", `document.querySelector('.msg-assistant figure.code-block[data-lang="ts"]')?.dataset.highlighted === "true"`)
	if n := p.eval(`String(document.querySelectorAll('figure.code-block[data-lang="ts"] code span[style*="--hl-"]').length)`); n == "0" {
		t.Errorf("the highlighted block has no coloured tokens")
	}
	p.waitStored()

	// Copy: the answer's markdown and the block's code, read back from the clipboard, each with a toast.
	p.do("copying the answer", chromedp.Click(chromedp.CSS(`.msg-assistant:last-child button.copy[aria-label="Copy the answer"]`)))
	p.wait("the answer's toast", `[...document.querySelectorAll(".toast-message")].some(t => t.textContent === "Copied the answer")`)
	if got := p.clipboard(); got != learnAnswer {
		t.Errorf("the clipboard holds %q after copying the answer, want its markdown %q", got, learnAnswer)
	}
	p.do("copying the code", chromedp.Click(chromedp.CSS(`figure.code-block[data-lang="ts"] button.copy`)))
	p.wait("the code's toast", `[...document.querySelectorAll(".toast-message")].some(t => t.textContent === "Copied the code")`)
	if got := p.clipboard(); got != learnCode {
		t.Errorf("the clipboard holds %q after copying the code block, want %q", got, learnCode)
	}

	// Usage: the router's tokens, as the model reported them, in the answer's details.
	var routerReq scriptedllm.Request
	for _, r := range model.Requests() {
		var req chatRequest
		if json.Unmarshal(r.Body, &req) == nil && len(req.ResponseFormat) > 0 {
			if msg, _ := lastUser(req); strings.Contains(msg, "Realtime channels") {
				routerReq = r
			}
		}
	}
	h.mu.Lock()
	u := scriptedllm.Tokens(routerReq, h.routerSeen[SuggestionLearn])
	h.mu.Unlock()
	p.do("opening the answer's details", chromedp.Click(chromedp.CSS(`.msg-assistant:last-child button.link`)))
	p.wait("the tokens in the details", `!!document.querySelector("#usage-calls")`)
	calls := p.eval(`JSON.stringify([...document.querySelectorAll("#usage-calls tbody tr")].map(r => [...r.children].map(c => c.textContent)))`)
	if !strings.Contains(calls, `"supervisor"`) || !strings.Contains(calls, jsNum(u.Prompt)) || !strings.Contains(calls, jsNum(u.Completion)) {
		t.Errorf("the details list the model calls %s, want the router's (supervisor) with %d prompt and %d completion tokens", calls, u.Prompt, u.Completion)
	}
	p.do("closing the details", chromedp.Click(chromedp.CSS(`#metadata button[aria-label="Close details"]`)))

	// Stop, with Esc, mid-stream: the partial answer stays, marked stopped; nothing arrives after; the
	// conversation goes on. The page records when the first token shows, for the first-token figure.
	p.eval(`(() => {
		window.__firstToken = 0
		new MutationObserver(() => {
			const t = document.querySelector('.msg-assistant .turn[data-running="true"] .tokens')
			if (!window.__firstToken && t && t.textContent.trim() !== "") window.__firstToken = Date.now()
		}).observe(document.body, {subtree: true, childList: true, characterData: true})
		return "ok"
	})()`)
	p.send("Tell me a long story")
	partial := strings.Join(scriptedllm.Split(longStory, 12)[:storyChunks], "")
	running := `document.querySelector('.msg-assistant .turn[data-running="true"]')`
	p.wait("the story streaming", running+`?.querySelector(".tokens")?.textContent === `+js(partial)+` && !!document.querySelector("#stop")`)
	h.mu.Lock()
	sent := h.storySent[0]
	h.mu.Unlock()
	shown := p.eval(`String(window.__firstToken)`)
	if ms, err := time.ParseDuration(shown + "ms"); err == nil && ms > 0 {
		t.Logf("first token: %d ms from the model's answer to the page (docs/benchmarks.md)", time.UnixMilli(ms.Milliseconds()).Sub(sent).Milliseconds())
	}
	escAt := time.Now()
	p.do("pressing Esc", chromedp.KeyEvent(kb.Escape))
	hangUp := func(n int) time.Time {
		wait, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		got, err := model.WaitHangUps(wait, n)
		if err != nil {
			t.Fatalf("the model's stalled stream after Stop: %v", err)
		}
		return got[n-1]
	}
	// The model never ends the story: its stream closes only when turn closes it.
	t.Logf("Stop: the model's stream closed %d ms after Esc (docs/benchmarks.md)", hangUp(1).Sub(escAt).Milliseconds())
	p.wait("the turn stopped", `document.querySelector("#messages > .msg-assistant:last-child")?.classList.contains("status-stopped") && !!document.querySelector("#messages > .msg-assistant:last-child .stopped-note")`)
	if got := p.eval(`document.querySelector("#messages > .msg-assistant:last-child .answer, #messages > .msg-assistant:last-child .tokens")?.textContent.trim() ?? ""`); got != strings.TrimSpace(partial) {
		t.Errorf("the stopped answer reads %q, want the partial %q", got, strings.TrimSpace(partial))
	}
	p.wait("Send back", `!!document.querySelector("#send") && !document.querySelector("#stop")`)
	p.send("Are you still there?")
	p.wait("the conversation going on", `[...document.querySelectorAll(".answer")].some(a => a.textContent.includes("Still here"))`)
	p.waitStored()

	// Stop after a reload mid-turn: the running turn is found again, and Stop still stops it.
	p.send("Another long story please")
	p.wait("the second story streaming", running+`?.querySelector(".tokens")?.textContent === `+js(partial))
	p.do("reloading mid-turn", chromedp.Reload())
	p.wait("the running turn after the reload", `!!document.querySelector("#stop") && `+running+`?.querySelector(".tokens")?.textContent === `+js(partial))
	p.do("stopping after the reload", chromedp.Click(chromedp.ID("stop")))
	p.wait("the reloaded turn stopped", `document.querySelector("#messages > .msg-assistant:last-child")?.classList.contains("status-stopped")`)
	hangUp(2)

	// Rename in place, then search by title.
	p.wait("the title", `document.querySelector("#conversations li.active a")?.textContent === "Habits of a chat"`)
	p.do("renaming", chromedp.Click(chromedp.CSS(`#conversations li.active button.rename-button`)))
	p.wait("the rename box", `document.activeElement?.classList.contains("rename")`)
	p.do("typing the new title", chromedp.KeyEvent(kb.End), browser.Type(chromedp.CSS(`#conversations li.active input.rename`), " (renamed)"+kb.Enter))
	p.wait("the new title", `document.querySelector("#conversations li.active a")?.textContent === "Habits of a chat (renamed)" && document.querySelector("#conversation-title")?.textContent === "Habits of a chat (renamed)"`)
	p.do("a new chat", chromedp.Click(chromedp.CSS(`button.new-chat`)))
	p.send("Hello there")
	p.wait("the second conversation listed", `document.querySelectorAll("#conversations li").length === 2`)
	p.waitStored()
	p.do("searching", browser.Type(chromedp.ID("conversation-search"), "renamed"))
	p.wait("only the match listed", `document.querySelectorAll("#conversations li").length === 1 && document.querySelector("#conversations li a")?.textContent === "Habits of a chat (renamed)"`)
	p.do("clearing the search", browser.Type(chromedp.ID("conversation-search"), strings.Repeat(kb.Backspace, len("renamed"))))
	p.wait("both listed again", `document.querySelectorAll("#conversations li").length === 2`)

	// An image pasted from the clipboard: a thumbnail in the composer and on the sent message; the model
	// gets the image.
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
	if got := p.eval(`(() => {
		const bytes = Uint8Array.from(atob(` + js(base64.StdEncoding.EncodeToString(png)) + `), c => c.charCodeAt(0))
		const dt = new DataTransfer()
		dt.items.add(new File([bytes], "screenshot.png", {type: "image/png"}))
		document.querySelector("#prompt").dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true}))
		return "pasted"
	})()`); got != "pasted" {
		t.Fatalf("pasting: %s", got)
	}
	p.wait("the thumbnail in the composer", `!!document.querySelector('#pending-attachments img.thumb[alt="Image screenshot.png"]')`)
	p.send("What is in this screenshot?")
	p.wait("the thumbnail on the sent message", `!!document.querySelector('.msg-user img.thumb[alt="Image screenshot.png"]')`)
	p.waitStored()
	var withImage bool
	for _, r := range model.Requests() {
		if strings.Contains(string(r.Body), "What is in this screenshot?") && strings.Contains(string(r.Body), "data:image/png;base64,") {
			withImage = true
		}
	}
	if !withImage {
		t.Errorf("the model did not get the pasted image")
	}

	// The keyboard: Tab reaches the controls in order, each with a visible focus and a name.
	// The walk starts at the sidebar's first control, as it does after a click there.
	p.eval(`document.querySelector("button.new-chat").focus(), "ok"`)
	var reached []string
	for i := 0; i < 14; i++ {
		p.do("pressing Tab", chromedp.KeyEvent(kb.Tab))
		got := p.eval(`(() => { const e = document.activeElement; if (!e || e === document.body) return "{}"; const s = getComputedStyle(e); return JSON.stringify({tag: e.tagName.toLowerCase(), name: e.getAttribute("aria-label") || e.textContent.trim().slice(0, 30) || e.getAttribute("placeholder") || "", outline: s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0}) })()`)
		var f struct {
			Tag, Name string
			Outline   bool
		}
		if json.Unmarshal([]byte(got), &f) != nil {
			t.Fatalf("Tab %d: %s", i+1, got)
		}
		if f.Tag == "" {
			continue // past the last control, focus leaves the page once before it wraps
		}
		if !f.Outline || f.Name == "" {
			t.Errorf("Tab %d reached a %s %q without a visible focus or a name", i+1, f.Tag, f.Name)
		}
		reached = append(reached, f.Name)
	}
	if all := strings.Join(reached, " | "); !strings.Contains(all, "Search conversations by title") || !strings.Contains(all, "Settings") {
		t.Errorf("Tab reached %s: not the sidebar's controls", all)
	}

	// The settings, scanned.
	p.do("opening the settings", chromedp.Click(chromedp.ID("open-settings")))
	p.wait("the settings with the engine's state", `document.querySelector("#engine-state")?.dataset.ready === "true"`)
	p.axe("the settings", axe)
	p.do("closing the settings", chromedp.Click(chromedp.CSS(`#settings button[aria-label="Close settings"]`)))
	p.axe("the chat", axe)

	// A phone: the sidebar is a drawer opened from the header, with the conversations, the settings and
	// sign-out; nothing scrolls sideways; the composer is on screen.
	p.do("a phone's screen", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch))
	p.wait("the menu button", `getComputedStyle(document.querySelector("#open-drawer")).display !== "none"`)
	// Reachable: inside the screen, and what a tap at its centre lands on.
	inView := func(sel string) string {
		return `(() => { const e = document.querySelector(` + js(sel) + `), r = e?.getBoundingClientRect(); if (!r || r.width === 0 || r.left < 0 || r.right > innerWidth || r.top < 0 || r.bottom > innerHeight) return false; return e.contains(document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2)) })()`
	}
	p.wait("the sidebar gone from a phone's screen", `getComputedStyle(document.querySelector("#sidebar")).visibility === "hidden"`)
	if got := p.eval(`String(` + inView("#open-settings") + `)`); got != "false" {
		t.Errorf("the settings button is on a phone's screen before the drawer opens")
	}
	p.wait("the composer on screen", inView("#prompt"))
	p.shot("chat-phone.png")
	p.do("opening the drawer", chromedp.Click(chromedp.ID("open-drawer")))
	p.wait("the drawer open", `document.querySelector("#sidebar")?.dataset.open === "true" && `+inView("#conversations li")+` && `+inView("#open-settings")+` && `+inView("#sign-out"))
	p.axe("the phone drawer", axe)
	p.shot("chat-phone-drawer.png")
	p.do("opening a conversation from the drawer", chromedp.Click(chromedp.CSS(`#conversations li:last-child a`)))
	p.wait("the drawer closed on the conversation", `document.querySelector("#sidebar")?.dataset.open === "false" && document.querySelector("#conversation-title")?.textContent === "Habits of a chat (renamed)"`)
	p.do("a narrower phone", chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile, chromedp.EmulateTouch))
	p.wait("the page laid out at 360", `innerWidth === 360`)
	if got := p.eval(`String(document.documentElement.scrollWidth)`); got != "360" {
		t.Errorf("at 360 px the page is %s px wide: it scrolls sideways", got)
	}
	p.wait("the composer on a narrow screen", inView("#prompt")+` && `+inView("#send"))

	// The on-screen keyboard: the page asks phones to resize the layout for it (interactive-widget), so
	// with the keyboard open the page is the screen above it, and the composer and the latest message
	// stay on screen.
	if got := p.eval(`document.querySelector('meta[name="viewport"]')?.content ?? ""`); !strings.Contains(got, "interactive-widget=resizes-content") {
		t.Errorf("the viewport meta is %q: the on-screen keyboard would cover the composer", got)
	}
	p.do("focusing the composer", chromedp.Focus(chromedp.ID("prompt")))
	p.do("the keyboard open", chromedp.EmulateViewport(360, 740-300, chromedp.EmulateMobile, chromedp.EmulateTouch))
	p.wait("the page laid out above the keyboard", `innerHeight === 440`)
	p.wait("the composer above the keyboard", inView("#prompt")+` && `+inView("#send")+` && document.activeElement?.id === "prompt"`)
	p.eval(`document.querySelector("#messages > :last-child").scrollIntoView({block: "end"}), "ok"`)
	p.wait("the latest message above the composer", inView("#messages > :last-child"))
	if got := p.eval(`String(document.documentElement.scrollWidth)`); got != "360" {
		t.Errorf("with the keyboard open the page is %s px wide: it scrolls sideways", got)
	}
	p.shot("chat-phone-keyboard.png")
}

// SuggestionLearn is the "Learn" suggestion's prompt (EmptyState.tsx).
const SuggestionLearn = "Explain Appwrite Realtime channels in a few lines."

// clipboard reads the clipboard as the page sees it.
func (p *page) clipboard() string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil {
		p.fail("reading the clipboard: %v", err)
	}
	return s
}

func jsNum(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
