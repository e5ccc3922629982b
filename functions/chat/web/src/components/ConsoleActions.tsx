import { noticeText } from "../lib/notices"
import type { ConsoleAction } from "../lib/protocols"
import { Chart } from "./Chart"
import { ResourceCard } from "./ResourceCard"
import { ResourceList } from "./ResourceList"

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
