import type { ConsoleAction, ResourceItem } from "../lib/protocols"
import { Href } from "./Href"

type ListAction = Extract<ConsoleAction, { type: "resource_list" }>

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
