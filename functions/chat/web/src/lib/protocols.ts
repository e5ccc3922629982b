// Reading the protocol envelopes the agent's tools return (docs/console-protocol.md,
// docs/clarify-protocol.md, docs/memory-protocol.md). The engine validated them; the page still reads
// defensively: an unknown protocol is ignored, an unknown action type or prompt kind is skipped.

export type MetadataEntry = { label: string; value: string }
export type ResourceItem = {
  resourceId: string
  title: string
  subtitle?: string
  href?: string
  status?: string
  metadata?: MetadataEntry[]
  fields?: Record<string, string | number | boolean | null>
}
export type ChartPoint = { time: string; value: number; label?: string }
export type ChartMetric = { metric: string; points: ChartPoint[] }

export type ConsoleAction =
  | { type: "set_theme"; theme: "dark" | "light" | "system" }
  | { type: "navigate"; path: string; replace?: boolean }
  | { type: "open_create"; resource: string }
  | { type: "open_dialog"; dialog: string }
  | { type: "toast"; level: "success" | "error" | "info" | "warning"; message: string; description?: string }
  | { type: "show_pane"; content: string }
  | { type: "toggle_terminal" }
  | { type: "scroll_to_card"; cardId: string }
  | ({ type: "resource"; mutation: "create" | "update" | "delete"; resourceType: string } & ResourceItem)
  | {
      type: "resource_list"
      resourceType: string
      items: ResourceItem[]
      title?: string
      description?: string
      listHref?: string
      emptyMessage?: string
      total?: number
      projectId?: string
      columns?: { key: string; label: string }[]
    }
  | {
      type: "chart"
      title: string
      metrics: ChartMetric[]
      description?: string
      unitLabel?: string
      interval?: string
      startAt?: string
      endAt?: string
      href?: string
      projectId?: string
      chartType?: "area" | "bar"
      kind?: "events" | "gauges"
      axisFormat?: "count" | "bytes" | "gbhours"
      changePercent?: number
    }
  | { type: "refresh"; scopes: string[] }

const CONSOLE_TYPES = new Set([
  "set_theme", "navigate", "open_create", "open_dialog", "toast", "show_pane", "toggle_terminal",
  "scroll_to_card", "resource", "resource_list", "chart", "refresh",
])

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v)
}

function parseJSON(output: string): unknown {
  const text = output.trim()
  if (!text || text.startsWith("Error:")) return null
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

/** The well-formed actions of a console envelope, unknown types skipped; null when it is not one. */
export function parseConsole(output: string): ConsoleAction[] | null {
  const env = parseJSON(output)
  if (!isObject(env) || env.protocol !== "appwrite.console/v1" || !Array.isArray(env.actions)) return null
  return env.actions.filter((a): a is ConsoleAction => isObject(a) && typeof a.type === "string" && CONSOLE_TYPES.has(a.type) && wellFormed(a))
}

// wellFormed checks what the renderers rely on, so a malformed action is skipped rather than breaking the page.
function wellFormed(a: Record<string, unknown>): boolean {
  switch (a.type) {
    case "resource_list":
      return Array.isArray(a.items) && a.items.every((i) => isObject(i) && typeof i.resourceId === "string")
    case "chart":
      return (
        Array.isArray(a.metrics) &&
        a.metrics.every((m) => isObject(m) && Array.isArray(m.points) && m.points.every((p) => isObject(p) && typeof p.value === "number" && typeof p.time === "string"))
      )
    case "toast":
      return typeof a.message === "string"
    case "resource":
      return typeof a.resourceId === "string" && typeof a.title === "string"
    case "refresh":
      return Array.isArray(a.scopes)
    default:
      return true
  }
}

export type ClarifyOption = { id: string; label: string; description?: string }
export type ClarifyPrompt =
  | { id: string; kind: "choice"; question: string; hint?: string; required: boolean; options: ClarifyOption[]; allowMultiple: boolean }
  | { id: string; kind: "confirm"; question: string; hint?: string; required: boolean; confirmLabel: string; cancelLabel: string; danger: boolean }
  | { id: string; kind: "text"; question: string; hint?: string; required: boolean; placeholder?: string; defaultValue?: string; multiline: boolean }
export type ClarifyEnvelope = { protocol: "appwrite.clarify/v1"; prompts: ClarifyPrompt[]; title?: string }

/** A clarify envelope with its known prompt kinds; null when the output is not one. */
export function parseClarify(output: string): ClarifyEnvelope | null {
  const env = parseJSON(output)
  if (!isObject(env) || env.protocol !== "appwrite.clarify/v1" || !Array.isArray(env.prompts)) return null
  const prompts = env.prompts.filter(
    (p): p is ClarifyPrompt =>
      isObject(p) &&
      typeof p.id === "string" &&
      typeof p.question === "string" &&
      (p.kind === "text" || p.kind === "confirm" || (p.kind === "choice" && Array.isArray(p.options))),
  )
  if (prompts.length === 0) return null
  return { protocol: "appwrite.clarify/v1", prompts, ...(typeof env.title === "string" ? { title: env.title } : {}) }
}

export type ClarifyAnswer =
  | { id: string; kind: "choice"; values: string[] }
  | { id: string; kind: "confirm"; confirmed: boolean }
  | { id: string; kind: "text"; value: string }

/**
 * clarifyMessage writes the answers as the next user message: one readable line per prompt, then the
 * answers in the protocol's suggested shape (docs/clarify-protocol.md, ClarifyAnswers). The engine does not
 * parse it; the model reads both.
 */
export function clarifyMessage(env: ClarifyEnvelope, answers: ClarifyAnswer[]): string {
  const lines = [env.title ? `Answers to "${env.title}":` : "My answers:"]
  for (const a of answers) {
    const p = env.prompts.find((q) => q.id === a.id)
    if (!p) continue
    let text: string
    if (a.kind === "choice") {
      const labels = p.kind === "choice" ? a.values.map((v) => p.options.find((o) => o.id === v)?.label ?? v) : a.values
      text = labels.length ? labels.join(", ") : "(none)"
    } else if (a.kind === "confirm") {
      text = p.kind === "confirm" ? (a.confirmed ? p.confirmLabel : `${p.cancelLabel} (do not proceed)`) : String(a.confirmed)
    } else {
      text = a.value || "(empty)"
    }
    lines.push(`- ${p.question} ${text}`)
  }
  const json = JSON.stringify({ protocol: "appwrite.clarify/v1", answers })
  return `${lines.join("\n")}\n\n${json}`
}

export type MemoryAction =
  | { type: "set"; key: string; scope: string; content: string; category: string; priority: number }
  | { type: "forget"; key: string; scope: string }

/** The actions of a memory envelope; null when the output is not one. */
export function parseMemory(output: string): MemoryAction[] | null {
  const env = parseJSON(output)
  if (!isObject(env) || env.protocol !== "appwrite.memory/v1" || !Array.isArray(env.actions)) return null
  return env.actions.filter(
    (a): a is MemoryAction => isObject(a) && typeof a.key === "string" && (a.type === "forget" || (a.type === "set" && typeof a.content === "string")),
  )
}
