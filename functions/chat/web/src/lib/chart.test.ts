import { describe, expect, it } from "vitest"
import { chartGeometry, formatTime, formatValue, niceMax } from "./chart"

describe("formatValue", () => {
  it("formats by axisFormat", () => {
    expect(formatValue(0)).toBe("0")
    expect(formatValue(49)).toBe("49")
    expect(formatValue(1234)).toBe("1.2K")
    expect(formatValue(2_500_000)).toBe("2.5M")
    expect(formatValue(999, "bytes")).toBe("999 B")
    expect(formatValue(1_500_000, "bytes")).toBe("1.5 MB")
    expect(formatValue(12_345_678_901, "bytes")).toBe("12.3 GB")
    expect(formatValue(1.256, "gbhours")).toBe("1.26 GB-h")
    expect(formatValue(Number.NaN)).toBe("–")
  })
})

describe("formatTime", () => {
  it("labels hours for 1h and days for 1d, in UTC", () => {
    expect(formatTime("2026-08-04T08:00:00+00:00", "1h")).toBe("08:00")
    expect(formatTime("2026-08-04T08:00:00+00:00", "1d")).toBe("Aug 4")
    expect(formatTime("2026-08-04T08:00:00+00:00")).toBe("Aug 4 08:00")
    expect(formatTime("not a time", "1h")).toBe("not a time")
  })
})

describe("niceMax", () => {
  it("rounds up to a round number", () => {
    expect(niceMax(0)).toBe(1)
    expect(niceMax(49)).toBe(50)
    expect(niceMax(101)).toBe(200)
    expect(niceMax(0.3)).toBe(0.5)
    expect(niceMax(2100)).toBe(2500)
  })
})

const metrics = [
  {
    metric: "network.requests",
    points: [
      { time: "2026-08-04T10:00:00+00:00", value: 30 },
      { time: "2026-08-04T08:00:00+00:00", value: 10 },
      { time: "2026-08-04T09:00:00+00:00", value: 49 },
    ],
  },
]

describe("chartGeometry", () => {
  it("draws events as bars by default, in time order, with the total", () => {
    const g = chartGeometry({ metrics, kind: "events", interval: "1h" })
    expect(g.type).toBe("bar")
    expect(g.yMax).toBe(50)
    const bars = g.series[0]!.bars
    expect(bars.map((b) => b.value)).toEqual([10, 49, 30])
    expect(bars[0]!.x).toBeLessThan(bars[1]!.x)
    // height is proportional to the value
    expect(bars[1]!.h / bars[0]!.h).toBeCloseTo(4.9, 5)
    expect(g.xLabels.map((l) => l.label)).toEqual(["08:00", "09:00", "10:00"])
    expect(g.headline).toEqual({ label: "total", value: "89" })
    expect(g.yTicks[4]!.label).toBe("50")
  })

  it("draws gauges as an area with the latest value, and honours chartType and axisFormat", () => {
    const g = chartGeometry({ metrics, kind: "gauges", axisFormat: "bytes", interval: "1d" })
    expect(g.type).toBe("area")
    expect(g.series[0]!.line.startsWith("M")).toBe(true)
    expect(g.series[0]!.area.endsWith("Z")).toBe(true)
    expect(g.headline).toEqual({ label: "latest", value: "30 B" })
    expect(g.xLabels[0]!.label).toBe("Aug 4")
    expect(chartGeometry({ metrics, kind: "gauges", chartType: "bar" }).type).toBe("bar")
    expect(chartGeometry({ metrics, kind: "events", chartType: "area" }).type).toBe("area")
  })

  it("survives an empty series", () => {
    const g = chartGeometry({ metrics: [{ metric: "x", points: [] }] })
    expect(g.series[0]!.bars).toEqual([])
    expect(g.headline.value).toBe("0")
  })
})
