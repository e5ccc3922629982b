// The geometry and labels of a console `chart` action (docs/console-protocol.md): an SVG area or bar chart.
// `chartType` wins when set; otherwise counters (`kind: events`) are bars and levels (`kind: gauges`) areas.
// `axisFormat` formats the axis and the headline; `interval` the time labels. Pure functions, tested alone.
import type { ChartMetric } from "./protocols"

export type AxisFormat = "count" | "bytes" | "gbhours"

const COUNT_UNITS: [number, string][] = [
  [1e12, "T"],
  [1e9, "B"],
  [1e6, "M"],
  [1e3, "K"],
]
const BYTE_UNITS = ["B", "KB", "MB", "GB", "TB", "PB"]

function trim(n: number, digits: number): string {
  return Number(n.toFixed(digits)).toString()
}

/** formatValue writes a value as the axis format says: 1.2K, 3.5 MB, 1.25 GB-h. */
export function formatValue(v: number, format: AxisFormat = "count"): string {
  if (!Number.isFinite(v)) return "–"
  const sign = v < 0 ? "-" : ""
  const a = Math.abs(v)
  switch (format) {
    case "bytes": {
      let i = 0
      let x = a
      while (x >= 1000 && i < BYTE_UNITS.length - 1) {
        x /= 1000
        i++
      }
      return `${sign}${trim(x, x < 10 && i > 0 ? 2 : 1)} ${BYTE_UNITS[i]}`
    }
    case "gbhours":
      return `${sign}${trim(a, a < 10 ? 2 : 1)} GB-h`
    default:
      for (const [size, unit] of COUNT_UNITS) {
        if (a >= size) return `${sign}${trim(a / size, 1)}${unit}`
      }
      return `${sign}${trim(a, 2)}`
  }
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

/** formatTime labels a point's time for the interval: hours for `1h` and shorter, days otherwise (UTC). */
export function formatTime(time: string, interval?: string): string {
  const d = new Date(time)
  if (Number.isNaN(d.getTime())) return time
  const hh = String(d.getUTCHours()).padStart(2, "0")
  const mm = String(d.getUTCMinutes()).padStart(2, "0")
  const day = `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`
  const unit = (interval ?? "").trim().slice(-1)
  if (unit === "m" || unit === "h") return `${hh}:${mm}`
  if (unit === "d" || unit === "w") return day
  return `${day} ${hh}:${mm}`
}

/** niceMax rounds a maximum up to 1, 2, 2.5 or 5 times a power of ten, so axis ticks are round numbers. */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1
  const p = 10 ** Math.floor(Math.log10(max))
  for (const m of [1, 2, 2.5, 5, 10]) {
    if (m * p >= max) return m * p
  }
  return 10 * p
}

export type ChartGeometry = {
  width: number
  height: number
  plot: { left: number; top: number; right: number; bottom: number }
  type: "area" | "bar"
  yMax: number
  yTicks: { y: number; label: string }[]
  xLabels: { x: number; label: string }[]
  series: {
    metric: string
    /** area: the line's path and the closed area's path */
    line: string
    area: string
    /** bar: one rectangle per point */
    bars: { x: number; y: number; w: number; h: number; time: string; value: number }[]
  }[]
  /** events: the sum over the range; gauges: the last value (of the first series). */
  headline: { label: string; value: string }
}

export type ChartInput = {
  metrics: ChartMetric[]
  chartType?: "area" | "bar"
  kind?: "events" | "gauges"
  axisFormat?: AxisFormat
  interval?: string
}

/** chartGeometry lays a chart out in a width × height box (SVG user units). */
export function chartGeometry(c: ChartInput, width = 800, height = 220): ChartGeometry {
  const format = c.axisFormat ?? "count"
  const kind = c.kind ?? "events"
  const type = c.chartType ?? (kind === "gauges" ? "area" : "bar")
  const plot = { left: 56, top: 10, right: width - 10, bottom: height - 24 }
  const pw = plot.right - plot.left
  const ph = plot.bottom - plot.top
  // The x axis is the union of the series' times, in time order.
  const times = [...new Set(c.metrics.flatMap((m) => m.points.map((p) => p.time)))].sort(
    (a, b) => (Date.parse(a) || 0) - (Date.parse(b) || 0) || a.localeCompare(b),
  )
  const index = new Map(times.map((t, i) => [t, i]))
  const max = Math.max(0, ...c.metrics.flatMap((m) => m.points.map((p) => p.value)))
  const yMax = niceMax(max)
  const y = (v: number) => plot.bottom - (Math.max(0, v) / yMax) * ph
  const n = Math.max(1, times.length)
  const slot = pw / n
  const xCenter = (i: number) => (type === "bar" ? plot.left + slot * (i + 0.5) : n === 1 ? plot.left + pw / 2 : plot.left + (pw * i) / (n - 1))
  const groups = Math.max(1, c.metrics.length)
  const barW = Math.max(1, (slot * 0.8) / groups)
  const series = c.metrics.map((m, si) => {
    const pts = [...m.points].sort((a, b) => (index.get(a.time) ?? 0) - (index.get(b.time) ?? 0))
    const xy = pts.map((p) => [xCenter(index.get(p.time) ?? 0), y(p.value)] as const)
    const line = xy.map(([px, py], i) => `${i ? "L" : "M"}${px.toFixed(1)},${py.toFixed(1)}`).join(" ")
    const first = xy[0]
    const last = xy[xy.length - 1]
    const area = first && last ? `${line} L${last[0].toFixed(1)},${plot.bottom} L${first[0].toFixed(1)},${plot.bottom} Z` : ""
    const bars = pts.map((p) => {
      const i = index.get(p.time) ?? 0
      const top = y(p.value)
      return { x: plot.left + slot * i + slot * 0.1 + barW * si, y: top, w: barW, h: plot.bottom - top, time: p.time, value: p.value }
    })
    return { metric: m.metric, line, area, bars }
  })
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => ({ y: plot.bottom - f * ph, label: formatValue(yMax * f, format) }))
  const every = Math.max(1, Math.ceil(n / 6))
  const xLabels = times.flatMap((t, i) => (i % every === 0 ? [{ x: xCenter(i), label: formatTime(t, c.interval) }] : []))
  const firstSeries = [...(c.metrics[0]?.points ?? [])].sort((a, b) => (index.get(a.time) ?? 0) - (index.get(b.time) ?? 0))
  const headline =
    kind === "gauges"
      ? { label: "latest", value: formatValue(firstSeries[firstSeries.length - 1]?.value ?? 0, format) }
      : { label: "total", value: formatValue(firstSeries.reduce((s, p) => s + p.value, 0), format) }
  return { width, height, plot, type, yMax, yTicks, xLabels, series, headline }
}
