import { chartGeometry, formatTime, formatValue } from "../lib/chart"
import type { ConsoleAction } from "../lib/protocols"

type ChartAction = Extract<ConsoleAction, { type: "chart" }>

const COLORS = ["var(--series-1)", "var(--series-2)", "var(--series-3)", "var(--series-4)", "var(--series-5)"]

/** Chart draws a console chart action as SVG: bars or an area, honouring kind, interval and axisFormat. */
export function Chart({ action }: { action: ChartAction }) {
  const g = chartGeometry(action)
  const fmt = action.axisFormat ?? "count"
  return (
    <figure className="card chart" data-chart-type={g.type} data-kind={action.kind ?? "events"}>
      <figcaption>
        <div className="chart-title">{action.title}</div>
        <div className="chart-headline">
          <strong>{g.headline.value}</strong> <span className="muted">{g.headline.label}{action.unitLabel ? ` ${action.unitLabel}` : ""}</span>
          {typeof action.changePercent === "number" && (
            <span className={action.changePercent >= 0 ? "up" : "down"}>
              {" "}
              {action.changePercent >= 0 ? "+" : ""}
              {action.changePercent.toFixed(1)}%
            </span>
          )}
        </div>
        {action.description && <div className="muted">{action.description}</div>}
      </figcaption>
      <svg viewBox={`0 0 ${g.width} ${g.height}`} role="img" aria-label={action.title}>
        {g.yTicks.map((t) => (
          <g key={t.y}>
            <line className="grid" x1={g.plot.left} x2={g.plot.right} y1={t.y} y2={t.y} />
            <text className="axis" x={g.plot.left - 6} y={t.y + 4} textAnchor="end">
              {t.label}
            </text>
          </g>
        ))}
        {g.xLabels.map((l, i) => (
          <text key={i} className="axis" x={l.x} y={g.height - 6} textAnchor="middle">
            {l.label}
          </text>
        ))}
        {g.series.map((s, i) =>
          g.type === "bar" ? (
            <g key={s.metric} className="series" fill={COLORS[i % COLORS.length]}>
              {s.bars.map((b) => (
                <rect key={b.time} className="bar" x={b.x} y={b.y} width={b.w} height={b.h}>
                  <title>{`${s.metric} ${formatTime(b.time, action.interval)}: ${formatValue(b.value, fmt)}`}</title>
                </rect>
              ))}
            </g>
          ) : (
            <g key={s.metric} className="series">
              <path className="area" d={s.area} fill={COLORS[i % COLORS.length]} fillOpacity={0.2} />
              <path className="line" d={s.line} stroke={COLORS[i % COLORS.length]} fill="none" strokeWidth={2} />
            </g>
          ),
        )}
      </svg>
      {action.metrics.length > 1 && (
        <div className="legend">
          {action.metrics.map((m, i) => (
            <span key={m.metric}>
              <i style={{ background: COLORS[i % COLORS.length] }} /> {m.metric}
            </span>
          ))}
        </div>
      )}
    </figure>
  )
}
