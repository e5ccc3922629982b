import type { TurnView as Turn } from "../lib/events"
import { parseClarify, parseConsole, parseMemory } from "../lib/protocols"
import { ClarifyForm } from "./ClarifyForm"
import { ConsoleActions, MemoryNotice } from "./ConsoleActions"
import { Markdown } from "./Markdown"
import { ToolCard } from "./ToolCard"

/** ProtocolView renders what a finished tool call returned in one of the agent protocols. */
function ProtocolView({ tool, output, onClarify }: { tool: string; output: string; onClarify?: (message: string) => void }) {
  if (tool === "console") {
    const actions = parseConsole(output)
    return actions && actions.length ? <ConsoleActions actions={actions} /> : null
  }
  if (tool === "clarify") {
    const env = parseClarify(output)
    return env ? <ClarifyForm envelope={env} {...(onClarify ? { onSubmit: onClarify } : {})} /> : null
  }
  if (tool === "memory") {
    const actions = parseMemory(output)
    return actions && actions.length ? <MemoryNotice actions={actions} /> : null
  }
  return null
}

/**
 * TurnView shows one assistant turn: route and subagent badges, then in order the tokens as text and the
 * tool cards with what their protocol results render, then the answer as markdown once it is done.
 * `onClarify` is given only for the latest turn: its clarify forms can still be answered.
 */
export function TurnView({ turn, running, stored, onClarify }: { turn: Turn; running: boolean; stored?: string; onClarify?: (message: string) => void }) {
  const answer = turn.answer ?? (running ? null : stored ?? null)
  return (
    <div className="turn" data-running={running ? "true" : "false"}>
      {(turn.routes.length > 0 || turn.subagents.length > 0) && (
        <div className="badges">
          {turn.routes.map((r, i) => (
            <span key={`r${i}`} className="badge badge-route" title={r.reason}>
              → {r.agent}
            </span>
          ))}
          {turn.subagents.map((s, i) => (
            <span key={`s${i}`} className={`badge badge-subagent badge-${s.state}`}>
              {s.agent}
              {s.state === "running" ? " …" : s.state === "failed" ? " ✗" : ` ✓${s.toolCalls ? ` ${s.toolCalls} tools` : ""}`}
            </span>
          ))}
        </div>
      )}
      {turn.segments.map((seg, i) => {
        if (seg.kind === "status") {
          return running ? (
            <p key={i} className="status muted">
              {seg.message}
            </p>
          ) : null
        }
        if (seg.kind === "text") {
          // Tokens are text while the turn runs; the finished answer is shown once, as markdown, below.
          return running && seg.text ? (
            <div key={i} className="tokens">
              {seg.text}
            </div>
          ) : null
        }
        const call = turn.tools[seg.runId]
        if (!call) return null
        return (
          <div key={i} className="tool-wrap">
            <ToolCard call={call} />
            {call.output !== undefined && !call.failed && (
              <ProtocolView tool={call.tool} output={call.output} {...(onClarify ? { onClarify } : {})} />
            )}
          </div>
        )
      })}
      {running && turn.segments.length === 0 && <p className="status muted">Working…</p>}
      {answer !== null && answer !== "" && (
        <div className="answer">
          <Markdown text={answer} />
        </div>
      )}
      {turn.error && (
        <p className="error" role="alert">
          {turn.error.code ? `${turn.error.code}: ` : ""}
          {turn.error.detail}
        </p>
      )}
    </div>
  )
}
