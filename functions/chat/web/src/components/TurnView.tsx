import type { TurnView as Turn } from "../lib/events"
import type { ClarifyAnswer } from "../lib/protocols"
import { Markdown } from "./Markdown"
import { ProtocolView } from "./ProtocolView"
import { ToolCard } from "./ToolCard"

/**
 * TurnView shows one assistant turn: route and subagent badges, then in order the tokens as text and the
 * tool cards with what their protocol results render, then the answer as markdown once it is done.
 * `onClarify` is given only for the latest turn: its clarify forms can still be answered; `answered` are the
 * answers the next message gave them. A stopped turn keeps what it wrote, marked stopped.
 */
export function TurnView({
  turn,
  running,
  stored,
  stopped,
  onClarify,
  answered,
}: {
  turn: Turn
  running: boolean
  stored?: string
  stopped?: boolean
  onClarify?: (message: string) => void
  answered?: ClarifyAnswer[]
}) {
  const answer = turn.answer ?? (running ? null : stored ?? null)
  const isStopped = stopped || turn.stopped
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
              <ProtocolView tool={call.tool} output={call.output} {...(onClarify ? { onClarify } : {})} {...(answered ? { answered } : {})} />
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
      {isStopped && (
        <p className="stopped-note muted" data-stopped="true">
          Stopped{answer ? "" : " before any answer"}.
        </p>
      )}
      {turn.error && !isStopped && (
        <p className="error" role="alert">
          {turn.error.code ? `${turn.error.code}: ` : ""}
          {turn.error.detail}
        </p>
      )}
    </div>
  )
}
