// The one-line notices of Console actions that have no card of their own.
import type { ConsoleAction } from "./protocols"

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
