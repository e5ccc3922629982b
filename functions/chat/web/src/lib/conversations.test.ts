import { describe, expect, it } from "vitest"
import type { Conversation } from "./api"
import { mergeList, mergeOne } from "./conversations"

const conv = (id: string, title: string, updated: string): Conversation => ({ id, title, created_at: "2026-12-02T04:00:00.000+00:00", updated_at: updated })

describe("merging chat's reads with what Realtime delivered", () => {
  const titled = conv("c1", "Databases and usage", "2026-12-02T04:00:02.000+00:00")
  const stale = conv("c1", "", "2026-12-02T04:00:01.000+00:00")
  it("keeps a title Realtime delivered when a read that left earlier arrives later", () => {
    expect(mergeList([titled], [stale])).toEqual([titled])
    expect(mergeOne([titled], stale)).toEqual([titled])
  })
  it("takes a newer read, drops rows chat no longer lists, adds new ones first", () => {
    const renamed = conv("c1", "Renamed", "2026-12-02T04:00:03.000+00:00")
    expect(mergeList([titled, conv("gone", "x", "2026-12-02T04:00:00.000+00:00")], [renamed])).toEqual([renamed])
    expect(mergeOne([titled], renamed)).toEqual([renamed])
    const other = conv("c2", "", "2026-12-02T04:00:04.000+00:00")
    expect(mergeOne([titled], other)).toEqual([other, titled])
  })
})
