import { renderToStaticMarkup } from "react-dom/server"
import { describe, expect, it } from "vitest"
import { totalUsage, viewOf, type TurnEvent } from "../lib/events"
import { clarifyMessage, clarifyReadable, parseClarify, parseClarifyAnswers, parseConsole } from "../lib/protocols"
import { ClarifyForm } from "./ClarifyForm"
import { ConsoleActions } from "./ConsoleActions"
import { TurnView } from "./TurnView"

function dom(html: string): HTMLElement {
  const div = document.createElement("div")
  div.innerHTML = html
  return div
}

// The seed's examples (docs/console-protocol.md, "Examples").
const LIST = `{"protocol":"appwrite.console/v1","actions":[{"type":"resource_list","resourceType":"database","items":[{"resourceId":"main","title":"Main","href":"/project/64abc/databases/main","metadata":[{"label":"ID","value":"main"}],"fields":{"type":"tablesdb"}},{"resourceId":"analytics","title":"Analytics","href":"/project/64abc/databases/analytics","fields":{"type":"tablesdb"}}],"title":"Databases","listHref":"/project/64abc/databases","total":2,"projectId":"64abc"}]}`
const CHART = `{"protocol":"appwrite.console/v1","actions":[{"type":"chart","title":"Requests (last 24 hours)","metrics":[{"metric":"network.requests","points":[{"time":"2026-08-04T08:00:00+00:00","value":49.0},{"time":"2026-08-04T09:00:00+00:00","value":12.0}]}],"unitLabel":"requests","interval":"1h","startAt":"2026-08-03T08:00:00.000Z","endAt":"2026-08-04T08:00:00.000Z","projectId":"64abc"}]}`
const CREATED = `{"protocol":"appwrite.console/v1","actions":[{"type":"resource","mutation":"create","resourceType":"database","resourceId":"main","title":"Main","href":"/project/64abc/databases/main"},{"type":"refresh","scopes":["databases"]},{"type":"toast","level":"success","message":"Created database Main"}]}`

describe("console actions", () => {
  it("renders resource_list as a table with its columns", () => {
    const d = dom(renderToStaticMarkup(<ConsoleActions actions={parseConsole(LIST)!} />))
    expect([...d.querySelectorAll("th")].map((t) => t.textContent)).toEqual(["Name", "ID", "type"])
    expect([...d.querySelectorAll("tbody tr")].map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent))).toEqual([
      ["Main", "main", "tablesdb"],
      ["Analytics", "analytics", "tablesdb"],
    ])
    expect(d.querySelector(".card-title")?.textContent).toBe("Databases")
    // Console paths are not links in this page
    expect(d.querySelector("a")).toBeNull()
  })

  it("honours given columns and the empty message", () => {
    const env = {
      protocol: "appwrite.console/v1",
      actions: [
        { type: "resource_list", resourceType: "user", items: [{ resourceId: "u1", title: "Ada", fields: { email: "ada@example.com" }, status: "verified" }], columns: [{ key: "email", label: "Email" }, { key: "status", label: "State" }] },
        { type: "resource_list", resourceType: "bucket", items: [], emptyMessage: "This project has no buckets yet." },
      ],
    }
    const d = dom(renderToStaticMarkup(<ConsoleActions actions={parseConsole(JSON.stringify(env))!} />))
    expect([...d.querySelectorAll("th")].map((t) => t.textContent)).toEqual(["Email", "State"])
    expect([...d.querySelectorAll("td")].map((t) => t.textContent)).toEqual(["ada@example.com", "verified"])
    expect(d.querySelector(".empty")?.textContent).toBe("This project has no buckets yet.")
  })

  it("renders a chart as SVG bars for events", () => {
    const d = dom(renderToStaticMarkup(<ConsoleActions actions={parseConsole(CHART)!} />))
    const fig = d.querySelector("figure.chart")
    expect(fig?.getAttribute("data-chart-type")).toBe("bar")
    expect(d.querySelectorAll("svg rect.bar").length).toBe(2)
    expect(d.querySelector(".chart-headline strong")?.textContent).toBe("61")
    expect([...d.querySelectorAll("svg text.axis")].map((t) => t.textContent)).toContain("08:00")
  })

  it("renders a resource card and notices, and skips unknown types", () => {
    const env = JSON.parse(CREATED) as { actions: unknown[] }
    env.actions.push({ type: "launch_rockets", target: "moon" }, { type: "navigate", path: "/project/64abc/auth" }, { type: "open_create", resource: "bucket" })
    const actions = parseConsole(JSON.stringify({ protocol: "appwrite.console/v1", actions: env.actions }))!
    expect(actions.map((a) => a.type)).toEqual(["resource", "refresh", "toast", "navigate", "open_create"])
    const d = dom(renderToStaticMarkup(<ConsoleActions actions={actions} />))
    expect(d.querySelector(".resource .card-title")?.textContent).toBe("Main")
    expect(d.querySelector(".notice-navigate code")?.textContent).toBe("/project/64abc/auth")
    expect(d.querySelector(".notice-open_create")?.textContent).toContain("creating a bucket")
    expect(d.querySelector(".notice-toast")?.textContent).toBe("Created database Main")
  })

  it("ignores other protocols and errors", () => {
    expect(parseConsole("Error: invalid console actions — actions is empty")).toBeNull()
    expect(parseConsole('{"protocol":"appwrite.clarify/v1","prompts":[]}')).toBeNull()
    expect(parseConsole("not json")).toBeNull()
  })
})

