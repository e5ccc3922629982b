// The turn's timeline events (docs/turn.md, "Timeline") and the view of one turn built from them.

/** One event of a turn's timeline, as `turn` publishes it (the name in `type`). */
export type TurnEvent = {
  type: string
  message?: string
  agent?: string
  next?: string
  reason?: string
  content?: string
  answer?: string
  tool?: string
  run_id?: string
  input?: string
  output?: string
  failed?: boolean
  summary?: string
  tool_calls?: number
  title?: string
  detail?: string
  code?: string
  credentials?: unknown[]
  model?: string
  prompt_tokens?: number
  completion_tokens?: number
  total_tokens?: number
}

/** One model call's tokens, from a `usage` event (decision: one per model call, the title's included). */
export type UsageCall = { model: string; agent: string; prompt_tokens: number; completion_tokens: number; total_tokens: number }

/** A tool call: a `tool_start` and its `tool_end`, paired by `run_id` (never by tool name). */
export type ToolCall = {
  runId: string
  tool: string
  agent: string
  input: string
  output?: string
  failed: boolean
  state: "running" | "done" | "failed"
}

/** A piece of the turn in the order it happened: text of one answer run, or a tool call. */
export type Segment =
  | { kind: "text"; agent: string; text: string }
  | { kind: "tool"; runId: string }
  | { kind: "status"; message: string }

/** Everything the page shows of one turn. */
export type TurnView = {
  statuses: string[]
  routes: { agent: string; reason: string }[]
  subagents: { agent: string; state: "running" | "done" | "failed"; toolCalls: number }[]
  segments: Segment[]
  tools: Record<string, ToolCall>
  /** The final answer (`done`, or the partial answer of an `error`); null while running. */
  answer: string | null
  title: string | null
  error: { code: string; detail: string } | null
  complete: boolean
  /** The turn was stopped (its error is `cancelled`): what it had said stays, marked stopped. */
  stopped: boolean
  usage: UsageCall[]
  tokenEvents: number
  tokenChars: number
}

/** A turn before its first event. */
export function emptyTurn(): TurnView {
  return {
    statuses: [],
    routes: [],
    subagents: [],
    segments: [],
    tools: {},
    answer: null,
    title: null,
    error: null,
    complete: false,
    stopped: false,
    usage: [],
    tokenEvents: 0,
    tokenChars: 0,
  }
}

function str(v: unknown): string {
  return typeof v === "string" ? v : ""
}

/**
 * applyEvent returns the turn with one more event applied. It never mutates its argument (React state).
 * Unknown event types are ignored, so a newer engine does not break the page.
 */
