import { describe, expect, it } from "vitest"
import { Sequencer } from "./events"

describe("Sequencer", () => {
  it("delivers in seq order, once each, and reports a gap", () => {
    const s = new Sequencer()
    expect(s.push(2, { type: "route" })).toEqual([])
    expect(s.hasGap()).toBe(true)
    expect(s.push(1, { type: "status" }).map((e) => e.type)).toEqual(["status", "route"])
    expect(s.push(1, { type: "status" })).toEqual([])
    expect(s.push(2, { type: "route" })).toEqual([])
    expect(s.hasGap()).toBe(false)
    expect(s.push(3, { type: "complete" }).map((e) => e.type)).toEqual(["complete"])
    expect(s.last).toBe(3)
    expect(s.push(Number.NaN, { type: "x" })).toEqual([])
  })
})
