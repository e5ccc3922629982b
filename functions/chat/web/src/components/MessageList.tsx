import { useEffect, useRef } from "react"
import type { Message } from "../lib/api"
import { emptyTurn, type TurnView } from "../lib/events"
import { parseEventMessage } from "../lib/automations"
import { clarifyEnvelopes, parseClarifyAnswers } from "../lib/protocols"
import { AssistantMessage } from "./AssistantMessage"
import { EmptyState } from "./EmptyState"
import { AutomationEventMessage } from "./AutomationEventMessage"
import { NoticeMessage } from "./NoticeMessage"
import { UserMessage } from "./UserMessage"

/**
 * MessageList shows a conversation's messages (or the first screen of a new chat), following new content
 * while the user is at (or near) its end. chat's own notices (an automation's) are shown as notes. A user message that answers a clarify form is shown in words with
 * the form's questions, and the form it answers is filled back in.
 */
export function MessageList({
  conversationId,
  automation,
  messages,
  live,
  running,
  onSend,
  onDetails,
}: {
  conversationId: string | null
  /** the conversation is an automation's: its user messages are the events that started its turns */
  automation: boolean
  messages: Message[]
  live: Readonly<Record<string, TurnView>>
  running: boolean
  onSend: (text: string) => void
  onDetails: (m: Message) => void
}) {
  const list = useRef<HTMLDivElement>(null)
  const stick = useRef(true)
  useEffect(() => {
    const el = list.current
    if (el && stick.current) el.scrollTop = el.scrollHeight
  }, [messages, live, conversationId])

  const lastAssistant = [...messages].reverse().find((m) => m.role === "assistant")
  return (
    <div
      className="messages"
      id="messages"
      ref={list}
      role="log"
      aria-label="Messages"
      onScroll={(e) => {
        const el = e.currentTarget
        stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 120
      }}
    >
      {!conversationId && <EmptyState onPick={onSend} disabled={running} />}
      {messages.map((m, i) => {
        if (m.role === "notice") return <NoticeMessage key={m.id} message={m} />
        const ev = automation && m.role === "user" ? parseEventMessage(m.content) : null
        if (ev) return <AutomationEventMessage key={m.id} message={m} event={ev} />
        if (m.role === "user") {
          const answers = parseClarifyAnswers(m.content)
          const before = answers ? messages.slice(0, i).reverse().find((x) => x.role === "assistant") : undefined
          const forms = before ? clarifyEnvelopes(before.status === "running" ? [] : (before.timeline ?? [])) : []
          return <UserMessage key={m.id} message={m} answers={answers} forms={forms} />
        }
        const next = messages[i + 1]
        const answered = next?.role === "user" ? (parseClarifyAnswers(next.content) ?? undefined) : undefined
        const view = m.status === "running" ? (live[m.turn_id] ?? emptyTurn()) : null
        return (
          <AssistantMessage
            key={m.id}
            message={m}
            live={view}
            {...(m === lastAssistant && !running ? { onClarify: onSend } : {})}
            {...(answered ? { answered } : {})}
            onDetails={() => onDetails(m)}
          />
        )
      })}
    </div>
  )
}
