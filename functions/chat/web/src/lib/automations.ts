// Automations in the page (docs/chat.md "Automations"): reading a message that asks for one ("when … do …"),
// so the page can offer to set it up (the agent cannot make one, and nothing is made without the user's
// confirmation), and what the automation form shows of an event's arguments.
import type { Automation, EventType, JSONSchema } from "./api"

/** An offer: a message that reads like an automation, split, with the event and arguments it seems to mean. */
export type Offer = { when: string; instruction: string; event: string; arguments: Record<string, string> }

// "when|whenever|every time|each time|if <condition>, <action>" (a comma, "then", or a colon between).
const WHEN = /^\s*(?:when(?:ever)?|every\s+time|each\s+time|as\s+soon\s+as)\s+(.+?)(?:\s*,\s*(?:then\s+)?|\s+then\s+|\s*:\s*|\s*->\s*)(.+?)\s*$/is

/** readsLikeAutomation splits a message like "When a row is added to tickets, triage it" (null otherwise). */
export function readsLikeAutomation(text: string): Offer | null {
  const m = WHEN.exec(text)
  if (!m) return null
  const when = (m[1] ?? "").trim()
  const instruction = (m[2] ?? "").trim().replace(/^(?:please\s+)?/i, "")
  if (when.length < 3 || instruction.length < 2) return null
  const guess = guessEvent(when)
  return { when, instruction: instruction.charAt(0).toUpperCase() + instruction.slice(1), ...guess }
}

const ID = "([A-Za-z0-9][A-Za-z0-9._-]{0,35})"

/** guessEvent maps the condition of an offer to an event of the catalog (docs/events.md §1) and its ids. */
export function guessEvent(when: string): { event: string; arguments: Record<string, string> } {
  const w = when.toLowerCase()
  const named = (re: RegExp) => re.exec(when)?.[1] ?? ""
  const table = named(new RegExp(`(?:to|in|into|from|of)\\s+(?:the\\s+)?(?:table\\s+)?[\`"']?${ID}[\`"']?(?:\\s+table)?`, "i"))
  if (/\b(row|ticket|record|entry|document|order|item)s?\b/.test(w) || /\btable\b/.test(w)) {
    const args: Record<string, string> = table ? { table_id: table } : {}
    if (/\b(updated|changed|modified|edited)\b/.test(w)) return { event: "tablesdb.row.updated", arguments: args }
    if (/\b(deleted|removed)\b/.test(w)) return { event: "tablesdb.row.deleted", arguments: args }
    return { event: "tablesdb.row.created", arguments: args }
  }
  if (/\b(file|upload|image|photo)s?\b/.test(w)) {
    const bucket = named(new RegExp(`(?:to|in|into)\\s+(?:the\\s+)?(?:bucket\\s+)?[\`"']?${ID}`, "i"))
    return { event: "storage.file.created", arguments: bucket ? { bucket_id: bucket } : {} }
  }
  if (/\b(user|account)s?\b.*\b(signs?\s+up|created|registers?|joins?)\b/.test(w) || /\bsigns?\s+up\b/.test(w)) {
    return { event: "users.user.created", arguments: {} }
  }
  const fn = named(new RegExp(`(?:function|execution of)\\s+[\`"']?${ID}`, "i"))
  if (/\bdeploy(ment|ed)?\b/.test(w)) return { event: "functions.deployment.completed", arguments: fn ? { function_id: fn } : {} }
  if (/\b(execution|function|run)s?\b.*\b(fails?|failed|errors?|crash(es|ed)?)\b/.test(w)) {
    return { event: "functions.execution.failed", arguments: fn ? { function_id: fn } : {} }
  }
  return { event: "", arguments: {} }
}

/** A field of the automation form: one argument of the event's inputSchema. */
export type ArgumentField = { name: string; required: boolean; description: string; pattern?: string; options?: string[] }

/** argumentFields lists the arguments an event takes: project_id, then the other required ones, then the rest. */
export function argumentFields(ev: EventType | undefined): ArgumentField[] {
  const schema: JSONSchema = ev?.inputSchema ?? {}
  const required = new Set(schema.required ?? [])
  const fields = Object.entries(schema.properties ?? {}).map(([name, p]) => ({
    name,
    required: required.has(name),
    description: p.description ?? "",
    ...(p.pattern ? { pattern: p.pattern } : {}),
    ...(p.enum ? { options: p.enum } : {}),
  }))
  const rank = (f: ArgumentField) => (f.name === "project_id" ? 0 : f.required ? 1 : 2)
  return fields.sort((a, b) => rank(a) - rank(b))
}

/** An automation's event as its turn's message carries it (chat's EventMessage, docs/chat.md "Automations"). */
export type EventMessage = { name: string; at: string; fields: [string, string][]; instruction: string }

/** parseEventMessage reads an automation turn's message back (null for any other message). */
export function parseEventMessage(content: string): EventMessage | null {
  const head = /^Automation event: (\S+)(?: at (\S+))?\n/.exec(content)
  if (!head) return null
  const fields: [string, string][] = []
  for (const m of content.matchAll(/^- (\w+): (.*)$/gm)) fields.push([m[1] ?? "", m[2] ?? ""])
  const instruction = /^Instruction: (.*)$/m.exec(content)?.[1] ?? ""
  return { name: head[1] ?? "", at: head[2] ?? "", fields, instruction }
}

/** describeArguments is an automation's arguments in a line: "main / tickets" for a table, else key value. */
export function describeArguments(args: Record<string, string>): string {
  if (args.database_id && args.table_id) return `${args.database_id} / ${args.table_id}`
  for (const k of ["bucket_id", "function_id", "site_id"]) if (args[k]) return args[k]
  return Object.entries(args)
    .filter(([k]) => k !== "project_id")
    .map(([k, v]) => `${k} ${v}`)
    .join(", ")
}

/** tokens writes a token count the way people read it: 812, 12.4k, 3.1M. */
export function tokens(n: number): string {
  if (n < 1000) return String(n)
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`
  return `${(n / 1_000_000).toFixed(1)}M`
}

/** stateOf is what an automation's status line says. */
export function stateOf(a: Automation): { label: string; tone: "done" | "failed" | "" } {
  if (a.status === "paused") return { label: a.pause_reason === "rate_limit" ? "paused by its rate limit" : "paused", tone: "" }
  if (a.refresh_error) return { label: "refresh failed", tone: "failed" }
  return { label: "active", tone: "done" }
}