const CLARIFY = `{"protocol":"appwrite.clarify/v1","prompts":[{"id":"name","kind":"text","question":"Database name","required":true,"placeholder":"main","multiline":false},{"id":"bucket","kind":"choice","question":"Which bucket?","required":true,"options":[{"id":"avatars","label":"avatars","description":"64 files"},{"id":"uploads","label":"uploads"}],"allowMultiple":false},{"id":"go","kind":"confirm","question":"Proceed?","required":true,"confirmLabel":"Delete","cancelLabel":"Keep it","danger":true},{"id":"x","kind":"slider","question":"?"}],"title":"Create database"}`

describe("clarify", () => {
  it("renders the known prompt kinds as a form", () => {
    const env = parseClarify(CLARIFY)!
    expect(env.prompts.map((p) => p.kind)).toEqual(["text", "choice", "confirm"])
    const d = dom(renderToStaticMarkup(<ClarifyForm envelope={env} onSubmit={() => undefined} />))
    expect(d.querySelector("input[name=clarify-name]")?.getAttribute("placeholder")).toBe("main")
    expect(d.querySelectorAll("input[name=clarify-bucket][type=radio]").length).toBe(2)
    expect(d.querySelectorAll("input[name=clarify-go]").length).toBe(2)
    expect(d.querySelector("button[type=submit]")?.hasAttribute("disabled")).toBe(true)
  })

  it("writes the answers as the protocol's bare JSON, and reads them back in words", () => {
    const env = parseClarify(CLARIFY)!
    const answers = [
      { id: "name", kind: "text" as const, value: "orders" },
      { id: "bucket", kind: "choice" as const, values: ["uploads"] },
      { id: "go", kind: "confirm" as const, confirmed: false },
    ]
    const msg = clarifyMessage(answers)
    // exactly what the Console's assistant code reads: the whole message is the JSON, keys in protocol order
    expect(msg).toBe(
      '{"protocol":"appwrite.clarify/v1","answers":[{"id":"name","kind":"text","value":"orders"},{"id":"bucket","kind":"choice","values":["uploads"]},{"id":"go","kind":"confirm","confirmed":false}]}',
    )
    expect(parseClarifyAnswers(msg)).toEqual(answers)
    expect(parseClarifyAnswers(`My answers:\n${msg}`)).toBeNull()
    expect(parseClarifyAnswers('{"protocol":"appwrite.console/v1","answers":[]}')).toBeNull()
    expect(clarifyReadable(answers, [env])).toEqual([
      { id: "name", question: "Database name", answer: "orders" },
      { id: "bucket", question: "Which bucket?", answer: "uploads" },
      { id: "go", question: "Proceed?", answer: "Keep it" },
    ])
    // without the form (another conversation, a lost timeline): the prompt ids
    expect(clarifyReadable(answers, []).map((a) => a.question)).toEqual(["name", "bucket", "go"])
  })

  it("fills an answered form back in, read-only", () => {
    const env = parseClarify(CLARIFY)!
    const d = dom(renderToStaticMarkup(<ClarifyForm envelope={env} onSubmit={() => undefined} answered={[{ id: "bucket", kind: "choice", values: ["uploads"] }]} />))
    expect(d.querySelector<HTMLInputElement>('input[name=clarify-bucket][value="uploads"]')?.hasAttribute("checked")).toBe(true)
    expect(d.querySelector("button[type=submit]")).toBeNull()
    expect([...d.querySelectorAll("fieldset")].every((f) => f.hasAttribute("disabled"))).toBe(true)
  })
})

const TIMELINE: TurnEvent[] = [
  { type: "status", message: "Routing request…" },
  { type: "route", agent: "platform", next: "platform", reason: "Appwrite" },
  { type: "subagent_start", agent: "platform" },
  { type: "tool_start", agent: "platform", tool: "console", run_id: "run_1", input: '{"actions":"[]"}' },
  { type: "tool_start", agent: "platform", tool: "console", run_id: "run_2", input: "{}" },
  { type: "tool_end", agent: "platform", tool: "console", run_id: "run_2", output: "Error: invalid console actions — actions is empty", failed: false },
  { type: "tool_end", agent: "platform", tool: "console", run_id: "run_1", output: LIST },
  { type: "answer_start", agent: "platform" },
  { type: "token", agent: "platform", content: "Here are " },
  { type: "token", agent: "platform", content: "your **databases**." },
  { type: "subagent_end", agent: "platform", summary: "", tool_calls: 2, failed: false },
  { type: "done", content: "Here are your **databases**.", answer: "Here are your **databases**." },
  { type: "conversation_title", title: "Databases" },
  { type: "complete" },
]

