import type { Message } from "../lib/api"
import { answerText, emptyTurn, viewOf, type TurnView as Turn } from "../lib/events"
import type { ClarifyAnswer } from "../lib/protocols"
import { CopyButton } from "./CopyButton"
import { TurnView } from "./TurnView"

/**
 * AssistantMessage is one turn of the agent: live while it runs (`live`), else from its stored timeline; with
 * the copy of its answer (the markdown) and its details once it has finished.
 */
export function AssistantMessage({
  message: m,
  live,
  onClarify,
  answered,
  onDetails,
}: {
  message: Message
  live: Turn | null
  onClarify?: (text: string) => void
  answered?: ClarifyAnswer[]
  onDetails: () => void
}) {
  const view = live ?? (m.timeline && m.timeline.length ? viewOf(m.timeline) : emptyTurn())
  const running = live !== null && !live.complete
  const stopped = m.status === "stopped" || view.stopped
  const answer = running ? "" : view.answer ?? (m.content || answerText(view))
  const status = running ? "running" : live ? (stopped ? "stopped" : view.error ? "failed" : "done") : m.status
  return (
    <div className={`msg msg-assistant status-${m.status}`} data-message-id={m.id} data-turn-id={m.turn_id} data-view-status={status}>
      <TurnView turn={view} running={running} stored={m.content} stopped={stopped} {...(onClarify ? { onClarify } : {})} {...(answered ? { answered } : {})} />
      {m.error && !view.error && (
        <p className="error" role="alert">
          {m.error.detail}
        </p>
      )}
      {!running && (
        <div className="msg-actions">
          {answer && <CopyButton text={answer} label="Copy the answer" what="the answer" />}
          <button type="button" className="link small details-button" onClick={onDetails}>
            Details
          </button>
        </div>
      )}
    </div>
  )
}
