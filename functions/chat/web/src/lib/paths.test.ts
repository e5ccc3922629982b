import { describe, expect, it } from "vitest"
import { conversationFromHash, dropsConversation } from "./paths"

describe("dropsConversation", () => {
  it("keeps the conversation for the same user signing in again, or when nobody was signed in", () => {
    expect(dropsConversation("ada", "ada", false)).toBe(false)
    expect(dropsConversation(null, "ada", false)).toBe(false)
  })

  it("drops it for another user and for a new account", () => {
    expect(dropsConversation("ada", "grace", false)).toBe(true)
    expect(dropsConversation(null, "grace", true)).toBe(true)
    expect(dropsConversation("grace", "grace", true)).toBe(true)
  })
})

describe("conversationFromHash", () => {
  it("reads #c=<id> and nothing else", () => {
    expect(conversationFromHash("#c=6b0f_a.b-c")).toBe("6b0f_a.b-c")
    expect(conversationFromHash("#c=")).toBeNull()
    expect(conversationFromHash("#c=a/b")).toBeNull()
    expect(conversationFromHash("#x=abc")).toBeNull()
  })
})