describe("timeline", () => {
  it("pairs tool cards by run_id, not by tool name", () => {
    const v = viewOf(TIMELINE)
    expect(v.tools.run_1?.output).toBe(LIST)
    expect(v.tools.run_2?.output).toMatch(/^Error:/)
    expect(v.tools.run_1?.input).toBe('{"actions":"[]"}')
    expect(v.title).toBe("Databases")
    expect(v.complete).toBe(true)
    expect(v.tokenEvents).toBe(2)
  })

  it("shows tokens as text while running and the answer as markdown when done", () => {
    const running = dom(renderToStaticMarkup(<TurnView turn={viewOf(TIMELINE.slice(0, 10))} running />))
    expect(running.querySelector(".tokens")?.textContent).toBe("Here are your **databases**.")
    expect(running.querySelector(".answer")).toBeNull()
    expect(running.querySelector(".badge-route")?.textContent).toBe("→ platform")
    expect(running.querySelectorAll("details.tool").length).toBe(2)
    const done = dom(renderToStaticMarkup(<TurnView turn={viewOf(TIMELINE)} running={false} />))
    expect(done.querySelector(".tokens")).toBeNull()
    expect(done.querySelector(".answer strong")?.textContent).toBe("databases")
    expect(done.querySelectorAll("table").length).toBe(1)
    expect(done.querySelector(".badge-subagent")?.textContent).toBe("platform ✓ 2 tools")
  })

  it("shows an error with its partial answer", () => {
    const v = viewOf([{ type: "error", code: "budget_exceeded", detail: "out of time", answer: "partial" }, { type: "complete" }])
    const d = dom(renderToStaticMarkup(<TurnView turn={v} running={false} />))
    expect(d.querySelector(".error")?.textContent).toBe("budget_exceeded: out of time")
    expect(d.querySelector(".answer")?.textContent?.trim()).toBe("partial")
  })

  it("keeps a stopped turn's partial answer, marked stopped, with no error", () => {
    const v = viewOf([{ type: "token", content: "Half an" }, { type: "error", code: "cancelled", detail: "The turn was stopped.", answer: "Half an" }, { type: "complete" }])
    expect(v.stopped).toBe(true)
    const d = dom(renderToStaticMarkup(<TurnView turn={v} running={false} />))
    expect(d.querySelector(".answer")?.textContent?.trim()).toBe("Half an")
    expect(d.querySelector(".stopped-note")?.textContent).toBe("Stopped.")
    expect(d.querySelector(".error")).toBeNull()
  })

  it("counts the tokens of every model call", () => {
    const v = viewOf([
      { type: "usage", model: "m", agent: "router", prompt_tokens: 100, completion_tokens: 5, total_tokens: 105 },
      { type: "usage", model: "m", agent: "platform", prompt_tokens: 200, completion_tokens: 40 },
    ])
    expect(v.usage.map((u) => u.total_tokens)).toEqual([105, 240])
    expect(totalUsage(v.usage)).toEqual({ prompt_tokens: 300, completion_tokens: 45, total_tokens: 345 })
  })
})

describe("charts", () => {
  it("draws gauges as an area with the axis format, and honours chartType", () => {
    const gauge = {
      type: "chart" as const,
      title: "Storage",
      kind: "gauges" as const,
      axisFormat: "bytes" as const,
      interval: "1d",
      metrics: [{ metric: "files.storage", points: [{ time: "2026-08-03T00:00:00Z", value: 1_500_000 }, { time: "2026-08-04T00:00:00Z", value: 2_500_000 }] }],
    }
    const d = dom(renderToStaticMarkup(<ConsoleActions actions={[gauge]} />))
    expect(d.querySelector("figure.chart")?.getAttribute("data-chart-type")).toBe("area")
    expect(d.querySelectorAll("path.area").length).toBe(1)
    expect(d.querySelectorAll("rect.bar").length).toBe(0)
    expect(d.querySelector(".chart-headline")?.textContent).toContain("2.5 MB latest")
    expect([...d.querySelectorAll("text.axis")].map((t) => t.textContent)).toContain("Aug 4")
    const bars = dom(renderToStaticMarkup(<ConsoleActions actions={[{ ...gauge, chartType: "bar" as const }]} />))
    expect(bars.querySelectorAll("rect.bar").length).toBe(2)
  })
})
