import { afterEach, describe, expect, it, vi } from "vitest"
import { APIError, ChatAPI, SignedOutError } from "./api"

function answer(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } })
}

afterEach(() => vi.unstubAllGlobals())

describe("ChatAPI", () => {
  it("sends the JWT and, on 401, retries once with a fresh one", async () => {
    const seen: string[] = []
    const answers = [answer(401, { error: "unauthorized", message: "jwt expired" }), answer(200, { user: { id: "u" } })]
    vi.stubGlobal("fetch", async (_: string, init: RequestInit) => {
      seen.push(String((init.headers as Record<string, string>).Authorization))
      return answers.shift()
    })
    const asked: (string | undefined)[] = []
    const api = new ChatAPI(async (stale) => {
      asked.push(stale)
      return stale ? "new" : "old"
    })
    expect(await api.call("GET", "api/me")).toEqual({ user: { id: "u" } })
    expect(seen).toEqual(["Bearer old", "Bearer new"])
    expect(asked).toEqual([undefined, "old"])
  })

  it("signs out when the fresh JWT is refused too", async () => {
    vi.stubGlobal("fetch", async () => answer(401, { error: "unauthorized", message: "jwt expired" }))
    const api = new ChatAPI(async () => "t")
    await expect(api.call("GET", "api/me")).rejects.toBeInstanceOf(SignedOutError)
  })

  it("reports chat's error body", async () => {
    vi.stubGlobal("fetch", async () => answer(413, { error: "attachment_too_large", message: "Attachment 'a' exceeds max size (10000000 bytes)" }))
    const api = new ChatAPI(async () => "t")
    const err = await api.call("POST", "api/turns", {}).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(APIError)
    expect((err as APIError).status).toBe(413)
    expect((err as APIError).message).toBe("Attachment 'a' exceeds max size (10000000 bytes)")
  })
})
