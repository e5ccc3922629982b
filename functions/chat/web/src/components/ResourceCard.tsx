import type { ConsoleAction } from "../lib/protocols"
import { Href } from "./Href"

/** ResourceCard shows a resource action: the resource created, updated or deleted. */
export function ResourceCard({ action }: { action: Extract<ConsoleAction, { type: "resource" }> }) {
  return (
    <section className={`card resource resource-${action.mutation}`} data-resource-type={action.resourceType}>
      <header>
        <span className="pill">{action.mutation}d</span>
        <span className="card-title">
          <Href href={action.href}>{action.title}</Href>
        </span>
        <span className="muted">
          {action.resourceType} · {action.resourceId}
        </span>
      </header>
      {action.subtitle && <p className="muted">{action.subtitle}</p>}
      {(action.metadata?.length || action.fields) && (
        <dl>
          {action.metadata?.map((m) => (
            <div key={m.label}>
              <dt>{m.label}</dt>
              <dd>{m.value}</dd>
            </div>
          ))}
          {Object.entries(action.fields ?? {}).map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{String(v)}</dd>
            </div>
          ))}
        </dl>
      )}
      {action.status && <p className="muted">Status: {action.status}</p>}
      {action.href && !/^https?:/i.test(action.href) && <p className="muted small">In the Console: {action.href}</p>}
    </section>
  )
}
