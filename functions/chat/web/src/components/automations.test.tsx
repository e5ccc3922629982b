import { QueryClientProvider } from "@tanstack/react-query"
import { renderToStaticMarkup } from "react-dom/server"
import { describe, expect, it } from "vitest"
import { ChatAPI, type Automation, type McpConnection, type Message } from "../lib/api"
import { parseEventMessage } from "../lib/automations"
import { newQueryClient } from "../lib/queries"
import { SessionContext } from "../lib/session"
import { AutomationEventMessage } from "./AutomationEventMessage"
import { AutomationItem } from "./AutomationItem"

function dom(html: string): HTMLElement {
  const div = document.createElement("div")
  div.innerHTML = html
  return div
}

const base: Automation = {
  id: "a1",
  conversation_id: "c1",
  connection_id: "events",
  event: "tablesdb.row.created",
  arguments: { project_id: "p", database_id: "main", table_id: "support_tickets" },
  instruction: "Triage it.",
  status: "active",
  pause_reason: "",
  refresh_before: "2026-12-05T10:54:00Z",
  refreshed_at: "2026-12-05T10:00:00Z",
  refresh_error: "",
  usage: { turns: 3, limited: 0, prompt_tokens: 900, completion_tokens: 300, total_tokens: 1200 },
  created_at: "2026-12-05T10:00:00Z",
}
const events: McpConnection = { id: "events", name: "Events", url: "https://mcp.example/mcp", description: "", connected: true }

function item(a: Automation, connection: McpConnection | null = events): HTMLElement {
  const tools = { api: new ChatAPI(async () => "jwt"), toast: () => undefined, fail: () => undefined }
  return dom(
    renderToStaticMarkup(
      <QueryClientProvider client={newQueryClient()}>
        <SessionContext.Provider value={tools}>
          <AutomationItem automation={a} connection={connection ?? undefined} onOpen={() => undefined} />
        </SessionContext.Provider>
      </QueryClientProvider>,
    ),
  )
}

describe("AutomationItem", () => {
  it("shows what an active automation watches, does and has cost, and until when it is subscribed", () => {
    const d = item(base)
    expect(d.querySelector("li")?.dataset.status).toBe("active")
    expect(d.querySelector(".automation-head")?.textContent).toBe("tablesdb.row.created on main / support_tickets active")
    expect(d.querySelector(".automation-usage")?.textContent).toBe("3 turns · 1.2k tokens")
    expect(d.querySelector(".automation-refresh")?.getAttribute("data-refresh-before")).toBe("2026-12-05T10:54:00Z")
    expect(d.querySelector("button.pause")).not.toBeNull()
    expect(d.querySelector("button.resume")).toBeNull()
    expect(d.querySelector(".automation-problem")).toBeNull()
  })

  it("shows a failed refresh with its reason and a way to reconnect the server", () => {
    const d = item({ ...base, refresh_error: "MCP connection 'events': the access token expired and could not be refreshed: reconnect it" })
    expect(d.querySelector(".automation-state")?.textContent).toBe("refresh failed")
    expect(d.querySelector(".automation-refresh-error")?.textContent).toContain("could not be refreshed")
    expect(d.querySelector("button.reconnect")?.textContent).toBe("Reconnect Events")
    expect(d.querySelector(".automation-refresh")).toBeNull()
    // A connection that is gone cannot be reconnected from here: the reason stays.
    expect(item({ ...base, refresh_error: "gone" }, null).querySelector("button.reconnect")).toBeNull()
  })

  it("offers Resume for a paused automation, and says who paused it", () => {
    const d = item({ ...base, status: "paused", pause_reason: "rate_limit", usage: { ...base.usage, turns: 20, limited: 1 } })
    expect(d.querySelector(".automation-state")?.textContent).toBe("paused by its rate limit")
    expect(d.querySelector(".automation-usage")?.textContent).toBe("20 turns · 1.2k tokens · 1 event over the limit")
    expect(d.querySelector("button.resume")).not.toBeNull()
    expect(d.querySelector("button.pause")).toBeNull()
  })
})

describe("AutomationEventMessage", () => {
  it("shows the event, its ids and the instruction in a card, its text inert", () => {
    const content =
      "Automation event: tablesdb.row.created at 2026-12-05T10:00:00Z\n- created_at: x\n- row_id: <img src=x onerror=alert(1)>\n- table_id: t\n\nInstruction: Triage it.\n\n(…)"
    const ev = parseEventMessage(content)!
    const m = { id: "m1", role: "user", content, status: "done", turn_id: "r1", created_at: "" } as Message
    const d = dom(renderToStaticMarkup(<AutomationEventMessage message={m} event={ev} />))
    expect(d.querySelector(".event-name")?.textContent).toBe("tablesdb.row.created")
    expect([...d.querySelectorAll(".event-fields dt")].map((t) => t.textContent)).toEqual(["row_id", "table_id"])
    expect(d.querySelector(".event-fields dd code")?.textContent).toBe("<img src=x onerror=alert(1)>")
    expect(d.querySelector("img")).toBeNull()
    expect(d.querySelector(".event-instruction")?.textContent).toBe("Triage it.")
  })
})
