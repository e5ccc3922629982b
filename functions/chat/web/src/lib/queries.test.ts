import { describe, expect, it } from "vitest"
import type { ChatAPI, Conversation, Message } from "./api"
import { keys, newQueryClient, putConversation, readConversation, readConversations } from "./queries"

const conv = (title: string, updated: string): Conversation => ({ id: "c1", title, created_at: "2026-12-02T04:00:00.000+00:00", updated_at: updated })

// The race TestChatPage met under load: the list read after a turn leaves before the title function writes
// the title, Realtime delivers the titled row, then the read's older answer arrives.
describe("a read that left before a Realtime event", () => {
  const stale = conv("", "2026-12-02T04:00:01.000+00:00")
  const titled = conv("Databases and usage", "2026-12-02T04:00:02.000+00:00")

  it("does not put the old title back in the list", async () => {
    const qc = newQueryClient()
    qc.setQueryData(keys.conversations, [stale])
    let answer: (v: { conversations: Conversation[] }) => void = () => undefined
    const api = { conversations: () => new Promise((r) => (answer = r)) } as unknown as ChatAPI
    const reading = readConversations(api, qc)
    putConversation(qc, titled) // Realtime, while the read is on its way
    answer({ conversations: [stale] })
    expect(await reading).toEqual([titled])
  })

  it("does not put the old title back in the open conversation", async () => {
    const qc = newQueryClient()
    qc.setQueryData(keys.conversations, [stale])
    let answer: (v: { conversation: Conversation; messages: Message[] }) => void = () => undefined
    const api = { conversation: () => new Promise((r) => (answer = r)) } as unknown as ChatAPI
    const reading = readConversation(api, qc, "c1")
    putConversation(qc, titled)
    answer({ conversation: stale, messages: [] })
    expect((await reading).conversation).toEqual(titled)
  })

  it("takes the answer when it is the newer row", async () => {
    const qc = newQueryClient()
    qc.setQueryData(keys.conversations, [stale])
    const api = { conversations: async () => ({ conversations: [titled] }) } as unknown as ChatAPI
    expect(await readConversations(api, qc)).toEqual([titled])
  })
})
