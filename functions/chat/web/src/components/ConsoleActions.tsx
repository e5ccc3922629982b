import type { ConsoleAction, MemoryAction, ResourceItem } from "../lib/protocols"
import { Chart } from "./Chart"

type ListAction = Extract<ConsoleAction, { type: "resource_list" }>

// Console hrefs are paths of the Appwrite Console; only absolute http(s) links become links here.
function Href({ href, children }: { href?: string; children: React.ReactNode }) {
  if (href && /^https?:\/\//i.test(href)) {
    return (
      <a href={href} target="_blank" rel="noopener noreferrer">
        {children}
      </a>
    )
  }
  return <>{children}</>
}

function cell(item: ResourceItem, key: string): string {
  switch (key) {
    case "resourceId":
    case "$id":
    case "id":
      return item.resourceId
    case "title":
    case "name":
      if (key === "title" || item.fields?.[key] === undefined) return item.title
      break
    case "subtitle":
      return item.subtitle ?? ""
    case "status":
      if (item.status !== undefined) return item.status
      break
  }
  const f = item.fields?.[key]
  if (f !== undefined) return f === null ? "null" : String(f)
  const m = item.metadata?.find((e) => e.label === key)
  return m ? m.value : ""
}

/** ResourceList renders a resource_list action as a table with its columns, or its empty message. */
export function ResourceList({ action }: { action: ListAction }) {
  const fieldKeys = [...new Set(action.items.flatMap((i) => Object.keys(i.fields ?? {})))].slice(0, 6)
  const columns =
    action.columns ??
    [
      { key: "title", label: "Name" },
      { key: "resourceId", label: "ID" },
      ...fieldKeys.map((k) => ({ key: k, label: k })),
      ...(action.items.some((i) => i.status) ? [{ key: "status", label: "Status" }] : []),
    ]
  const title = action.title ?? `${action.resourceType}s`
  return (
    <section className="card resource-list" data-resource-type={action.resourceType}>
      <header>
        <span className="card-title">{title}</span>
        {action.total !== undefined && (
          <span className="muted">
            {action.items.length < action.total ? `${action.items.length} of ${action.total}` : `${action.total}`}
          </span>
        )}
      </header>
      {action.description && <p className="muted">{action.description}</p>}
      {action.items.length === 0 ? (
        <p className="empty">{action.emptyMessage || `No ${action.resourceType}s.`}</p>
      ) : (
        <table>
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c.key}>{c.label}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {action.items.map((item) => (
              <tr key={item.resourceId}>
                {columns.map((c, i) => (
                  <td key={c.key}>{i === 0 ? <Href href={item.href}>{cell(item, c.key)}</Href> : cell(item, c.key)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {action.listHref && <p className="muted small">In the Console: {action.listHref}</p>}
    </section>
  )
}

function ResourceCard({ action }: { action: Extract<ConsoleAction, { type: "resource" }> }) {
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

const CREATE_NAMES: Record<string, string> = { bucket: "bucket", database: "database", function: "function", site: "site", team: "team", user: "user" }

/** noticeText is the one-line notice of an action that has no card (navigate, dialogs, panes, refresh…). */
export function noticeText(a: ConsoleAction): string | null {
  switch (a.type) {
    case "navigate":
      return `The agent suggests opening ${a.path} in the Console.`
    case "open_create":
      return `The agent suggests creating a ${CREATE_NAMES[a.resource] ?? a.resource} in the Console.`
    case "open_dialog":
      return `The agent suggests the Console's ${a.dialog.replace(/_/g, " ")} dialog.`
    case "show_pane":
      return `The agent asked to show the ${a.content} pane.`
    case "toggle_terminal":
      return "The agent asked to toggle the terminal."
    case "scroll_to_card":
      return `The agent pointed at card ${a.cardId}.`
    case "refresh":
      return `Refreshed: ${a.scopes.join(", ")}.`
    case "set_theme":
      return `Theme set to ${a.theme}.`
    case "toast":
      return a.description ? `${a.message} — ${a.description}` : a.message
    default:
      return null
  }
}

/** ConsoleActions renders the actions of one console tool result, in order. */
export function ConsoleActions({ actions }: { actions: ConsoleAction[] }) {
  return (
    <div className="console-actions">
      {actions.map((a, i) => {
        switch (a.type) {
          case "resource_list":
            return <ResourceList key={i} action={a} />
          case "resource":
            return <ResourceCard key={i} action={a} />
          case "chart":
            return <Chart key={i} action={a} />
          case "navigate":
            return (
              <p key={i} className={`notice notice-${a.type}`}>
                {noticeText(a)} <code>{a.path}</code>
              </p>
            )
          default:
            return (
              <p key={i} className={`notice notice-${a.type}${a.type === "toast" ? ` toast-${a.level}` : ""}`}>
                {noticeText(a)}
              </p>
            )
        }
      })}
    </div>
  )
}

/** MemoryNotice shows what a memory tool call saved or forgot. */
export function MemoryNotice({ actions }: { actions: MemoryAction[] }) {
  return (
    <div className="memory-actions">
      {actions.map((a, i) => (
        <p key={i} className={`notice notice-memory-${a.type}`}>
          {a.type === "set" ? (
            <>
              Remembered <code>{a.key}</code>: {a.content}
            </>
          ) : (
            <>
              Forgot <code>{a.key}</code>
            </>
          )}
        </p>
      ))}
    </div>
  )
}
