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
 * clarifyMessage is the next user message answering a clarify form: exactly the protocol's answers JSON,
 * `{"protocol":"appwrite.clarify/v1","answers":[…]}` (reference: the Console's assistant code reads an answer
 * only when the whole message is that JSON, and fills an answered form back in from it). The page shows such
 * a message readably (clarifyReadable).
 */
export function clarifyMessage(answers: readonly ClarifyAnswer[]): string {
  return JSON.stringify({ protocol: "appwrite.clarify/v1", answers: answers.map(ordered) })
}

// ordered writes an answer with the protocol's keys in its order: id, kind, then the kind's value.
function ordered(a: ClarifyAnswer): ClarifyAnswer {
  switch (a.kind) {
    case "choice":
      return { id: a.id, kind: "choice", values: [...a.values] }
    case "confirm":
      return { id: a.id, kind: "confirm", confirmed: a.confirmed }
    case "text":
      return { id: a.id, kind: "text", value: a.value }
  }
}

/** parseClarifyAnswers reads a user message that is a clarify answer (the whole message); null for any other. */
export function parseClarifyAnswers(message: string): ClarifyAnswer[] | null {
  const text = message.trim()
  if (!text.startsWith("{")) return null
  const env = parseJSON(text)
  if (!isObject(env) || env.protocol !== "appwrite.clarify/v1" || !Array.isArray(env.answers)) return null
  return env.answers.filter(
    (a): a is ClarifyAnswer =>
      isObject(a) &&
      typeof a.id === "string" &&
      ((a.kind === "choice" && Array.isArray(a.values) && a.values.every((v) => typeof v === "string")) ||
        (a.kind === "confirm" && typeof a.confirmed === "boolean") ||
        (a.kind === "text" && typeof a.value === "string")),
  )
}

/** The clarify envelopes a turn's timeline holds (its clarify tool calls that succeeded), in order. */
export function clarifyEnvelopes(timeline: readonly { type: string; tool?: string; output?: string; failed?: boolean }[]): ClarifyEnvelope[] {
  return timeline.flatMap((e) => (e.type === "tool_end" && e.tool === "clarify" && !e.failed && e.output ? [parseClarify(e.output)].filter((x) => x !== null) : []))
}

/** One answer in words: the question asked (the prompt's id when the form is not known) and what was answered. */
export type ReadableAnswer = { id: string; question: string; answer: string }

/** clarifyReadable puts answers in words, with the questions of the forms they answer (when known). */
export function clarifyReadable(answers: readonly ClarifyAnswer[], forms: readonly ClarifyEnvelope[]): ReadableAnswer[] {
  const prompts = forms.flatMap((f) => f.prompts)
  return answers.map((a) => {
    const p = prompts.find((q) => q.id === a.id && q.kind === a.kind)
    let answer: string
    if (a.kind === "choice") {
      const labels = a.values.map((v) => (p?.kind === "choice" ? (p.options.find((o) => o.id === v)?.label ?? v) : v))
      answer = labels.length ? labels.join(", ") : "(none)"
    } else if (a.kind === "confirm") {
      answer = p?.kind === "confirm" ? (a.confirmed ? p.confirmLabel : p.cancelLabel) : a.confirmed ? "Yes" : "No"
    } else {
      answer = a.value || "(empty)"
    }
    return { id: a.id, question: p?.question ?? a.id, answer }
  })
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
