import { describe, expect, it } from "vitest"
import { connectionId } from "./connection-id"

const accepted = /^[a-z][a-z0-9_-]{1,35}$/

describe("connectionId", () => {
  it("makes an id chat and turn accept from any name", () => {
    const cases: Array<[string, string]> = [
      ["Appwrite", "appwrite"],
      ["My Appwrite MCP", "my-appwrite-mcp"],
      ["A", "mcp-a"],
      ["1Password", "mcp-1password"],
      ["_private", "private"],
      ["!!!", "mcp"],
      ["Ünïcode Server", "n-code-server"],
      ["x".repeat(50), "x".repeat(36)],
      ["9".repeat(50), "mcp-" + "9".repeat(32)],
    ]
    for (const [name, id] of cases) {
      expect(connectionId(name)).toBe(id)
      expect(connectionId(name)).toMatch(accepted)
    }
  })
})
