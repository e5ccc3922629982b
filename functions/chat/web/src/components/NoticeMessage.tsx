import type { Message } from "../lib/api"

/** NoticeMessage is a message of chat itself in a conversation: an automation created, or paused by its limit. */
export function NoticeMessage({ message: m }: { message: Message }) {
  return (
    <p className="notice notice-chat" role="note" data-message-id={m.id}>
      {m.content}
    </p>
  )
}
