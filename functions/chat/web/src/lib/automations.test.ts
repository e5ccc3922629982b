import { describe, expect, it } from "vitest"
import type { Automation } from "./api"
import { argumentFields, describeArguments, guessEvent, parseEventMessage, readsLikeAutomation, stateOf, tokens } from "./automations"

describe("readsLikeAutomation", () => {
  it("splits the issue's examples and guesses the event", () => {
    expect(readsLikeAutomation("When a row is added to support_tickets, triage it: read it, set its priority, and tell me why.")).toEqual({
      when: "a row is added to support_tickets",
      instruction: "Triage it: read it, set its priority, and tell me why.",
      event: "tablesdb.row.created",
      arguments: { table_id: "support_tickets" },
    })
    expect(readsLikeAutomation("when a function execution fails in checkout then read the logs and open a fix")).toMatchObject({
      instruction: "Read the logs and open a fix",
      event: "functions.execution.failed",
    })
    expect(readsLikeAutomation("Whenever a ticket in `orders` is updated: summarise the change")).toMatchObject({
      event: "tablesdb.row.updated",
      arguments: { table_id: "orders" },
    })
    expect(readsLikeAutomation("Every time a file is uploaded to avatars, make a thumbnail")).toMatchObject({
      event: "storage.file.created",
      arguments: { bucket_id: "avatars" },
    })
    expect(readsLikeAutomation("as soon as a user signs up, welcome them")).toMatchObject({ event: "users.user.created" })
  })

  it("leaves ordinary messages alone", () => {
    for (const text of ["What tables do I have?", "When was my project created?", "when, then", "Show me when rows were added", ""]) {
      expect(readsLikeAutomation(text)).toBeNull()
    }
  })

  it("offers with no event when the condition names none it knows", () => {
    expect(readsLikeAutomation("when the moon is full, tell me")).toEqual({ when: "the moon is full", instruction: "Tell me", event: "", arguments: {} })
    expect(guessEvent("a row is deleted from orders")).toEqual({ event: "tablesdb.row.deleted", arguments: { table_id: "orders" } })
  })
})

describe("the form and the list", () => {
  it("lists an event's arguments, required first", () => {
    const fields = argumentFields({
      name: "functions.deployment.completed",
      description: "",
      inputSchema: {
        type: "object",
        properties: { status: { type: "string", enum: ["ready", "failed"] }, project_id: { type: "string", pattern: "^x$" }, function_id: { type: "string" } },
        required: ["project_id", "function_id"],
      },
    })
    expect(fields.map((f) => [f.name, f.required])).toEqual([
      ["project_id", true],
      ["function_id", true],
      ["status", false],
    ])
    const table = argumentFields({
      name: "tablesdb.row.created",
      description: "",
      inputSchema: { properties: { database_id: {}, project_id: {}, table_id: {} }, required: ["database_id", "project_id", "table_id"] },
    })
    expect(table.map((f) => f.name)).toEqual(["project_id", "database_id", "table_id"])
    expect(fields[0]?.pattern).toBe("^x$")
    expect(fields[2]?.options).toEqual(["ready", "failed"])
    expect(argumentFields(undefined)).toEqual([])
  })

  it("describes arguments, usage and state", () => {
    expect(describeArguments({ project_id: "p", database_id: "main", table_id: "tickets" })).toBe("main / tickets")
    expect(describeArguments({ project_id: "p", bucket_id: "avatars" })).toBe("avatars")
    expect(describeArguments({ project_id: "p" })).toBe("")
    expect([tokens(812), tokens(12_400), tokens(3_100_000), tokens(1500)]).toEqual(["812", "12k", "3.1M", "1.5k"])
    const a = { status: "active", pause_reason: "", refresh_error: "" } as Automation
    expect(stateOf(a)).toEqual({ label: "active", tone: "done" })
    expect(stateOf({ ...a, refresh_error: "token refused" })).toEqual({ label: "refresh failed", tone: "failed" })
    expect(stateOf({ ...a, status: "paused", pause_reason: "rate_limit" }).label).toBe("paused by its rate limit")
  })
})

describe("parseEventMessage", () => {
  it("reads chat's message of an automation's turn back", () => {
    const text =
      "Automation event: tablesdb.row.created at 2026-12-05T10:00:00Z\n- project_id: p\n- row_id: r1\n\nInstruction: Triage it.\n\n(This turn was started by the user's automation…)"
    expect(parseEventMessage(text)).toEqual({
      name: "tablesdb.row.created",
      at: "2026-12-05T10:00:00Z",
      fields: [
        ["project_id", "p"],
        ["row_id", "r1"],
      ],
      instruction: "Triage it.",
    })
    expect(parseEventMessage("Automation event: e\n\nInstruction: x")).toEqual({ name: "e", at: "", fields: [], instruction: "x" })
    expect(parseEventMessage("hello\n- a: b")).toBeNull()
  })
})