export function applyEvent(turn: TurnView, ev: TurnEvent): TurnView {
  const t: TurnView = { ...turn }
  switch (ev.type) {
    case "status":
      t.statuses = [...t.statuses, str(ev.message)]
      t.segments = [...t.segments, { kind: "status", message: str(ev.message) }]
      break
    case "route":
      t.routes = [...t.routes, { agent: str(ev.next) || str(ev.agent), reason: str(ev.reason) }]
      break
    case "subagent_start":
      t.subagents = [...t.subagents, { agent: str(ev.agent), state: "running", toolCalls: 0 }]
      break
    case "subagent_end": {
      const agent = str(ev.agent)
      const i = t.subagents.map((s) => s.agent).lastIndexOf(agent)
      const end = { agent, state: ev.failed ? ("failed" as const) : ("done" as const), toolCalls: ev.tool_calls ?? 0 }
      t.subagents = i >= 0 ? t.subagents.map((s, j) => (j === i ? end : s)) : [...t.subagents, end]
      break
    }
    case "answer_start":
      t.segments = [...t.segments, { kind: "text", agent: str(ev.agent), text: "" }]
      break
    case "token": {
      const content = str(ev.content)
      t.tokenEvents++
      t.tokenChars += content.length
      const last = t.segments[t.segments.length - 1]
      if (last && last.kind === "text") {
        t.segments = [...t.segments.slice(0, -1), { ...last, text: last.text + content }]
      } else {
        t.segments = [...t.segments, { kind: "text", agent: str(ev.agent), text: content }]
      }
      break
    }
    case "tool_start": {
      const runId = str(ev.run_id)
      if (!runId) break
      t.tools = {
        ...t.tools,
        [runId]: { runId, tool: str(ev.tool), agent: str(ev.agent), input: str(ev.input), failed: false, state: "running" },
      }
      t.segments = [...t.segments, { kind: "tool", runId }]
      break
    }
    case "tool_end": {
      const runId = str(ev.run_id)
      if (!runId) break
      const started = t.tools[runId]
      const failed = ev.failed === true
      const call: ToolCall = {
        runId,
        tool: started?.tool || str(ev.tool),
        agent: started?.agent || str(ev.agent),
        input: started?.input ?? "",
        output: str(ev.output),
        failed,
        state: failed ? "failed" : "done",
      }
      t.tools = { ...t.tools, [runId]: call }
      if (!started) t.segments = [...t.segments, { kind: "tool", runId }]
      break
    }
    case "done":
      t.answer = str(ev.answer) || str(ev.content)
      break
    case "conversation_title":
      t.title = str(ev.title)
      break
    case "usage": {
      const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0)
      const prompt = n(ev.prompt_tokens)
      const completion = n(ev.completion_tokens)
      t.usage = [...t.usage, { model: str(ev.model), agent: str(ev.agent), prompt_tokens: prompt, completion_tokens: completion, total_tokens: n(ev.total_tokens) || prompt + completion }]
      break
    }
    case "error":
      t.error = { code: str(ev.code), detail: str(ev.detail) }
      if (ev.code === "cancelled") t.stopped = true
      if (t.answer === null && ev.answer) t.answer = str(ev.answer)
      break
    case "complete":
      t.complete = true
      break
  }
  return t
}

/** The view of a whole timeline. */
export function viewOf(events: readonly TurnEvent[]): TurnView {
  return events.reduce(applyEvent, emptyTurn())
}

/** The partial or final text of a turn: its answer, else the text its tokens wrote so far. */
export function answerText(turn: TurnView): string {
  if (turn.answer !== null) return turn.answer
  return turn.segments.flatMap((s) => (s.kind === "text" ? [s.text] : [])).join("")
}

/** totalUsage adds a turn's model calls up. */
export function totalUsage(calls: readonly UsageCall[]): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  return calls.reduce(
    (s, c) => ({ prompt_tokens: s.prompt_tokens + c.prompt_tokens, completion_tokens: s.completion_tokens + c.completion_tokens, total_tokens: s.total_tokens + c.total_tokens }),
    { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  )
}

/** The tool calls of a turn in the order they started. */
export function toolCalls(turn: TurnView): ToolCall[] {
  return turn.segments.flatMap((s) => (s.kind === "tool" && turn.tools[s.runId] ? [turn.tools[s.runId] as ToolCall] : []))
}

/**
 * Sequencer keeps the events of one turn in seq order, once per seq, whatever order Realtime delivers the
 * rows in (a row may arrive twice, or after a later one). It reports the first missing seq so the caller
 * can read the gap from chat.
 */
export class Sequencer {
  private readonly pending = new Map<number, TurnEvent>()
  /** The highest seq delivered in order. */
  last = 0

  /** push adds one event and returns those now deliverable in order. */
  push(seq: number, ev: TurnEvent): TurnEvent[] {
    if (!Number.isInteger(seq) || seq <= this.last || this.pending.has(seq)) return []
    this.pending.set(seq, ev)
    const out: TurnEvent[] = []
    for (;;) {
      const next = this.pending.get(this.last + 1)
      if (!next) break
      this.pending.delete(this.last + 1)
      this.last++
      out.push(next)
    }
    return out
  }

  /** True when events past a missing one are waiting. */
  hasGap(): boolean {
    return this.pending.size > 0
  }
}
